/*
** apply.c: carve apply: the sharding of every value, the conflicts, and
** the collectives of the lowering.
*/
#include "cli/cli.h"
#include "interp/drive/drive.h"
#include "interp/lower/lower.h"
#include "interp/report/report.h"

int cli_apply(const cli_opts *o) {
  session s;
  lower_opts lo = {0};
  if (cli_lower_opts(o, &lo) < 0 || cli_load(&s, o) < 0) return 1;
  rt_prog prog;
  lower_result lr;
  if (lower_program_opts(s.g, s.plan, &lo, &prog, &lr, &s.diag) < 0) { cli_report(&s.diag); session_free(&s); return 1; }
  if (o->json) {
    json j;
    json_init(&j);
    report_apply_json(&j, s.plan, &prog);
    puts(sb_str(&j.out));
    json_free(&j);
  } else {
    strbuf b;
    sb_init(&b);
    report_mesh(&b, s.plan);
    sb_putc(&b, '\n');
    report_values(&b, s.plan, NULL);
    sb_putc(&b, '\n');
    report_conflicts(&b, s.plan);
    sb_putc(&b, '\n');
    report_collectives(&b, s.g, &prog);
    fputs(sb_str(&b), stdout);
    sb_free(&b);
  }
  if (s.diag.nwarnings) cli_report(&s.diag);
  char why[1024];
  if (drive_memory_short(&prog, -1, why, sizeof why)) fprintf(stderr, "carve: warning: %s\n", why);
  lower_result_free(&lr);
  rt_prog_free(&prog);
  session_free(&s);
  return 0;
}

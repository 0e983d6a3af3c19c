/*
** diff.c: carve diff: what changes between two plans of one model, for
** the review of a tactic file's change.
*/
#include "cli/cli.h"
#include "interp/report/diff.h"
#include "lang/tac.h"

#include <stdlib.h>
#include <string.h>

/* One plan lowered and costed. */
typedef struct side {
  sh_plan *plan;
  rt_prog prog;
  lower_result lr;
  int lowered, costed;
  sim_result sim;
} side;

static int prepare(side *x, const session *s, const sim_profile *prof, const cli_opts *o, arena *a, diag *d) {
  if (lower_program(s->g, x->plan, &x->prog, &x->lr, d) < 0) return -1;
  x->lowered = 1;
  if (!prof) return 0;
  sim_opts so = {prof, 0, 0, {0}};
  diag quiet;                  /* a plan the simulator cannot cost still has a diff */
  diag_init(&quiet);
  if (sim_map_links(a, &quiet, prof, &x->prog, o->links, &so) == 0 && sim_run(s->g, x->plan, &x->prog, &x->lr, &so, &x->sim, &quiet) == 0)
    x->costed = 1;
  else
    fprintf(stderr, "carve: warning: no simulated memory and time: %s", diag_text(&quiet));
  diag_free(&quiet);
  return 0;
}

static void unprepare(side *x) {
  if (x->costed) sim_result_free(&x->sim);
  if (x->lowered) { lower_result_free(&x->lr); rt_prog_free(&x->prog); }
}

int cli_diff(const cli_opts *o) {
  cli_opts oa = *o;
  oa.nfiles = 2;
  session s;
  if (cli_load(&s, &oa) < 0) return 1;
  arena a;
  arena_init(&a);
  side x[2];
  memset(x, 0, sizeof x);
  x[0].plan = s.plan;
  int rc = 0;
  sim_profile prof;
  if (sim_profile_load(&s.mem, &s.diag, o->device ? o->device : "h100-sxm", sim_profile_dir(), &prof) < 0) {
    cli_report(&s.diag);
    rc = 1;
    goto out;
  }
  session_opts so;
  cli_session_opts(o, &so);
  const diag_src *ts = diag_load_file(&s.mem, &s.diag, o->files[2]);
  tac_file *tf = ts ? tac_parse(&s.mem, &s.diag, ts) : NULL;
  x[1].plan = tf ? tactic_apply(s.g, tf, &so.tac, &s.mem, &s.diag) : NULL;
  if (!x[1].plan || prepare(&x[0], &s, &prof, o, &a, &s.diag) < 0 || prepare(&x[1], &s, &prof, o, &a, &s.diag) < 0) {
    cli_report(&s.diag);
    rc = 1;
    goto out;
  }
  diff_side da = {o->files[1], x[0].plan, &x[0].prog, x[0].costed ? &x[0].sim : NULL, &prof};
  diff_side db = {o->files[2], x[1].plan, &x[1].prog, x[1].costed ? &x[1].sim : NULL, &prof};
  report_diff_t d;
  report_diff_compute(&d, &da, &db);
  if (o->json) {
    json j;
    json_init(&j);
    report_diff_json(&j, &d);
    puts(sb_str(&j.out));
    json_free(&j);
  } else {
    strbuf b;
    sb_init(&b);
    report_diff(&b, &d);
    if (da.sim && db.sim) sb_printf(&b, "(simulated on %s: %s)\n", prof.name, prof.device);
    fputs(sb_str(&b), stdout);
    sb_free(&b);
  }
  report_diff_free(&d);
out:
  if (rc == 0 && s.diag.nwarnings) cli_report(&s.diag);
  unprepare(&x[0]);
  unprepare(&x[1]);
  shard_free(x[1].plan);
  arena_free(&a);
  session_free(&s);
  return rc;
}

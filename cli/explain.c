/*
** explain.c: carve explain: why a value is split as it is.
*/
#include "cli/cli.h"
#include "interp/report/report.h"

#include <string.h>

int cli_explain(const cli_opts *o) {
  cli_opts o2 = *o;
  o2.nfiles = 2;
  session s;
  if (cli_load(&s, &o2) < 0) return 1;
  int v = cli_value(&s, o, o->files[2]);
  if (v < 0) {
    session_free(&s);
    return 1;
  }
  strbuf b;
  sb_init(&b);
  report_explain(&b, s.plan, v);
  fputs(sb_str(&b), stdout);
  sb_free(&b);
  session_free(&s);
  return 0;
}

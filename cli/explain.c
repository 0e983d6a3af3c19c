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
  const char *name = o->files[2];
  ir_value *v = ir_lookup(s.g, name);
  if (!v || v->kind == IR_CONST) {
    fprintf(stderr, "carve: error: no value named '%s' in model '%s'%s\n", name, s.g->name,
            !o->train && !strncmp(name, "grad.", 5) ? " (gradients exist with --train)" : "");
    session_free(&s);
    return 1;
  }
  strbuf b;
  sb_init(&b);
  report_explain(&b, s.plan, v->id);
  fputs(sb_str(&b), stdout);
  sb_free(&b);
  session_free(&s);
  return 0;
}

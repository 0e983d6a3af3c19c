/*
** check.c: carve check: parse and verify a model (and its training step).
*/
#include "cli/cli.h"
#include "interp/drive/session.h"
#include "interp/front/build.h"

int cli_check(const cli_opts *o) {
  session s;
  if (cli_load(&s, o) < 0) return 1;
  ir_graph *g = s.g;
  if (o->print) {
    arena a;
    arena_init(&a);
    fputs(ir_print(g, &a), stdout);
    arena_free(&a);
  } else {
    int64_t nparam = 0;
    int nops = 0, np = 0;
    for (int i = 0; i < g->nvals; i++) {
      ir_value *v = g->vals[i];
      if (v->kind == IR_PARAM) { nparam += ir_nelem(&v->shape); np++; }
      nops += v->kind == IR_OP;
    }
    printf("%s: model '%s' is well-formed: %d ops, %d params (%.4g M values)%s\n",
           o->files[0], g->name, nops, np, (double)nparam / 1e6,
           g->train ? (g->train == TRAIN_ADAM ? ", Adam training step" : g->train == TRAIN_ADAMW ? ", AdamW training step" : g->train == TRAIN_SGD ? ", SGD training step" : ", a training step of its own") : "");
  }
  if (s.diag.nwarnings) cli_report(&s.diag);
  session_free(&s);
  return 0;
}

void cli_check_help(FILE *f) {
  strbuf b;
  sb_init(&b);
  build_op_list(&b);
  fprintf(f, "\nThe ops a model may call (arguments in order, or by name: sum(x, dims = [1])):\n%s", sb_str(&b));
  sb_free(&b);
}

/* fuzz_pipeline.c: the whole pipeline, model + tactics -> lowered program.
** The input is a model file, then optionally a line "%%" and a tactic
** file, then optionally "%%" and a --train value. Every stage succeeds or
** leaves a located first error; no internal error, crash or leak. */
#include "fuzz.h"
#include "interp/front/build.h"
#include "interp/lower/lower.h"
#include "interp/tactic/tactic.h"
#include "interp/train/train.h"
#include "lang/cir.h"
#include "lang/tac.h"

static char *cut(char *s) {      /* ends s at the next "\n%%\n"; returns what follows or NULL */
  char *p = strstr(s, "\n%%\n");
  if (!p) return NULL;
  *p = 0;
  return p + 4;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = 0;
  char *tactics = cut(text), *train = tactics ? cut(tactics) : NULL;
  if (train) { char *nl = strchr(train, '\n'); if (nl) *nl = 0; }
  arena a;
  arena_init(&a);
  diag d;
  diag_init(&d);
  static const char *const names[] = {"m.cir", "t.tac", "--train", "--mesh"};
  ir_graph *g = NULL;
  sh_plan *p = NULL;
  int ok = 0;
  cir_file *f = cir_parse(&a, &d, diag_src_string(&a, "m.cir", text, strlen(text)));
  if (f && (g = build_model(f, NULL, &d))) {
    train_spec t;
    int good = !train || (train_parse(&a, train, &t, &d) == 0 && train_build(g, &t, &d) == 0);
    if (good && tactics) {
      tac_file *tf = tac_parse(&a, &d, diag_src_string(&a, "t.tac", tactics, strlen(tactics)));
      tactic_opts o = {0};
      o.stdlib_dir = SRCDIR "/stdlib-tactics";
      if (tf) p = tactic_apply(g, tf, &o, &a, &d);
      good = p != NULL;
    }
    if (good) {
      ir_link(g);
      rt_prog prog;
      lower_result lr;
      if (lower_program(g, p, &prog, &lr, &d) == 0) { ok = 1; lower_result_free(&lr); rt_prog_free(&prog); }
    }
  }
  if (!ok) fuzz_failed_well(&d, names, 4);
  shard_free(p);
  ir_graph_free(g);
  diag_free(&d);
  arena_free(&a);
  free(text);
  return 0;
}

/* fuzz_cir.c: the model-file reader (lang/cir_*) and the IR builder. */
#include "fuzz.h"
#include "interp/front/build.h"
#include "lang/cir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  arena a;
  arena_init(&a);
  diag d;
  diag_init(&d);
  const diag_src *src = diag_src_string(&a, "m.cir", (const char *)data, size);
  cir_file *f = cir_parse(&a, &d, src);
  ir_graph *g = f ? build_model(f, NULL, &d) : NULL;
  static const char *const names[] = {"m.cir"};
  if (!g) fuzz_failed_well(&d, names, 1);
  ir_graph_free(g);
  diag_free(&d);
  arena_free(&a);
  return 0;
}

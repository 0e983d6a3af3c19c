/* fuzz_mlir.c: the StableHLO text reader (lang/mlir_*). */
#include "fuzz.h"
#include "lang/mlir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  arena a;
  arena_init(&a);
  diag d;
  diag_init(&d);
  static const char *const names[] = {"m.mlir"};
  const diag_src *src = diag_src_string(&a, "m.mlir", (const char *)data, size);
  if (!mlir_parse(&a, &d, src)) fuzz_failed_well(&d, names, 1);
  diag_free(&d);
  arena_free(&a);
  return 0;
}

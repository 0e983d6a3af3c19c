/* fuzz_tac.c: the tactic-file reader (lang/tac_*), whole files and REPL lines. */
#include "fuzz.h"
#include "lang/tac.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  arena a;
  arena_init(&a);
  diag d;
  diag_init(&d);
  static const char *const names[] = {"t.tac"};
  const diag_src *src = diag_src_string(&a, "t.tac", (const char *)data, size);
  if (!tac_parse(&a, &d, src)) fuzz_failed_well(&d, names, 1);
  diag_clear(&d);
  d.nerrors = 0;
  int incomplete = 0;
  if (!tac_parse_line(&a, &d, src, &incomplete) && !incomplete) fuzz_failed_well(&d, names, 1);
  diag_free(&d);
  arena_free(&a);
  return 0;
}

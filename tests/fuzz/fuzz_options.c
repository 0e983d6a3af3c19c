/* fuzz_options.c: command-line values: --train and --mesh. */
#include "fuzz.h"
#include "interp/tactic/tactic.h"
#include "interp/train/train.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = 0;                      /* the shell hands options over as C strings */
  static const char *const names[] = {"--train", "--mesh"};
  arena a;
  arena_init(&a);
  diag d;
  diag_init(&d);
  train_spec t;
  if (train_parse(&a, text, &t, &d) < 0) fuzz_failed_well(&d, names, 2);
  else fuzz_check(t.lr > 0 && t.lr == t.lr, "--train accepted a learning rate that is not positive", &d);
  diag_free(&d);
  diag_init(&d);
  sh_mesh m;
  if (tactic_parse_mesh(&a, text, &m, &d) < 0) fuzz_failed_well(&d, names, 2);
  diag_free(&d);
  arena_free(&a);
  free(text);
  return 0;
}

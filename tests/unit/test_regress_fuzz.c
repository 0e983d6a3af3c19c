/*
** test_regress_fuzz.c: what the libFuzzer harnesses (tests/fuzz, make
** fuzz) found, kept as tests that run in every build.
*/
#include <criterion/criterion.h>

#include "interp/tactic/tactic.h"

/* fuzz_options: tactic_parse_mesh returned malloc'd axis names that no
** caller could free (a leak on every --mesh read outside a plan); the names
** now live in the caller's arena. Under the sanitizers LeakSanitizer
** checks that nothing is left. */
Test(fuzz_regress, mesh_names_live_in_the_arena) {
  arena a;
  arena_init(&a);
  diag d;
  diag_init(&d);
  sh_mesh m;
  cr_assert(tactic_parse_mesh(&a, "batch = 4, model = 2", &m, &d) == 0, "%s", diag_text(&d));
  cr_expect(m.n == 2 && !strcmp(m.name[0], "batch") && m.size[1] == 2);
  cr_expect(tactic_parse_mesh(&a, "batch = 4, model = 0", &m, &d) < 0);   /* an error after the first name */
  diag_free(&d);
  arena_free(&a);
}

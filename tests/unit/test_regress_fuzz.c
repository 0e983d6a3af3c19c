/*
** test_regress_fuzz.c: what the libFuzzer harnesses (tests/fuzz, make
** fuzz) found, kept as tests that run in every build.
*/
#include <criterion/criterion.h>

#include <stdio.h>
#include <unistd.h>

#include "interp/repl/repl.h"
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

/* A session of tests/data/fuzz/NAME as fuzz_repl types it (tests/data/chain.cir
** on a b = 2, m = 2 mesh, from the source folder, so that a script's path
** is relative to it); every line's output in all. The lines that failed. */
static int replay(const char *name, strbuf *all) {
  cr_assert(chdir(SRCDIR) == 0, "cannot enter %s", SRCDIR);
  char path[512], line[4096];
  snprintf(path, sizeof path, "tests/data/fuzz/%s", name);
  FILE *f = fopen(path, "r");
  cr_assert(f, "cannot read %s", path);
  repl_opts o = {0};
  o.model_path = "tests/data/chain.cir";
  o.mesh = "b = 2, m = 2";
  strbuf out;
  sb_init(&out);
  repl *r = repl_new(&o, &out);
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    sb_clear(&out);
    if (repl_line(r, line, &out) == REPL_QUIT) break;
    sb_printf(all, "%s", sb_str(&out));
  }
  fclose(f);
  int failed = repl_errors(r);
  repl_free(r);
  sb_free(&out);
  return failed;
}

/* a hostile-input probe: a mesh of 2^30 devices passed the size check and
** 'collectives' or 'show' then ran out of memory, and 2^31 printed as
** -2147483648 devices; a mesh above 2^20 devices is refused where it is typed */
Test(fuzz_regress, a_mesh_of_2_30_devices) {
  strbuf all;
  sb_init(&all);
  cr_expect(replay("mesh_2_30.repl", &all) == 2, "%s", sb_str(&all));
  cr_expect(strstr(sb_str(&all), "(repl line 1):1:6: error: the mesh has more than 2^20 devices (1048576)"), "%s", sb_str(&all));
  cr_expect(strstr(sb_str(&all), "(repl line 4):1:6: error: the mesh has more than 2^20 devices"), "%s", sb_str(&all));
  cr_expect(strstr(sb_str(&all), "rank 3 (b=1, m=1) holds"), "the session goes on with its mesh: %s", sb_str(&all));
  sb_free(&all);
}

/* a hostile-input probe: a Lua op table whose results were replaced made
** print(op) segfault (op_tostring read op.results[1]); carve knows an op
** or a value by its table, whatever the script writes in its fields */
Test(fuzz_regress, a_lua_op_with_its_fields_replaced) {
  strbuf all;
  sb_init(&all);
  cr_expect(replay("op_fields.repl", &all) == 0, "%s", sb_str(&all));
  cr_expect(strstr(sb_str(&all), "y: f32[8, 6], sharding [b, -]"), "the script's shard of y took: %s", sb_str(&all));
  sb_free(&all);
}

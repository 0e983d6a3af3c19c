/*
** make_golden_plans.c: writes tests/data/golden_plans/NAME.plan for every
** case of plans.h, the plans that test_lua.c holds the stdlib tactics to.
**
**   build/tests/unit/make_golden_plans [SRCDIR]
**
** The committed files were written by this program while megatron, zero
** and embedding were still built into C (interp/tactic/builtin.c), before
** their Lua ports replaced them; see tests/data/golden_plans/README.md.
*/
#include "plans.h"

#include <errno.h>

int main(int argc, char **argv) {
  const char *src = argc > 1 ? argv[1] : SRCDIR;
  for (int i = 0; i < NPLAN_CASES; i++) {
    strbuf b;
    sb_init(&b);
    plan_text(&plan_cases[i], src, &b);
    char path[1024];
    snprintf(path, sizeof path, "%s/" GP "%s.plan", src, plan_cases[i].name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(sb_str(&b), 1, b.n, f) != b.n || fclose(f) != 0) {
      fprintf(stderr, "make_golden_plans: cannot write %s: %s\n", path, strerror(errno));
      return 1;
    }
    printf("%s (%zu bytes)\n", path, b.n);
    sb_free(&b);
  }
  return 0;
}

/*
** test_lua.c: the stdlib tactics against golden plans (tests/data/golden_plans,
** see its README.md for how they were made).
*/
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "plans.h"

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  strbuf b;
  sb_init(&b);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) sb_printf(&b, "%.*s", (int)n, buf);
  fclose(f);
  char *r = strdup(sb_str(&b));
  sb_free(&b);
  return r;
}

/* the first line where two texts differ, for the failure message */
static const char *first_difference(const char *a, const char *b, int *line) {
  *line = 1;
  const char *start = a;
  while (*a && *a == *b) {
    if (*a == '\n') { (*line)++; start = a + 1; }
    a++, b++;
  }
  return start;
}

ParameterizedTestParameters(stdlib, golden_plans) {
  return cr_make_param_array(plan_case, (void *)plan_cases, NPLAN_CASES);
}

ParameterizedTest(plan_case *c, stdlib, golden_plans) {
  char path[1024];
  snprintf(path, sizeof path, "%s/" GP "%s.plan", SRCDIR, c->name);
  char *want = slurp(path);
  cr_assert(want, "no golden plan %s", path);
  strbuf got;
  sb_init(&got);
  plan_text(c, SRCDIR, &got);
  if (strcmp(want, sb_str(&got))) {
    int line;
    const char *at = first_difference(want, sb_str(&got), &line);
    const char *eol = strchr(at, '\n');
    cr_assert(0, "%s differs from %s at line %d:\n  want: %.*s\n  got:  %.*s", c->name, path, line, eol ? (int)(eol - at) : (int)strlen(at), at,
            80, sb_str(&got) + (at - want));
  }
  sb_free(&got);
  free(want);
}

/*
** fuzz.h: what every libFuzzer harness shares. Each harness feeds bytes
** to one reader of carve (or to the whole pipeline) and asserts what the
** suite asserts: a result, or a located first error, and nothing else.
** libFuzzer, ASan and UBSan find the crashes, leaks and undefined
** behaviour; fuzz_check turns a wrong kind of failure into a finding.
*/
#ifndef tests_fuzz_h
#define tests_fuzz_h

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"
#include "util/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A failure that must not happen: print it and abort (a libFuzzer finding). */
static inline void fuzz_check(int ok, const char *what, const diag *d) {
  if (ok) return;
  fprintf(stderr, "fuzz finding: %s\n%s\n", what, d ? diag_text(d) : "");
  abort();
}

/* "FILE:LINE:COL: error: " (any file: errors may point into a stdlib
** tactic) or "carve: error: " at the start of t. */
static inline int fuzz_placed(const char *t) {
  if (!strncmp(t, "carve: error: ", 14)) return 1;
  const char *p = strstr(t, ": error: ");
  const char *nl = strchr(t, '\n');
  if (!p || (nl && nl < p)) return 0;
  int colons = 0;                     /* two numbers before ": error: " */
  const char *q = p;
  for (int k = 0; k < 2; k++) {
    const char *e = q;
    while (q > t && q[-1] >= '0' && q[-1] <= '9') q--;
    if (q == e || q == t || q[-1] != ':') return 0;
    q--;
    colons++;
  }
  return colons == 2 && q > t;
}

/* A failed stage left one error whose first line names a place (or "carve:"),
** and it is no internal error (unless the input's own text may say so: a
** Lua script's message is its own). */
static inline void fuzz_failed_saying(const diag *d, int input_may_say_internal) {
  const char *t = diag_text(d);
  fuzz_check(d->nerrors >= 1 && t[0], "a failure without a message", d);
  /* the first error's line: warnings may come first (a param that does
     not reach the loss), and the source lines a message quotes (indented)
     may hold anything, "error: " too */
  for (const char *l = t; *l; ) {
    const char *end = strchr(l, '\n'), *e = strstr(l, "error: ");
    if (e && (!end || e < end) && l[0] != ' ') { t = l; break; }
    if (!end) break;
    l = end + 1;
  }
  fuzz_check(fuzz_placed(t), "the first error names no place", d);
  const char *msg = strstr(t, "error: ") + 7;     /* the first line's message */
  fuzz_check(input_may_say_internal || strncmp(msg, "internal error", 14) != 0, "an internal error", d);
}

static inline void fuzz_failed_well(const diag *d, const char *const *names, int nnames) {
  (void)names; (void)nnames;
  fuzz_failed_saying(d, 0);
}

#endif

/*
** parsetest.h: what the tests of the two front ends (test_cir.c,
** test_tac.c) do alike: the check of one row of an error table, deeply
** nested inputs, garbage and mutated inputs, and the walk over the syntax
** cases of tests/errors. Each test file passes in its own parser.
*/
#ifndef tests_unit_parsetest_h
#define tests_unit_parsetest_h

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/arena.h"
#include "util/diag.h"

/* Where off is in f's source, as line:col. */
#define ASSERT_AT(f, off, L, C) do {                                       \
    int l_, c_;                                                            \
    diag_linecol((f)->src, (off), &l_, &c_);                               \
    cr_assert(l_ == (L) && c_ == (C), "at %d:%d, wanted %d:%d", l_, c_, (L), (C)); \
  } while (0)

/* The first rendered line of the diagnostics. */
static inline const char *pt_first_line(const diag *d) {
  static char line[1200];
  line[0] = 0;
  if (diag_text(d)) {
    size_t n = strcspn(diag_text(d), "\n");
    if (n >= sizeof line) n = sizeof line - 1;
    memcpy(line, diag_text(d), n);
    line[n] = 0;
  }
  return line;
}

/* One row of an error table, after tree = parse(text) into d: with first
** "" the text must parse; else it must fail with one error whose line is
** file:first..., a caret under the source line, and the note file:note
** (or no note at all when note is ""). */
static inline void pt_error_case(const void *tree, const diag *d, const char *file,
                                 const char *text, const char *first, const char *note) {
  if (!first[0]) {
    cr_assert_not_null(tree, "%s\nunexpected error:\n%s", text, diag_text(d) ? diag_text(d) : "");
    return;
  }
  cr_assert_null(tree, "parsed, but wanted: %s", first);
  cr_assert_eq(d->nerrors, 1, "one error only:\n%s", diag_text(d));
  char want[300];
  snprintf(want, sizeof want, "%s:%s", file, first);
  cr_assert(strncmp(pt_first_line(d), want, strlen(want)) == 0,
            "for %s\nwanted: %s\ngot:    %s", text, want, pt_first_line(d));
  /* the message is followed by the source line and a caret */
  cr_assert_not_null(strstr(diag_text(d), "^\n"));
  const char *found = strstr(diag_text(d), ": note: ");
  if (note[0]) {
    snprintf(want, sizeof want, "%s:%s", file, note);
    cr_assert_not_null(strstr(diag_text(d), want), "wanted note %s in:\n%s", want, diag_text(d));
  } else {
    cr_assert_null(found, "no note wanted:\n%s", diag_text(d));
  }
}

/* head, n units, mid, n closes, tail (malloc'd). */
static inline char *pt_repeat(const char *head, const char *unit, int n, const char *mid,
                              const char *close, const char *tail) {
  size_t len = strlen(head) + (strlen(unit) + strlen(close)) * (size_t)n + strlen(mid) + strlen(tail) + 1;
  char *s = malloc(len), *q = s;
  q = stpcpy(q, head);
  for (int i = 0; i < n; i++) q = stpcpy(q, unit);
  q = stpcpy(q, mid);
  for (int i = 0; i < n; i++) q = stpcpy(q, close);
  strcpy(q, tail);
  return s;
}

/* ---- garbage never crashes ---- */

/* Parses n bytes of garbage and checks what came out. */
typedef void pt_garbage_fn(const char *buf, size_t n);

static inline uint64_t pt_rng(uint64_t *s) {      /* xorshift64* */
  *s ^= *s >> 12; *s ^= *s << 25; *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

/* 400 inputs of random bytes, up to 511 of them. */
static inline void pt_random_bytes(pt_garbage_fn *parse) {
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  char buf[512];
  for (int i = 0; i < 400; i++) {
    size_t n = pt_rng(&seed) % sizeof buf;
    for (size_t k = 0; k < n; k++) buf[k] = (char)(pt_rng(&seed) >> 56);
    parse(buf, n);
  }
}

/* count inputs strung together from pieces of the language, which reach
** deeper into the grammar than bytes; input i starts with heads[i % nheads]. */
static inline void pt_random_tokens(pt_garbage_fn *parse, int count, const char *const *pieces,
                                    size_t npieces, const char *const *heads, int nheads) {
  uint64_t seed = 42;
  char buf[1024];
  for (int i = 0; i < count; i++) {
    size_t want = pt_rng(&seed) % 900;
    size_t n = (size_t)snprintf(buf, sizeof buf, "%s", heads[i % nheads]);
    while (n < want) {
      const char *p = pieces[pt_rng(&seed) % npieces];
      size_t l = strlen(p);
      memcpy(buf + n, p, l);
      n += l;
    }
    parse(buf, n);
  }
}

/* count copies of the n bytes of text with 1 to 4 bytes changed, every
** third one truncated too. With meaningful, the odd copies draw the new
** bytes from it (bytes that mean something in the language). */
static inline void pt_mutated(pt_garbage_fn *parse, int count, const char *text, size_t n,
                              const char *meaningful) {
  char *buf = malloc(n);
  size_t nm = meaningful ? strlen(meaningful) : 0;
  uint64_t seed = 7;
  for (int i = 0; i < count; i++) {
    memcpy(buf, text, n);
    int flips = 1 + (int)(pt_rng(&seed) % 4);
    for (int k = 0; k < flips; k++) {
      size_t pos = pt_rng(&seed) % n;
      buf[pos] = nm && (i & 1) ? meaningful[pt_rng(&seed) % nm] : (char)(pt_rng(&seed) >> 56);
    }
    size_t len = i % 3 == 0 ? pt_rng(&seed) % n : n;
    parse(buf, len);
  }
  free(buf);
}

/* ---- the tests/errors corpus: files marked "# stage: syntax" ---- */

/* A front end: the tree of src, or NULL with the errors in d. */
typedef const void *pt_parse_fn(arena *a, diag *d, const diag_src *src);

/* Reads the file; fills expect with the text after "# expect: " and tells
** whether the second line is "# stage: syntax". */
static inline char *pt_read_corpus(const char *path, size_t *len, char *expect, size_t cap,
                                   int *syntax) {
  FILE *fp = fopen(path, "rb");
  cr_assert_not_null(fp, "cannot open %s", path);
  char *buf = malloc(1 << 20);
  *len = fread(buf, 1, (1 << 20) - 1, fp);
  fclose(fp);
  buf[*len] = 0;
  expect[0] = 0;
  *syntax = 0;
  const char *k = "# expect: ";
  if (strncmp(buf, k, strlen(k)) == 0) {
    size_t e = strcspn(buf + strlen(k), "\n");
    if (e >= cap) e = cap - 1;
    memcpy(expect, buf + strlen(k), e);
    expect[e] = 0;
    while (e > 0 && (expect[e - 1] == ' ' || expect[e - 1] == '\r')) expect[--e] = 0;
    const char *second = strchr(buf, '\n');
    if (second && strncmp(second + 1, "# stage: syntax", 15) == 0) *syntax = 1;
  }
  return buf;
}

/* Every file of tests/errors named *ext must start with "# expect: ...";
** those marked syntax must fail to parse with the expected text in the
** first line (and, with one_error, with one error only). Returns how many
** were marked syntax. */
static inline int pt_error_corpus(const char *ext, pt_parse_fn *parse, int one_error) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/tests/errors", SRCDIR);
  DIR *dp = opendir(dir);
  cr_assert_not_null(dp, "cannot open %s", dir);
  int nsyntax = 0;
  struct dirent *de;
  while ((de = readdir(dp))) {
    size_t nl = strlen(de->d_name);
    if (nl < 5 || strcmp(de->d_name + nl - 4, ext) != 0) continue;
    char path[8192], expect[512];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    size_t len;
    int syntax;
    char *text = pt_read_corpus(path, &len, expect, sizeof expect, &syntax);
    cr_assert(expect[0], "%s: the first line must be '# expect: ...'", de->d_name);
    if (syntax) {
      nsyntax++;
      arena a;
      diag d;
      arena_init(&a);
      diag_init(&d);
      const void *f = parse(&a, &d, diag_src_string(&a, de->d_name, text, len));
      cr_assert_null(f, "%s parsed without error", de->d_name);
      if (one_error) cr_assert_eq(d.nerrors, 1);
      size_t fl = strcspn(diag_text(&d), "\n");
      char line[1200];
      snprintf(line, sizeof line, "%.*s", (int)(fl < 1000 ? fl : 1000), diag_text(&d));
      cr_assert_not_null(strstr(line, expect), "%s\nwanted: %s\ngot:    %s", de->d_name, expect, line);
      diag_free(&d);
      arena_free(&a);
    }
    free(text);
  }
  closedir(dp);
  return nsyntax;
}

#endif

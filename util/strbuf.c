/*
** strbuf.c: growable text.
*/
#include "util/strbuf.h"
#include "util/mem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sb_init(strbuf *b) { b->p = NULL; b->n = b->cap = 0; }
void sb_free(strbuf *b) { free(b->p); sb_init(b); }
void sb_clear(strbuf *b) { b->n = 0; if (b->p) b->p[0] = 0; }

static void reserve(strbuf *b, size_t more) {
  if (b->n + more + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->n + more + 1) cap *= 2;
  b->p = mem_realloc(b->p, cap);
  b->cap = cap;
}

void sb_put(strbuf *b, const char *s, size_t n) {
  reserve(b, n);
  if (n) memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}

void sb_puts(strbuf *b, const char *s) { sb_put(b, s, strlen(s)); }
void sb_putc(strbuf *b, char c) { sb_put(b, &c, 1); }

void sb_vprintf(strbuf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n <= 0) { reserve(b, 0); b->p[b->n] = 0; return; }
  reserve(b, (size_t)n);
  vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
  b->n += (size_t)n;
}

void sb_printf(strbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(b, fmt, ap);
  va_end(ap);
}

const char *sb_str(const strbuf *b) { return b->p ? b->p : ""; }

static const char *nonfinite(char *buf, double x) {
  snprintf(buf, NUM_LEN, "%s", x != x ? "nan" : x > 0 ? "inf" : "-inf");
  return buf;
}

const char *num_double(char buf[NUM_LEN], double x) {
  if (!isfinite(x)) return nonfinite(buf, x);
  for (int digits = 15; digits < 17; digits++) {
    snprintf(buf, NUM_LEN, "%.*g", digits, x);
    if (strtod(buf, NULL) == x) return buf;
  }
  snprintf(buf, NUM_LEN, "%.17g", x);
  return buf;
}

const char *num_float(char buf[NUM_LEN], float x) {
  if (!isfinite(x)) return nonfinite(buf, x);
  for (int digits = 6; digits < 9; digits++) {
    snprintf(buf, NUM_LEN, "%.*g", digits, (double)x);
    if (strtof(buf, NULL) == x) return buf;
  }
  snprintf(buf, NUM_LEN, "%.9g", (double)x);
  return buf;
}

void sb_num(strbuf *b, double x) {
  char buf[NUM_LEN];
  sb_puts(b, num_double(buf, x));
}

/*
** size.c: checked size arithmetic (size.h).
*/
#include "util/size.h"

int size_mul(int64_t a, int64_t b, int64_t *out) {
  int64_t p;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &p) || p >= SIZE_LIMIT) return -1;
  *out = p;
  return 0;
}

int size_add(int64_t a, int64_t b, int64_t *out) {
  if (a < 0 || b < 0 || a >= SIZE_LIMIT || b >= SIZE_LIMIT || a + b >= SIZE_LIMIT) return -1;
  *out = a + b;
  return 0;
}

int size_prod(const int64_t *d, int n, int64_t *out) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) if (size_mul(p, d[i], &p) < 0) return -1;
  *out = p;
  return 0;
}

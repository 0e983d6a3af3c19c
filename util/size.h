/*
** size.h: arithmetic on sizes read from input (dims, element counts,
** offsets), checked: every reader of shapes and counts goes through these,
** so that no product or sum of what a file says overflows. A size is
** non-negative and below SIZE_LIMIT (2^62: room left to add two and to
** count bytes of 8-byte elements without wrapping).
*/
#ifndef util_size_h
#define util_size_h

#include <stdint.h>

#define SIZE_LIMIT ((int64_t)1 << 62)

/* *out = a * b, or -1 when a or b is negative or the product reaches SIZE_LIMIT */
int size_mul(int64_t a, int64_t b, int64_t *out);
/* *out = a + b, or -1 as size_mul */
int size_add(int64_t a, int64_t b, int64_t *out);
/* *out = the product of the n dims d, or -1 as size_mul (1 for n = 0) */
int size_prod(const int64_t *d, int n, int64_t *out);

#endif

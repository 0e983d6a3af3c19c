/*
** init.c: counter-based random initial values. Element g of a tensor
** (its global row-major index) draws from mix(seed, 2g) and mix(seed,
** 2g+1) only, so a block computed on one rank holds exactly the numbers
** at the same positions of the whole tensor computed anywhere else.
*/
#include "runtime/init.h"
#include "runtime/dtype.h"

#include <math.h>
#include <string.h>

#define GOLDEN 0x9E3779B97F4A7C15ull

uint64_t rt_init_seed(const char *name) {
  uint64_t h = 1469598103934665603ull;          /* FNV-1a, then a finaliser */
  for (const unsigned char *s = (const unsigned char *)name; *s; s++) { h ^= *s; h *= 1099511628211ull; }
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  return h;
}

/* splitmix64's output function over a counter */
static uint64_t mix(uint64_t seed, uint64_t ctr) {
  uint64_t z = seed ^ (ctr * GOLDEN);
  z += GOLDEN;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* uniform in the open interval (0, 1) */
static double unit(uint64_t z) { return ((double)(z >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

static double value(const rt_init *in, uint64_t g) {
  switch (in->kind) {
  case RT_INIT_ZEROS: return 0;
  case RT_INIT_ONES: return 1;
  case RT_INIT_UNIFORM: return in->a + (in->b - in->a) * unit(mix(in->seed, 2 * g));
  case RT_INIT_INTS: {
    double v = floor(unit(mix(in->seed, 2 * g)) * in->b);
    return v >= in->b ? in->b - 1 : v;
  }
  case RT_INIT_NORMAL: default: {
    double u1 = unit(mix(in->seed, 2 * g)), u2 = unit(mix(in->seed, 2 * g + 1));
    return in->a * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
  }
  }
}

void rt_init_block(const rt_init *in, rt_dtype t, int rank, const int64_t *global_shape,
                   const int64_t *off, const int64_t *local, void *dst) {
  int64_t gstride[RT_MAXRANK], rows = 1, L = 1;
  if (rank > RT_MAXRANK) rank = RT_MAXRANK;
  int64_t acc = 1;
  for (int d = rank - 1; d >= 0; d--) { gstride[d] = acc; acc *= global_shape[d]; }
  if (rank > 0) L = local[rank - 1];
  for (int d = 0; d < rank - 1; d++) rows *= local[d];
  if (L <= 0 || rows <= 0) return;
  int64_t idx[RT_MAXRANK] = {0};
  float *f = dst;
  int32_t *iv = dst;
  int other = t != RT_F32 && t != RT_I32;
  for (int64_t r = 0; r < rows; r++) {
    uint64_t g0 = 0;
    for (int d = 0; d < rank; d++) g0 += (uint64_t)((off[d] + (d < rank - 1 ? idx[d] : 0)) * gstride[d]);
    for (int64_t j = 0; j < L; j++) {
      double v = value(in, g0 + (uint64_t)j);
      if (t == RT_I32) iv[r * L + j] = (int32_t)v;
      else if (!other) f[r * L + j] = (float)v;
      else rt_store_f(t, dst, r * L + j, v);
    }
    for (int d = rank - 2; d >= 0; d--) {
      if (++idx[d] < local[d]) break;
      idx[d] = 0;
    }
  }
}

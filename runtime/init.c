/*
** init.c: counter-based random initial values. Element g of a tensor
** (its global row-major index) draws from mix(seed, 2g) and mix(seed,
** 2g+1) only, so a block computed on one rank holds exactly the numbers
** at the same positions of the whole tensor computed anywhere else.
*/
#include "runtime/init.h"
#include "runtime/dtype.h"

#include <math.h>
#include <pthread.h>
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

/* one block's geometry, and the rows [lo, hi) of it a thread fills */
typedef struct fill {
  const rt_init *in;
  rt_dtype t;
  int rank;
  const int64_t *off, *local;
  int64_t gstride[RT_MAXRANK], L;
  void *dst;
  int64_t lo, hi;
} fill;

static void *fill_rows(void *x) {
  const fill *b = x;
  int rank = b->rank;
  int64_t idx[RT_MAXRANK] = {0}, L = b->L, r0 = b->lo;
  for (int d = rank - 2; d >= 0; d--) { idx[d] = r0 % b->local[d]; r0 /= b->local[d]; }
  float *f = b->dst;
  int32_t *iv = b->dst;
  int other = b->t != RT_F32 && b->t != RT_I32;
  for (int64_t r = b->lo; r < b->hi; r++) {
    uint64_t g0 = 0;
    for (int d = 0; d < rank; d++) g0 += (uint64_t)((b->off[d] + (d < rank - 1 ? idx[d] : 0)) * b->gstride[d]);
    for (int64_t j = 0; j < L; j++) {
      double v = value(b->in, g0 + (uint64_t)j);
      if (b->t == RT_I32) iv[r * L + j] = (int32_t)v;
      else if (!other) f[r * L + j] = (float)v;
      else rt_store_f(b->t, b->dst, r * L + j, v);
    }
    for (int d = rank - 2; d >= 0; d--) {
      if (++idx[d] < b->local[d]) break;
      idx[d] = 0;
    }
  }
  return NULL;
}

/* Elements below which one thread fills a block: a normal draw costs
** tens of nanoseconds (a log and a cosine in double), so GPT-2 small's
** 124 M parameters took 4-5 s on one core. */
#define INIT_PAR_MIN ((int64_t)1 << 20)
enum { INIT_MAXTHREADS = 8 };

void rt_init_block(const rt_init *in, rt_dtype t, int rank, const int64_t *global_shape,
                   const int64_t *off, const int64_t *local, void *dst, int threads) {
  if (rank > RT_MAXRANK) rank = RT_MAXRANK;
  fill b = {in, t, rank, off, local, {0}, 1, dst, 0, 1};
  int64_t acc = 1;
  for (int d = rank - 1; d >= 0; d--) { b.gstride[d] = acc; acc *= global_shape[d]; }
  if (rank > 0) b.L = local[rank - 1];
  for (int d = 0; d < rank - 1; d++) b.hi *= local[d];
  if (b.L <= 0 || b.hi <= 0) return;
  int64_t rows = b.hi;
  int n = threads < 1 ? 1 : threads > INIT_MAXTHREADS ? INIT_MAXTHREADS : threads;
  if (rows * b.L < INIT_PAR_MIN || rows < n) n = 1;
  fill part[INIT_MAXTHREADS];
  pthread_t th[INIT_MAXTHREADS];
  int started[INIT_MAXTHREADS] = {0};
  for (int i = 0; i < n; i++) {   /* the same numbers however many threads: each element's draw is its own */
    part[i] = b;
    part[i].lo = rows * i / n;
    part[i].hi = rows * (i + 1) / n;
    if (i > 0 && pthread_create(&th[i], NULL, fill_rows, &part[i]) == 0) started[i] = 1;
  }
  for (int i = 0; i < n; i++) if (!started[i]) fill_rows(&part[i]);
  for (int i = 1; i < n; i++) if (started[i]) pthread_join(th[i], NULL);
}

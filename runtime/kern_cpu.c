/*
** kern_cpu.c: the CPU backend. GEMMs go to OpenBLAS; everything else is
** plain C. Elementwise loops are written as blocks of 8 with a scalar
** tail: at -O2 GCC vectorizes only loops whose trip count is a multiple
** of the vector width, and an inner loop of exactly 8 qualifies. Sums
** accumulate in double, in independent lanes so that they vectorize too.
*/
/* Polynomials evaluate as fused multiply-adds where the CPU has them (the
** AVX2 clones): one rounding instead of two, and half the instructions. */
#pragma GCC optimize("fp-contract=fast")

#include "util/diag.h"
#include "runtime/backend.h"
#include "runtime/kern_any.h"
#include "runtime/kern_attn.h"
#include "runtime/kern_ring.h"
#include "runtime/kern_index.h"
#include "runtime/kern_f64.h"

#include <cblas.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int64_t i64;

#include "runtime/kern_math.h"



/* Allocations of 1 GiB and more (in practice the planned block of a large
** program) are asked for in 2 MiB pages, which Linux gives to madvised
** memory when its transparent huge pages are "madvise" or "always".
** GPT-2 small's step touches 7.6 GiB: in 4 KiB pages its first step took
** 2.4 M page faults (20-30 s of system time on this VM) and the later
** steps' GEMMs over the [8192, 50257] logits ran at half the speed they
** reach alone; in 2 MiB pages the first step took 46-50 s against 65-74 and
** the next 39.5-40.0 s against 45-53 (alternating runs). Below 1 GiB they
** did not pay: the 4-layer GPT of issue 13 (a 568 MB block, every
** dimension a power of two) ran 3-5 % slower on one thread in 2 MiB pages.
**
** Smaller allocations of 1 MiB and more are faulted in at once
** (MADV_POPULATE_WRITE, Linux 5.14): everything the executor allocates is
** written soon after (inputs at set-up, the block and outputs in the first
** run), and the kernel populates a range faster than it takes one fault
** per page: GPT-2 small's set-up (parameters and Adam's moments, 1.5 GB in
** pieces of 2-150 MB) took 3.3-3.7 s against 5.7-5.8 (alternating runs).
** Where either advice is unknown, madvise fails and nothing changes. */
enum { HUGE_PAGE = 2 << 20 };
#define HUGE_FROM ((size_t)1 << 30)
#define POPULATE_FROM ((size_t)1 << 20)

static void *cpu_alloc(void *ctx, size_t bytes) {
  size_t n = (bytes + 63) & ~(size_t)63;
#ifdef MADV_HUGEPAGE
  if (n >= HUGE_FROM) {
    n = (n + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
    void *q = aligned_alloc(HUGE_PAGE, n);
    if (q) (void)madvise(q, n, MADV_HUGEPAGE);
    return q;
  }
#endif
  void *q = aligned_alloc(64, n ? n : 64);
#ifdef MADV_POPULATE_WRITE
  if (q && n >= POPULATE_FROM) {
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t mask = page > 0 ? (uintptr_t)page - 1 : 4095, lo = ((uintptr_t)q + mask) & ~mask,
              hi = ((uintptr_t)q + n) & ~mask;
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
  }
#endif
  return q;
}

static void cpu_free(void *ctx, void *p) { free(p); }

/* host memory both ways: a copy */
static int cpu_copy(void *ctx, void *dst, const void *src, size_t bytes, char *err, size_t errlen) {
  if (bytes && dst != src) memcpy(dst, src, bytes);
  return 0;
}

static int cpu_zero(void *ctx, void *p, size_t bytes, char *err, size_t errlen) {
  if (bytes) memset(p, 0, bytes);
  return 0;
}

void rt_backend_free(const rt_backend *be) {
  if (be && be->release) be->release(be);
}

/* ---- sums in double ---- */

HOT static double sum_d(const float *restrict x, i64 n) {
  double acc[8] = {0};
  i64 i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++) acc[j] += x[i + j];
  double s = 0;
  for (; i < n; i++) s += x[i];
  return s + ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

HOT static double dot_d(const float *restrict x, const float *restrict y, i64 n) {
  double acc[8] = {0};
  i64 i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++) acc[j] += (double)x[i + j] * y[i + j];
  double s = 0;
  for (; i < n; i++) s += (double)x[i] * y[i];
  return s + ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* sum of (x - mu)^2 */
HOT static double sqdev_d(const float *restrict x, double mu, i64 n) {
  double acc[8] = {0};
  i64 i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++) { double d = x[i + j] - mu; acc[j] += d * d; }
  double s = 0;
  for (; i < n; i++) { double d = x[i] - mu; s += d * d; }
  return s + ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* sum of g * (x - mu) */
HOT static double dotdev_d(const float *restrict g, const float *restrict x, double mu, i64 n) {
  double acc[8] = {0};
  i64 i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++) acc[j] += g[i + j] * (x[i + j] - mu);
  double s = 0;
  for (; i < n; i++) s += g[i] * (x[i] - mu);
  return s + ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}


/* The largest of x[0, n), in 32 lanes: four vectors whose compare-and-
** select chains run side by side (with one, each block of 8 waited for
** the last: the cross-entropy's 2048 rows of 8192 took about 10 ms a
** step to find their maxima). maxnan orders -0 below +0 and passes NaN
** on, so any lane order gives the same result. */
HOT static float max_f(const float *restrict x, i64 n) {
  float acc[32];
  for (int j = 0; j < 32; j++) acc[j] = -INFINITY;
  i64 i = 0;
  for (; i + 32 <= n; i += 32)
    for (int j = 0; j < 32; j++) acc[j] = maxnan(x[i + j], acc[j]);
  float m = -INFINITY;
  for (; i < n; i++) m = maxnan(x[i], m);
  for (int j = 0; j < 32; j++) m = maxnan(acc[j], m);
  return m;
}

/* ---- elementwise ---- */


/* One contiguous run. va/vb say whether an input advances (1) or is one
   value repeated (0); they are constants at every call, so each call
   compiles to its own specialised loops. The switch is outside the loops. */
INLINE void ew_span(int fn, i64 n, float *restrict o, const float *restrict a, int va,
                    const float *restrict b, int vb, float al, float be) {
  const float a0 = va ? 0.0f : a[0];
  const float b0 = (vb || !b) ? 0.0f : b[0];
#define X (va ? a[k] : a0)
#define Y (vb ? b[k] : b0)
  switch (fn) {   /* ORDER RT_EWFN */
  case RT_NEG:   FOR8(n, o[k] = -X); break;
  case RT_EXP:   FOR8(n, o[k] = exp_v(X)); break;
  case RT_LOG:   FOR8(n, o[k] = logf(X)); break;
  case RT_SQRT:  FOR8(n, o[k] = sqrtf(X)); break;
  case RT_RSQRT: FOR8(n, o[k] = 1.0f / sqrtf(X)); break;
  case RT_TANH:  FOR8(n, o[k] = tanh_v(X)); break;
  case RT_RELU:  FOR8(n, { float x = X; o[k] = sel(x < 0, 0.0f, x); }); break;
  case RT_GELU:  FOR8(n, o[k] = gelu_f(X)); break;
  case RT_GELU_TANH: FOR8(n, o[k] = gelu_tanh_f(X)); break;
  case RT_SIGMOID: FOR8(n, o[k] = sigm(X)); break;
  case RT_SILU:  FOR8(n, { float x = X; o[k] = x * sigm(x); }); break;
  case RT_AFFINE: FOR8(n, o[k] = X * al + be); break;
  case RT_ADD:   FOR8(n, o[k] = X + Y); break;
  case RT_SUB:   FOR8(n, o[k] = X - Y); break;
  case RT_MUL:   FOR8(n, o[k] = X * Y); break;
  case RT_DIV:   FOR8(n, o[k] = X / Y); break;
  case RT_MAX:   FOR8(n, o[k] = maxnan(X, Y)); break;
  case RT_MIN:   FOR8(n, o[k] = minnan(X, Y)); break;
  case RT_GE:    FOR8(n, o[k] = X >= Y ? 1.0f : 0.0f); break;
  case RT_RELU_GRAD: FOR8(n, o[k] = sel(X > 0, Y, 0.0f)); break;
  case RT_GELU_GRAD: FOR8(n, o[k] = gelu_grad_f(X, Y)); break;
  case RT_GELU_TANH_GRAD: FOR8(n, o[k] = gelu_tanh_grad_f(X, Y)); break;
  case RT_SILU_GRAD: FOR8(n, o[k] = silu_grad_f(X, Y)); break;
  case RT_AXPY:  FOR8(n, o[k] = X + al * Y); break;
  case RT_AXPBY: FOR8(n, o[k] = al * X + be * Y); break;
  case RT_ADAM_DENOM: FOR8(n, o[k] = sqrtf(X) * al + be); break;
  default: break;
  }
#undef X
#undef Y
}

HOT static void ew_run(int fn, i64 n, float *o, const float *a, int va, const float *b, int vb, float al, float be) {
  if (va && vb) ew_span(fn, n, o, a, 1, b, 1, al, be);
  else if (va) ew_span(fn, n, o, a, 1, b, 0, al, be);
  else if (vb) ew_span(fn, n, o, a, 0, b, 1, al, be);
  else ew_span(fn, n, o, a, 0, b, 0, al, be);
}

/* out over one of its inputs (an update in place): each piece goes through a
** small buffer, so the loops keep their no-overlap promise */
static void ew_inplace(int fn, i64 n, float *o, const float *a, int va, const float *b, int vb, float al, float be) {
  _Alignas(64) float chunk[1024];
  for (i64 i = 0; i < n; i += 1024) {
    i64 k = n - i < 1024 ? n - i : 1024;
    ew_run(fn, k, chunk, va ? a + i : a, va, b && vb ? b + i : b, vb, al, be);
    memcpy(o + i, chunk, (size_t)k * sizeof *o);
  }
}

/* ---- threads ----
** Large kernels use as many threads as BLAS does, so that the kernels
** between the GEMMs keep pace with them ("one BLAS thread" means one thread
** for everything). Threads are started for a kernel and joined before it
** returns: none is left spinning while the GEMMs run. */

typedef void (*span_fn)(void *ctx, i64 lo, i64 hi);
typedef struct span { span_fn fn; void *ctx; i64 lo, hi; } span;

enum { MAXTHREADS = 8 };
#define PAR_MIN ((i64)1 << 16)    /* elements below which one thread does it all */

static void *span_thread(void *x) {
  span *s = x;
  s->fn(s->ctx, s->lo, s->hi);
  return NULL;
}

int rt_host_threads(void) { return openblas_get_num_threads(); }

/* How many threads for `work` elements in `pieces` independent pieces. */
static int kernel_threads(i64 work, i64 pieces) {
  if (work < PAR_MIN) return 1;
  i64 t = rt_host_threads();
  if (t > MAXTHREADS) t = MAXTHREADS;
  if (t > pieces) t = pieces;
  return t < 1 ? 1 : (int)t;
}

/* fn over [0, n) in t contiguous pieces, multiples of align but the last,
** the first on this thread; where no thread can be had, here too. */
static void par_spans(int t, i64 n, i64 align, span_fn fn, void *ctx) {
  if (t <= 1) { fn(ctx, 0, n); return; }
  if (t > MAXTHREADS) t = MAXTHREADS;
  pthread_t th[MAXTHREADS];
  span sp[MAXTHREADS];
  int started = 0;
  i64 piece = ((n + t - 1) / t + align - 1) / align * align;
  for (int i = 0; i < t; i++) {
    i64 lo = (i64)i * piece < n ? (i64)i * piece : n, hi = lo + piece < n ? lo + piece : n;
    sp[i] = (span){fn, ctx, lo, hi};
    if (i == 0 || lo >= hi) continue;
    if (pthread_create(&th[i], NULL, span_thread, &sp[i]) != 0) span_thread(&sp[i]);
    else started |= 1 << i;
  }
  span_thread(&sp[0]);
  for (int i = 1; i < t; i++) if ((started >> i) & 1) pthread_join(th[i], NULL);
}

typedef struct ewjob { int fn; float *o; const float *a; int va; const float *b; int vb; float al, be; int inplace; } ewjob;

static void ew_span_job(void *x, i64 lo, i64 hi) {
  const ewjob *j = x;
  float *o = j->o + lo;
  const float *a = j->va ? j->a + lo : j->a, *b = j->b && j->vb ? j->b + lo : j->b;
  if (j->inplace) ew_inplace(j->fn, hi - lo, o, a, j->va, b, j->vb, j->al, j->be);
  else ew_run(j->fn, hi - lo, o, a, j->va, b, j->vb, j->al, j->be);
}

/* Transcendentals are worth more threads; sums and products are bound by
** memory bandwidth, which one core already fills. */
static int heavy(int fn) {
  switch (fn) {
  case RT_EXP: case RT_LOG: case RT_SQRT: case RT_RSQRT: case RT_TANH: case RT_GELU: case RT_GELU_TANH:
  case RT_SIGMOID: case RT_SILU: case RT_GELU_GRAD: case RT_GELU_TANH_GRAD: case RT_SILU_GRAD: case RT_ADAM_DENOM:
    return 1;
  default:
    return 0;
  }
}

static void ew_par(int fn, i64 n, float *o, const float *a, int va, const float *b, int vb, float al, float be) {
  ewjob j = {fn, o, a, va, b, vb, al, be, o == a || (b && o == b)};
  par_spans(n >= ((i64)1 << 18) && heavy(fn) ? kernel_threads(n, n / 16) : 1, n, 16, ew_span_job, &j);
}

/* The index over dims [0, r - 1) of shape shp of row `row`. */
static void row_index(i64 row, int r, const i64 *shp, i64 *idx) {
  for (int d = r - 2; d >= 0; d--) { idx[d] = row % shp[d]; row /= shp[d]; }
}

static i64 index_offset(const i64 *idx, int r, const i64 *st) {
  i64 off = 0;
  for (int d = 0; d < r - 1; d++) off += idx[d] * st[d];
  return off;
}

/* An elementwise op as rows of its last merged dim (a broadcast, a bias add):
** rows [lo, hi), strided inputs gathered a row at a time. */
typedef struct ewrows {
  int fn, ar, r;
  const i64 *shp;
  i64 (*st)[RT_MAXRANK];
  const float *a, *b;
  float *o;
  float al, be;
  int one_row;            /* the whole op is one run: threads within it (ew_par) */
  int failed;
} ewrows;

static void ew_rows_span(void *x, i64 lo, i64 hi) {
  ewrows *j = x;
  int r = j->r, two = j->ar > 1;
  i64 L = j->shp[r - 1], sa = j->st[0][r - 1], sb = j->st[1][r - 1];
  float *ta = NULL, *tb = NULL;       /* rows of strided inputs, gathered */
  if ((sa != 0 && sa != 1 && !(ta = malloc((size_t)L * sizeof *ta))) ||
      (two && sb != 0 && sb != 1 && !(tb = malloc((size_t)L * sizeof *tb)))) {
    free(ta);
    j->failed = 1;
    return;
  }
  i64 idx[RT_MAXRANK] = {0};
  row_index(lo, r, j->shp, idx);
  i64 oa = index_offset(idx, r, j->st[0]), ob = index_offset(idx, r, j->st[1]);
  for (i64 row = lo; row < hi; row++) {
    const float *pa = j->a + oa, *pb = j->b ? j->b + ob : NULL;
    if (ta) { for (i64 k = 0; k < L; k++) ta[k] = pa[k * sa]; pa = ta; }
    if (tb) { for (i64 k = 0; k < L; k++) tb[k] = pb[k * sb]; pb = tb; }
    if (j->one_row) ew_par(j->fn, L, j->o, pa, sa != 0, pb, !two || sb != 0, j->al, j->be);   /* in place too */
    else if (j->o + row * L == pa || (pb && j->o + row * L == pb))       /* written over its input */
      ew_inplace(j->fn, L, j->o + row * L, pa, sa != 0, pb, !two || sb != 0, j->al, j->be);
    else ew_run(j->fn, L, j->o + row * L, pa, sa != 0, pb, !two || sb != 0, j->al, j->be);
    for (int d = r - 2; d >= 0; d--) {
      idx[d]++;
      oa += j->st[0][d];
      ob += j->st[1][d];
      if (idx[d] < j->shp[d]) break;
      oa -= j->st[0][d] * j->shp[d];
      ob -= j->st[1][d] * j->shp[d];
      idx[d] = 0;
    }
  }
  free(ta);
  free(tb);
}

/* Column sums take up to COLS columns of every row at a time: each row's
   piece is read whole (a bias gradient of 2048 columns at 512 a time read
   2 KiB of every 8 KiB row, which the prefetchers follow poorly, and took
   twice as long) while the double accumulators stay in L1 or L2. */
enum { COLS = 2048 };

/* ---- elementwise with the sum of its rows ----
** out = fn(in0, in1) over dense [rows, w] operands, and sum[c] = the sum of
** out's column c (a bias gradient folded into the pass that makes it:
** interp/lower/biasgrad.c). It goes down the rows making its piece of each
** row and adding it in while it is in L1, rather than reading the result
** again from memory. Threads take the columns where fn is heavy (a gelu
** gradient); a sum or product is bound by memory, which one core fills
** (two threads made the folded adds of a 4-layer GPT step 2x slower).
** The sums are colsum's: double, rows in order, so the same bits as the
** reduce_sum they replace. Where out is also an input (an update in
** place) each piece is made in a small buffer first, as ew_inplace does. */

typedef struct ewsum {
  int fn;
  i64 rows, w;
  const float *a, *b;
  float *o, *sum;
  float al, be;
} ewsum;

HOT static void ew_colsum_span(void *x, i64 lo, i64 hi) {
  const ewsum *j = x;
  int direct = j->o != j->a && j->o != j->b;
  _Alignas(64) float piece[COLS];
  double acc[COLS];
  for (i64 c0 = lo; c0 < hi; c0 += COLS) {
    i64 w = hi - c0 < COLS ? hi - c0 : COLS;
    for (i64 k = 0; k < w; k++) acc[k] = 0;
    for (i64 r = 0; r < j->rows; r++) {
      i64 at = r * j->w + c0;
      float *dst = direct ? j->o + at : piece;
      ew_run(j->fn, w, dst, j->a + at, 1, j->b ? j->b + at : NULL, j->b != NULL, j->al, j->be);
      FOR8(w, acc[k] += dst[k]);
      if (!direct) memcpy(j->o + at, piece, sizeof(float) * (size_t)w);
    }
    for (i64 k = 0; k < w; k++) j->sum[c0 + k] = (float)acc[k];
  }
}

static int k_ew_colsum(const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  int ar = rt_ewfn_arity((rt_ewfn)ins->fn);
  if (ar < 1 || ar > 2 || ins->fn >= RT_ABS || !rt_all_f32(ins, ar) || ins->rank < 1 || ins->rank > RT_MAXRANK)
    return diag_errbuf(err, errlen, "a sum of rows takes f32 elementwise ops of one or two inputs");
  i64 w = ins->shape[ins->rank - 1], rows = 1;
  for (int d = 0; d < ins->rank - 1; d++) rows *= ins->shape[d];
  float *sum = in[3];
  if (w == 0) return 0;
  if (rows == 0) { FOR8(w, sum[k] = 0); return 0; }
  ewsum j = {ins->fn, rows, w, in[0], ar > 1 ? in[1] : NULL, out, sum, ins->alpha, ins->beta};
  par_spans(heavy(ins->fn) ? kernel_threads(rows * w, w / 64) : 1, w, 64, ew_colsum_span, &j);
  return 0;
}

static int k_ew(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  int fn = ins->fn, ar = rt_ewfn_arity((rt_ewfn)fn);
  if (in[3]) return k_ew_colsum(ins, out, in, err, errlen);
  if (fn >= RT_ABS || !rt_all_f32(ins, ar)) return rt_any_ew(ins, out, in, err, errlen);   /* other dtypes */
  if (ar < 1 || ar > 2) return diag_errbuf(err, errlen, "unknown elementwise function %d", fn);
  if (ins->rank > RT_MAXRANK) return diag_errbuf(err, errlen, "rank %d is over %d", ins->rank, RT_MAXRANK);
  /* Drop unit dims and merge dims that every input walks contiguously:
     a plain elementwise op becomes one run, a bias add becomes rows. */
  i64 shp[RT_MAXRANK], st[2][RT_MAXRANK] = {{0}};
  int r = rt_merge_dims(ins->rank, ins->shape, ar, ins->stride, shp, st);
  if (r == 0) return 0;

  i64 rows = 1;
  for (int d = 0; d < r - 1; d++) rows *= shp[d];
  ewrows j = {fn, ar, r, shp, st, in[0], ar > 1 ? in[1] : NULL, out, ins->alpha, ins->beta, rows == 1, 0};
  par_spans(rows > 1 ? kernel_threads(rows * shp[r - 1], rows) : 1, rows, 1, ew_rows_span, &j);
  return j.failed ? diag_errbuf(err, errlen, "out of memory") : 0;
}

/* ---- fused elementwise steps ----
** RT_FUSED (interp/lower/fuse.c): the steps of a chain of elementwise
** functions, a block of FBLOCK consecutive elements at a time, each step's
** block in L1 for the next, so that memory sees the inputs once and the
** result once. Each step is the kernel above over a block (ew_run), so
** the numbers are the unfused program's, bit for bit. The dims are merged
** as k_ew merges them; a block that crosses the end of the last one runs
** as two pieces. An input with stride 0 along the last dim is one value a
** piece; one with another stride is gathered first. With RT_FUSED_REDUCE
** the values go, in order, into the sums (or maxima) of RT_REDUCE: the
** same accumulators in the same order, so its bits too. Threads take
** blocks, or the rows of a reduction. */
enum { FBLOCK = 256 };

/* a comparison (quiet: NaN compares unequal) or a select, over a block */
static void pick_run(int fn, i64 n, float *restrict o, const float *const v[3], const int adv[3]) {
  const float *a = v[0], *b = v[1], *c = v[2];
  i64 sa = adv[0], sb = adv[1], sc = adv[2];
#define PICK(expr) for (i64 e = 0; e < n; e++) { float x = a[e * sa], y = b[e * sb]; o[e] = (expr); } break
  switch (fn) {
  case RT_CMP_EQ: PICK(x == y ? 1.0f : 0.0f);
  case RT_CMP_NE: PICK(x != y ? 1.0f : 0.0f);
  case RT_CMP_LT: PICK(x < y ? 1.0f : 0.0f);
  case RT_CMP_LE: PICK(x <= y ? 1.0f : 0.0f);
  case RT_CMP_GT: PICK(x > y ? 1.0f : 0.0f);
  case RT_CMP_GE: PICK(x >= y ? 1.0f : 0.0f);
  default: PICK(x != 0 ? y : c[e * sc]);     /* RT_SELECT */
  }
#undef PICK
}

typedef struct fjob {
  const rt_instr *ins;
  const rt_fused *fu;
  int r, nin;
  int bits[RT_MAXIN];      /* input k is i1 */
  i64 shp[RT_MAXRANK], st[RT_MAXIN][RT_MAXRANK], total;
  const float *in[RT_MAXIN];
  float *o;
  int alias;               /* out is one of the inputs: each block is made aside first */
  int failed;              /* a thread's scratch could not be had */
} fjob;

/* the scratch of one thread: each step's block, and inputs gathered */
typedef struct fscratch {
  _Alignas(64) float res[RT_FUSE_MAXSTEPS][FBLOCK];
  _Alignas(64) float gath[RT_MAXIN][FBLOCK];
} fscratch;

/* elements [e0, e0 + n) (n <= FBLOCK) of the chain's result into dst */
HOT static void fused_range(const fjob *j, fscratch *w, i64 e0, i64 n, float *dst) {
  const rt_fused *fu = j->fu;
  int r = j->r, last = fu->nsteps - 1;
  i64 L = j->shp[r - 1];
  for (i64 done = 0; done < n; ) {
    i64 e = e0 + done, row = e / L, c0 = e % L, m = n - done < L - c0 ? n - done : L - c0;
    i64 idx[RT_MAXRANK] = {0};
    row_index(row, r, j->shp, idx);
    const float *src[RT_MAXIN];
    int adv[RT_MAXIN];
    for (int k = 0; k < j->nin; k++) {
      i64 s = j->st[k][r - 1], at = index_offset(idx, r, j->st[k]) + c0 * s, cnt = s == 0 ? 1 : m;
      adv[k] = s != 0;
      if (j->bits[k]) {                 /* an i1 predicate: 0 or 1 */
        const unsigned char *p = (const unsigned char *)j->in[k] + at;
        for (i64 x = 0; x < cnt; x++) w->gath[k][x] = p[x * s] ? 1.0f : 0.0f;
        src[k] = w->gath[k];
        continue;
      }
      const float *p = j->in[k] + at;
      if (s == 0 || s == 1) { src[k] = p; continue; }
      for (i64 x = 0; x < m; x++) w->gath[k][x] = p[x * s];
      src[k] = w->gath[k];
    }
    for (int t = 0; t <= last; t++) {
      const rt_fstep *s = &fu->step[t];
      const float *v[3] = {NULL, NULL, NULL};
      int adv_v[3] = {1, 1, 1}, ar = rt_ewfn_arity((rt_ewfn)s->fn);
      for (int a = 0; a < ar && a < 3; a++) {
        if (s->arg[a] >= 0) v[a] = w->res[s->arg[a]];
        else { v[a] = src[-1 - s->arg[a]]; adv_v[a] = adv[-1 - s->arg[a]]; }
      }
      float *out = t == last ? dst + done : w->res[t];
      if (s->fn < RT_ABS) ew_run(s->fn, m, out, v[0], adv_v[0], v[1], adv_v[1], s->alpha, s->beta);
      else pick_run(s->fn, m, out, v, adv_v);
    }
    done += m;
  }
}

/* blocks [lo, hi) of the result */
static void fused_blocks(void *x, i64 lo, i64 hi) {
  fjob *j = x;
  fscratch *w = malloc(sizeof *w);
  _Alignas(64) float aside[FBLOCK];
  if (!w) { j->failed = 1; return; }
  for (i64 b = lo; b < hi; b++) {
    i64 e0 = b * FBLOCK, n = j->total - e0 < FBLOCK ? j->total - e0 : FBLOCK;
    fused_range(j, w, e0, n, j->alias ? aside : j->o + e0);
    if (j->alias) memcpy(j->o + e0, aside, sizeof(float) * (size_t)n);
  }
  free(w);
}

/* rows [lo, hi) of a reduction over n (RT_REDUCE's [outer, n, inner]):
** RT_RSUM with inner 1 in sum_d's eight double lanes and tail, else each
** column in double, rows in order; maxima and minima as maxnan, minnan */
static void fused_reduce_rows(void *x, i64 lo, i64 hi) {
  fjob *j = x;
  const rt_instr *ins = j->ins;
  i64 N = ins->n, NI = ins->inner, per = N * NI, n8 = N - N % 8;
  fscratch *w = malloc(sizeof *w);
  double *acc = malloc(sizeof(double) * (size_t)(NI > 8 ? NI : 8));
  float *mx = malloc(sizeof(float) * (size_t)(NI > 0 ? NI : 1));
  _Alignas(64) float vals[FBLOCK];
  if (!w || !acc || !mx) { free(w); free(acc); free(mx); j->failed = 1; return; }
  int fn = ins->fn;
  for (i64 o = lo; o < hi; o++) {
    double tail = 0;
    for (i64 c = 0; c < (NI > 8 ? NI : 8); c++) acc[c] = 0;
    for (i64 c = 0; c < NI; c++) mx[c] = fn == RT_RMIN ? INFINITY : -INFINITY;
    for (i64 e = 0, col = 0; e < per; e += FBLOCK) {
      i64 n = per - e < FBLOCK ? per - e : FBLOCK;
      fused_range(j, w, o * per + e, n, vals);
      if (fn == RT_RSUM && NI == 1)       /* element e + q is row e + q */
        for (i64 q = 0; q < n; q++) {
          if (e + q < n8) acc[(e + q) % 8] += vals[q];
          else tail += vals[q];
        }
      else
        for (i64 q = 0; q < n; q++, col = col + 1 == NI ? 0 : col + 1) {
          if (fn == RT_RMAX) mx[col] = maxnan(vals[q], mx[col]);
          else if (fn == RT_RMIN) mx[col] = minnan(vals[q], mx[col]);
          else acc[col] += vals[q];
        }
    }
    float *y = j->o + o * NI;
    if (fn != RT_RSUM) memcpy(y, mx, sizeof(float) * (size_t)NI);
    else if (NI > 1) for (i64 c = 0; c < NI; c++) y[c] = (float)(acc[c] * ins->alpha);
    else y[0] = (float)((tail + ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))) * ins->alpha);
  }
  free(w);
  free(acc);
  free(mx);
}

static int k_fused(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  const rt_fused *fu = ins->data;
  fjob j;
  memset(&j, 0, sizeof j);
  j.ins = ins;
  j.fu = fu;
  j.nin = ins->nin;
  j.o = out;
  for (int k = 0; k < j.nin; k++) { j.in[k] = in[k]; j.alias |= in[k] == out; j.bits[k] = ins->idt[k] == RT_I1; }
  int r = rt_merge_dims(ins->rank, ins->shape, j.nin, fu->stride, j.shp, j.st);
  int reduce = ins->mode & RT_FUSED_REDUCE;
  if (r == 0) {                         /* no element: a reduction's empty sums and maxima */
    if (reduce) for (i64 i = 0; i < ins->outer * ins->inner; i++) j.o[i] = ins->fn == RT_RSUM ? 0.0f : ins->fn == RT_RMIN ? INFINITY : -INFINITY;
    return 0;
  }
  j.r = r;
  j.total = 1;
  for (int d = 0; d < r; d++) j.total *= j.shp[d];
  int work = 0;            /* transcendentals, or enough steps, are worth threads (ew_par) */
  for (int t = 0; t < fu->nsteps; t++) work += heavy(fu->step[t].fn) ? 4 : 1;
  int many = j.total >= ((i64)1 << 18) && work >= 4;
  if (reduce) par_spans(many ? kernel_threads(j.total, ins->outer) : 1, ins->outer, 1, fused_reduce_rows, &j);
  else {
    i64 blocks = (j.total + FBLOCK - 1) / FBLOCK;
    par_spans(many ? kernel_threads(j.total, blocks) : 1, blocks, 1, fused_blocks, &j);
  }
  (void)ctx;
  return j.failed ? diag_errbuf(err, errlen, "out of memory") : 0;
}

/* ---- data movement ---- */

static int k_fill(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (ins->odt != RT_F32) { rt_any_fill(ins, out); return 0; }
  float *o = out, v = ins->alpha;
  FOR8(ins->nelem, o[k] = v);
  return 0;
}

/* rows [off, off+n2) of in0 [outer, n, inner] (the executor has resolved the piece) */
static int k_shard_slice(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  i64 n = ins->n, piece = ins->n2, inner = ins->inner;
  if (ins->off < 0 || piece < 0 || ins->off + piece > n)
    return diag_errbuf(err, errlen, "rows [%" PRId64 ", %" PRId64 ") outside [0, %" PRId64 ")", ins->off, ins->off + piece, n);
  size_t es = rt_dtype_size((rt_dtype)ins->odt), row = (size_t)(piece * inner) * es;
  for (i64 o = 0; o < ins->outer; o++)
    memcpy((char *)out + o * row, (const char *)in[0] + (size_t)((o * n + ins->off) * inner) * es, row);
  return 0;
}

static int k_copy(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (out != in[0]) memcpy(out, in[0], (size_t)ins->nelem * rt_dtype_size((rt_dtype)ins->odt));
  return 0;
}

/* rows [k, k+n) of in0 [outer, m, inner] to rows [off, off+n) of out [outer, n2, inner];
   m = 0 means m = n (the whole of in0) */
static int k_block_copy(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  i64 n = ins->n, m = ins->m > 0 ? ins->m : n, k0 = ins->k, n2 = ins->n2, off = ins->off, inner = ins->inner;
  if (off < 0 || n < 0 || off + n > n2)
    return diag_errbuf(err, errlen, "block [%" PRId64 ", %" PRId64 ") outside [0, %" PRId64 ")", off, off + n, n2);
  if (k0 < 0 || k0 + n > m)
    return diag_errbuf(err, errlen, "rows [%" PRId64 ", %" PRId64 ") outside [0, %" PRId64 ")", k0, k0 + n, m);
  const char *src = in[0];
  char *dst = out;
  size_t es = rt_dtype_size((rt_dtype)ins->odt), row = (size_t)(n * inner) * es;
  for (i64 o = 0; o < ins->outer; o++)
    memcpy(dst + (size_t)((o * n2 + off) * inner) * es, src + (size_t)((o * m + k0) * inner) * es, row);
  return 0;
}

/* out[i*os + j] = in[i + j*is] for a tile-blocked [ni, nj] slab, one per element size */
#define TRANSPOSE_2D(name, E) \
  static void name(E *restrict o, i64 os, const E *restrict s, i64 is, i64 ni, i64 nj) { \
    enum { T = 32 }; \
    for (i64 i0 = 0; i0 < ni; i0 += T) { \
      i64 i1 = i0 + T < ni ? i0 + T : ni; \
      for (i64 j0 = 0; j0 < nj; j0 += T) { \
        i64 j1 = j0 + T < nj ? j0 + T : nj; \
        for (i64 i = i0; i < i1; i++) \
          for (i64 j = j0; j < j1; j++) o[i * os + j] = s[i + j * is]; \
      } \
    } \
  }
TRANSPOSE_2D(transpose_2d, uint32_t)
TRANSPOSE_2D(transpose_2d_1, uint8_t)
TRANSPOSE_2D(transpose_2d_2, uint16_t)
TRANSPOSE_2D(transpose_2d_8, uint64_t)

static void slab(size_t es, char *o, i64 os, const char *s, i64 is, i64 ni, i64 nj) {
  switch (es) {
  case 1: transpose_2d_1((uint8_t *)o, os, (const uint8_t *)s, is, ni, nj); break;
  case 2: transpose_2d_2((uint16_t *)o, os, (const uint16_t *)s, is, ni, nj); break;
  case 8: transpose_2d_8((uint64_t *)o, os, (const uint64_t *)s, is, ni, nj); break;
  default: transpose_2d((uint32_t *)o, os, (const uint32_t *)s, is, ni, nj); break;
  }
}

/* A transpose with unit dims dropped and runs merged: output dims os[r],
** their strides in the input s[r]; pieces of it on threads. */
typedef struct trjob {
  const char *src;
  char *dst;
  size_t es;
  int r;
  const i64 *os, *s;
  int q;                  /* slabs: the output dim contiguous in the input */
  i64 ostr[RT_MAXRANK];
} trjob;

/* rows [lo, hi) of the output, each a contiguous run of the input */
static void transpose_runs(void *x, i64 lo, i64 hi) {
  const trjob *j = x;
  int r = j->r;
  i64 L = j->os[r - 1], idx[RT_MAXRANK] = {0};
  size_t es = j->es;
  row_index(lo, r, j->os, idx);
  i64 off = index_offset(idx, r, j->s);
  for (i64 row = lo; row < hi; row++) {
    memcpy(j->dst + (size_t)(row * L) * es, j->src + (size_t)off * es, (size_t)L * es);
    for (int d = r - 2; d >= 0; d--) {
      idx[d]++;
      off += j->s[d];
      if (idx[d] < j->os[d]) break;
      off -= j->s[d] * j->os[d];
      idx[d] = 0;
    }
  }
}

/* slabs [lo, hi): each a 2-D transpose of dim q against the last */
static void transpose_slabs(void *x, i64 lo, i64 hi) {
  const trjob *j = x;
  int r = j->r, q = j->q;
  i64 idx[RT_MAXRANK] = {0}, ioff = 0, ooff = 0, t = lo;
  for (int d = r - 2; d >= 0; d--) if (d != q) { idx[d] = t % j->os[d]; t /= j->os[d]; ioff += idx[d] * j->s[d]; ooff += idx[d] * j->ostr[d]; }
  for (i64 sl = lo; sl < hi; sl++) {
    slab(j->es, j->dst + (size_t)ooff * j->es, j->ostr[q], j->src + (size_t)ioff * j->es, j->s[r - 1], j->os[q], j->os[r - 1]);
    for (int d = r - 2; d >= 0; d--) {
      if (d == q) continue;
      idx[d]++;
      ioff += j->s[d];
      ooff += j->ostr[d];
      if (idx[d] < j->os[d]) break;
      ioff -= j->s[d] * j->os[d];
      ooff -= j->ostr[d] * j->os[d];
      idx[d] = 0;
    }
  }
}

/* one slab, its rows (along q) [lo, hi) */
static void transpose_one_slab(void *x, i64 lo, i64 hi) {
  const trjob *j = x;
  int r = j->r, q = j->q;
  slab(j->es, j->dst + (size_t)(lo * j->ostr[q]) * j->es, j->ostr[q], j->src + (size_t)lo * j->es, j->s[r - 1], hi - lo, j->os[r - 1]);
}

static int k_transpose(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  int rank = ins->rank;
  if (rank < 0 || rank > RT_MAXRANK) return diag_errbuf(err, errlen, "bad rank %d", rank);
  i64 istr[RT_MAXRANK], total = 1;
  for (int d = rank - 1; d >= 0; d--) { istr[d] = total; total *= ins->shape[d]; }
  if (total == 0) return 0;
  /* output dims with their input strides, unit dims dropped, runs merged */
  i64 os[RT_MAXRANK], s[RT_MAXRANK];
  int r = 0, seen = 0;
  for (int i = 0; i < rank; i++) {
    int p = ins->perm[i];
    if (p < 0 || p >= rank || (seen >> p & 1)) return diag_errbuf(err, errlen, "bad permutation");
    seen |= 1 << p;
    if (ins->shape[p] == 1) continue;
    if (r > 0 && s[r - 1] == istr[p] * ins->shape[p]) { os[r - 1] *= ins->shape[p]; s[r - 1] = istr[p]; }
    else { os[r] = ins->shape[p]; s[r] = istr[p]; r++; }
  }
  trjob j = {in[0], out, rt_dtype_size((rt_dtype)ins->odt), r, os, s, 0};
  if (r == 0) { memcpy(out, in[0], j.es); return 0; }
  if (s[r - 1] == 1 || r == 1) {       /* the innermost output dim is contiguous in the input too: copy runs */
    i64 rows = total / os[r - 1];
    par_spans(kernel_threads(total, rows), rows, 1, transpose_runs, &j);
    return 0;
  }
  /* otherwise transpose 2-D slabs: dim q (input-contiguous) against the last */
  while (j.q < r && s[j.q] != 1) j.q++;
  if (j.q == r) return diag_errbuf(err, errlen, "bad transpose strides");
  i64 acc = 1;
  for (int d = r - 1; d >= 0; d--) { j.ostr[d] = acc; acc *= os[d]; }
  i64 slabs = total / (os[j.q] * os[r - 1]);
  if (slabs > 1) par_spans(kernel_threads(total, slabs), slabs, 1, transpose_slabs, &j);
  else par_spans(kernel_threads(total, os[j.q] / 32), os[j.q], 32, transpose_one_slab, &j);
  return 0;
}

static int k_causal_mask(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (ins->odt == RT_F64) return rt_f64_kernel(ins, out, in, err, errlen);
  const float *x = in[0];
  float *y = out, v = ins->alpha;
  i64 m = ins->m, n = ins->n;
  for (i64 o = 0; o < ins->outer; o++)
    for (i64 r = 0; r < m; r++) {
      const float *xr = x + (o * m + r) * n;
      float *yr = y + (o * m + r) * n;
      i64 keep = r + ins->off + 1;      /* columns c <= r + off stay */
      if (keep < 0) keep = 0;
      if (keep > n) keep = n;
      if (yr != xr) memcpy(yr, xr, (size_t)keep * 4);
      FOR8(n - keep, yr[keep + k] = v);
    }
  return 0;
}

/* ---- GEMM ---- */

static int k_gemm(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (!rt_all_f32(ins, 2)) return rt_any_gemm(ins, out, in, err, errlen);
  const float *A = in[0], *B = in[1];
  float *C = out;
  i64 m = ins->m, n = ins->n, kk = ins->k, batch = ins->batch < 1 ? 1 : ins->batch;
  i64 sa = ins->stride_a, sb = ins->stride_b, sc = ins->stride_c;
  if (m < 0 || n < 0 || kk < 0) return diag_errbuf(err, errlen, "negative GEMM size");
  if (m == 0 || n == 0) return 0;
  if (kk == 0) {      /* no products: C = beta * C */
    for (i64 bt = 0; bt < batch; bt++) {
      float *c = C + bt * sc, beta = ins->beta;
      if (beta == 0) FOR8(m * n, c[k] = 0.0f);
      else FOR8(m * n, c[k] *= beta);
    }
    return 0;
  }
  /* a shared B under a contiguous stack of A's is one tall GEMM */
  if (batch > 1 && sb == 0 && !ins->transa && sa == m * kk && sc == m * n) {
    m *= batch;
    batch = 1;
  }
  if (m > INT_MAX || n > INT_MAX || kk > INT_MAX)
    return diag_errbuf(err, errlen, "GEMM of %" PRId64 "x%" PRId64 "x%" PRId64 " is too large for BLAS", m, n, kk);
  int lda = (int)(ins->transa ? m : kk), ldb = (int)(ins->transb ? kk : n);
  for (i64 bt = 0; bt < batch; bt++)
    cblas_sgemm(CblasRowMajor, ins->transa ? CblasTrans : CblasNoTrans, ins->transb ? CblasTrans : CblasNoTrans,
                (int)m, (int)n, (int)kk, ins->alpha, A + bt * sa, lda, B + bt * sb, ldb, ins->beta, C + bt * sc, (int)n);
  return 0;
}

/* ---- reductions ---- */

/* out[j] = alpha * sum_r x[r*stride + j] for j < w, in column blocks of COLS */
HOT static void colsum(const float *restrict x, i64 n, i64 stride, i64 width, float *restrict out, double alpha) {
  double acc[COLS];
  for (i64 c0 = 0; c0 < width; c0 += COLS) {
    i64 w = width - c0 < COLS ? width - c0 : COLS;
    for (i64 j = 0; j < w; j++) acc[j] = 0;
    for (i64 r = 0; r < n; r++) {
      const float *xr = x + r * stride + c0;
      FOR8(w, acc[k] += xr[k]);
    }
    for (i64 j = 0; j < w; j++) out[c0 + j] = (float)(acc[j] * alpha);
  }
}

HOT static void colmax(const float *restrict x, i64 n, i64 stride, i64 width, float *restrict out) {
  FOR8(width, out[k] = -INFINITY);
  for (i64 r = 0; r < n; r++) {
    const float *xr = x + r * stride;
    FOR8(width, out[k] = maxnan(xr[k], out[k]));
  }
}

HOT static void colmin(const float *restrict x, i64 n, i64 stride, i64 width, float *restrict out) {
  FOR8(width, out[k] = INFINITY);
  for (i64 r = 0; r < n; r++) {
    const float *xr = x + r * stride;
    FOR8(width, out[k] = minnan(xr[k], out[k]));
  }
}

/* outer rows [lo, hi) of a reduction, or with by_cols its columns [lo, hi) of every row */
typedef struct redjob { const rt_instr *ins; float *y; const float *x; int by_cols; } redjob;

static void reduce_span(void *arg, i64 lo, i64 hi) {
  const redjob *j = arg;
  i64 NN = j->ins->n, NI = j->ins->inner;
  i64 o0 = j->by_cols ? 0 : lo, o1 = j->by_cols ? j->ins->outer : hi, c0 = j->by_cols ? lo : 0, w = j->by_cols ? hi - lo : NI;
  for (i64 o = o0; o < o1; o++) {
    const float *xo = j->x + o * NN * NI + c0;
    float *yo = j->y + o * NI + c0;
    if (j->ins->fn == RT_RSUM) {
      if (NI == 1) yo[0] = (float)(sum_d(xo, NN) * j->ins->alpha);
      else colsum(xo, NN, NI, w, yo, j->ins->alpha);
    } else if (j->ins->fn == RT_RMIN) {
      colmin(xo, NN, NI, w, yo);
    } else {
      if (NI == 1) yo[0] = max_f(xo, NN);
      else colmax(xo, NN, NI, w, yo);
    }
  }
}

static int k_reduce(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (!rt_all_f32(ins, 1)) return rt_any_reduce(ins, out, in[0], err, errlen);
  if (ins->fn != RT_RSUM && ins->fn != RT_RMAX && ins->fn != RT_RMIN) return diag_errbuf(err, errlen, "unknown reduction %d", ins->fn);
  i64 NO = ins->outer, NI = ins->inner, work = NO * ins->n * NI;
  /* few rows of many columns (a bias gradient): one thread goes down
     whole rows. Split by columns over two threads, the 11 such sums of a
     4-layer GPT step took 4.5-6.6 ms against 1.5-2.0 on one: each
     thread's half rows are strided reads, and the sum is bound by memory,
     which one core fills (as ew_par's sums and products) */
  redjob j = {ins, out, in[0], NO < 4 && NI >= 256};
  if (j.by_cols) reduce_span(&j, 0, NI);
  else par_spans(kernel_threads(work, NO), NO, 1, reduce_span, &j);
  return 0;
}

HOT static void tie_count(i64 n, const float *restrict x, const float *restrict mx, float *restrict cnt) {
  FOR8(n, cnt[k] += x[k] == mx[k] ? 1.0f : 0.0f);
}

HOT static void tie_share(i64 n, const float *restrict dy, float *restrict cnt) {
  FOR8(n, cnt[k] = cnt[k] > 0 ? dy[k] / cnt[k] : 0.0f);
}

HOT static void tie_write(i64 n, const float *restrict x, const float *restrict mx, const float *restrict share,
                      float *restrict dx) {
  FOR8(n, dx[k] = x[k] == mx[k] ? share[k] : 0.0f);
}

/* rows [lo, hi) of a max's gradient along the last dim (inner 1): the
** same arithmetic as the columns below, a row at a time (by columns of
** width 1, a softmax's 2048 x 128 scores took 4 ms) */
typedef struct maxgradjob { const float *x, *dy; float *dx; i64 n; } maxgradjob;

static void max_grad_rows(void *arg, i64 lo, i64 hi) {
  const maxgradjob *j = arg;
  for (i64 o = lo; o < hi; o++) {
    const float *xo = j->x + o * j->n;
    float *dxo = j->dx + o * j->n, m = max_f(xo, j->n), cnt = 0;
    for (i64 r = 0; r < j->n; r++) cnt += xo[r] == m ? 1.0f : 0.0f;
    float share = cnt > 0 ? j->dy[o] / cnt : 0.0f;
    for (i64 r = 0; r < j->n; r++) dxo[r] = xo[r] == m ? share : 0.0f;
  }
}

static int k_reduce_max_grad(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (ins->odt == RT_F64) return rt_f64_kernel(ins, out, in, err, errlen);
  const float *x = in[0], *dy = in[1];
  float *dx = out;
  i64 NO = ins->outer, NN = ins->n, NI = ins->inner;
  if (NI == 1) {
    maxgradjob j = {x, dy, dx, NN};
    par_spans(kernel_threads(NO * NN, NO), NO, 1, max_grad_rows, &j);
    return 0;
  }
  float *mx = malloc((size_t)(NI > 0 ? NI : 1) * 2 * sizeof *mx);
  if (!mx) return diag_errbuf(err, errlen, "out of memory");
  float *cnt = mx + NI;
  for (i64 o = 0; o < NO; o++) {
    const float *xo = x + o * NN * NI;
    float *dxo = dx + o * NN * NI;
    colmax(xo, NN, NI, NI, mx);
    memset(cnt, 0, (size_t)NI * sizeof *cnt);
    for (i64 r = 0; r < NN; r++) tie_count(NI, xo + r * NI, mx, cnt);
    tie_share(NI, dy + o * NI, cnt);      /* cnt becomes each tie's share */
    for (i64 r = 0; r < NN; r++) tie_write(NI, xo + r * NI, mx, cnt, dxo + r * NI);
  }
  free(mx);
  return 0;
}

/* ---- softmax family ---- */

/* y = exp(x - m), returns the sum in double (one pass); the lanes as
** exp_sum_self's (kern_math.h), which writes over x */
HOT static double exp_shift(const float *restrict x, float *restrict y, float m, i64 n) {
  double acc[8] = {0}, s = 0;
  i64 i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++) { float e = exp_lo(x[i + j] - m); y[i + j] = e; acc[j] += e; }
  for (; i < n; i++) { y[i] = exp_lo(x[i] - m); s += y[i]; }
  return s + ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* the same over x itself (cross-entropy's gradient written over its logits) */
HOT static double exp_self(float *x, float m, i64 n) { return exp_sum_self(x, n, m); }

/* Row-wise kernels split their rows over the threads: rows are
** independent, so each row's arithmetic (and result) is the same whatever
** the split. */
typedef struct rowjob {
  const rt_instr *ins;
  float *out;
  void *const *in;
  double *acc;            /* per-row results summed afterwards in row order (xent) */
  int failed;             /* out of memory in a piece */
} rowjob;

static void run_rows(rowjob *j, span_fn fn) {
  par_spans(kernel_threads(j->ins->outer * j->ins->n, j->ins->outer), j->ins->outer, 1, fn, j);
}

/* y *= s over a row: the row kernels' last pass, in the AVX2 clone where
** the loops around it are not */
HOT static void scale_row(i64 n, float *restrict y, float s) { FOR8(n, y[k] *= s); }

static void softmax_span(void *x, i64 lo, i64 hi) {
  const rowjob *j = x;
  i64 n = j->ins->n;
  for (i64 r = lo; r < hi; r++) {
    const float *xr = (const float *)j->in[0] + r * n;
    float *y = j->out + r * n;
    float m = max_f(xr, n);
    float inv = (float)(1.0 / exp_shift(xr, y, m, n));
    scale_row(n, y, inv);
  }
}

static int k_softmax(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (ins->odt == RT_F64) return rt_f64_kernel(ins, out, in, err, errlen);
  rowjob j = {ins, out, in};
  run_rows(&j, softmax_span);
  return 0;
}

/* sum of exp(x - m), as exp_shift sums it */
HOT static double sum_shift(const float *restrict x, float m, i64 n) {
  double acc[8] = {0}, s = 0;
  i64 i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++) acc[j] += exp_lo(x[i + j] - m);
  for (; i < n; i++) s += exp_lo(x[i] - m);
  return s + ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

static double lse_shift(const float *x, float m, i64 n) { return log(sum_shift(x, m, n)); }

HOT static void shift_row(i64 n, const float *restrict x, float *restrict y, float m, float l) {
  FOR8(n, y[k] = (x[k] - m) - l);
}

static void log_softmax_span(void *x, i64 lo, i64 hi) {
  const rowjob *j = x;
  i64 n = j->ins->n;
  for (i64 r = lo; r < hi; r++) {
    const float *xr = (const float *)j->in[0] + r * n;
    float m = max_f(xr, n), l = (float)lse_shift(xr, m, n);
    shift_row(n, xr, j->out + r * n, m, l);
  }
}

static int k_log_softmax(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (ins->odt == RT_F64) return rt_f64_kernel(ins, out, in, err, errlen);
  rowjob j = {ins, out, in};
  run_rows(&j, log_softmax_span);
  return 0;
}

HOT static void smgrad_row(i64 n, const float *restrict y, const float *restrict dy, float *restrict dx, float s) {
  FOR8(n, dx[k] = y[k] * (dy[k] - s));
}

static void softmax_grad_span(void *x, i64 lo, i64 hi) {
  const rowjob *j = x;
  i64 n = j->ins->n;
  for (i64 r = lo; r < hi; r++) {
    const float *y = (const float *)j->in[0] + r * n, *dy = (const float *)j->in[1] + r * n;
    smgrad_row(n, y, dy, j->out + r * n, (float)dot_d(dy, y, n));
  }
}

static int k_softmax_grad(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (ins->odt == RT_F64) return rt_f64_kernel(ins, out, in, err, errlen);
  rowjob j = {ins, out, in};
  run_rows(&j, softmax_grad_span);
  return 0;
}

HOT static void lsm_grad_row(i64 n, const float *restrict y, const float *restrict dy, float *restrict dx, float s) {
  FOR8(n, dx[k] = dy[k] - exp_v(y[k]) * s);
}

static void log_softmax_grad_span(void *x, i64 lo, i64 hi) {
  const rowjob *j = x;
  i64 n = j->ins->n;
  for (i64 r = lo; r < hi; r++) {
    const float *y = (const float *)j->in[0] + r * n, *dy = (const float *)j->in[1] + r * n;
    lsm_grad_row(n, y, dy, j->out + r * n, (float)sum_d(dy, n));
  }
}

static int k_log_softmax_grad(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (ins->odt == RT_F64) return rt_f64_kernel(ins, out, in, err, errlen);
  rowjob j = {ins, out, in};
  run_rows(&j, log_softmax_grad_span);
  return 0;
}

/* ---- layer norm ---- */

typedef struct { float mu, rs; } ln_stats;

/* the row's mean and 1 / sqrt(var + eps); with RT_LN_RMS the mean is 0
** and the variance the mean square */
static ln_stats row_stats(const float *x, i64 n, const rt_instr *ins) {
  double m = n && !(ins->mode & RT_LN_RMS) ? sum_d(x, n) / n : 0;
  double var = n ? sqdev_d(x, m, n) / n : 0;
  return (ln_stats){(float)m, (float)(1.0 / sqrt(var + ins->alpha))};
}

HOT static void ln_row(i64 n, const float *restrict x, const float *restrict g, const float *restrict b,
                   float *restrict y, float mu, float rs) {
  if (g && b) FOR8(n, y[k] = (x[k] - mu) * rs * g[k] + b[k]);
  else if (g) FOR8(n, y[k] = (x[k] - mu) * rs * g[k]);
  else if (b) FOR8(n, y[k] = (x[k] - mu) * rs + b[k]);
  else FOR8(n, y[k] = (x[k] - mu) * rs);
}

static void layernorm_span(void *x, i64 lo, i64 hi) {
  const rowjob *j = x;
  i64 n = j->ins->n;
  for (i64 r = lo; r < hi; r++) {
    const float *xr = (const float *)j->in[0] + r * n;
    ln_stats st = row_stats(xr, n, j->ins);
    ln_row(n, xr, j->in[1], j->in[2], j->out + r * n, st.mu, st.rs);
  }
}

static int k_layernorm(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (ins->odt == RT_F64) return rt_f64_kernel(ins, out, in, err, errlen);
  rowjob j = {ins, out, in};
  run_rows(&j, layernorm_span);
  return 0;
}

HOT static void mul_row(i64 n, const float *restrict a, const float *restrict b, float *restrict y) {
  FOR8(n, y[k] = a[k] * b[k]);
}

HOT static void ln_grad_row(i64 n, const float *restrict x, const float *restrict g, float *restrict dx,
                        float mu, float rs, float mg, float mgx) {
  FOR8(n, { float xh = (x[k] - mu) * rs; dx[k] = rs * (g[k] - mg - xh * mgx); });
}

/* dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma;
** with RT_LN_RMS, nothing was centred: dx = rstd * (g - xhat * mean(g * xhat)) */
static void layernorm_grad_span(void *x, i64 lo, i64 hi) {
  rowjob *j = x;
  i64 n = j->ins->n;
  const float *gam = j->in[1];
  float *gbuf = NULL;
  if (gam && !(gbuf = malloc((size_t)(n > 0 ? n : 1) * sizeof *gbuf))) { j->failed = 1; return; }
  for (i64 r = lo; r < hi; r++) {
    const float *xr = (const float *)j->in[0] + r * n, *dy = (const float *)j->in[2] + r * n;
    ln_stats st = row_stats(xr, n, j->ins);
    const float *g = dy;
    if (gam) { mul_row(n, dy, gam, gbuf); g = gbuf; }
    double sg = j->ins->mode & RT_LN_RMS ? 0 : sum_d(g, n), sgx = dotdev_d(g, xr, st.mu, n);
    float mg = n ? (float)(sg / n) : 0, mgx = n ? (float)(sgx * st.rs / n) : 0;
    ln_grad_row(n, xr, g, j->out + r * n, st.mu, st.rs, mg, mgx);
  }
  free(gbuf);
}

/* mode RT_LN_GAMMA: out[c] = the sum over rows of dy * xhat, in row order
** and double as reduce_sum adds (the unfused layernorm, mul and reduce_sum,
** the same bits). The columns are split over the threads; each takes the
** rows in blocks, computing the block's row statistics (whole rows, which
** the other threads read too: from cache) and then its columns' sums. */
typedef struct lngjob { const rt_instr *ins; const float *x, *dy; float *out; } lngjob;

enum { LNG_ROWS = 32, LNG_COLS = 512 };

HOT static void ln_gamma_rows(const lngjob *j, i64 r0, i64 nr, const ln_stats *st, i64 c0, i64 w, double *restrict acc) {
  i64 n = j->ins->n;
  for (i64 r = 0; r < nr; r++) {
    const float *restrict xr = j->x + (r0 + r) * n + c0, *restrict dyr = j->dy + (r0 + r) * n + c0;
    const float mu = st[r].mu, rs = st[r].rs;
    FOR8(w, { float xh = (xr[k] - mu) * rs; float p = dyr[k] * xh; acc[k] += p; });
  }
}

static void ln_gamma_span(void *a, i64 lo, i64 hi) {
  const lngjob *j = a;
  i64 n = j->ins->n, rows = j->ins->outer;
  double acc[LNG_COLS];
  ln_stats st[LNG_ROWS];
  for (i64 c0 = lo; c0 < hi; c0 += LNG_COLS) {
    i64 w = hi - c0 < LNG_COLS ? hi - c0 : LNG_COLS;
    for (i64 k = 0; k < w; k++) acc[k] = 0;
    for (i64 r0 = 0; r0 < rows; r0 += LNG_ROWS) {
      i64 nr = rows - r0 < LNG_ROWS ? rows - r0 : LNG_ROWS;
      for (i64 r = 0; r < nr; r++) st[r] = row_stats(j->x + (r0 + r) * n, n, j->ins);
      ln_gamma_rows(j, r0, nr, st, c0, w, acc);
    }
    for (i64 k = 0; k < w; k++) j->out[c0 + k] = (float)acc[k];
  }
}

static int k_layernorm_grad(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (ins->odt == RT_F64) return rt_f64_kernel(ins, out, in, err, errlen);
  if (ins->mode & RT_LN_GAMMA) {
    lngjob g = {ins, in[0], in[2], out};
    par_spans(kernel_threads(ins->outer * ins->n, ins->n / 64), ins->n, 64, ln_gamma_span, &g);
    return 0;
  }
  rowjob j = {ins, out, in};
  run_rows(&j, layernorm_grad_span);
  return j.failed ? diag_errbuf(err, errlen, "out of memory") : 0;
}

/* ---- embeddings and cross-entropy ---- */

static i64 table_rows(const rt_instr *ins) { return ins->n2 > 0 ? ins->n2 : ins->off + ins->n; }

static int k_gather_rows(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  const char *tab = in[0];
  const int32_t *ids = in[1];
  char *y = out;
  i64 inner = ins->inner, n2 = table_rows(ins);
  size_t w = (size_t)inner * rt_dtype_size((rt_dtype)ins->odt);   /* rows are copied whatever their type */
  for (i64 r = 0; r < ins->outer; r++) {
    i64 id = ids[r], row = id - ins->off;
    if (id < 0 || id >= n2)
      return diag_errbuf(err, errlen, "embedding: id %" PRId64 " out of range [0, %" PRId64 ")", id, n2);
    if (row >= 0 && row < ins->n) memcpy(y + (size_t)r * w, tab + (size_t)row * w, w);
    else memset(y + (size_t)r * w, 0, w);
  }
  return 0;
}

static int k_iota(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  rt_any_iota(ins, out);
  return 0;
}

static int k_const(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (!ins->data && ins->nelem > 0) return diag_errbuf(err, errlen, "a constant without data");
  if (ins->nelem > 0) memcpy(out, ins->data, (size_t)ins->nelem * rt_dtype_size((rt_dtype)ins->odt));
  return 0;
}

HOT static void acc_row(i64 n, float *restrict t, const float *restrict d) {
  FOR8(n, t[k] += d[k]);
}

static int k_scatter_rows(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (ins->odt == RT_F64) return rt_f64_kernel(ins, out, in, err, errlen);
  const int32_t *ids = in[0];
  const float *dy = in[1];
  float *t = out;
  i64 inner = ins->inner, n2 = table_rows(ins);
  if (ins->beta == 0.0f) memset(t, 0, (size_t)(ins->n * inner) * 4);
  for (i64 r = 0; r < ins->outer; r++) {
    i64 id = ids[r], row = id - ins->off;
    if (id < 0 || id >= n2)
      return diag_errbuf(err, errlen, "embedding: id %" PRId64 " out of range [0, %" PRId64 ")", id, n2);
    if (row < 0 || row >= ins->n) continue;
    acc_row(inner, t + row * inner, dy + r * inner);
  }
  return 0;
}

/* the classes split (rt_xent_split): this device's classes are off ..
** off+n-1, in4 and in5 each row's max and sum of exponentials over all */
static void xent_part_span(void *x, i64 lo, i64 hi) {
  const rowjob *j = x;
  const int32_t *lab = j->in[1];
  const float *m = j->in[4], *s = j->in[5];
  i64 n = j->ins->n, off = j->ins->off;
  for (i64 r = lo; r < hi; r++) {
    const float *xr = (const float *)j->in[0] + r * n;
    i64 c = lab[r] - off;
    double part = off == 0 ? (double)m[r] + log((double)s[r]) : 0.0;   /* log-sum-exp once, by the first piece */
    j->acc[r] = c >= 0 && c < n ? part - xr[c] : part;
  }
}

static void xent_span(void *x, i64 lo, i64 hi) {
  const rowjob *j = x;
  const int32_t *lab = j->in[1];
  i64 n = j->ins->n;
  for (i64 r = lo; r < hi; r++) {
    const float *xr = (const float *)j->in[0] + r * n;
    float m = max_f(xr, n);
    j->acc[r] = ((double)m + lse_shift(xr, m, n)) - xr[lab[r]];
  }
}

static int k_xent(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (ins->odt == RT_F64) return rt_f64_kernel(ins, out, in, err, errlen);
  if (rt_check_labels(ins, in[1], err, errlen)) return -1;
  rowjob j = {ins, out, in, malloc((size_t)(ins->outer > 0 ? ins->outer : 1) * sizeof(double))};
  if (!j.acc) return diag_errbuf(err, errlen, "out of memory");
  if (rt_xent_split(ins)) xent_part_span(&j, 0, ins->outer);    /* a row's work is one logit */
  else run_rows(&j, xent_span);
  double total = 0;
  for (i64 r = 0; r < ins->outer; r++) total += j.acc[r];    /* in row order, whatever the split */
  free(j.acc);
  *(float *)out = (float)(total * ins->alpha);
  return 0;
}

/* with j->acc, each row's loss too, as xent_span computes it (its
** log-sum-exp sums the exponentials as exp_shift does) */
static void xent_grad_span(void *x, i64 lo, i64 hi) {
  const rowjob *j = x;
  const int32_t *lab = j->in[1];
  i64 n = j->ins->n;
  float g = *(const float *)j->in[2] * j->ins->alpha;
  for (i64 r = lo; r < hi; r++) {
    const float *xr = (const float *)j->in[0] + r * n;
    float *dx = j->out + r * n;
    float m = max_f(xr, n), at_label = xr[lab[r]];     /* read before dx may overwrite it */
    double s = dx == xr ? exp_self(dx, m, n) : exp_shift(xr, dx, m, n);
    if (j->acc) j->acc[r] = ((double)m + log(s)) - at_label;
    float sc = (float)(g / s);
    scale_row(n, dx, sc);
    dx[lab[r]] -= g;
  }
}

/* the classes split: exp(x - in4) / in5 over this device's classes, the
** label's taken off where it is one of them (no loss: the forward wrote it) */
static void xent_grad_part_span(void *x, i64 lo, i64 hi) {
  const rowjob *j = x;
  const int32_t *lab = j->in[1];
  const float *m = j->in[4], *s = j->in[5];
  i64 n = j->ins->n, off = j->ins->off;
  float g = *(const float *)j->in[2] * j->ins->alpha;
  for (i64 r = lo; r < hi; r++) {
    const float *xr = (const float *)j->in[0] + r * n;
    float *dx = j->out + r * n;
    if (dx == xr) exp_self(dx, m[r], n);
    else exp_shift(xr, dx, m[r], n);
    scale_row(n, dx, (float)(g / (double)s[r]));
    i64 c = lab[r] - off;
    if (c >= 0 && c < n) dx[c] -= g;
  }
}

/* in1 = m [outer]: each row's sum of exp(x - m) (the classes split) */
static void sumexp_span(void *x, i64 lo, i64 hi) {
  const rowjob *j = x;
  const float *m = j->in[1];
  i64 n = j->ins->n;
  for (i64 r = lo; r < hi; r++) j->out[r] = (float)sum_shift((const float *)j->in[0] + r * n, m[r], n);
}

static int k_xent_sumexp(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (ins->odt == RT_F64) return rt_f64_kernel(ins, out, in, err, errlen);
  rowjob j = {ins, out, in};
  run_rows(&j, sumexp_span);
  return 0;
}

static int k_xent_grad(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (ins->odt == RT_F64) return rt_f64_kernel(ins, out, in, err, errlen);
  if (rt_check_labels(ins, in[1], err, errlen)) return -1;
  rowjob j = {ins, out, in};
  if (rt_xent_split(ins)) {
    run_rows(&j, xent_grad_part_span);
    return 0;
  }
  if (in[3] && !(j.acc = malloc((size_t)(ins->outer > 0 ? ins->outer : 1) * sizeof(double))))
    return diag_errbuf(err, errlen, "out of memory");
  run_rows(&j, xent_grad_span);
  if (j.acc) {
    double total = 0;
    for (i64 r = 0; r < ins->outer; r++) total += j.acc[r];    /* in row order, as k_xent */
    free(j.acc);
    *(float *)in[3] = (float)(total * ins->beta);
  }
  return 0;
}

/* The loss of a projection, chunk by chunk (RT_XENT_PROJ): per chunk of
** rows, the three GEMMs and the gradient's row pass of the unfused
** program, each on the chunk's rows; the scratch holds one chunk's logits
** and then their gradient. The rows' losses are summed in row order after
** the last chunk, as xent does; dx's rows are the unfused ones, dw's sum
** over rows is split at the chunks (one chunk: the unfused bits). */
static int k_xent_proj(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  i64 rows = ins->outer, n = ins->n, d = ins->k, R = ins->inner;
  const float *x = in[0], *w = in[1];
  const int32_t *lab = in[2];
  float *dx = out, *dw = in[5], *s = in[6];
  rt_instr xg = {.op = RT_XENT_GRAD, .outer = rows, .n = n, .alpha = ins->alpha, .in = {-1, -1, -1, -1, -1, -1, -1, -1}, .group = -1};
  if (rt_check_labels(&xg, lab, err, errlen)) return -1;
  if (n > INT_MAX || d > INT_MAX || R > INT_MAX || R * n > INT_MAX)
    return diag_errbuf(err, errlen, "a chunk of %" PRId64 " rows of %" PRId64 " classes is too large for BLAS", R, n);
  double *acc = malloc((size_t)(rows > 0 ? rows : 1) * sizeof(double));
  if (!acc) return diag_errbuf(err, errlen, "out of memory");
  CBLAS_TRANSPOSE wt = ins->transb ? CblasTrans : CblasNoTrans, wn = ins->transb ? CblasNoTrans : CblasTrans;
  int ldw = (int)(ins->transb ? d : n);
  for (i64 r0 = 0; r0 < rows; r0 += R) {
    i64 nr = rows - r0 < R ? rows - r0 : R;
    const float *xc = x + r0 * d;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, wt, (int)nr, (int)n, (int)d, 1.0f, xc, (int)d, w, ldw, 0.0f, s, (int)n);
    xg.outer = nr;
    rowjob j = {&xg, s, (void *[]){s, (void *)(lab + r0), in[3]}, acc + r0};
    run_rows(&j, xent_grad_span);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, wn, (int)nr, (int)d, (int)n, 1.0f, s, (int)n, w, ldw, 0.0f, dx + r0 * d, (int)d);
    float beta = r0 > 0 || ins->mode ? 1.0f : 0.0f;
    if (ins->transb)          /* dw [n, d] += s^T x */
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)n, (int)d, (int)nr, 1.0f, s, (int)n, xc, (int)d, beta, dw, (int)d);
    else                      /* dw [d, n] += x^T s */
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)d, (int)n, (int)nr, 1.0f, xc, (int)d, s, (int)n, beta, dw, (int)n);
  }
  double total = 0;
  for (i64 r = 0; r < rows; r++) total += acc[r];    /* in row order, as k_xent */
  free(acc);
  *(float *)in[4] = (float)(total * ins->beta);
  return 0;
}

/* ---- optimizer updates ----
** One pass per parameter: each element reads p, g and the state once and
** writes the new p and the state in place. The arithmetic is the unfused
** IR's, in its order (tests compare the two).
**
** The pointers are restrict-qualified: GCC vectorizes a block of 8 only
** when no store to one array can change what the next element reads from
** another, and without that the update ran scalar, 4-5 times slower than
** memory allows (45 against 9 ms on 16.8 M parameters, one thread). So
** the update runs in place on out (p copied there first when the program
** names two buffers; exec.c refuses an out that is g or the state), and a
** program whose g or state shares a buffer with another operand (only a
** hand-edited one can) takes the same arithmetic without the qualifier.
**
** One thread: vectorized, the update is bound by memory bandwidth, which
** one core fills (as with sums and products); a second thread made the 56
** updates of a 4-layer GPT step slower, 10-13 against 14-18 ms, with the
** thread starts and the two cores sharing the bandwidth. */

typedef struct optjob {
  const rt_instr *ins;
  float *p, *m, *v;          /* p: the output, holding p on entry */
  const float *g;
  float lr_t, eps_t;
  int shared;                /* two operands share a buffer */
} optjob;

/* decay: ADAM_L2 adds wd p to the gradient (torch.optim.Adam's weight
** decay), ADAM_DECOUPLED scales p by wd (1 - lr weight_decay) before the
** step (AdamW's). The scaling is a loop of its own over each block of
** ADAM_BLOCK elements (still in cache for the step): in the step's loop,
** p * keep - step would contract into one rounding (this file allows
** contraction), where the IR rounds the product first. */
enum { ADAM_PLAIN, ADAM_L2, ADAM_DECOUPLED, ADAM_BLOCK = 4096 };

#define ADAM_BODY(p, g, m, v, n, decay) \
  for (i64 b0 = 0; b0 < n; b0 += ADAM_BLOCK) { \
    i64 bn = n - b0 < ADAM_BLOCK ? n - b0 : ADAM_BLOCK; \
    float *pb = p + b0, *mb = m + b0, *vb = v + b0; \
    const float *gb = g + b0; \
    if (decay == ADAM_DECOUPLED) FOR8(bn, pb[k] = pb[k] * wd); \
    FOR8(bn, { \
      float gr = decay == ADAM_L2 ? gb[k] + wd * pb[k] : gb[k]; \
      float mn = b1 * mb[k] + c1 * gr, vn = b2 * vb[k] + c2 * (gr * gr); \
      mb[k] = mn; \
      vb[k] = vn; \
      pb[k] = pb[k] - mn * lr_t / (sqrtf(vn) + eps_t);   /* no product added to: each rounds as the IR's */ \
    }); \
  }

INLINE void adam_run(const optjob *j, float *restrict p, const float *restrict g, float *restrict m,
                     float *restrict v, i64 n, int decay) {
  const float b1 = (float)j->ins->hyper[0], b2 = (float)j->ins->hyper[1];
  const float c1 = (float)j->ins->hyper[4], c2 = (float)j->ins->hyper[5];
  const float wd = (float)j->ins->hyper[3], lr_t = j->lr_t, eps_t = j->eps_t;
  ADAM_BODY(p, g, m, v, n, decay);
}

INLINE void adam_run_shared(const optjob *j, float *p, const float *g, float *m, float *v, i64 n, int decay) {
  const float b1 = (float)j->ins->hyper[0], b2 = (float)j->ins->hyper[1];
  const float c1 = (float)j->ins->hyper[4], c2 = (float)j->ins->hyper[5];
  const float wd = (float)j->ins->hyper[3], lr_t = j->lr_t, eps_t = j->eps_t;
  ADAM_BODY(p, g, m, v, n, decay);
}

HOT static void adam_all(const optjob *j, i64 n) {
  int decay = j->ins->mode & RT_ADAM_DECOUPLED ? ADAM_DECOUPLED : j->ins->hyper[3] != 0 ? ADAM_L2 : ADAM_PLAIN;
  if (j->shared) adam_run_shared(j, j->p, j->g, j->m, j->v, n, decay);
  else if (decay == ADAM_L2) adam_run(j, j->p, j->g, j->m, j->v, n, ADAM_L2);
  else if (decay == ADAM_DECOUPLED) adam_run(j, j->p, j->g, j->m, j->v, n, ADAM_DECOUPLED);
  else adam_run(j, j->p, j->g, j->m, j->v, n, ADAM_PLAIN);
}

#define SGD_BODY(p, g, m, n, decay, mom) FOR8(n, { \
    float gr = decay ? g[k] + wd * p[k] : g[k]; \
    if (mom) { gr = m[k] * mu + gr; m[k] = gr; } \
    p[k] = p[k] + nlr * gr; \
  })

INLINE void sgd_run(const optjob *j, float *restrict p, const float *restrict g, float *restrict m, i64 n,
                    int decay, int mom) {
  const float nlr = -j->ins->alpha, mu = (float)j->ins->hyper[0], wd = (float)j->ins->hyper[1];
  SGD_BODY(p, g, m, n, decay, mom);
}

INLINE void sgd_run_shared(const optjob *j, float *p, const float *g, float *m, i64 n) {
  const float nlr = -j->ins->alpha, mu = (float)j->ins->hyper[0], wd = (float)j->ins->hyper[1];
  SGD_BODY(p, g, m, n, wd != 0, m != NULL);
}

HOT static void sgd_all(const optjob *j, i64 n) {
  float *p = j->p, *m = j->m;
  int decay = j->ins->hyper[1] != 0;
  if (j->shared) sgd_run_shared(j, p, j->g, m, n);
  else if (m) { if (decay) sgd_run(j, p, j->g, m, n, 1, 1); else sgd_run(j, p, j->g, m, n, 0, 1); }
  else if (decay) sgd_run(j, p, j->g, NULL, n, 1, 0);
  else sgd_run(j, p, j->g, NULL, n, 0, 0);
}

/* out takes p's values when they are two buffers; then whether any two
** of out, g and the state are one buffer */
static int opt_operands(optjob *j, const float *p, i64 n) {
  if (j->p != p) memmove(j->p, p, sizeof(float) * (size_t)n);
  const void *b[4] = {j->p, j->g, j->m, j->v};
  for (int x = 0; x < 4; x++)
    for (int y = x + 1; y < 4; y++)
      if (b[x] && b[x] == b[y]) return 1;
  return 0;
}

/* in6, when given, is a dynamic loss scale's verdict: 0 (a gradient not
** finite) skips the step, p (copied to out), its gradient and state as
** they were */
static int skipped(const rt_instr *ins, void *out, void *const *in) {
  if (!in[6] || *(const uint8_t *)in[6]) return 0;
  if (out != in[0]) memmove(out, in[0], sizeof(float) * (size_t)ins->nelem);
  return 1;
}

static int k_adam(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (skipped(ins, out, in)) return 0;
  optjob j = {ins, out, in[2], in[3], in[1], *(const float *)in[4], *(const float *)in[5], 0};
  j.shared = opt_operands(&j, in[0], ins->nelem);
  adam_all(&j, ins->nelem);
  return 0;
}

static int k_sgd(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (skipped(ins, out, in)) return 0;
  optjob j = {ins, out, in[2], NULL, in[1], 1, 1, 0};
  j.shared = opt_operands(&j, in[0], ins->nelem);
  sgd_all(&j, ins->nelem);
  return 0;
}

/* f32, and f64 in double; the lowering gives bf16 and f16 f32 copies */
static int k_attention(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (ins->odt == RT_F64) return rt_f64_kernel(ins, out, in, err, errlen);
  if (!rt_all_f32(ins, ins->op == RT_ATTENTION ? 3 : 4)) return diag_errbuf(err, errlen, "%s takes f32 only", rt_op_name((rt_op)ins->op));
  return rt_kern_attention(rt_host_threads(), ins, out, in, err, errlen);
}

static int k_ring(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  (void)ctx;
  int n = ins->op == RT_ATTN_BLOCK ? 5 : ins->op == RT_ATTN_FINISH ? 3 : 8;
  if (!rt_all_f32(ins, n)) return diag_errbuf(err, errlen, "%s takes f32 only", rt_op_name((rt_op)ins->op));
  if (ins->op == RT_ATTN_BLOCK) return rt_kern_attn_block(ins, out, in, err, errlen);
  if (ins->op == RT_ATTN_FINISH) return rt_kern_attn_finish(ins, out, in, err, errlen);
  return rt_kern_attn_block_grad(ins, out, in, err, errlen);
}

static const rt_backend cpu = {
  .name = "cpu",
  .ctx = NULL,
  .device_memory = 0,
  .alloc = cpu_alloc,
  .free = cpu_free,
  .upload = cpu_copy,
  .download = cpu_copy,
  .zero = cpu_zero,
  .sync = NULL,
  .release = NULL,
  .kernels = {   /* ORDER RT_OP */
    [RT_FILL] = k_fill,
    [RT_COPY] = k_copy,
    [RT_EW] = k_ew,
    [RT_TRANSPOSE] = k_transpose,
    [RT_GEMM] = k_gemm,
    [RT_REDUCE] = k_reduce,
    [RT_REDUCE_MAX_GRAD] = k_reduce_max_grad,
    [RT_SOFTMAX] = k_softmax,
    [RT_LOG_SOFTMAX] = k_log_softmax,
    [RT_SOFTMAX_GRAD] = k_softmax_grad,
    [RT_LOG_SOFTMAX_GRAD] = k_log_softmax_grad,
    [RT_LAYERNORM] = k_layernorm,
    [RT_LAYERNORM_GRAD] = k_layernorm_grad,
    [RT_GATHER_ROWS] = k_gather_rows,
    [RT_SCATTER_ROWS] = k_scatter_rows,
    [RT_XENT] = k_xent,
    [RT_XENT_GRAD] = k_xent_grad,
    [RT_XENT_PROJ] = k_xent_proj,
    [RT_XENT_SUMEXP] = k_xent_sumexp,
    [RT_CAUSAL_MASK] = k_causal_mask,
    [RT_BLOCK_COPY] = k_block_copy,
    [RT_SHARD_SLICE] = k_shard_slice,
    [RT_IOTA] = k_iota,
    [RT_CONST] = k_const,
    [RT_ADAM] = k_adam,
    [RT_SGD] = k_sgd,
    [RT_ATTENTION] = k_attention,
    [RT_ATTENTION_GRAD] = k_attention,
    [RT_ATTN_BLOCK] = k_ring, [RT_ATTN_FINISH] = k_ring, [RT_ATTN_BLOCK_GRAD] = k_ring,
    [RT_GATHER] = rt_kern_gather,
    [RT_SCATTER] = rt_kern_scatter,
    [RT_FUSED] = k_fused,
    [RT_ALL_REDUCE] = NULL, [RT_ALL_GATHER] = NULL, [RT_REDUCE_SCATTER] = NULL, [RT_ALL_TO_ALL] = NULL,
  },
  .dtypes = (1u << RT_NDTYPES) - 1,
  .newfn = RT_NEWFN,
};

const rt_backend *rt_backend_cpu(void) { return &cpu; }

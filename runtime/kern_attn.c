/*
** kern_attn.c: fused attention on the CPU, f32. The scores of a block of
** queries against a block of keys are computed by one small GEMM, used,
** and dropped: no [s, s] matrix is ever stored.
**
** Forward (per query block): running maximum m and sum l per row, as
** online softmax does; when a later key block raises m, what was summed
** so far is rescaled by exp(m_old - m_new). Causal: key blocks after the
** last query of the block are skipped.
**
** Backward: the forward of each query block is recomputed for its
** log-sum-exp and output, which give D = rowsum(dy * o); then for each key
** block and each query block that sees it, P = exp(S - lse) is recomputed
** and dv += P^T dy, dS = P * (dy v^T - D), dq += a dS k, dk += a dS^T q.
** Slices of the outer dim go to as many threads as BLAS has.
**
** Layouts: each of q, k, v, dy and the result is either [outer, s, dk]
** or, when its bit of ins->mode is set (RT_ATTN_BSHD), [b, s, h, dk] with
** h = ins->n2 and outer = b h: the heads interleaved within each position,
** as the projections make them. Rows are then read and written at a
** stride of h dk, so the head split and merge need no transposes.
*/
#include "util/diag.h"
#include "runtime/kern_attn.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t i64;

#include "runtime/kern_math.h"

enum { BQ = 64, BK = 64 };   /* queries and keys per block */

typedef struct attn_job {
  const rt_instr *ins;
  float *out;
  const float *q, *k, *v, *dy;
  i64 lo, hi;                /* the outer slices this job takes */
  int failed;
} attn_job;

/* One outer slice of an operand: its first row and the elements between rows. */
typedef struct view { const float *p; i64 ld; } view;
/* A slice as the blocks read it: q, k, v, dy contiguous [s, dk] (packed
** when strided); the forward's rows written ldo apart, the gradient's
** [s, 3 dk] contiguous. */
typedef struct slice { const float *q, *k, *v, *dy; float *out; i64 ldo; } slice;

typedef struct scratch {
  float s[BQ * BK], dp[BQ * BK];
  float m[BQ], l[BQ], lse[BQ], d[BQ];
  float *o;                  /* [BQ, dk] */
} scratch;

static i64 min64(i64 a, i64 b) { return a < b ? a : b; }

/* s = alpha q k^T for queries [i0, i0+nq) and keys [j0, j0+nk), with the
** keys after each query set to -inf when causal */
static void scores(const rt_instr *ins, const float *q, const float *k, i64 i0, i64 nq, i64 j0, i64 nk, float *s) {
  i64 dk = ins->k;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nk, (int)dk, ins->alpha, q + i0 * dk, (int)dk,
              k + j0 * dk, (int)dk, 0.0f, s, BK);
  if (!ins->fn || j0 + nk - 1 <= i0) return;
  for (i64 r = 0; r < nq; r++)
    for (i64 c = i0 + r + 1 - j0; c < nk; c++)
      if (c >= 0) s[r * BK + c] = -INFINITY;
}

/* The online softmax of a block's score rows against keys [0, nk): each
** row's running maximum m and sum l move on, what was summed (and the
** output so far) rescaled by exp(m_old - m_new); the scores become
** exp(s - m). */
HOT static void online_rows(scratch *x, i64 nq, i64 nk, i64 dk) {
  for (i64 r = 0; r < nq; r++) {
    float *sr = x->s + r * BK, mx = x->m[r];
    for (i64 c = 0; c < nk; c++) mx = sr[c] > mx ? sr[c] : mx;
    if (mx == -INFINITY) {         /* every key masked so far */
      memset(sr, 0, sizeof(float) * (size_t)nk);
      continue;
    }
    float corr = x->m[r] == -INFINITY ? 0.0f : expf(x->m[r] - mx);
    double sum = exp_sum_self(sr, nk, mx);
    x->l[r] = x->l[r] * corr + (float)sum;
    x->m[r] = mx;
    if (corr != 1.0f) FOR8(dk, x->o[r * dk + k] *= corr);
  }
}

/* P = exp(S - lse) over a block's rows */
HOT static void probabilities(scratch *x, i64 nq, i64 nk) {
  for (i64 r = 0; r < nq; r++) {
    float *sr = x->s + r * BK, l = x->lse[r];
    FOR8(nk, sr[k] = exp_lo(sr[k] - l));
  }
}

/* One query block's output rows (unnormalized in x->o, then divided) and
** log-sum-exp; keys up to kend. */
static void forward_block(const rt_instr *ins, const slice *sl, i64 i0, i64 nq, scratch *x) {
  i64 dk = ins->k, kend = ins->fn ? i0 + nq : ins->m;
  for (i64 r = 0; r < nq; r++) { x->m[r] = -INFINITY; x->l[r] = 0; }
  memset(x->o, 0, sizeof(float) * (size_t)(nq * dk));
  for (i64 j0 = 0; j0 < kend; j0 += BK) {
    i64 nk = min64(BK, kend - j0);
    scores(ins, sl->q, sl->k, i0, nq, j0, nk, x->s);
    online_rows(x, nq, nk, dk);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nq, (int)dk, (int)nk, 1.0f, x->s, BK, sl->v + j0 * dk, (int)dk,
                1.0f, x->o, (int)dk);
  }
  for (i64 r = 0; r < nq; r++) {
    float inv = x->l[r] > 0 ? 1.0f / x->l[r] : 0.0f;
    for (i64 c = 0; c < dk; c++) x->o[r * dk + c] *= inv;
    x->lse[r] = x->l[r] > 0 ? x->m[r] + logf(x->l[r]) : INFINITY;
  }
}

static void forward_slice(const rt_instr *ins, const slice *sl, scratch *x) {
  i64 s = ins->m, dk = ins->k;
  for (i64 i0 = 0; i0 < s; i0 += BQ) {
    i64 nq = min64(BQ, s - i0);
    forward_block(ins, sl, i0, nq, x);
    for (i64 r = 0; r < nq; r++) memcpy(sl->out + (i0 + r) * sl->ldo, x->o + r * dk, sizeof(float) * (size_t)dk);
  }
}

/* The gradient of one query block against one key block; lse and D of
** the block's rows in x. */
static void backward_pair(const rt_instr *ins, const slice *sl, i64 i0, i64 nq, i64 j0, i64 nk, scratch *x) {
  i64 dk = ins->k, ld = 3 * dk;
  const float *q = sl->q, *k = sl->k, *v = sl->v, *dy = sl->dy;
  float *g = sl->out;
  scores(ins, q, k, i0, nq, j0, nk, x->s);
  probabilities(x, nq, nk);
  /* dv_j += P^T dy_i */
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)nk, (int)dk, (int)nq, 1.0f, x->s, BK, dy + i0 * dk, (int)dk,
              1.0f, g + j0 * ld + 2 * dk, (int)ld);
  /* dP = dy_i v_j^T, then dS = P (dP - D) in place */
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nk, (int)dk, 1.0f, dy + i0 * dk, (int)dk,
              v + j0 * dk, (int)dk, 0.0f, x->dp, BK);
  for (i64 r = 0; r < nq; r++)
    for (i64 c = 0; c < nk; c++) x->dp[r * BK + c] = x->s[r * BK + c] * (x->dp[r * BK + c] - x->d[r]);
  /* dq_i += alpha dS k_j; dk_j += alpha dS^T q_i */
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nq, (int)dk, (int)nk, ins->alpha, x->dp, BK, k + j0 * dk,
              (int)dk, 1.0f, g + i0 * ld, (int)ld);
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)nk, (int)dk, (int)nq, ins->alpha, x->dp, BK, q + i0 * dk,
              (int)dk, 1.0f, g + j0 * ld + dk, (int)ld);
}

static void backward_slice(const rt_instr *ins, const slice *sl, scratch *x) {
  i64 s = ins->m, dk = ins->k;
  memset(sl->out, 0, sizeof(float) * (size_t)(s * 3 * dk));
  for (i64 i0 = 0; i0 < s; i0 += BQ) {
    i64 nq = min64(BQ, s - i0);
    forward_block(ins, sl, i0, nq, x);
    for (i64 r = 0; r < nq; r++) {
      double d = 0;
      const float *dyr = sl->dy + (i0 + r) * dk;
      for (i64 c = 0; c < dk; c++) d += (double)dyr[c] * x->o[r * dk + c];
      x->d[r] = (float)d;
    }
    i64 kend = ins->fn ? i0 + nq : s;
    for (i64 j0 = 0; j0 < kend; j0 += BK) backward_pair(ins, sl, i0, nq, j0, min64(BK, kend - j0), x);
  }
}

/* Operand `bit` of slice b: [outer, s, w] whole, or [b, s, h, w] by heads. */
static view view_of(const rt_instr *ins, const float *base, int bit, i64 b, i64 w) {
  i64 h = ins->n2;
  if (!(ins->mode & bit) || h <= 1) return (view){base + b * ins->m * w, w};
  return (view){base + (b / h) * ins->m * h * w + (b % h) * w, h * w};
}

/* A strided operand copied into contiguous rows (rows a stride of h dk apart
** fall into a few cache sets; packed, a slice's blocks stay in cache). */
static const float *pack(view v, i64 rows, i64 w, float *to) {
  if (v.ld == w) return v.p;
  for (i64 r = 0; r < rows; r++) memcpy(to + r * w, v.p + r * v.ld, sizeof(float) * (size_t)w);
  return to;
}

static void *run_job(void *p) {
  attn_job *j = p;
  const rt_instr *ins = j->ins;
  int grad = ins->op == RT_ATTENTION_GRAD;
  i64 s = ins->m, dk = ins->k, wo = grad ? 3 * dk : dk;
  scratch *x = malloc(sizeof *x);
  /* x->o, then packed q, k, v (dy and the gradient's rows: the gradient) when strided */
  float *o = x ? malloc(sizeof(float) * (size_t)(BQ * dk + (ins->mode ? (3 + grad) * s * dk + grad * s * wo : 0))) : NULL;
  if (!o) { free(x); j->failed = 1; return NULL; }
  x->o = o;
  float *pq = o + BQ * dk, *pk = pq + s * dk, *pv = pk + s * dk, *pdy = pv + s * dk, *pg = pdy + s * dk;
  for (i64 b = j->lo; b < j->hi; b++) {
    view ov = view_of(ins, j->out, RT_ATTN_BSHD_OUT, b, wo);
    slice sl = {pack(view_of(ins, j->q, RT_ATTN_BSHD_Q, b, dk), s, dk, pq),
                pack(view_of(ins, j->k, RT_ATTN_BSHD_K, b, dk), s, dk, pk),
                pack(view_of(ins, j->v, RT_ATTN_BSHD_V, b, dk), s, dk, pv), NULL, (float *)ov.p, ov.ld};
    if (!grad) { forward_slice(ins, &sl, x); continue; }
    sl.dy = pack(view_of(ins, j->dy, RT_ATTN_BSHD_DY, b, dk), s, dk, pdy);
    if (ov.ld != wo) sl.out = pg;       /* accumulated contiguous, then put out by heads */
    backward_slice(ins, &sl, x);
    if (ov.ld != wo)
      for (i64 r = 0; r < s; r++) memcpy((float *)ov.p + r * ov.ld, pg + r * wo, sizeof(float) * (size_t)wo);
  }
  free(o);
  free(x);
  return NULL;
}

/* OpenBLAS spreads each call over its own threads above a size; the
** slices are spread over threads here already, and BLAS threads inside
** each block's GEMM would oversubscribe the cores (heads of 128 ran 35
** times slower on 2 threads). So BLAS is held to one thread while any
** attention kernel of the process runs: devices may be threads of one
** process, hence a count under a lock. A process resource, not program
** state; results do not depend on BLAS's thread count. */
static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
static int blas_holders, blas_threads;

static void blas_hold(void) {
  pthread_mutex_lock(&blas_lock);
  if (blas_holders++ == 0) {
    blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
  }
  pthread_mutex_unlock(&blas_lock);
}

static void blas_release(void) {
  pthread_mutex_lock(&blas_lock);
  if (--blas_holders == 0) openblas_set_num_threads(blas_threads);
  pthread_mutex_unlock(&blas_lock);
}

int rt_kern_attention(int threads, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (ins->m > INT_MAX / 4 || ins->k > INT_MAX / 4) return diag_errbuf(err, errlen, "attention of %lld x %lld is too large for BLAS", (long long)ins->m, (long long)ins->k);
  if (ins->outer == 0 || ins->m == 0 || ins->k == 0) return 0;   /* no elements out */
  enum { MAXT = 8 };
  int t = threads < 1 ? 1 : threads > MAXT ? MAXT : threads;
  if (t > ins->outer) t = (int)ins->outer;
  if (t > 1) blas_hold();
  attn_job jobs[MAXT];
  pthread_t th[MAXT];
  int started[MAXT] = {0};
  for (int i = 0; i < t; i++) {
    jobs[i] = (attn_job){ins, out, in[0], in[1], in[2], ins->op == RT_ATTENTION_GRAD ? in[3] : NULL,
                         ins->outer * i / t, ins->outer * (i + 1) / t, 0};
    if (i > 0 && pthread_create(&th[i], NULL, run_job, &jobs[i]) == 0) started[i] = 1;
  }
  for (int i = 0; i < t; i++) if (!started[i]) run_job(&jobs[i]);   /* the first, and any no thread took */
  int failed = 0;
  for (int i = 0; i < t; i++) {
    if (started[i]) pthread_join(th[i], NULL);
    failed |= jobs[i].failed;
  }
  if (t > 1) blas_release();
  return failed ? diag_errbuf(err, errlen, "out of memory for attention blocks") : 0;
}

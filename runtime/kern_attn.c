/*
** kern_attn.c: fused attention on the CPU, f32. No [s, s] matrix is ever
** stored: the forward holds the scores of one block of queries against one
** chunk of keys, the backward those of one block of queries against its
** keys.
**
** Forward (per block of BQ queries, keys in chunks of KC): running maximum
** m and sum l per row, as online softmax does; when a later chunk raises
** m, what was summed so far (and the output) is rescaled by
** exp(m_old - m_new). Causal: keys after the block's last query are
** skipped.
**
** Backward (per block of BQ queries, against all the keys it sees): the
** scores S = a q k^T and P = softmax(S) are recomputed row by row,
** dP = dy v^T, D = rowsum(P * dP) (which is rowsum(dy * o), without the
** output), dS = P * (dP - D); then dv += P^T dy, dq = a dS k and
** dk += a dS^T q, each one GEMM over the block's keys. Five GEMMs' worth
** of work per block where recomputing the forward first would take seven.
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
#include "runtime/backend.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t i64;

#include "runtime/kern_math.h"

enum { BQ = 64, KC = 128 };  /* queries per block; keys per forward chunk */

typedef struct attn_job {
  const rt_instr *ins;
  float *out;
  const float *q, *k, *v, *dy;
  i64 lo, hi;                /* the outer slices this job takes */
  int failed;
} attn_job;

/* One outer slice of an operand: its first row and the elements between rows. */
typedef struct view { const float *p; i64 ld; } view;
/* A slice as the blocks read it: each operand's rows, and the result's
** (the forward's [s, dk], the gradient's [s, 3 dk]). Only BLAS reads q,
** k, v and dy, so strided rows are read in place (BLAS packs its
** operands anyway). */
typedef struct slice { view q, k, v, dy; float *out; i64 ldo; } slice;

typedef struct scratch {
  float *s, *dp;             /* scores and their gradient, rows lds apart */
  i64 lds;                   /* KC forward, s backward */
  float m[BQ], l[BQ];
  float *o;                  /* [BQ, dk]: the forward's output rows */
} scratch;

static i64 min64(i64 a, i64 b) { return a < b ? a : b; }

/* s = alpha q k^T for queries [i0, i0+nq) and keys [j0, j0+nk), rows
** x->lds apart. Causal masking is left to the row passes, which read only
** the keys each query sees (seen) and write 0 past them. */
static void scores(const rt_instr *ins, view q, view k, i64 i0, i64 nq, i64 j0, i64 nk, scratch *x) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nk, (int)ins->k, ins->alpha, q.p + i0 * q.ld,
              (int)q.ld, k.p + j0 * k.ld, (int)k.ld, 0.0f, x->s, (int)x->lds);
}

/* how many of the keys [j0, j0+nk) query i sees: all, or when causal
** those up to i */
static i64 seen(const rt_instr *ins, i64 i, i64 j0, i64 nk) {
  if (!ins->fn) return nk;
  i64 n = i + 1 - j0;
  return n < 0 ? 0 : n > nk ? nk : n;
}

/* the largest of x[0, n), in eight lanes (NaN is passed over) */
INLINE float row_max(const float *x, i64 n) {
  float lane[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
  i64 i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++) lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
  float mx = lane[0];
  for (int j = 1; j < 8; j++) mx = lane[j] > mx ? lane[j] : mx;
  for (; i < n; i++) mx = x[i] > mx ? x[i] : mx;
  return mx;
}

/* x = exp(x - m) in place, and the sum, in eight float lanes */
INLINE float exp_sum_lanes(float *x, i64 n, float m) {
  float lane[8] = {0}, s = 0;
  i64 i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++) { float e = exp_lo(x[i + j] - m); x[i + j] = e; lane[j] += e; }
  for (; i < n; i++) { x[i] = exp_lo(x[i] - m); s += x[i]; }
  return s + ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

/* the online softmax of the score rows of queries [i0, i0+nq) against
** keys [j0, j0+nk): each row's running maximum m and sum l move on, what
** was summed (and the output so far) rescaled by exp(m_old - m_new); the
** scores become exp(s - m), and 0 for keys the query does not see. */
HOT static void online_rows(const rt_instr *ins, scratch *x, i64 i0, i64 nq, i64 j0, i64 nk) {
  i64 dk = ins->k;
  for (i64 r = 0; r < nq; r++) {
    i64 n = seen(ins, i0 + r, j0, nk);
    float *sr = x->s + r * x->lds, mx = row_max(sr, n);
    memset(sr + n, 0, sizeof(float) * (size_t)(nk - n));
    mx = x->m[r] > mx ? x->m[r] : mx;
    if (mx == -INFINITY) {         /* every key masked so far */
      memset(sr, 0, sizeof(float) * (size_t)n);
      continue;
    }
    float corr = x->m[r] == -INFINITY ? 0.0f : expf(x->m[r] - mx);
    x->l[r] = x->l[r] * corr + exp_sum_lanes(sr, n, mx);
    x->m[r] = mx;
    if (corr != 1.0f) FOR8(dk, x->o[r * dk + k] *= corr);
  }
}

/* P = the softmax of the score rows of queries [i0, i0+nq) over keys
** [0, nk), 0 for keys a query does not see */
HOT static void softmax_rows(const rt_instr *ins, scratch *x, i64 i0, i64 nq, i64 nk) {
  for (i64 r = 0; r < nq; r++) {
    i64 n = seen(ins, i0 + r, 0, nk);
    float *sr = x->s + r * x->lds, mx = row_max(sr, n);
    memset(sr + n, 0, sizeof(float) * (size_t)(nk - n));
    if (mx == -INFINITY) {         /* every key masked */
      memset(sr, 0, sizeof(float) * (size_t)n);
      continue;
    }
    float inv = 1.0f / exp_sum_lanes(sr, n, mx);
    FOR8(n, sr[k] *= inv);
  }
}

/* dS = P (dP - D) in place of dP over the rows of queries [i0, i0+nq),
** D = rowsum(P dP); 0 for keys a query does not see */
HOT static void score_grads(const rt_instr *ins, scratch *x, i64 i0, i64 nq, i64 nk) {
  for (i64 r = 0; r < nq; r++) {
    i64 n = seen(ins, i0 + r, 0, nk);
    const float *p = x->s + r * x->lds;
    float *dp = x->dp + r * x->lds, lane[8] = {0}, d = 0;
    memset(dp + n, 0, sizeof(float) * (size_t)(nk - n));
    i64 i = 0;
    for (; i + 8 <= n; i += 8)
      for (int j = 0; j < 8; j++) lane[j] += p[i + j] * dp[i + j];
    for (; i < n; i++) d += p[i] * dp[i];
    d += ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    FOR8(n, dp[k] = p[k] * (dp[k] - d));
  }
}

/* one block of queries [i0, i0+nq): its output rows into sl->out */
static void forward_block(const rt_instr *ins, const slice *sl, i64 i0, i64 nq, scratch *x) {
  i64 dk = ins->k, kend = ins->fn ? i0 + nq : ins->m;
  for (i64 r = 0; r < nq; r++) { x->m[r] = -INFINITY; x->l[r] = 0; }
  memset(x->o, 0, sizeof(float) * (size_t)(nq * dk));
  for (i64 j0 = 0; j0 < kend; j0 += KC) {
    i64 nk = min64(KC, kend - j0);
    scores(ins, sl->q, sl->k, i0, nq, j0, nk, x);
    online_rows(ins, x, i0, nq, j0, nk);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nq, (int)dk, (int)nk, 1.0f, x->s, (int)x->lds,
                sl->v.p + j0 * sl->v.ld, (int)sl->v.ld, 1.0f, x->o, (int)dk);
  }
  for (i64 r = 0; r < nq; r++) {
    float inv = x->l[r] > 0 ? 1.0f / x->l[r] : 0.0f, *y = sl->out + (i0 + r) * sl->ldo;
    for (i64 c = 0; c < dk; c++) y[c] = x->o[r * dk + c] * inv;
  }
}

/* one block of queries [i0, i0+nq): its dq rows, and what it adds to the
** dk and dv rows of the keys it sees */
static void backward_block(const rt_instr *ins, const slice *sl, i64 i0, i64 nq, scratch *x) {
  i64 dk = ins->k, ld = sl->ldo, kend = ins->fn ? i0 + nq : ins->m;
  int lds = (int)x->lds;
  view q = sl->q, k = sl->k, v = sl->v, dy = sl->dy;
  const float *dyi = dy.p + i0 * dy.ld;
  float *g = sl->out;
  scores(ins, q, k, i0, nq, 0, kend, x);
  softmax_rows(ins, x, i0, nq, kend);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)kend, (int)dk, 1.0f, dyi, (int)dy.ld, v.p,
              (int)v.ld, 0.0f, x->dp, lds);
  score_grads(ins, x, i0, nq, kend);
  /* dv += P^T dy; dq = a dS k; dk += a dS^T q */
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)kend, (int)dk, (int)nq, 1.0f, x->s, lds, dyi, (int)dy.ld,
              1.0f, g + 2 * dk, (int)ld);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nq, (int)dk, (int)kend, ins->alpha, x->dp, lds, k.p,
              (int)k.ld, 0.0f, g + i0 * ld, (int)ld);
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)kend, (int)dk, (int)nq, ins->alpha, x->dp, lds,
              q.p + i0 * q.ld, (int)q.ld, 1.0f, g + dk, (int)ld);
}

static void forward_slice(const rt_instr *ins, const slice *sl, scratch *x) {
  for (i64 i0 = 0; i0 < ins->m; i0 += BQ) forward_block(ins, sl, i0, min64(BQ, ins->m - i0), x);
}

static void backward_slice(const rt_instr *ins, const slice *sl, scratch *x) {
  for (i64 r = 0; r < ins->m; r++) memset(sl->out + r * sl->ldo, 0, sizeof(float) * (size_t)(3 * ins->k));
  for (i64 i0 = 0; i0 < ins->m; i0 += BQ) backward_block(ins, sl, i0, min64(BQ, ins->m - i0), x);
}

/* In closed form, so that the simulator's cost of a long sequence takes
** no longer than a short one's: full blocks j = 1..nb see j BQ keys in
** ceil(j / R) chunks (R = KC / BQ), the last partial block all s. */
_Static_assert(KC % BQ == 0, "a forward chunk is whole blocks of keys");
void rt_attention_blocks(int64_t s, int causal, int grad, double *scores, double *calls) {
  double nb = (double)(s / BQ), r = (double)(s % BQ), S = (double)s, blocks = nb + (r > 0);
  double chunks_all = (double)((s + KC - 1) / KC);     /* a block that sees every key */
  if (!causal) {
    *scores = S * S;
    *calls = grad ? 5 * blocks : 2 * blocks * chunks_all;
    return;
  }
  double R = KC / BQ, a = floor(nb / R), b = nb - a * R;
  *scores = (double)BQ * BQ * nb * (nb + 1) / 2 + r * S;
  double chunks = R * a * (a + 1) / 2 + b * (a + 1) + (r > 0 ? chunks_all : 0);
  *calls = grad ? 5 * blocks : 2 * chunks;
}

/* Operand `bit` of slice b: [outer, s, w] whole, or [b, s, h, w] by heads. */
static view view_of(const rt_instr *ins, const float *base, int bit, i64 b, i64 w) {
  i64 h = ins->n2;
  if (!(ins->mode & bit) || h <= 1) return (view){base + b * ins->m * w, w};
  return (view){base + (b / h) * ins->m * h * w + (b % h) * w, h * w};
}

static void *run_job(void *p) {
  attn_job *j = p;
  const rt_instr *ins = j->ins;
  int grad = ins->op == RT_ATTENTION_GRAD;
  i64 dk = ins->k, wo = grad ? 3 * dk : dk;
  scratch x = {.lds = grad ? ins->m : KC};
  /* the scores (and dP), then the forward's output rows */
  i64 ns = BQ * x.lds * (1 + grad), no = grad ? 0 : BQ * dk;
  float *buf = malloc(sizeof(float) * (size_t)(ns + no));
  if (!buf) { j->failed = 1; return NULL; }
  x.s = buf;
  x.dp = grad ? buf + BQ * x.lds : NULL;
  x.o = buf + ns;
  for (i64 b = j->lo; b < j->hi; b++) {
    view ov = view_of(ins, j->out, RT_ATTN_BSHD_OUT, b, wo);
    slice sl = {view_of(ins, j->q, RT_ATTN_BSHD_Q, b, dk), view_of(ins, j->k, RT_ATTN_BSHD_K, b, dk),
                view_of(ins, j->v, RT_ATTN_BSHD_V, b, dk), {NULL, 0}, (float *)ov.p, ov.ld};
    if (!grad) { forward_slice(ins, &sl, &x); continue; }
    sl.dy = view_of(ins, j->dy, RT_ATTN_BSHD_DY, b, dk);
    backward_slice(ins, &sl, &x);
  }
  free(buf);
  return NULL;
}

/* OpenBLAS spreads each call over its own threads above a size; the
** slices are spread over threads here already, and BLAS threads inside
** each block's GEMM would oversubscribe the cores (heads of 128 ran 35
** times slower on 2 threads). So BLAS is held to one thread while any
** attention kernel of the process runs, and while devices that are threads
** of one process run (comm_local.c), hence a count under a lock. A process
** resource, not program state; results do not depend on BLAS's thread count. */
static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
static int blas_holders, blas_threads;

void rt_blas_hold(void) {
  pthread_mutex_lock(&blas_lock);
  if (blas_holders++ == 0) {
    blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
  }
  pthread_mutex_unlock(&blas_lock);
}

void rt_blas_release(void) {
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
  if (t > 1) rt_blas_hold();
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
  if (t > 1) rt_blas_release();
  return failed ? diag_errbuf(err, errlen, "out of memory for attention blocks") : 0;
}

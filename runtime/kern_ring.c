/*
** kern_ring.c: ring attention's blocks on the CPU, f32 (context
** parallelism: each device keeps its queries and the blocks of keys and
** values pass around the ring of devices; interp/lower/ring.c).
**
** RT_ATTN_BLOCK adds one block of keys to a running online softmax: with
** S = alpha q k^T (masked where a key comes after its query, by their
** positions in the whole sequence: off + row, n2 + column), each row's
** maximum m and sum l are raised, what was summed so far rescaled by
** exp(m_old - m_new), and o += exp(S - m) v. RT_ATTN_FINISH divides o by
** l and, when asked, writes each row's log-sum-exp m + log l.
**
** RT_ATTN_BLOCK_GRAD adds one block's part of the gradient, with the
** softmax's statistics of the whole row known (lse) and D = rowsum(dy * o):
** P = exp(S - lse), dv += P^T dy, dP = dy v^T, dS = P * (dP - D),
** dq += alpha dS k, dk += alpha dS^T q: FlashAttention's backward, one key
** block at a time. A block whose keys all come after the queries (causal)
** is skipped. Each outer slice is [m, dk] (queries) and [n, dk] (keys).
** Where the sequence is dealt zig-zag (RT_ATTN_ZIGZAG) the queries and the
** keys are two halves each, at their own places in the whole: each of the
** four pairs is a block of its own, skipped where the mask leaves nothing,
** which is how every device gets the same work.
*/
#include "util/diag.h"
#include "runtime/kern_ring.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t i64;

/* A block's rows as the kernels walk them: one segment of queries (or
** keys) at one place in the whole sequence, or two where the sequence is
** dealt zig-zag (RT_ATTN_ZIGZAG). */
typedef struct seg { i64 at, n, pos; } seg;

static int segments(const rt_instr *x, int keys, seg s[2]) {
  i64 len = keys ? x->n : x->m, first = keys ? x->n2 : x->off, second = keys ? x->stride_b : x->stride_a;
  if (!(x->mode & RT_ATTN_ZIGZAG)) { s[0] = (seg){0, len, first}; return 1; }
  s[0] = (seg){0, len / 2, first};
  s[1] = (seg){len / 2, len - len / 2, second};
  return 2;
}

/* Scores of queries qs against keys ks of one slice: s[i][j] = alpha q_i . k_j
** (row stride ks.n), -inf where a key comes after its query; 0 when every
** key comes after every query (the pair is skipped). */
static int scores(const rt_instr *x, seg qs, seg ks, const float *q, const float *k, float *s) {
  i64 d = x->k;
  if (x->fn && ks.pos > qs.pos + qs.n - 1) return 0;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)qs.n, (int)ks.n, (int)d, x->alpha, q + qs.at * d, (int)d,
              k + ks.at * d, (int)d, 0.0f, s, (int)ks.n);
  if (x->fn)
    for (i64 i = 0; i < qs.n; i++)
      for (i64 j = 0; j < ks.n; j++)
        if (ks.pos + j > qs.pos + i) s[i * ks.n + j] = -INFINITY;
  return 1;
}

static int sizes_ok(const rt_instr *x, char *err, size_t errlen) {
  if (x->m > INT_MAX / 4 || x->n > INT_MAX / 4 || x->k > INT_MAX / 4 || x->m * x->n > INT_MAX)
    return diag_errbuf(err, errlen, "an attention block of %lld x %lld is too large for BLAS", (long long)x->m, (long long)x->n);
  return 0;
}

int64_t rt_attn_block_scores(const rt_instr *x) {
  seg qs[2], ks[2];
  int nq = segments(x, 0, qs), nk = segments(x, 1, ks);
  int64_t n = 0;
  for (int a = 0; a < nq; a++)
    for (int b = 0; b < nk; b++)
      if (!(x->fn && ks[b].pos > qs[a].pos + qs[a].n - 1)) n += qs[a].n * ks[b].n;
  return n * x->outer;
}

int rt_kern_attn_block(const rt_instr *x, void *out, void *const *in, char *err, size_t errlen) {
  if (sizes_ok(x, err, errlen)) return -1;
  i64 m = x->m, n = x->n, d = x->k;
  float *o = out, *mx = in[3], *l = in[4];
  const float *q = in[0], *k = in[1], *v = in[2];
  float *s = malloc(sizeof(float) * (size_t)(m * n + 1));
  if (!s) return diag_errbuf(err, errlen, "out of memory for an attention block");
  seg qs[2], ks[2];
  int nq = segments(x, 0, qs), nk = segments(x, 1, ks);
  for (i64 b = 0; b < x->outer; b++) {
    const float *qb = q + b * m * d, *kb = k + b * n * d, *vb = v + b * n * d;
    float *ob = o + b * m * d, *mb = mx + b * m, *lb = l + b * m;
    for (int qa = 0; qa < nq; qa++)
      for (int kc = 0; kc < nk; kc++) {      /* each pair of segments a block of the online softmax */
        seg Q = qs[qa], K = ks[kc];
        if (!scores(x, Q, K, qb, kb, s)) continue;
        for (i64 i = 0; i < Q.n; i++) {
          i64 r = Q.at + i;
          float *si = s + i * K.n, hi = -INFINITY;
          for (i64 j = 0; j < K.n; j++) if (si[j] > hi) hi = si[j];
          float mnew = hi > mb[r] ? hi : mb[r];
          if (mnew == -INFINITY) { memset(si, 0, sizeof(float) * (size_t)K.n); continue; }   /* nothing seen yet */
          float keep = mb[r] == -INFINITY ? 0.0f : expf(mb[r] - mnew), sum = 0;
          for (i64 j = 0; j < K.n; j++) { si[j] = si[j] == -INFINITY ? 0.0f : expf(si[j] - mnew); sum += si[j]; }
          lb[r] = lb[r] * keep + sum;
          mb[r] = mnew;
          for (i64 c = 0; c < d; c++) ob[r * d + c] *= keep;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)Q.n, (int)d, (int)K.n, 1.0f, s, (int)K.n, vb + K.at * d, (int)d,
                    1.0f, ob + Q.at * d, (int)d);
      }
  }
  free(s);
  return 0;
}

int rt_kern_attn_finish(const rt_instr *x, void *out, void *const *in, char *err, size_t errlen) {
  (void)err; (void)errlen;
  i64 rows = x->outer * x->m, d = x->k;
  const float *o = in[0], *l = in[1], *mx = in[2];
  float *y = out, *lse = in[3];
  for (i64 r = 0; r < rows; r++) {
    float inv = l[r] > 0 ? 1.0f / l[r] : 0.0f;
    for (i64 c = 0; c < d; c++) y[r * d + c] = o[r * d + c] * inv;
    if (lse) lse[r] = l[r] > 0 ? mx[r] + logf(l[r]) : -INFINITY;
  }
  return 0;
}

int rt_kern_attn_block_grad(const rt_instr *x, void *out, void *const *in, char *err, size_t errlen) {
  if (sizes_ok(x, err, errlen)) return -1;
  i64 m = x->m, n = x->n, d = x->k;
  const float *q = in[0], *k = in[1], *v = in[2], *dy = in[3], *lse = in[4], *D = in[5];
  float *dq = out, *dk = in[6], *dv = in[7];
  float *s = malloc(sizeof(float) * (size_t)(2 * m * n + 1));
  if (!s) return diag_errbuf(err, errlen, "out of memory for an attention block");
  float *dp = s + m * n;
  seg qs[2], ks[2];
  int nq = segments(x, 0, qs), nk = segments(x, 1, ks);
  for (i64 b = 0; b < x->outer; b++) {
    const float *qb = q + b * m * d, *kb = k + b * n * d, *vb = v + b * n * d, *dyb = dy + b * m * d;
    const float *lb = lse + b * m, *Db = D + b * m;
    float *dqb = dq + b * m * d, *dkb = dk + b * n * d, *dvb = dv + b * n * d;
    for (int qa = 0; qa < nq; qa++)
      for (int kc = 0; kc < nk; kc++) {
        seg Q = qs[qa], K = ks[kc];
        if (!scores(x, Q, K, qb, kb, s)) continue;
        for (i64 i = 0; i < Q.n; i++)
          for (i64 j = 0; j < K.n; j++) {
            float z = s[i * K.n + j], l = lb[Q.at + i];
            s[i * K.n + j] = z == -INFINITY || l == -INFINITY ? 0.0f : expf(z - l);   /* P */
          }
        const float *dyq = dyb + Q.at * d;
        /* dv += P^T dy; dP = dy v^T */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)K.n, (int)d, (int)Q.n, 1.0f, s, (int)K.n, dyq, (int)d, 1.0f,
                    dvb + K.at * d, (int)d);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)Q.n, (int)K.n, (int)d, 1.0f, dyq, (int)d, vb + K.at * d, (int)d,
                    0.0f, dp, (int)K.n);
        for (i64 i = 0; i < Q.n; i++)
          for (i64 j = 0; j < K.n; j++) s[i * K.n + j] *= dp[i * K.n + j] - Db[Q.at + i];   /* dS */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)Q.n, (int)d, (int)K.n, x->alpha, s, (int)K.n, kb + K.at * d,
                    (int)d, 1.0f, dqb + Q.at * d, (int)d);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)K.n, (int)d, (int)Q.n, x->alpha, s, (int)K.n, qb + Q.at * d,
                    (int)d, 1.0f, dkb + K.at * d, (int)d);
      }
  }
  free(s);
  return 0;
}

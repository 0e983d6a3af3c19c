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
*/
#include "util/diag.h"
#include "runtime/kern_ring.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t i64;

/* Scores of one slice: s[i][j] = alpha q_i . k_j, -inf where masked; 0 when
   the whole block is masked. */
static int scores(const rt_instr *x, const float *q, const float *k, float *s) {
  i64 m = x->m, n = x->n, d = x->k;
  if (x->fn && x->n2 > x->off + m - 1) return 0;          /* every key after every query */
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)d, x->alpha, q, (int)d, k, (int)d, 0.0f, s, (int)n);
  if (x->fn)
    for (i64 i = 0; i < m; i++)
      for (i64 j = 0; j < n; j++)
        if (x->n2 + j > x->off + i) s[i * n + j] = -INFINITY;
  return 1;
}

static int sizes_ok(const rt_instr *x, char *err, size_t errlen) {
  if (x->m > INT_MAX / 4 || x->n > INT_MAX / 4 || x->k > INT_MAX / 4 || x->m * x->n > INT_MAX)
    return diag_errbuf(err, errlen, "an attention block of %lld x %lld is too large for BLAS", (long long)x->m, (long long)x->n);
  return 0;
}

int rt_kern_attn_block(const rt_instr *x, void *out, void *const *in, char *err, size_t errlen) {
  if (sizes_ok(x, err, errlen)) return -1;
  i64 m = x->m, n = x->n, d = x->k;
  float *o = out, *mx = in[3], *l = in[4];
  const float *q = in[0], *k = in[1], *v = in[2];
  float *s = malloc(sizeof(float) * (size_t)(m * n + 1));
  if (!s) return diag_errbuf(err, errlen, "out of memory for an attention block");
  for (i64 b = 0; b < x->outer; b++) {
    const float *qb = q + b * m * d, *kb = k + b * n * d, *vb = v + b * n * d;
    float *ob = o + b * m * d, *mb = mx + b * m, *lb = l + b * m;
    if (!scores(x, qb, kb, s)) continue;
    for (i64 i = 0; i < m; i++) {
      float *si = s + i * n, hi = -INFINITY;
      for (i64 j = 0; j < n; j++) if (si[j] > hi) hi = si[j];
      float mnew = hi > mb[i] ? hi : mb[i];
      if (mnew == -INFINITY) { memset(si, 0, sizeof(float) * (size_t)n); continue; }   /* nothing seen yet */
      float keep = mb[i] == -INFINITY ? 0.0f : expf(mb[i] - mnew), sum = 0;
      for (i64 j = 0; j < n; j++) { si[j] = si[j] == -INFINITY ? 0.0f : expf(si[j] - mnew); sum += si[j]; }
      lb[i] = lb[i] * keep + sum;
      mb[i] = mnew;
      for (i64 c = 0; c < d; c++) ob[i * d + c] *= keep;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)d, (int)n, 1.0f, s, (int)n, vb, (int)d, 1.0f, ob, (int)d);
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
  for (i64 b = 0; b < x->outer; b++) {
    const float *qb = q + b * m * d, *kb = k + b * n * d, *vb = v + b * n * d, *dyb = dy + b * m * d;
    const float *lb = lse + b * m, *Db = D + b * m;
    float *dqb = dq + b * m * d, *dkb = dk + b * n * d, *dvb = dv + b * n * d;
    if (!scores(x, qb, kb, s)) continue;
    for (i64 i = 0; i < m; i++)
      for (i64 j = 0; j < n; j++) {
        float z = s[i * n + j];
        s[i * n + j] = z == -INFINITY || lb[i] == -INFINITY ? 0.0f : expf(z - lb[i]);   /* P */
      }
    /* dv += P^T dy; dP = dy v^T */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)n, (int)d, (int)m, 1.0f, s, (int)n, dyb, (int)d, 1.0f, dvb, (int)d);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)d, 1.0f, dyb, (int)d, vb, (int)d, 0.0f, dp, (int)n);
    for (i64 i = 0; i < m; i++)
      for (i64 j = 0; j < n; j++) s[i * n + j] *= dp[i * n + j] - Db[i];   /* dS */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)d, (int)n, x->alpha, s, (int)n, kb, (int)d, 1.0f, dqb, (int)d);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)n, (int)d, (int)m, x->alpha, s, (int)n, qb, (int)d, 1.0f, dkb, (int)d);
  }
  free(s);
  return 0;
}

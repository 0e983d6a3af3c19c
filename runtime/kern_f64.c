/*
** kern_f64.c: carve's composite kernels in double, for f64 programs:
** softmax, log-softmax and their gradients, layer norm and its gradients,
** cross-entropy and its gradient (classes whole or split between devices,
** with the split's sums of exponentials), the causal mask, max's and the
** embedding's gradients, and attention with its gradient. They compute
** what kern_cpu.c's and kern_attn.c's f32 kernels compute, every
** intermediate in double, so that an f64 model is as exact as PyTorch's
** float64 one. Plain loops on one thread: f64 is the reference precision,
** not the fast path. Constants come through rt_alpha (the unrounded eps,
** scale or 1/n).
*/
#include "runtime/kern_f64.h"
#include "util/diag.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t i64;

/* the largest element, NaN if there is one (then the row's results are NaN) */
static double row_max(const double *x, i64 n) {
  double m = -INFINITY;
  for (i64 i = 0; i < n; i++)
    if (x[i] > m || x[i] != x[i]) m = x[i];
  return m;
}

static double row_sum(const double *x, i64 n) {
  double s = 0;
  for (i64 i = 0; i < n; i++) s += x[i];
  return s;
}

/* sum of exp(x - m) */
static double exp_sum(const double *x, double m, i64 n) {
  double s = 0;
  for (i64 i = 0; i < n; i++) s += exp(x[i] - m);
  return s;
}

static int softmax(const rt_instr *ins, double *y, const double *x, int logs) {
  i64 n = ins->n;
  for (i64 r = 0; r < ins->outer; r++, x += n, y += n) {
    double m = row_max(x, n), s = exp_sum(x, m, n), l = logs ? log(s) : 0;
    for (i64 i = 0; i < n; i++) y[i] = logs ? (x[i] - m) - l : exp(x[i] - m) / s;
  }
  return 0;
}

/* softmax: dx = y (dy - sum(dy y)); log-softmax: dx = dy - exp(y) sum(dy) */
static int softmax_grad(const rt_instr *ins, double *dx, const double *y, const double *dy, int logs) {
  i64 n = ins->n;
  for (i64 r = 0; r < ins->outer; r++, y += n, dy += n, dx += n) {
    double s = 0;
    for (i64 i = 0; i < n; i++) s += logs ? dy[i] : dy[i] * y[i];
    for (i64 i = 0; i < n; i++) dx[i] = logs ? dy[i] - exp(y[i]) * s : y[i] * (dy[i] - s);
  }
  return 0;
}

/* a row's mean and 1 / sqrt(biased variance + eps); with RT_LN_RMS the
** mean is 0 (the mean square for the variance) */
static void row_stats(const rt_instr *ins, const double *x, double *mu, double *rs) {
  i64 n = ins->n;
  double eps = rt_alpha(ins);
  double m = n && !(ins->mode & RT_LN_RMS) ? row_sum(x, n) / (double)n : 0, v = 0;
  for (i64 i = 0; i < n; i++) v += (x[i] - m) * (x[i] - m);
  *mu = m;
  *rs = 1 / sqrt((n ? v / (double)n : 0) + eps);
}

static int layernorm(const rt_instr *ins, double *y, const double *x, const double *g, const double *b) {
  i64 n = ins->n;
  for (i64 r = 0; r < ins->outer; r++, x += n, y += n) {
    double mu, rs;
    row_stats(ins, x, &mu, &rs);
    for (i64 i = 0; i < n; i++) y[i] = (x[i] - mu) * rs * (g ? g[i] : 1) + (b ? b[i] : 0);
  }
  return 0;
}

/* dx = rs (h - mean(h) - xhat mean(h xhat)) with h = dy gamma (with
** RT_LN_RMS nothing was centred: no mean(h)); or, with mode RT_LN_GAMMA,
** gamma's gradient: the sum over rows of dy xhat */
static int layernorm_grad(const rt_instr *ins, double *out, const double *x, const double *g, const double *dy) {
  i64 n = ins->n;
  int gamma = ins->mode & RT_LN_GAMMA, centred = !(ins->mode & RT_LN_RMS);
  if (gamma) memset(out, 0, sizeof(double) * (size_t)n);
  for (i64 r = 0; r < ins->outer; r++, x += n, dy += n) {
    double mu, rs, sh = 0, shx = 0;
    row_stats(ins, x, &mu, &rs);
    if (gamma) {
      for (i64 i = 0; i < n; i++) out[i] += dy[i] * ((x[i] - mu) * rs);
      continue;
    }
    for (i64 i = 0; i < n; i++) {
      double h = dy[i] * (g ? g[i] : 1);
      sh += h;
      shx += h * ((x[i] - mu) * rs);
    }
    double mh = n && centred ? sh / (double)n : 0, mhx = n ? shx / (double)n : 0;
    for (i64 i = 0; i < n; i++) out[r * n + i] = rs * (dy[i] * (g ? g[i] : 1) - mh - (x[i] - mu) * rs * mhx);
  }
  return 0;
}

int rt_check_labels(const rt_instr *ins, const int32_t *lab, char *err, size_t errlen) {
  i64 classes = rt_xent_split(ins) ? ins->n2 : ins->n;     /* split: every device's classes */
  for (i64 r = 0; r < ins->outer; r++)
    if (lab[r] < 0 || lab[r] >= classes)
      return diag_errbuf(err, errlen, "cross_entropy: label %" PRId32 " out of range [0, %" PRId64 ")", lab[r], classes);
  return 0;
}

/* The classes split (rt_xent_split): this device's classes are off ..
** off+n-1, mx and se each row's max and sum of exp(x - max) over all of
** them. The loss's part: log se + mx on the device at off 0, less the
** label's logit where it is here; with dx, the gradient of this device's
** classes, exp(x - mx) / se - onehot, times dloss * rt_alpha. */
static int xent_part(const rt_instr *ins, const double *x, const int32_t *lab, const double *mx, const double *se, double *loss,
                     double *dx, double dloss, char *err, size_t errlen) {
  if (rt_check_labels(ins, lab, err, errlen)) return -1;
  i64 n = ins->n, off = ins->off;
  double total = 0, g = dloss * rt_alpha(ins);
  for (i64 r = 0; r < ins->outer; r++, x += n) {
    i64 c = lab[r] - off;
    int here = c >= 0 && c < n;
    if (!dx) {
      total += (off == 0 ? mx[r] + log(se[r]) : 0.0) - (here ? x[c] : 0.0);
      continue;
    }
    double *d = dx + r * n;
    for (i64 i = 0; i < n; i++) d[i] = exp(x[i] - mx[r]) / se[r] * g;
    if (here) d[c] -= g;
  }
  if (loss) *loss = total * rt_alpha(ins);
  return 0;
}

static int sumexp(const rt_instr *ins, double *y, const double *x, const double *m) {
  for (i64 r = 0; r < ins->outer; r++) y[r] = exp_sum(x + r * ins->n, m[r], ins->n);
  return 0;
}

/* the loss: rt_alpha times the sum over rows of logsumexp - x[label];
** with dx, also its gradient (softmax - onehot) * dloss * rt_alpha, and
** the loss (scaled by beta) where xent_grad is given one to write */
static int xent(const rt_instr *ins, const double *x, const int32_t *lab, double *loss, double *dx, double dloss,
                char *err, size_t errlen) {
  if (rt_check_labels(ins, lab, err, errlen)) return -1;
  i64 n = ins->n;
  double total = 0, g = dloss * rt_alpha(ins);
  for (i64 r = 0; r < ins->outer; r++, x += n) {
    double m = row_max(x, n), s = exp_sum(x, m, n), at = x[lab[r]];
    total += (m + log(s)) - at;
    if (!dx) continue;
    double *d = dx + r * n;
    for (i64 i = 0; i < n; i++) d[i] = exp(x[i] - m) / s * g;
    d[lab[r]] -= g;
  }
  if (loss) *loss = total * (dx ? (double)ins->beta : rt_alpha(ins));
  return 0;
}

static int causal_mask(const rt_instr *ins, double *y, const double *x) {
  i64 m = ins->m, n = ins->n;
  double fill = rt_alpha(ins);
  for (i64 row = 0; row < ins->outer * m; row++) {
    i64 r = row % m;
    for (i64 c = 0; c < n; c++) y[row * n + c] = c > r + ins->off ? fill : x[row * n + c];
  }
  return 0;
}

/* [outer, n, inner]: dy shared evenly among the maxima of each row */
static int max_grad(const rt_instr *ins, double *dx, const double *x, const double *dy) {
  i64 n = ins->n, w = ins->inner;
  for (i64 o = 0; o < ins->outer; o++)
    for (i64 i = 0; i < w; i++) {
      const double *xo = x + o * n * w + i;
      double *d = dx + o * n * w + i, m = -INFINITY, ties = 0;
      for (i64 j = 0; j < n; j++)
        if (xo[j * w] > m || xo[j * w] != xo[j * w]) m = xo[j * w];
      for (i64 j = 0; j < n; j++) ties += xo[j * w] == m;
      for (i64 j = 0; j < n; j++) d[j * w] = xo[j * w] == m ? dy[o * w + i] / ties : 0;
    }
  return 0;
}

/* the embedding's gradient: rows of dy added into the table's rows */
static int scatter_rows(const rt_instr *ins, double *t, const int32_t *ids, const double *dy, char *err, size_t errlen) {
  i64 w = ins->inner, rows = ins->n2 > 0 ? ins->n2 : ins->off + ins->n;
  if (ins->beta == 0.0f) memset(t, 0, sizeof(double) * (size_t)(ins->n * w));
  for (i64 r = 0; r < ins->outer; r++) {
    i64 id = ids[r], row = id - ins->off;
    if (id < 0 || id >= rows)
      return diag_errbuf(err, errlen, "embedding: id %" PRId64 " out of range [0, %" PRId64 ")", id, rows);
    if (row < 0 || row >= ins->n) continue;
    for (i64 i = 0; i < w; i++) t[row * w + i] += dy[r * w + i];
  }
  return 0;
}

/* ---- attention ---- */

/* Operand `bit` of slice b, as kern_attn.c lays it out: [outer, s, w]
** whole, or [b, s, h, w] by heads; *ld: the elements between its rows. */
static double *slice_of(const rt_instr *ins, const void *base, int bit, i64 b, i64 w, i64 *ld) {
  i64 h = ins->n2;
  double *p = (double *)base;
  if (!(ins->mode & bit) || h <= 1) { *ld = w; return p + b * ins->m * w; }
  *ld = h * w;
  return p + (b / h) * ins->m * h * w + (b % h) * w;
}

static double dot(const double *a, const double *b, i64 n) {
  double s = 0;
  for (i64 i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* p = softmax(a q_i k^T) over the keys query i sees; returns how many */
static i64 probs(const rt_instr *ins, i64 i, const double *qi, const double *k, i64 ldk, double a, double *p) {
  i64 seen = ins->fn ? (i + 1 < ins->n ? i + 1 : ins->n) : ins->n;
  double m = -INFINITY, s = 0;
  for (i64 j = 0; j < seen; j++) {
    p[j] = a * dot(qi, k + j * ldk, ins->k);
    if (p[j] > m || p[j] != p[j]) m = p[j];
  }
  for (i64 j = 0; j < seen; j++) s += (p[j] = exp(p[j] - m));
  for (i64 j = 0; j < seen; j++) p[j] /= s;
  return seen;
}

static int attention(const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  int grad = ins->op == RT_ATTENTION_GRAD;
  i64 dk = ins->k, wo = grad ? 3 * dk : dk, n = ins->n > ins->m ? ins->n : ins->m;
  double a = rt_alpha(ins), *p = malloc(sizeof(double) * (size_t)(2 * n + 1)), *dp = p + n;
  if (!p) return diag_errbuf(err, errlen, "out of memory for attention rows");
  for (i64 b = 0; b < ins->outer; b++) {
    i64 lq, lk, lv, ly = 0, lo;
    const double *q = slice_of(ins, in[0], RT_ATTN_BSHD_Q, b, dk, &lq), *k = slice_of(ins, in[1], RT_ATTN_BSHD_K, b, dk, &lk),
                 *v = slice_of(ins, in[2], RT_ATTN_BSHD_V, b, dk, &lv),
                 *dy = grad ? slice_of(ins, in[3], RT_ATTN_BSHD_DY, b, dk, &ly) : NULL;
    double *o = slice_of(ins, out, RT_ATTN_BSHD_OUT, b, wo, &lo);
    if (grad)     /* dk and dv accumulate over the queries */
      for (i64 j = 0; j < ins->n; j++) memset(o + j * lo + dk, 0, sizeof(double) * (size_t)(2 * dk));
    for (i64 i = 0; i < ins->m; i++) {
      const double *qi = q + i * lq;
      double *oi = o + i * lo;
      i64 seen = probs(ins, i, qi, k, lk, a, p);
      if (!grad) {
        for (i64 c = 0; c < dk; c++) oi[c] = 0;
        for (i64 j = 0; j < seen; j++)
          for (i64 c = 0; c < dk; c++) oi[c] += p[j] * v[j * lv + c];
        continue;
      }
      const double *dyi = dy + i * ly;
      double D = 0;
      for (i64 j = 0; j < seen; j++) { dp[j] = dot(dyi, v + j * lv, dk); D += p[j] * dp[j]; }
      for (i64 c = 0; c < dk; c++) oi[c] = 0;
      for (i64 j = 0; j < seen; j++) {
        double ds = p[j] * (dp[j] - D) * a, *oj = o + j * lo;
        for (i64 c = 0; c < dk; c++) {
          oi[c] += ds * k[j * lk + c];            /* dq */
          oj[dk + c] += ds * qi[c];               /* dk */
          oj[2 * dk + c] += p[j] * dyi[c];        /* dv */
        }
      }
    }
  }
  free(p);
  return 0;
}

int rt_f64_kernel(const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  int nin = ins->nin < RT_MAXIN ? ins->nin : RT_MAXIN;
  for (int k = 0; k < nin; k++)       /* ids and labels are i32; every other operand f64 */
    if (ins->in[k] >= 0 && ins->idt[k] != RT_F64 && ins->idt[k] != RT_I32)
      return diag_errbuf(err, errlen, "%s of f64 reads a %s operand (in%d)", rt_op_name((rt_op)ins->op),
                         rt_dtype_name((rt_dtype)ins->idt[k]), k);
  double *y = out;
  switch (ins->op) {
  case RT_SOFTMAX: case RT_LOG_SOFTMAX: return softmax(ins, y, in[0], ins->op == RT_LOG_SOFTMAX);
  case RT_SOFTMAX_GRAD: case RT_LOG_SOFTMAX_GRAD:
    return softmax_grad(ins, y, in[0], in[1], ins->op == RT_LOG_SOFTMAX_GRAD);
  case RT_LAYERNORM: return layernorm(ins, y, in[0], in[1], in[2]);
  case RT_LAYERNORM_GRAD: return layernorm_grad(ins, y, in[0], in[1], in[2]);
  case RT_XENT:
    if (rt_xent_split(ins)) return xent_part(ins, in[0], in[1], in[4], in[5], y, NULL, 0, err, errlen);
    return xent(ins, in[0], in[1], y, NULL, 0, err, errlen);
  case RT_XENT_GRAD:
    if (rt_xent_split(ins)) return xent_part(ins, in[0], in[1], in[4], in[5], NULL, y, *(const double *)in[2], err, errlen);
    return xent(ins, in[0], in[1], in[3], y, *(const double *)in[2], err, errlen);
  case RT_XENT_SUMEXP: return sumexp(ins, y, in[0], in[1]);
  case RT_CAUSAL_MASK: return causal_mask(ins, y, in[0]);
  case RT_REDUCE_MAX_GRAD: return max_grad(ins, y, in[0], in[1]);
  case RT_SCATTER_ROWS: return scatter_rows(ins, y, in[0], in[1], err, errlen);
  case RT_ATTENTION: case RT_ATTENTION_GRAD: return attention(ins, out, in, err, errlen);
  default: return diag_errbuf(err, errlen, "%s has no f64 kernel", rt_op_name((rt_op)ins->op));
  }
}

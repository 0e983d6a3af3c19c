/*
** rows.c: the row-wise ops as programs spell them out.
**   softmax      exp(x - max) / sum(exp(x - max))            jax.nn.softmax
**   log_softmax  (x - max) - log(sum(exp(x - max)))          jax.nn.log_softmax
**   layernorm    (x - mean) * rsqrt(var + eps) * g + b       flax (var as mean(x^2) - mean^2)
**                (x - mean) / sqrt(var + eps) * g + b        by hand (var = mean((x - mean)^2))
**   rmsnorm      x * rsqrt(mean(x^2) + eps) * g              flax's RMSNorm, Llama's (or / sqrt)
**   cross_entropy  mean(logsumexp(x) - take_along_axis(x, labels))  optax's integer labels
** The max may carry jnp.max's initial -inf and logsumexp's guard; means
** may be sums divided by their count; reductions keep their dim or are
** reshaped back to it. The layer norm's products may come in any order.
*/
#include "interp/fuse/match.h"
#include "interp/ir/ops.h"

#include <math.h>
#include <string.h>

static ir_attrs dim_attrs(int d) {
  ir_attrs a;
  memset(&a, 0, sizeof a);
  a.ndims = -1;
  a.dim = d;
  return a;
}

/* t = x - max(x) over d: x, else -1 */
static int shifted(const ir_graph *g, int t, int d) {
  ir_value *s = fm_op(g, t, IR_SUB);
  int x;
  return s && fm_max(g, s->args[1], d, &x) && x == s->args[0] ? x : -1;
}

/* v = e / sum(e) over d, e = exp(x - max(x)) */
static int softmax_at(ir_graph *g, ir_value *v) {
  ir_value *e = fm_op(g, v->args[0], IR_EXP);
  if (!e || v->nargs != 2 || !ir_dtype_isfloat(v->dtype)) return 0;
  for (int d = 0; d < v->shape.rank; d++) {
    int x = shifted(g, e->args[0], d), e2;
    if (x < 0 || !fm_reduced(g, v->args[1], IR_SUM, d, &e2) || e2 != e->id) continue;
    ir_attrs a = dim_attrs(d);
    return fm_become(g, v, IR_SOFTMAX, &x, 1, &a) == 0;
  }
  return 0;
}

/* log(sum(exp(t))) over d, kept: whether it is */
static int log_sum_exp(const ir_graph *g, int id, int t, int d) {
  ir_value *l = fm_op(g, id, IR_LOG), *s = NULL;
  int e;
  if (l) return fm_reduced(g, l->args[0], IR_SUM, d, &e) && (s = fm_op(g, e, IR_EXP)) && s->args[0] == t;
  ir_value *r = fm_op(g, id, IR_RESHAPE);     /* the log before the dim is put back */
  if (!r || !(l = fm_op(g, r->args[0], IR_LOG)) || !(s = fm_op(g, l->args[0], IR_SUM)) || s->attr.ndims != 1 || s->attr.dims[0] != d ||
      s->attr.keepdims || r->shape.rank != g->vals[t]->shape.rank || r->shape.d[d] != 1)
    return 0;
  ir_value *ex = fm_op(g, s->args[0], IR_EXP);
  return ex && ex->args[0] == t;
}

/* v = t - log(sum(exp(t))), t = x - max(x) over d */
static int log_softmax_at(ir_graph *g, ir_value *v) {
  if (v->nargs != 2 || !ir_dtype_isfloat(v->dtype)) return 0;
  for (int d = 0; d < v->shape.rank; d++) {
    int x = shifted(g, v->args[0], d);
    if (x < 0 || !log_sum_exp(g, v->args[1], v->args[0], d)) continue;
    ir_attrs a = dim_attrs(d);
    return fm_become(g, v, IR_LOG_SOFTMAX, &x, 1, &a) == 0;
  }
  return 0;
}

/* id = x - mean(x) over d */
static int centred(const ir_graph *g, int id, int x, int d) {
  ir_value *s = fm_op(g, id, IR_SUB);
  int x1;
  return s && s->args[0] == x && fm_mean(g, s->args[1], d, &x1) && x1 == x;
}

/* id = a * a */
static int square_of(const ir_graph *g, int id, int *a) {
  ir_value *m = fm_op(g, id, IR_MUL);
  if (!m || m->args[0] != m->args[1]) return 0;
  *a = m->args[0];
  return 1;
}

/* id = var(x) + eps over d, the variance as mean((x - mean)^2) (two
** passes, the mean taken again or not) or max(0, mean(x^2) - mean^2)
** (flax's) */
static int variance_of(const ir_graph *g, int id, int x, int d, double *eps) {
  ir_value *z = fm_op(g, id, IR_ADD);
  for (int k = 0; z && k < 2; k++) {
    if (!fm_lit(g, z->args[1 - k], eps) || !(*eps >= 0)) continue;
    int var = z->args[k], sq, a, b, x1;
    if (fm_mean(g, var, d, &sq) && square_of(g, sq, &a) && centred(g, a, x, d)) return 1;
    ir_value *mx = fm_op(g, var, IR_MAXIMUM), *sub;
    double zero;
    for (int j = 0; mx && j < 2; j++)
      if (fm_lit(g, mx->args[j], &zero) && zero == 0 && (sub = fm_op(g, mx->args[1 - j], IR_SUB)) && fm_mean(g, sub->args[0], d, &sq) &&
          square_of(g, sq, &a) && a == x && square_of(g, sub->args[1], &b) && fm_mean(g, b, d, &x1) && x1 == x)
        return 1;
  }
  return 0;
}

/* v = (x - mean) * rsqrt(var + eps) [* g] [+ b], or / sqrt(var + eps) */
static int layernorm_at(ir_graph *g, ir_value *v) {
  int prod = v->id, beta = -1;
  if (!ir_dtype_isfloat(v->dtype) || v->shape.rank < 1) return 0;
  int d = v->shape.rank - 1;
  int64_t n = v->shape.d[d];
  if (v->op == IR_ADD)
    for (int k = 0; k < 2 && beta < 0; k++) {
      const ir_value *b = g->vals[v->args[k]];
      if (b->shape.rank == 1 && b->shape.d[0] == n && b->kind != IR_CONST) { beta = b->id; prod = v->args[1 - k]; }
    }
  int f[6], x = -1, c = -1, gamma = -1, scale = -1;
  double k, eps = 0;
  int nf = fm_factors(g, prod, f, 6, &k);
  if (nf == 2 && k == 1 && beta >= 0)      /* normalize(x) * g + b: the affine a program applies after */
    for (int i = 0; i < 2; i++) {
      ir_value *nz = fm_op(g, f[i], IR_NORMALIZE);
      const ir_value *gv = g->vals[f[1 - i]];
      if (!nz || gv->shape.rank != 1 || gv->shape.d[0] != n || gv->kind == IR_CONST || nz->attr.dim != d) continue;
      int args[3] = {nz->args[0], gv->id, beta};
      ir_attrs a = dim_attrs(d);
      a.eps = nz->attr.eps;
      return fm_become(g, v, IR_LAYERNORM, args, 3, &a) == 0;
    }
  if (nf < 2 || k != 1) return 0;
  /* the centred x, or (x - mean) / sqrt(var + eps) standing for both */
  ir_value *dv = NULL;
  for (int i = 0; i < nf && c < 0; i++) {
    ir_value *q = fm_op(g, f[i], IR_DIV);
    int cand = q && fm_op(g, q->args[1], IR_SQRT) ? q->args[0] : f[i];
    ir_value *s = fm_op(g, cand, IR_SUB);
    if (!s || !centred(g, cand, s->args[0], d)) continue;
    c = cand;
    x = s->args[0];
    if (cand != f[i]) dv = q;
  }
  if (c < 0) return 0;
  for (int i = 0; i < nf; i++) {
    const ir_value *fv = g->vals[f[i]];
    ir_value *r = fm_op(g, f[i], IR_RSQRT);
    if (f[i] == c || (dv && f[i] == dv->id)) continue;
    if (r && scale < 0 && variance_of(g, r->args[0], x, d, &eps)) scale = r->id;
    else if (fv->shape.rank == 1 && fv->shape.d[0] == n && gamma < 0 && fv->kind != IR_CONST) gamma = fv->id;
    else return 0;
  }
  if (dv) {
    if (scale >= 0 || !variance_of(g, g->vals[dv->args[1]]->args[0], x, d, &eps)) return 0;
    scale = dv->id;
  }
  if (scale < 0 || (gamma < 0) != (beta < 0) || !(eps > 0)) return 0;
  ir_attrs a = dim_attrs(d);
  a.eps = eps;
  if (gamma < 0) return fm_become(g, v, IR_NORMALIZE, &x, 1, &a) == 0;
  int args[3] = {x, gamma, beta};
  return fm_become(g, v, IR_LAYERNORM, args, 3, &a) == 0;
}

/* id = mean(x^2) + eps over d, the square as x * x or power(x, 2): x
** (and eps), else -1 */
static int mean_square_eps(const ir_graph *g, int id, int d, double *eps) {
  ir_value *z = fm_op(g, id, IR_ADD);
  for (int k = 0; z && k < 2; k++) {
    int sq, x;
    double two;
    if (!fm_lit(g, z->args[1 - k], eps) || !(*eps > 0) || !fm_mean(g, z->args[k], d, &sq)) continue;
    if (square_of(g, sq, &x)) return x;
    ir_value *p = fm_op(g, sq, IR_POWER);
    if (p && fm_lit(g, p->args[1], &two) && two == 2) return p->args[0];
  }
  return -1;
}

/* v = x * rsqrt(mean(x^2) + eps) [* g], or x / sqrt(mean(x^2) + eps) [* g]
** (flax's RMSNorm, Llama's): rmsnorm(x, g), or normalize(x, rms = true) */
static int rmsnorm_at(ir_graph *g, ir_value *v) {
  if (!ir_dtype_isfloat(v->dtype) || v->shape.rank < 1) return 0;
  int d = v->shape.rank - 1, f[4], x = -1, scale = -1, seen_x = 0, gamma = -1;
  int64_t n = v->shape.d[d];
  double k, eps = 0;
  int nf = fm_factors(g, v->id, f, 4, &k);
  if (nf < 1 || nf > 3 || k != 1) return 0;
  for (int i = 0; i < nf && scale < 0; i++) {
    ir_value *r = fm_op(g, f[i], IR_RSQRT), *q = fm_op(g, f[i], IR_DIV), *s, *nz = fm_op(g, f[i], IR_NORMALIZE);
    if (nz && nz->attr.rms && nz->attr.dim == d)     /* normalize(x) * g: the scale applied after */
      x = nz->args[0], eps = nz->attr.eps, scale = i, seen_x = 1;
    else if (r && (x = mean_square_eps(g, r->args[0], d, &eps)) >= 0) scale = i;
    else if (q && (s = fm_op(g, q->args[1], IR_SQRT)) && (x = mean_square_eps(g, s->args[0], d, &eps)) >= 0 && q->args[0] == x)
      scale = i, seen_x = 1;
  }
  ir_value *s = fm_op(g, x, IR_SUB);
  if (scale < 0 || (s && centred(g, x, s->args[0], d))) return 0;   /* a layer norm's: layernorm_at's */
  for (int i = 0; i < nf; i++) {
    const ir_value *fv = g->vals[f[i]];
    if (i == scale) continue;
    if (f[i] == x && !seen_x) seen_x = 1;
    else if (fv->shape.rank == 1 && fv->shape.d[0] == n && gamma < 0 && fv->kind != IR_CONST) gamma = fv->id;
    else return 0;
  }
  if (!seen_x) return 0;
  ir_attrs a = dim_attrs(d);
  a.eps = eps;
  a.rms = 1;
  if (gamma < 0) return fm_become(g, v, IR_NORMALIZE, &x, 1, &a) == 0;
  int args[2] = {x, gamma};
  return fm_become(g, v, IR_RMSNORM, args, 2, &a) == 0;
}

/* the labels an index tensor holds: labels, or labels with JAX's wrap of
** negative indices (select(labels < 0, labels + n, labels)) */
static int labels_of(const ir_graph *g, int id) {
  id = fm_strip(g, id);
  ir_value *s = fm_op(g, id, IR_SELECT);
  if (s) {
    ir_value *lt = fm_op(g, s->args[0], IR_COMPARE), *add = fm_op(g, s->args[1], IR_ADD);
    if (lt && add && lt->attr.cmp == CMP_LT && lt->args[0] == s->args[2] && add->args[0] == s->args[2]) return s->args[2];
  }
  return id;
}

/* G = x[..., labels]: a take_along_axis of the last dim (a gather batched
** along every other dim), reshaped to x's shape without it; its labels */
static int take_last(const ir_graph *g, int id, int x) {
  ir_value *gt = fm_op(g, fm_strip(g, id), IR_GATHER);
  const ir_value *xv = g->vals[x];
  int r = xv->shape.rank;
  if (!gt || gt->args[0] != x || ir_nelem(&gt->shape) * xv->shape.d[r - 1] != ir_nelem(&xv->shape)) return -1;
  const ir_index *ix = gt->attr.index;
  if (ix->other_bounds || ix->n[IX_START_MAP] != 1 || ix->v[IX_START_MAP][0] != r - 1 || ix->n[IX_COLLAPSED] != 1 ||
      ix->v[IX_COLLAPSED][0] != r - 1 || ix->n[IX_OPERAND_BATCH] != r - 1 || ix->n[IX_OFFSET] != 0) return -1;
  for (int i = 0; i < r - 1; i++) if (ix->v[IX_OPERAND_BATCH][i] != i || ix->v[IX_INDEX_BATCH][i] != i) return -1;
  int lab = labels_of(g, gt->args[1]);
  const ir_value *lv = g->vals[lab];
  if (lv->dtype != IR_I32 || lv->shape.rank != r - 1) return -1;
  for (int i = 0; i < r - 1; i++) if (lv->shape.d[i] != xv->shape.d[i]) return -1;
  return lab;
}

/* logsumexp(x) over its last dim d, unkept: log(sum(exp(x - m))) + m */
static int logsumexp_of(const ir_graph *g, int id, int *x) {
  ir_value *a = fm_op(g, id, IR_ADD);
  for (int k = 0; a && k < 2; k++) {
    ir_value *l = fm_op(g, a->args[k], IR_LOG), *s = l ? fm_op(g, l->args[0], IR_SUM) : NULL;
    if (!s || s->attr.ndims != 1 || s->attr.keepdims) continue;
    int d = s->attr.dims[0];
    ir_value *e = fm_op(g, s->args[0], IR_EXP), *t = e ? fm_op(g, e->args[0], IR_SUB) : NULL;
    int x1;
    if (!t || !fm_max(g, t->args[1], d, &x1) || x1 != t->args[0] || d != g->vals[x1]->shape.rank - 1) continue;
    int m = fm_op(g, t->args[1], IR_RESHAPE) ? g->vals[t->args[1]]->args[0] : t->args[1];
    if (a->args[1 - k] != m) continue;
    *x = x1;
    return 1;
  }
  return 0;
}

/* loss = mean(logsumexp(x) - x[labels]): cross_entropy(x, labels) */
static int cross_entropy_at(ir_graph *g, ir_value *v) {
  int nll, x, lab;
  ir_value *s;
  if (!fm_mean_all(g, v, &nll) || !(s = fm_op(g, nll, IR_SUB)) || !logsumexp_of(g, s->args[0], &x) || (lab = take_last(g, s->args[1], x)) < 0)
    return 0;
  int args[2] = {x, lab};
  ir_attrs a = dim_attrs(-1);
  return fm_become(g, v, IR_CROSS_ENTROPY, args, 2, &a) == 0;
}

void fuse_rows(ir_graph *g, fuse_counts *c) {
  for (int i = 0; i < g->nvals; i++) {
    ir_value *v = g->vals[i];
    if (v->kind != IR_OP) continue;
    if (v->op == IR_DIV && softmax_at(g, v)) c->softmax++;
    else if (v->op == IR_SUB && log_softmax_at(g, v)) c->log_softmax++;
    else if ((v->op == IR_ADD || v->op == IR_MUL || v->op == IR_DIV) && layernorm_at(g, v)) c->layernorm++;
    else if ((v->op == IR_MUL || v->op == IR_DIV) && rmsnorm_at(g, v)) c->rmsnorm++;
    else if ((v->op == IR_DIV || v->op == IR_MEAN) && cross_entropy_at(g, v)) c->cross_entropy++;
  }
}

/*
** xent.c: cross-entropy against one-hot labels, as optax.softmax_cross_
** entropy(logits, jax.nn.one_hot(labels, n)).mean() spells it:
**   loss = mean(-sum(one_hot * log_softmax(x), last dim))
**   one_hot = convert(labels[..., None] == iota along the last dim)
** becomes cross_entropy(x, labels) when the labels are integers (i32, as
** carve's op takes them) that index the class dim. The minus may sit in
** the product, after the sum or before the mean; the factors come in any
** order; the log_softmax is rows.c's. A float target (any distribution,
** or float labels compared with a float iota) stays as written. A label
** outside [0, n) gives the one-hot a row of zeros and the position a zero
** loss; carve's op stops the run there with an error (label out of range).
*/
#include "interp/fuse/match.h"

/* id = convert(labels == iota) over shape s, the iota along d: the
** labels, i32, of s without d; else -1 */
static int one_hot_labels(const ir_graph *g, int id, const ir_shape *s, int d) {
  ir_value *cv = fm_op(g, id, IR_CONVERT), *c = cv ? fm_op(g, cv->args[0], IR_COMPARE) : NULL;
  if (!c || c->attr.cmp != CMP_EQ || !ir_shape_eq(&c->shape, s)) return -1;
  for (int k = 0; k < 2; k++) {
    if (fm_dim_out(g, c, k, fm_index_dim(g, c->args[k])) != d) continue;
    int lab = c->args[1 - k];
    const ir_value *lv;
    while ((lv = g->vals[lab])->kind == IR_OP && lv->op == IR_BROADCAST) lab = lv->args[0];
    const ir_shape *ls = &g->vals[lab]->shape;     /* [.., 1 at d, ..]: one label a position */
    if (ls->rank != s->rank || ls->d[d] != 1) return -1;
    for (int i = 0; i < s->rank; i++) if (i != d && ls->d[i] != s->d[i]) return -1;
    lab = fm_strip(g, lab);
    lv = g->vals[lab];
    if (lv->dtype != IR_I32 || lv->shape.rank != s->rank - 1) return -1;
    return lab;
  }
  return -1;
}

/* v = mean(-sum(one_hot(labels) * log_softmax(x))): cross_entropy(x, labels) */
static int onehot_at(ir_graph *g, ir_value *v) {
  int nll, sign = 1, f[2];
  const ir_value *root = v;
  ir_value *n, *s, *ls;
  double k;
  if (root->op == IR_NEG) { root = g->vals[root->args[0]]; sign = -1; }
  if (root->kind != IR_OP || !fm_mean_all(g, root, &nll)) return 0;
  if ((n = fm_op(g, nll, IR_NEG))) { nll = n->args[0]; sign = -sign; }
  if (!(s = fm_op(g, nll, IR_SUM)) || s->attr.ndims != 1 || s->attr.keepdims || fm_factors(g, s->args[0], f, 2, &k) != 2 || k * sign != -1)
    return 0;
  int d = s->attr.dims[0];
  for (int i = 0; i < 2; i++) {
    int lab;
    if (!(ls = fm_op(g, f[i], IR_LOG_SOFTMAX)) || ls->attr.dim != d || d != ls->shape.rank - 1 ||
        (lab = one_hot_labels(g, f[1 - i], &ls->shape, d)) < 0)
      continue;
    int args[2] = {ls->args[0], lab};
    ir_attrs a = fm_attrs(-1);
    return fm_become(g, v, IR_CROSS_ENTROPY, args, 2, &a) == 0;
  }
  return 0;
}

void fuse_onehot_xent(ir_graph *g, fuse_counts *c) {
  for (int i = 0; i < g->nvals; i++) {
    ir_value *v = g->vals[i];
    if (v->kind == IR_OP && (v->op == IR_DIV || v->op == IR_MEAN || v->op == IR_NEG) && onehot_at(g, v)) c->cross_entropy++;
  }
}

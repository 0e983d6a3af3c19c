/*
** act.c: activations as programs spell them out.
**   gelu_tanh  x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))   jax.nn.gelu, PyTorch's tanh form
**   gelu       x * (1 + erf(x / sqrt(2))) / 2                           jax.nn.gelu(approximate=False)
**   silu       x * sigmoid(x), x * (1 / (1 + exp(-x)))                  jax.nn.silu, swish
** The factors of each product may come in any order and grouping.
*/
#include "interp/fuse/match.h"

#include <math.h>

/* id = 1 + u, u = k(operand) for the unary op k: u's operand, else -1 */
static int one_plus(const ir_graph *g, int id, ir_opkind k) {
  ir_value *a = fm_op(g, id, IR_ADD), *u;
  for (int i = 0; a && i < 2; i++)
    if (fm_lit_near(g, a->args[1 - i], 1) && (u = fm_op(g, a->args[i], k))) return u->args[0];
  return -1;
}

/* tanh's argument: sqrt(2/pi) * (x + 0.044715 x^3) */
static int gelu_inner(const ir_graph *g, int id, int x) {
  int f[3];
  double k;
  if (fm_factors(g, id, f, 3, &k) != 1 || fabs(k - 0.7978845608028654) > 1e-6) return 0;
  ir_value *a = fm_op(g, f[0], IR_ADD);
  for (int i = 0; a && i < 2; i++) {
    int c[4];
    double kc;
    if (a->args[i] != x || fm_factors(g, a->args[1 - i], c, 4, &kc) != 3 || fabs(kc - 0.044715) > 1e-6) continue;
    if (c[0] == x && c[1] == x && c[2] == x) return 1;
  }
  return 0;
}

/* a sigmoid of x: sigmoid(x), or 1 / (1 + exp(-x)) */
static int sigmoid_of(const ir_graph *g, int id, int x) {
  ir_value *s = fm_op(g, id, IR_SIGMOID), *d, *n;
  if (s) return s->args[0] == x;
  if (!(d = fm_op(g, id, IR_DIV)) || !fm_lit_near(g, d->args[0], 1)) return 0;
  int e = one_plus(g, d->args[1], IR_EXP);
  return e >= 0 && (n = fm_op(g, e, IR_NEG)) && n->args[0] == x;
}

/* v = product of factors: which activation of which x */
static int act_at(ir_graph *g, ir_value *v, fuse_counts *c) {
  int f[3];
  double k;
  int n = fm_factors(g, v->id, f, 3, &k);
  if (n != 2 || !ir_dtype_isfloat(v->dtype)) return 0;
  ir_attrs a = fm_attrs(-1);
  for (int i = 0; i < 2; i++) {
    int x = f[i], other = f[1 - i], t;
    if (!ir_shape_eq(&g->vals[x]->shape, &v->shape)) continue;
    if (fabs(k - 0.5) <= 1e-7 && (t = one_plus(g, other, IR_TANH)) >= 0 && gelu_inner(g, t, x)) {
      if (fm_become(g, v, IR_GELU_TANH, &x, 1, &a) == 0) { c->gelu++; return 1; }
    }
    if (fabs(k - 0.5) <= 1e-7 && (t = one_plus(g, other, IR_ERF)) >= 0) {
      int e[2];
      double ke;
      if (fm_factors(g, t, e, 2, &ke) == 1 && e[0] == x && fabs(ke - 0.70710678118654752) <= 1e-6 &&
          fm_become(g, v, IR_GELU, &x, 1, &a) == 0) { c->gelu++; return 1; }
    }
    if (k == 1 && sigmoid_of(g, other, x) && fm_become(g, v, IR_SILU, &x, 1, &a) == 0) { c->silu++; return 1; }
  }
  return 0;
}

void fuse_acts(ir_graph *g, fuse_counts *c) {
  for (int i = 0; i < g->nvals; i++) {
    ir_value *v = g->vals[i];
    if (v->kind == IR_OP && (v->op == IR_MUL || v->op == IR_DIV)) act_at(g, v, c);
  }
}

/*
** mask.c: the causal masks of attention scores as programs build them
** from iotas (for attn.c). A predicate says whether query i sees key j
** (i >= j): the two indices compared (iotas seen through reshapes,
** broadcasts, converts and jnp.tri's + 0, in either order), under what
** programs wrap around the comparison: jnp.tril's select(p, true, false),
** a logical and with true, not, a float mask compared != 0 (flax's
** make_causal_mask) or subtracted from 1. A mask is applied by select
** (the score where the query sees the key, the fill elsewhere; or the
** other way round) or added: where(p, 0, fill) (jax.nn.dot_product_
** attention's is_causal in earlier JAX), fill * (1 - p). The fill
** must be at or below -1e4, which exp rounds to zero as it does -inf; a
** bias added that is not such a mask is not one.
*/
#include "interp/fuse/match.h"

#include <math.h>

/* a literal a mask may fill with */
static int is_fill(const ir_graph *g, int id) {
  double x;
  return fm_lit(g, id, &x) && x <= -1e4;
}

static int sees(const ir_graph *g, int id, int q, int k);

/* which index operand k of v holds along v's dims q and k: 1 the query's,
** -1 the key's, else 0 */
static int index_of(const ir_graph *g, const ir_value *v, int k, int q, int kd) {
  int e = fm_dim_out(g, v, k, fm_index_dim(g, v->args[k]));
  return e < 0 ? 0 : e == q ? 1 : e == kd ? -1 : 0;
}

/* x cmp c over integers x = q - k: 1 when it says x >= 0, -1 when it says
** x <= -1, else 0 */
static int integer_sense(int cmp, double c) {
  switch (cmp) {
  case CMP_GE: return ceil(c) == 0 ? 1 : 0;
  case CMP_GT: return floor(c) + 1 == 0 ? 1 : 0;
  case CMP_LE: return floor(c) == -1 ? -1 : 0;
  case CMP_LT: return ceil(c) - 1 == -1 ? -1 : 0;
  default: return 0;
  }
}

/* v = compare(a, b) along dims q and k of v: the query's index against the
** key's, their difference against a literal (PyTorch's triu: k - q >= 1),
** or a 0/1 mask against 0 */
static int compared(const ir_graph *g, const ir_value *v, int q, int k) {
  static const int mirror[] = {CMP_EQ, CMP_NE, CMP_GT, CMP_GE, CMP_LT, CMP_LE};   /* ORDER ir_cmp: -x cmp c = x mirror[cmp] -c */
  double c = 0;
  int cmp = v->attr.cmp, sign = index_of(g, v, 0, q, k);
  if (sign && index_of(g, v, 1, q, k) != -sign) sign = 0;
  if (!sign && fm_lit(g, v->args[1], &c)) {
    ir_value *d = fm_op(g, v->args[0], IR_SUB);
    if (c == 0 && (cmp == CMP_NE || cmp == CMP_EQ)) {
      int s = sees(g, v->args[0], fm_dim_in(g, v, 0, q), fm_dim_in(g, v, 0, k));
      return cmp == CMP_NE ? s : -s;
    }
    int dq = fm_dim_in(g, v, 0, q), dk = fm_dim_in(g, v, 0, k);
    if (d && dq >= 0 && dk >= 0 && (sign = index_of(g, d, 0, dq, dk)) && index_of(g, d, 1, dq, dk) != -sign) sign = 0;
  }
  if (!sign) return 0;
  return sign > 0 ? integer_sense(cmp, c) : integer_sense(mirror[cmp], -c);
}

/* Along id's dims q (the query) and k (the key): 1 when id is true (or 1)
** exactly where q >= k and false (0) elsewhere, -1 the other way round,
** else 0 */
static int sees(const ir_graph *g, int id, int q, int k) {
  const ir_value *v = g->vals[id];
  double a, b;
  if (q < 0 || k < 0 || v->kind != IR_OP) return 0;
  switch (v->op) {
  case IR_RESHAPE: case IR_BROADCAST: case IR_CONVERT:
    return sees(g, v->args[0], fm_dim_in(g, v, 0, q), fm_dim_in(g, v, 0, k));
  case IR_NOT:
    return -sees(g, v->args[0], q, k);
  case IR_SUB:                                   /* 1 - p */
    return fm_lit(g, v->args[0], &a) && a == 1 ? -sees(g, v->args[1], fm_dim_in(g, v, 1, q), fm_dim_in(g, v, 1, k)) : 0;
  case IR_AND:                                   /* p and true */
    for (int i = 0; i < 2; i++)
      if (fm_lit(g, v->args[1 - i], &a) && a == 1) return sees(g, v->args[i], fm_dim_in(g, v, i, q), fm_dim_in(g, v, i, k));
    return 0;
  case IR_SELECT: {                              /* select(p, 1, 0), select(p, 0, 1) */
    if (!fm_lit(g, v->args[1], &a) || !fm_lit(g, v->args[2], &b) || !((a == 1 && b == 0) || (a == 0 && b == 1))) return 0;
    int s = sees(g, v->args[0], fm_dim_in(g, v, 0, q), fm_dim_in(g, v, 0, k));
    return a == 1 ? s : -s;
  }
  case IR_COMPARE:
    return compared(g, v, q, k);
  default:
    return 0;
  }
}

/* id, added to scores, along its dims q and k: 0 where the query sees the
** key, a fill elsewhere */
static int added(const ir_graph *g, int id, int q, int k) {
  const ir_value *v = g->vals[id];
  double a, b;
  int f[1];
  if (q < 0 || k < 0 || v->kind != IR_OP) return 0;
  if (v->op == IR_RESHAPE || v->op == IR_BROADCAST) return added(g, v->args[0], fm_dim_in(g, v, 0, q), fm_dim_in(g, v, 0, k));
  if (v->op == IR_SELECT && fm_lit(g, v->args[1], &a) && fm_lit(g, v->args[2], &b)) {
    int s = sees(g, v->args[0], fm_dim_in(g, v, 0, q), fm_dim_in(g, v, 0, k));
    return (s == 1 && a == 0 && b <= -1e4) || (s == -1 && a <= -1e4 && b == 0);
  }
  if (fm_factors(g, id, f, 1, &a) != 1 || !(a <= -1e4)) return 0;    /* fill * (1 - p) */
  const ir_shape *fs = &g->vals[f[0]]->shape;
  return sees(g, f[0], fm_align(&v->shape, fs, q), fm_align(&v->shape, fs, k)) == -1;
}

int fm_causal(const ir_graph *g, int id, int *s) {
  const ir_value *v = g->vals[id];
  int r = v->shape.rank, q = r - 2, k = r - 1;
  if (v->kind != IR_OP || r < 2) return 0;
  if (v->op == IR_SELECT) {            /* select(sees, s, fill), select(does not see, fill, s) */
    int p = sees(g, v->args[0], fm_dim_in(g, v, 0, q), fm_dim_in(g, v, 0, k));
    for (int i = 1; i <= 2; i++)
      if (p == (i == 1 ? 1 : -1) && is_fill(g, v->args[3 - i]) && ir_shape_eq(&g->vals[v->args[i]]->shape, &v->shape)) {
        *s = v->args[i];
        return 1;
      }
  }
  if (v->op == IR_ADD)
    for (int i = 0; i < 2; i++)
      if (ir_shape_eq(&g->vals[v->args[i]]->shape, &v->shape) && added(g, v->args[1 - i], fm_dim_in(g, v, 1 - i, q), fm_dim_in(g, v, 1 - i, k))) {
        *s = v->args[i];
        return 1;
      }
  return 0;
}

/* id = every element of x's rows along d is -inf: not(any(x != -inf)),
** any as a max over d (PyTorch compares x in f64) */
static int rows_all_ninf(const ir_graph *g, int id, int x, int d) {
  ir_value *n = fm_op(g, fm_strip(g, id), IR_NOT), *m = n ? fm_op(g, fm_strip(g, n->args[0]), IR_MAX) : NULL, *c;
  double z;
  if (!m || m->attr.ndims != 1 || m->attr.dims[0] != d) return 0;
  ir_value *n2 = fm_op(g, m->args[0], IR_NOT);
  if (!(c = fm_op(g, n2 ? n2->args[0] : m->args[0], IR_COMPARE)) || c->attr.cmp != (n2 ? CMP_EQ : CMP_NE) ||
      !fm_lit(g, c->args[1], &z) || z != -INFINITY)
    return 0;
  ir_value *cv = fm_op(g, c->args[0], IR_CONVERT);
  return c->args[0] == x || (cv && cv->args[0] == x);
}

int fm_unguard_rows(const ir_graph *g, int id) {
  ir_value *s = fm_op(g, id, IR_SELECT), *p;
  double z;
  if (!s || !fm_lit(g, s->args[1], &z) || z != 0 || !(p = fm_op(g, s->args[2], IR_SOFTMAX))) return id;
  const ir_shape *ps = &g->vals[s->args[0]]->shape, *xs = &p->shape;
  if (fm_align(xs, ps, p->attr.dim) >= 0 || ir_nelem(ps) * xs->d[p->attr.dim] != ir_nelem(xs)) return id;   /* one flag a row */
  return rows_all_ninf(g, s->args[0], p->args[0], p->attr.dim) ? p->id : id;
}

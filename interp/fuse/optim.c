/*
** optim.c: optax's updates, as an imported training step spells them,
** rewritten into the form carve's own optimizers write (train/optim.c),
** which the lowering turns into one fused update per parameter
** (lower/update.c). Per parameter p with gradient g:
**   sgd       p + (-lr) g                       ->  p - g lr
**   momentum  t' = g + m t;  p + (-lr) t'       ->  t' = t m + g;  p - t' lr
**   adam      mu' = c1 g + b1 mu,  nu' = c2 g g + b2 nu,
**             p + (-lr) ((mu' / bc1) / (sqrt(nu' / bc2 [+ 0]) + eps) [+ wd p])
**             ->  p [* (1 - lr wd)] - mu' lr_t / (sqrt(nu') + eps_t),
**                 lr_t = lr / bc1 * sqrt(bc2),  eps_t = sqrt(bc2) eps
** (t, mu, nu: state the step carries; bc1 and bc2 any scalars: optax's
** 1 - b^count). The SGD forms are the same arithmetic reordered; Adam's is
** the Adam paper's "more efficient" order, equal in exact arithmetic (to
** rounding in floats). Anything else stays as written.
*/
#include "interp/fuse/match.h"

#include <math.h>

/* id = k * x (literals and negations folded): x, else -1 */
static int scaled(const ir_graph *g, int id, double *k) {
  int f[1];
  return fm_factors(g, id, f, 1, k) == 1 ? f[0] : -1;
}

/* id = x + y, or for sub x - y as x + (-1) y: its two terms in t[2] with
** the sign of the second in *sign */
static int terms(const ir_graph *g, int id, int *t, double *sign) {
  ir_value *v = fm_op(g, id, IR_ADD);
  *sign = 1;
  if (!v && (v = fm_op(g, id, IR_SUB))) *sign = -1;
  if (!v) return 0;
  t[0] = v->args[0];
  t[1] = v->args[1];
  return 1;
}

/* s a state leaf that next (its new value) replaces, of p's shape and type */
static int state_for(const ir_graph *g, int s, int next, int p) {
  const ir_value *x = g->vals[s], *pv = g->vals[p];
  return x->kind == IR_STATE && g->vals[next]->carry == s && x->dtype == pv->dtype && ir_shape_eq(&x->shape, &pv->shape);
}

/* id = a x + b s with s state carried by id (either order): x and the
** coefficients; x is g itself when sq = 0, g * g when sq = 1 */
static int moment(const ir_graph *g, int id, int p, int sq, int *x, int *s, double *a, double *b) {
  int t[2];
  double sign;
  if (!terms(g, id, t, &sign) || sign != 1) return 0;
  for (int k = 0; k < 2; k++) {
    int f[2], v = scaled(g, t[1 - k], b);
    if (fm_factors(g, t[k], f, 2, a) != 1 + sq || (sq && f[0] != f[1]) || v < 0 || !state_for(g, v, id, p)) continue;
    *x = f[0];
    *s = v;
    return 1;
  }
  return 0;
}

/* a scalar of p's type that the step computes (a bias correction) */
static int scalar_of(const ir_graph *g, int id, int p) {
  const ir_value *v = g->vals[id];
  return v->kind == IR_OP && v->shape.rank == 0 && v->dtype == g->vals[p]->dtype;
}

typedef struct adam_form {
  int mu1, nu1, gr, mu, nu, bc1, bc2;    /* mu' and nu', the gradient, the state, the corrections */
  double c1, b1, c2, b2, eps, wd;
} adam_form;

/* u = (mu' / bc1) / (sqrt(nu' / bc2 [+ 0]) + eps) [+ wd p] */
static int adam_of(const ir_graph *g, int u, int p, adam_form *f) {
  int t[2];
  double sign, one;
  f->wd = 0;
  if (terms(g, u, t, &sign) && sign == 1)        /* AdamW's decayed weights */
    for (int k = 0; k < 2; k++)
      if (scaled(g, t[1 - k], &f->wd) == p && f->wd > 0) { u = t[k]; break; }
  ir_value *q = fm_op(g, u, IR_DIV), *mh, *vh, *den, *sq;
  if (!q || !(mh = fm_op(g, q->args[0], IR_DIV)) || !(den = fm_op(g, q->args[1], IR_ADD))) return 0;
  int k = fm_lit(g, den->args[1], &f->eps) ? 0 : 1;
  if (!fm_lit(g, den->args[1 - k], &f->eps) || !(f->eps > 0) || !(sq = fm_op(g, den->args[k], IR_SQRT))) return 0;
  int r = sq->args[0];
  ir_value *root = fm_op(g, r, IR_ADD);        /* eps_root: only 0 keeps the form */
  if (root && fm_lit(g, root->args[1], &one) && one == 0) r = root->args[0];
  if (!(vh = fm_op(g, r, IR_DIV))) return 0;
  f->mu1 = mh->args[0], f->bc1 = mh->args[1], f->nu1 = vh->args[0], f->bc2 = vh->args[1];
  int g2;
  if (!scalar_of(g, f->bc1, p) || !scalar_of(g, f->bc2, p) || !moment(g, f->mu1, p, 0, &f->gr, &f->mu, &f->c1, &f->b1) ||
      !moment(g, f->nu1, p, 1, &g2, &f->nu, &f->c2, &f->b2) || g2 != f->gr)
    return 0;
  return f->mu != f->nu;
}

/* the literal x in p's type */
static int lit(ir_graph *g, double x, int p) { return ir_const_typed(g, x, g->vals[p]->dtype); }

/* a value of the update (where storage splits propagate) */
static int updating(ir_graph *g, int id) {
  if (id >= 0) g->vals[id]->update = 1;
  return id;
}

static int op2(ir_graph *g, const char *name, ir_opkind k, int a, int b) {
  if (a < 0 || b < 0) return -1;
  int args[2] = {a, b};
  ir_attrs at = fm_attrs(-1);
  return updating(g, fm_add_op(g, name, k, args, 2, &at));
}

static int op1(ir_graph *g, const char *name, ir_opkind k, int a) {
  ir_attrs at = fm_attrs(-1);
  return a < 0 ? -1 : updating(g, fm_add_op(g, name, k, &a, 1, &at));
}

static int become2(ir_graph *g, ir_value *v, ir_opkind k, int a, int b) {
  int args[2] = {a, b};
  ir_attrs at = fm_attrs(-1);
  return a >= 0 && b >= 0 && fm_become(g, v, k, args, 2, &at) == 0;
}

/* head = p + step: the Adam form rewritten (the moments in place, the
** head last); lr = the step's literal negated */
static int rewrite_adam(ir_graph *g, ir_value *head, int p, const adam_form *f, double lr) {
  const char *pn = g->vals[p]->name;
  const char *nm = arena_printf(&g->mem, "adam.%s", pn);
  int bc2s = op1(g, nm, IR_SQRT, f->bc2);
  int lr_t = op2(g, nm, IR_MUL, op2(g, nm, IR_DIV, lit(g, lr, p), f->bc1), bc2s);
  int eps_t = op2(g, nm, IR_MUL, bc2s, lit(g, f->eps, p));
  int m1 = op2(g, nm, IR_MUL, f->mu, lit(g, f->b1, p)), m2 = op2(g, nm, IR_MUL, f->gr, lit(g, f->c1, p));
  int g2 = op2(g, nm, IR_MUL, f->gr, f->gr);
  int v1 = op2(g, nm, IR_MUL, f->nu, lit(g, f->b2, p)), v2 = op2(g, nm, IR_MUL, g2, lit(g, f->c2, p));
  if (lr_t < 0 || eps_t < 0 || m1 < 0 || m2 < 0 || v1 < 0 || v2 < 0) return 0;
  if (!become2(g, g->vals[f->mu1], IR_ADD, m1, m2) || !become2(g, g->vals[f->nu1], IR_ADD, v1, v2)) return 0;
  int de = op2(g, nm, IR_ADD, op1(g, nm, IR_SQRT, f->nu1), eps_t);
  int st = op2(g, nm, IR_DIV, op2(g, nm, IR_MUL, f->mu1, lr_t), de);
  int from = f->wd > 0 ? op2(g, nm, IR_MUL, p, lit(g, 1 - lr * f->wd, p)) : p;
  return become2(g, head, IR_SUB, from, st);
}

/* id = x * k or k * x with a literal k: x, else -1 */
static int times_lit(const ir_graph *g, int id, double *k) {
  ir_value *m = fm_op(g, id, IR_MUL);
  for (int j = 0; m && j < 2; j++) if (fm_lit(g, m->args[j], k)) return m->args[1 - j];
  return -1;
}

/* head = p + (-lr) u (optax's; or p - lr u) with head carried into the
** parameter p; carve's own p - u lr is left as it is */
static int update_at(ir_graph *g, ir_value *head, fuse_counts *c) {
  int t[2], u = -1, p = -1;
  double sign, k = 0, x;
  if (head->carry < 0 || g->vals[head->carry]->kind != IR_PARAM || !ir_dtype_isfloat(head->dtype) || !terms(g, head->id, t, &sign))
    return 0;
  p = head->carry;
  if (t[0] == p) u = times_lit(g, t[1], &k), k *= sign;
  else if (t[1] == p && sign == 1) u = times_lit(g, t[0], &k);
  if (u < 0 || !(k < 0) || (sign < 0 && fm_lit(g, g->vals[t[1]]->args[1], &x))) return 0;
  double lr = -k;
  const char *nm = arena_printf(&g->mem, "sgd.%s", g->vals[p]->name);
  adam_form f;
  if (adam_of(g, u, p, &f)) {
    if (!rewrite_adam(g, head, p, &f, lr)) return 0;
    c->adam++;
    return 1;
  }
  int gr, tr;
  double one, mom;
  if (g->vals[u]->carry >= 0 && moment(g, u, p, 0, &gr, &tr, &one, &mom)) {   /* optax's trace: g + m t */
    if (one != 1 || !become2(g, g->vals[u], IR_ADD, op2(g, nm, IR_MUL, tr, lit(g, mom, p)), gr)) return 0;
  } else if (g->vals[u]->carry >= 0 || !ir_shape_eq(&g->vals[u]->shape, &head->shape)) {
    return 0;
  }
  if (!become2(g, head, IR_SUB, p, op2(g, nm, IR_MUL, u, lit(g, lr, p)))) return 0;
  c->sgd++;
  return 1;
}

void fuse_updates(ir_graph *g, fuse_counts *c) {
  int n = g->nvals;        /* the values the rewrites add are not heads */
  for (int i = 0; i < n; i++) {
    ir_value *v = g->vals[i];
    if (v->kind == IR_OP && (v->op == IR_ADD || v->op == IR_SUB)) update_at(g, v, c);
  }
}

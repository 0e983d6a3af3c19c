/*
** match.c: reading a graph for the rewrites (match.h).
*/
#include "interp/fuse/match.h"
#include "interp/ir/ops.h"

#include <math.h>
#include <string.h>

ir_value *fm_op(const ir_graph *g, int id, ir_opkind k) {
  if (id < 0) return NULL;
  ir_value *v = g->vals[id];
  return v->kind == IR_OP && v->op == k ? v : NULL;
}

ir_attrs fm_attrs(int dim) {
  ir_attrs a;
  memset(&a, 0, sizeof a);
  a.ndims = -1;
  a.dim = dim;
  return a;
}

int fm_same_but_ones(const ir_shape *a, const ir_shape *b) {
  int i = 0, j = 0;
  for (;;) {
    while (i < a->rank && a->d[i] == 1) i++;
    while (j < b->rank && b->d[j] == 1) j++;
    if (i == a->rank || j == b->rank) return i == a->rank && j == b->rank;
    if (a->d[i++] != b->d[j++]) return 0;
  }
}

int fm_strip(const ir_graph *g, int id) {
  for (ir_value *v; (v = fm_op(g, id, IR_RESHAPE)) && fm_same_but_ones(&v->shape, &g->vals[v->args[0]]->shape);) id = v->args[0];
  return id;
}

int fm_align(const ir_shape *v, const ir_shape *x, int d) {
  int e = d - (v->rank - x->rank);
  return d >= 0 && e >= 0 && x->d[e] == v->d[d] ? e : -1;
}

/* the dim of to that dim d of from is, the two the same but for size-1
** dims (d not one of them), else -1 */
static int ones_dim(const ir_shape *from, const ir_shape *to, int d) {
  if (d < 0 || from->d[d] == 1 || !fm_same_but_ones(from, to)) return -1;
  int n = 0;
  for (int i = 0; i < d; i++) n += from->d[i] != 1;
  for (int j = 0; j < to->rank; j++)
    if (to->d[j] != 1 && n-- == 0) return j;
  return -1;
}

int fm_dim_in(const ir_graph *g, const ir_value *v, int k, int d) {
  const ir_shape *x = &g->vals[v->args[k]]->shape;
  if (v->kind == IR_OP && v->op == IR_RESHAPE) return ones_dim(&v->shape, x, d);
  return fm_align(&v->shape, x, d);
}

int fm_dim_out(const ir_graph *g, const ir_value *v, int k, int e) {
  for (int d = 0; e >= 0 && d < v->shape.rank; d++)
    if (fm_dim_in(g, v, k, d) == e) return d;
  return -1;
}

int fm_index_dim(const ir_graph *g, int id) {
  const ir_value *v = g->vals[id];
  double z;
  if (v->kind != IR_OP) return -1;
  if (v->op == IR_IOTA) return v->attr.dim;
  if (v->op == IR_ADD) {                            /* jnp.tri's iota + k, k = 0 */
    for (int k = 0; k < 2; k++)
      if (fm_lit(g, v->args[1 - k], &z) && z == 0 && ir_shape_eq(&g->vals[v->args[k]]->shape, &v->shape)) return fm_index_dim(g, v->args[k]);
    return -1;
  }
  if (v->op != IR_RESHAPE && v->op != IR_BROADCAST && v->op != IR_CONVERT) return -1;
  return fm_dim_out(g, v, 0, fm_index_dim(g, v->args[0]));
}

int fm_lit(const ir_graph *g, int id, double *x) {
  if (id < 0) return 0;
  const ir_value *v = g->vals[fm_strip(g, id)];
  while (v->kind == IR_OP && v->op == IR_BROADCAST) v = g->vals[v->args[0]];
  if (v->kind != IR_CONST) return 0;
  *x = v->attr.scalar;
  return 1;
}

int fm_lit_near(const ir_graph *g, int id, double want) {
  double x;
  return fm_lit(g, id, &x) && fabs(x - want) <= 1e-6 * fabs(want);
}

/* v reduced over exactly dim d */
static int over(const ir_value *v, int d) { return v->attr.ndims == 1 && v->attr.dims[0] == d; }

int fm_reduced(const ir_graph *g, int id, ir_opkind k, int d, int *x) {
  ir_value *r = fm_op(g, id, k);
  if (r && over(r, d) && r->attr.keepdims) { *x = r->args[0]; return 1; }
  ir_value *s = fm_op(g, id, IR_RESHAPE);                 /* keepdims = false, then a size-1 dim d put back */
  if (!s || !(r = fm_op(g, s->args[0], k)) || !over(r, d) || r->attr.keepdims) return 0;
  const ir_shape *xs = &g->vals[r->args[0]]->shape;
  if (s->shape.rank != xs->rank || s->shape.d[d] != 1) return 0;
  for (int i = 0; i < xs->rank; i++) if (i != d && s->shape.d[i] != xs->d[i]) return 0;
  *x = r->args[0];
  return 1;
}

int fm_mean(const ir_graph *g, int id, int d, int *x) {
  if (fm_reduced(g, id, IR_MEAN, d, x)) return 1;
  ir_value *v = fm_op(g, id, IR_DIV);
  double n;
  if (v && fm_reduced(g, v->args[0], IR_SUM, d, x) && fm_lit(g, v->args[1], &n)) return n == (double)g->vals[*x]->shape.d[d];
  if ((v = fm_op(g, id, IR_MUL)))
    for (int k = 0; k < 2; k++)
      if (fm_reduced(g, v->args[k], IR_SUM, d, x) && fm_lit(g, v->args[1 - k], &n))
        return fabs(n * (double)g->vals[*x]->shape.d[d] - 1) <= 1e-6;
  return 0;
}

/* m without its guards: maximum(-inf, m) (jnp.max's initial value) and
** select(|m| < inf, m, 0) (logsumexp's) */
static int unguard(const ir_graph *g, int id) {
  for (;;) {
    ir_value *v;
    double x;
    if ((v = fm_op(g, id, IR_MAXIMUM))) {
      if (fm_lit(g, v->args[0], &x) && x == -INFINITY) { id = v->args[1]; continue; }
      if (fm_lit(g, v->args[1], &x) && x == -INFINITY) { id = v->args[0]; continue; }
    }
    if ((v = fm_op(g, id, IR_SELECT)) && fm_lit(g, v->args[2], &x) && x == 0) {
      ir_value *c = fm_op(g, v->args[0], IR_COMPARE), *a = c ? fm_op(g, c->args[0], IR_ABS) : NULL;
      if (a && a->args[0] == v->args[1] && c->attr.cmp == CMP_LT && fm_lit(g, c->args[1], &x) && x == INFINITY) { id = v->args[1]; continue; }
    }
    return id;
  }
}

int fm_max(const ir_graph *g, int id, int d, int *x) {
  ir_value *s = fm_op(g, id, IR_RESHAPE);
  if (s) {                                   /* kept by a reshape of the guarded max */
    ir_value *r = fm_op(g, unguard(g, s->args[0]), IR_MAX);
    if (!r || !over(r, d) || r->attr.keepdims) return 0;
    const ir_shape *xs = &g->vals[r->args[0]]->shape;
    if (s->shape.rank != xs->rank || s->shape.d[d] != 1) return 0;
    *x = r->args[0];
    return 1;
  }
  ir_value *r = fm_op(g, unguard(g, id), IR_MAX);
  if (!r || !over(r, d) || !r->attr.keepdims) return 0;
  *x = r->args[0];
  return 1;
}

static int collect(const ir_graph *g, int id, int *f, int n, int max, double *k) {
  ir_value *v;
  double x;
  if (n < 0) return -1;
  if (fm_lit(g, id, &x)) { *k *= x; return n; }
  if ((v = fm_op(g, id, IR_MUL))) return collect(g, v->args[1], f, collect(g, v->args[0], f, n, max, k), max, k);
  if ((v = fm_op(g, id, IR_NEG))) { *k = -*k; return collect(g, v->args[0], f, n, max, k); }
  if ((v = fm_op(g, id, IR_DIV)) && fm_lit(g, v->args[1], &x) && x != 0) { *k /= x; return collect(g, v->args[0], f, n, max, k); }
  if (n == max) return -1;
  f[n] = id;
  return n + 1;
}

int fm_factors(const ir_graph *g, int id, int *f, int max, double *k) {
  *k = 1;
  return collect(g, id, f, 0, max, k);
}

int fm_mean_all(const ir_graph *g, const ir_value *root, int *v) {
  if (root->op == IR_MEAN && root->shape.rank == 0) { *v = root->args[0]; return 1; }
  double n;
  if (root->op != IR_DIV || root->shape.rank != 0 || !fm_lit(g, root->args[1], &n)) return 0;
  int s = root->args[0];
  ir_value *r;
  while ((r = fm_op(g, s, IR_SUM))) {      /* sums down to the n elements divided by */
    s = r->args[0];
    if ((double)ir_nelem(&g->vals[s]->shape) == n) break;
  }
  if (s == root->args[0] || n != (double)ir_nelem(&g->vals[s]->shape)) return 0;
  *v = s;
  return 1;
}

int fm_add_op(ir_graph *g, const char *name, ir_opkind k, const int *args, int nargs, const ir_attrs *at) {
  diag d;
  diag_init(&d);
  ir_attrs a = *at;
  ir_value *v = ir_op(g, &d, ir_fresh_name(g, name), k, args, nargs, &a, LOC_NONE);
  diag_free(&d);
  return v ? v->id : -1;
}

int fm_become(ir_graph *g, ir_value *v, ir_opkind k, const int *args, int nargs, const ir_attrs *at) {
  ir_value keep = *v;
  v->op = k;
  v->nargs = nargs;
  v->args = arena_dup(&g->mem, args, sizeof(int) * (size_t)(nargs ? nargs : 1));
  v->attr = *at;
  diag d;
  diag_init(&d);
  int bad = ir_infer(g, v, &d) < 0 || v->dtype != keep.dtype || !ir_shape_eq(&v->shape, &keep.shape);
  diag_free(&d);
  if (bad) {
    *v = keep;
    return -1;
  }
  return 0;
}

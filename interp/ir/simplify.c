/*
** simplify.c: imported programs broadcast every operand to the result's
** shape before an elementwise op (StableHLO has no implicit broadcasting):
** a literal becomes a full tensor, a row sum is reshaped and broadcast back
** over its row. carve's elementwise ops broadcast as NumPy does, so such an
** operand is read as what was broadcast, and the broadcasts no op reads any
** more are dropped. The program computes the same; what follows (the
** fused optimizer updates, the rewrites of fuse/) sees it as a model file
** would write it. A transpose of a contraction's result is folded into
** the contraction, and a sum divided by its count is a mean.
*/
#include "interp/ir/ir.h"
#include "interp/ir/ops.h"
#include "util/mem.h"

#include <string.h>

/* What a broadcast (or a reshape that only adds leading or size-1 dims)
** broadcasts from, when NumPy's rules give back the same tensor; else x. */
static int source_of(const ir_graph *g, int x, const ir_shape *to) {
  for (;;) {
    const ir_value *v = g->vals[x];
    if (v->kind != IR_OP || (v->op != IR_BROADCAST && v->op != IR_RESHAPE) || v->is_output) return x;
    const ir_value *s = g->vals[v->args[0]];
    if (s->dtype != v->dtype || s->shape.rank > to->rank) return x;
    /* right-aligned, each dim of s is 1 or the target's */
    for (int i = 0; i < s->shape.rank; i++) {
      int64_t d = s->shape.d[i], t = to->d[to->rank - s->shape.rank + i];
      if (d != 1 && d != t) return x;
    }
    if (v->op == IR_RESHAPE) {             /* only leading size-1 dims added or taken: NumPy aligns the same */
      const ir_shape *a = &s->shape, *b = &v->shape;
      int i = 0, j = 0;
      while (i < a->rank && a->d[i] == 1) i++;
      while (j < b->rank && b->d[j] == 1) j++;
      if (a->rank - i != b->rank - j) return x;
      for (; i < a->rank; i++, j++) if (a->d[i] != b->d[j]) return x;
    }
    x = s->id;
  }
}

/* the NumPy broadcast of the operands' shapes; 0 when they do not broadcast */
static int broadcast_shape(const ir_graph *g, const int *args, int n, ir_shape *out) {
  memset(out, 0, sizeof *out);
  for (int k = 0; k < n; k++) {
    const ir_shape *s = &g->vals[args[k]]->shape;
    if (s->rank > out->rank) {
      int shift = s->rank - out->rank;
      for (int i = out->rank - 1; i >= 0; i--) out->d[i + shift] = out->d[i];
      for (int i = 0; i < shift; i++) out->d[i] = 1;
      out->rank = s->rank;
    }
    for (int i = 0; i < s->rank; i++) {
      int64_t *d = &out->d[out->rank - s->rank + i];
      if (*d == 1) *d = s->d[i];
      else if (s->d[i] != 1 && s->d[i] != *d) return 0;
    }
  }
  return 1;
}

/* transpose(einsum(..)) with the einsum read only there: one einsum whose
** result labels come in the transposed order (dot_general writes its
** result batch first, then each operand's free dims, and a transpose
** after puts them where the program wants them) */
static int fold_transpose(ir_graph *g, ir_value *t, char *dead, const int *reads) {
  ir_value *e = g->vals[t->args[0]];
  if (e->kind != IR_OP || e->op != IR_EINSUM || e->is_output || e->carry >= 0 || dead[e->id]) return 0;
  if (reads[e->id] != 1) return 0;
  const char *arrow = strstr(e->attr.spec, "->");
  if (!arrow || (int)strlen(arrow + 2) != t->shape.rank || t->attr.ndims != t->shape.rank) return 0;
  size_t head = (size_t)(arrow + 2 - e->attr.spec);
  char spec[3 * IR_MAXRANK + 8];
  if (head + (size_t)t->shape.rank + 1 > sizeof spec) return 0;
  memcpy(spec, e->attr.spec, head);
  for (int i = 0; i < t->shape.rank; i++) spec[head + (size_t)i] = arrow[2 + t->attr.dims[i]];
  spec[head + (size_t)t->shape.rank] = 0;
  t->op = IR_EINSUM;
  t->nargs = e->nargs;
  t->args = e->args;
  t->attr = e->attr;
  t->attr.spec = ir_intern(g, spec);
  dead[e->id] = 1;
  return 1;
}

/* div(sum(x, dims), n), n the count of what the sum adds up (jnp.mean as
** JAX writes it): mean(x, dims), one pass */
static int fold_mean(ir_graph *g, ir_value *d, char *dead, const int *reads) {
  if (d->nargs != 2) return 0;
  ir_value *s = g->vals[d->args[0]];
  const ir_value *n = g->vals[d->args[1]];
  if (s->kind != IR_OP || s->op != IR_SUM || s->is_output || s->carry >= 0 || dead[s->id] || n->kind != IR_CONST || s->dtype != d->dtype ||
      !ir_shape_eq(&s->shape, &d->shape) || !ir_dtype_isfloat(s->dtype)) return 0;
  const ir_shape *x = &g->vals[s->args[0]]->shape;
  double count = 1;
  for (int i = 0; i < s->attr.ndims; i++) count *= (double)x->d[s->attr.dims[i]];
  if (n->attr.scalar != count || reads[s->id] != 1) return 0;
  d->op = IR_MEAN;
  d->nargs = 1;
  d->args = s->args;
  d->attr = s->attr;
  dead[s->id] = 1;
  return 1;
}

int ir_simplify_broadcasts(ir_graph *g) {
  int changed = 0;
  for (int i = 0; i < g->nvals; i++) {
    ir_value *v = g->vals[i];
    if (v->kind != IR_OP || !(ir_opinfo_of(v->op)->flags & (OPF_UNARY | OPF_BINARY | OPF_TERNARY))) continue;
    for (int k = 0; k < v->nargs; k++) {
      int was = v->args[k], src = source_of(g, was, &v->shape);
      if (src == was) continue;
      v->args[k] = src;
      ir_shape s;
      if (!broadcast_shape(g, v->args, v->nargs, &s) || !ir_shape_eq(&s, &v->shape)) { v->args[k] = was; continue; }   /* it set the shape */
      changed++;
    }
  }
  /* how many values read each (the users are not linked yet); a fold
  ** moves its reads from the value it drops to the one it keeps */
  char *dead = mem_calloc((size_t)g->nvals + 1, 1);
  int *reads = mem_calloc((size_t)g->nvals + 1, sizeof(int));
  for (int i = 0; i < g->nvals; i++)
    for (int k = 0; k < g->vals[i]->nargs; k++) reads[g->vals[i]->args[k]]++;
  for (int i = 0; i < g->nvals; i++) {
    ir_value *v = g->vals[i];
    if (v->kind != IR_OP) continue;
    int dropped = v->nargs ? v->args[0] : -1, f = 0;
    if (v->op == IR_TRANSPOSE) f = fold_transpose(g, v, dead, reads);
    else if (v->op == IR_DIV) { int lit = v->args[1]; f = fold_mean(g, v, dead, reads); if (f) reads[lit]--; }
    if (f) reads[dropped]--;
    changed += f;
  }
  if (!changed) { free(dead); free(reads); return 0; }
  /* drop the ops nothing reads now (last to first, so chains go too) */
  for (int i = g->nvals - 1; i >= 0; i--) {
    const ir_value *v = g->vals[i];
    if (dead[i]) continue;
    if (v->kind != IR_OP || v->is_output || reads[i] || v->carry >= 0) continue;
    dead[i] = 1;
    for (int k = 0; k < v->nargs; k++) reads[v->args[k]]--;
  }
  ir_compact(g, dead);
  free(reads);
  free(dead);
  return changed;
}

/*
** attn.c: attention with the heads after the sequence, as JAX writes it
** (jnp.einsum, jax.nn.dot_product_attention):
**   s = einsum("bqhd,bkhd->bhqk", q, k) * scale      (or / sqrt(d))
**   s = where(q_index >= k_index, s, -big)             (optional: causal)
**   o = einsum("bhqk,bkhd->bqhd", softmax(s), v)      (or v first)
** becomes transpose(attention(q', k', v'), [0, 2, 1, 3]) with q' = q's
** [b, h, s, d] transpose; the lowering reads those transposes in place
** (the fused kernel's [b, s, h, d] modes), so no copy is made. The softmax
** is rows.c's, done first. A mask must be an iota comparison (queries
** see the keys at or before them) and its fill a number at or below
** -10^4, which exp rounds to zero as it does -inf.
*/
#include "interp/fuse/match.h"
#include "interp/ir/ops.h"

#include <math.h>
#include <string.h>

/* id = (q index >= k index) over [q, k]: iota comparisons */
static int causal_mask(const ir_graph *g, int id) {
  ir_value *c = fm_op(g, fm_strip(g, id), IR_COMPARE);
  if (!c || c->shape.rank != 2 || c->shape.d[0] != c->shape.d[1]) return 0;
  ir_value *a = fm_op(g, c->args[0], IR_IOTA), *b = fm_op(g, c->args[1], IR_IOTA);
  if (!a || !b) return 0;
  int da = a->attr.dim, db = b->attr.dim;
  return (c->attr.cmp == CMP_GE && da == 0 && db == 1) || (c->attr.cmp == CMP_LE && da == 1 && db == 0);
}

static int add_op(ir_graph *g, const char *name, ir_opkind k, const int *args, int nargs, const ir_attrs *at) {
  diag d;
  diag_init(&d);
  ir_attrs a = *at;
  ir_value *v = ir_op(g, &d, ir_fresh_name(g, name), k, args, nargs, &a, LOC_NONE);
  diag_free(&d);
  return v ? v->id : -1;
}

static int transpose_heads(ir_graph *g, const char *name, int x) {
  ir_attrs a;
  memset(&a, 0, sizeof a);
  a.ndims = 4;
  a.dims[0] = 0; a.dims[1] = 2; a.dims[2] = 1; a.dims[3] = 3;
  a.dim = -1;
  return add_op(g, name, IR_TRANSPOSE, &x, 1, &a);
}

static int attention_at(ir_graph *g, ir_value *o) {
  if (o->op != IR_EINSUM || (o->dtype != IR_F32 && o->dtype != IR_F64)) return 0;
  int pk;                                  /* the probabilities' operand: first, or after v */
  if (ir_spec_is(o->attr.spec, "0123,0314->0214")) pk = 0;
  else if (ir_spec_is(o->attr.spec, "0314,0123->0214")) pk = 1;
  else return 0;
  ir_value *p = fm_op(g, o->args[pk], IR_SOFTMAX);
  if (!p || p->attr.dim != 3) return 0;
  int s = p->args[0], causal = 0;
  ir_value *sel = fm_op(g, s, IR_SELECT);
  double fill;
  if (sel && causal_mask(g, sel->args[0]) && fm_lit(g, sel->args[2], &fill) && fill <= -1e4) { causal = 1; s = sel->args[1]; }
  int f[2];
  double scale;
  ir_value *e;
  if (fm_factors(g, s, f, 2, &scale) != 1 || !(scale > 0) || !(e = fm_op(g, f[0], IR_EINSUM)) || !ir_spec_is(e->attr.spec, "0123,0423->0214"))
    return 0;
  int q = e->args[0], k = e->args[1], v = o->args[1 - pk];
  const ir_shape *qs = &g->vals[q]->shape;
  for (int i = 0; i < 3; i++) {
    const ir_value *x = g->vals[i == 0 ? q : i == 1 ? k : v];
    if (x->dtype != o->dtype || !ir_shape_eq(&x->shape, qs)) return 0;    /* self-attention: one shape */
  }
  int args[3] = {transpose_heads(g, o->name, q), transpose_heads(g, o->name, k), transpose_heads(g, o->name, v)};
  if (args[0] < 0 || args[1] < 0 || args[2] < 0) return 0;
  ir_attrs a;
  memset(&a, 0, sizeof a);
  a.ndims = -1;
  a.dim = -1;
  a.causal = causal;
  a.scale = scale;
  int att = add_op(g, o->name, IR_ATTENTION, args, 3, &a);
  if (att < 0) return 0;
  ir_attrs t;
  memset(&t, 0, sizeof t);
  t.ndims = 4;
  t.dims[0] = 0; t.dims[1] = 2; t.dims[2] = 1; t.dims[3] = 3;
  t.dim = -1;
  return fm_become(g, o, IR_TRANSPOSE, &att, 1, &t) == 0;
}

void fuse_attention_bshd(ir_graph *g, fuse_counts *c) {
  int n = g->nvals;               /* (the values it adds are not looked at) */
  for (int i = 0; i < n; i++)
    if (g->vals[i]->kind == IR_OP && attention_at(g, g->vals[i])) c->attention++;
}

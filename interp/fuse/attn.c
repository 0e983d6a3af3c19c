/*
** attn.c: attention as programs spell it out, in two layouts:
**   heads after the sequence, [b, s, h, d] (JAX's jnp.einsum, flax's
**   dot_product_attention, jax.nn.dot_product_attention's XLA form):
**     s = einsum("bqhd,bkhd->bhqk", q, k) * scale
**     o = einsum("bhqk,bkhd->bqhd", softmax(mask(s)), v)     (or v first)
**   heads before it, [b, h, s, d] (PyTorch's, k transposed or not):
**     s = einsum("bhqd,bhkd->bhqk", q, k) * scale
**     o = einsum("bhqk,bhkd->bhqd", softmax(mask(s)), v)
** becomes attention(q, k, v) (with the heads after the sequence:
** transpose(attention(q', k', v'), [0, 2, 1, 3]), q' = q's [b, h, s, d]
** transpose, which the lowering reads in place: the fused kernel's
** [b, s, h, d] modes, no copy). The scale is the product of the literals
** the scores, q and k are multiplied (or divided) by, q scaled before the
** einsum as flax does it, k before or after PyTorch's transpose. The mask
** is none or a causal one (mask.c); another bias added stays as written,
** the softmax rows.c's. Casts around the softmax (bf16 q, k, v with f32
** scores, the probabilities cast back) are kept at the ends: the
** attention runs in the softmax's type on q, k, v converted to it, and
** its result is converted to the output's type. PyTorch's guard of rows
** with no key (select(all -inf, 0, p)) goes: with no mask or a causal
** one, a row always has a key. Grouped-query attention's k and v, fewer
** heads repeated to q's (jnp.repeat, PyTorch's repeat_kv), stay repeated:
** carve's attention takes q, k, v of one shape.
*/
#include "interp/fuse/match.h"

#include <string.h>

/* the einsums of one layout: the output's (probabilities first, v first)
** and the scores' (k as it is, k transposed) */
static const struct layout {
  const char *out[2], *scores[2];
  int bshd;
} layouts[] = {
  {{"0123,0314->0214", "0314,0123->0214"}, {"0123,0423->0214", NULL}, 1},
  {{"0123,0134->0124", "0134,0123->0124"}, {"0123,0143->0124", "0123,0134->0124"}, 0},
};

typedef struct att { int q, k, v, causal; double scale; } att;

/* id without the literals it is multiplied by (their product into *scale) */
static int unscaled(const ir_graph *g, int id, double *scale) {
  int f[1];
  double k;
  if (fm_factors(g, id, f, 1, &k) != 1 || !(k > 0)) return id;
  *scale *= k;
  return f[0];
}

/* id = x transposed [0, 1, 3, 2] (PyTorch's k.transpose(-2, -1)): x, else -1 */
static int untransposed(const ir_graph *g, int id) {
  static const int swap[4] = {0, 1, 3, 2};
  ir_value *t = fm_op(g, id, IR_TRANSPOSE);
  return t && t->attr.ndims == 4 && memcmp(t->attr.dims, swap, sizeof swap) == 0 ? t->args[0] : -1;
}

/* the scores s = einsum(q, k) * scale of layout l, masked or not */
static int scores(const ir_graph *g, int s, const struct layout *l, att *m) {
  int f[1];
  m->causal = fm_causal(g, s, &s);
  ir_value *e;
  if (fm_factors(g, s, f, 1, &m->scale) != 1 || !(e = fm_op(g, f[0], IR_EINSUM))) return 0;
  int kt = ir_spec_is(e->attr.spec, l->scores[0]) ? 0 : l->scores[1] && ir_spec_is(e->attr.spec, l->scores[1]) ? 1 : -1;
  if (kt < 0) return 0;
  m->q = unscaled(g, e->args[0], &m->scale);
  m->k = unscaled(g, e->args[1], &m->scale);
  if (kt && (m->k = untransposed(g, m->k)) < 0) return 0;
  m->k = unscaled(g, m->k, &m->scale);
  return m->scale > 0;
}

/* the transpose between the two layouts (its own inverse) */
static ir_attrs heads(void) {
  ir_attrs a = fm_attrs(-1);
  a.ndims = 4;
  a.dims[0] = 0; a.dims[1] = 2; a.dims[2] = 1; a.dims[3] = 3;
  return a;
}

/* x in type t (widened when it is narrower) and layout l's [b, h, s, d] */
static int operand(ir_graph *g, const char *name, int x, ir_dtype t, const struct layout *l) {
  if (g->vals[x]->dtype != t) {
    ir_attrs c = fm_attrs(-1);
    c.dtype = t;
    x = fm_add_op(g, name, IR_CONVERT, &x, 1, &c);
  }
  ir_attrs a = heads();
  return x < 0 || !l->bshd ? x : fm_add_op(g, name, IR_TRANSPOSE, &x, 1, &a);
}

/* o = the attention m of layout l, computed in t: o rewritten into its
** last step (the attention, a transpose back, a convert to o's type) */
static int rewrite(ir_graph *g, ir_value *o, const att *m, ir_dtype t, const struct layout *l) {
  int x, args[3] = {operand(g, o->name, m->q, t, l), operand(g, o->name, m->k, t, l), operand(g, o->name, m->v, t, l)};
  if (args[0] < 0 || args[1] < 0 || args[2] < 0) return 0;
  ir_attrs a = fm_attrs(-1), tr = heads(), c = fm_attrs(-1);
  a.causal = m->causal;
  a.scale = m->scale;
  c.dtype = o->dtype;
  if (!l->bshd && o->dtype == t) return fm_become(g, o, IR_ATTENTION, args, 3, &a) == 0;
  if ((x = fm_add_op(g, o->name, IR_ATTENTION, args, 3, &a)) < 0) return 0;
  if (l->bshd && o->dtype == t) return fm_become(g, o, IR_TRANSPOSE, &x, 1, &tr) == 0;
  if (l->bshd && (x = fm_add_op(g, o->name, IR_TRANSPOSE, &x, 1, &tr)) < 0) return 0;
  return fm_become(g, o, IR_CONVERT, &x, 1, &c) == 0;
}

static int attention_at(ir_graph *g, ir_value *o) {
  if (o->op != IR_EINSUM || !ir_dtype_isfloat(o->dtype)) return 0;
  for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
    for (int pk = 0; pk < 2; pk++) {               /* the probabilities' operand: first, or after v */
      const struct layout *l = &layouts[i];
      if (!ir_spec_is(o->attr.spec, l->out[pk])) continue;
      int pid = o->args[pk];
      ir_value *cv = fm_op(g, pid, IR_CONVERT), *p;
      if (cv) pid = cv->args[0];                   /* probs.astype(v's type) */
      if (!(p = fm_op(g, fm_unguard_rows(g, pid), IR_SOFTMAX)) || p->attr.dim != 3 || (p->dtype != IR_F32 && p->dtype != IR_F64)) return 0;
      att m = {.v = o->args[1 - pk]};
      int s = p->args[0];
      ir_value *cs = fm_op(g, s, IR_CONVERT);      /* the scores cast to f32 for the softmax */
      if (cs && ir_dtype_isfloat(g->vals[cs->args[0]]->dtype)) s = cs->args[0];
      if (!scores(g, s, l, &m)) return 0;
      const ir_shape *qs = &g->vals[m.q]->shape;
      for (int j = 0; j < 3; j++) {                /* self-attention: one shape; types that widen to p's */
        const ir_value *x = g->vals[j == 0 ? m.q : j == 1 ? m.k : m.v];
        if (!ir_shape_eq(&x->shape, qs) || !ir_dtype_isfloat(x->dtype) || ir_dtype_size(x->dtype) > ir_dtype_size(p->dtype)) return 0;
      }
      return rewrite(g, o, &m, p->dtype, l);
    }
  return 0;
}

void fuse_attention(ir_graph *g, fuse_counts *c) {
  int n = g->nvals;               /* (the values it adds are not looked at) */
  for (int i = 0; i < n; i++)
    if (g->vals[i]->kind == IR_OP && attention_at(g, g->vals[i])) c->attention++;
}

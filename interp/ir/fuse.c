/*
** fuse.c: the attention rewrite. Models write attention as the GPT
** examples do,
**   s = mul(einsum("bhqk,bhtk->bhqt", q, k), scale)
**   p = softmax(causal_mask(s))
**   c = einsum("bhqt,bhtk->bhqk", p, v)
** which stores a [b, h, s, s] score matrix (and its gradient) per layer.
** The rewrite turns c into attention(q, k, v) when every intermediate
** has c's chain as its only reader, so the fused kernel may drop them.
** The mul is optional (scale 1) and so is the mask (causal = false).
** PyTorch's spelling is taken too: matmul(q, transpose(k, [0, 1, 3, 2]))
** for the scores and matmul(p, v), on [b, h, s, d] operands.
*/
#include "interp/ir/ir.h"

#include <stdlib.h>
#include <string.h>

int ir_spec_is(const char *spec, const char *tmpl) {
  char lab[10] = {0};
  size_t n = strlen(tmpl);
  if (!spec || strlen(spec) != n) return 0;
  for (size_t i = 0; i < n; i++) {
    char t = tmpl[i], c = spec[i];
    if (t < '0' || t > '9') { if (c != t) return 0; continue; }
    if (c < 'a' || c > 'z') return 0;
    if (!lab[t - '0']) {
      for (int j = 0; j < 10; j++) if (lab[j] == c) return 0;   /* distinct digits, distinct labels */
      lab[t - '0'] = c;
    } else if (lab[t - '0'] != c) {
      return 0;
    }
  }
  return 1;
}

/* v's operand k, when v is op and read only by its one user */
static ir_value *inner(const ir_graph *g, const ir_value *v, int k, ir_opkind op) {
  if (k >= v->nargs) return NULL;
  ir_value *a = g->vals[v->args[k]];
  if (a->kind != IR_OP || a->op != op || a->nusers != 1 || a->is_output || a->dtype != IR_F32) return NULL;
  return a;
}

typedef struct match { int q, k, v; int causal; double scale; int dead[6], ndead; } match;   /* dead: softmax, mask, mul, product, transpose */

/* A batched matmul of two [b, h, ., .] operands: the same b and h. */
static int matmul4(const ir_graph *g, const ir_value *e) {
  if (e->kind != IR_OP || e->op != IR_MATMUL || e->shape.rank != 4) return 0;
  const ir_shape *a = &g->vals[e->args[0]]->shape, *b = &g->vals[e->args[1]]->shape;
  return a->rank == 4 && b->rank == 4 && a->d[0] == b->d[0] && a->d[1] == b->d[1];
}

/* The product of the scores: einsum(q, k), or matmul(q, transpose(k)) */
static int match_product(const ir_graph *g, ir_value *e, match *m) {
  if (e->op == IR_EINSUM) {
    if (!ir_spec_is(e->attr.spec, "0123,0143->0124")) return 0;
    m->q = e->args[0];
    m->k = e->args[1];
  } else {
    ir_value *t = matmul4(g, e) ? inner(g, e, 1, IR_TRANSPOSE) : NULL;
    static const int swap[4] = {0, 1, 3, 2};
    if (!t || t->attr.ndims != 4 || memcmp(t->attr.dims, swap, sizeof swap) != 0) return 0;
    m->dead[m->ndead++] = t->id;
    m->q = e->args[0];
    m->k = t->args[0];
  }
  m->dead[m->ndead++] = e->id;
  return 1;
}

/* scores = [mul(] product(q, k) [, literal)] */
static int match_scores(const ir_graph *g, ir_value *x, match *m) {
  m->scale = 1;
  ir_value *e = (x->op == IR_EINSUM || x->op == IR_MATMUL) && x->nusers == 1 && !x->is_output ? x : NULL;
  if (!e && x->op == IR_MUL) {
    for (int k = 0; k < 2 && !e; k++) {
      const ir_value *lit = g->vals[x->args[1 - k]];
      if (lit->kind != IR_CONST || !(lit->attr.scalar > 0)) continue;
      e = inner(g, x, k, IR_EINSUM);
      if (!e) e = inner(g, x, k, IR_MATMUL);
      m->scale = lit->attr.scalar;
    }
    if (!e) return 0;
    m->dead[m->ndead++] = x->id;
  }
  return e && e->dtype == IR_F32 && match_product(g, e, m);
}

static int match_at(const ir_graph *g, const ir_value *c, match *m) {
  memset(m, 0, sizeof *m);
  if (c->kind != IR_OP || c->dtype != IR_F32) return 0;
  if (!(c->op == IR_EINSUM && ir_spec_is(c->attr.spec, "0124,0143->0123")) && !matmul4(g, c)) return 0;
  ir_value *p = inner(g, c, 0, IR_SOFTMAX);
  if (!p || p->attr.dim != 3) return 0;
  m->dead[m->ndead++] = p->id;
  ir_value *x = g->vals[p->args[0]];
  if (x->kind != IR_OP || x->nusers != 1 || x->is_output) return 0;
  if (x->op == IR_CAUSAL_MASK) {
    m->causal = 1;
    m->dead[m->ndead++] = x->id;
    x = g->vals[x->args[0]];
    if (x->kind != IR_OP || x->nusers != 1 || x->is_output) return 0;
  }
  if (!match_scores(g, x, m)) return 0;
  m->v = c->args[1];
  const ir_shape *qs = &g->vals[m->q]->shape;
  for (int i = 0; i < 3; i++) {       /* one shape for q, k, v: self-attention */
    const ir_value *a = g->vals[i == 0 ? m->q : i == 1 ? m->k : m->v];
    if (a->dtype != IR_F32 || !ir_shape_eq(&a->shape, qs)) return 0;
  }
  return 1;
}

int ir_fuse_attention(ir_graph *g) {
  char *dead = calloc((size_t)g->nvals + 1, 1);
  if (!dead) return 0;
  int fused = 0;
  for (int i = 0; i < g->nvals; i++) {
    ir_value *c = g->vals[i];
    match m;
    if (!match_at(g, c, &m)) continue;
    int args[3] = {m.q, m.k, m.v};
    c->op = IR_ATTENTION;
    c->nargs = 3;
    c->args = arena_dup(&g->mem, args, sizeof args);
    memset(&c->attr, 0, sizeof c->attr);
    c->attr.ndims = -1;
    c->attr.dim = -1;
    c->attr.causal = m.causal;
    c->attr.scale = m.scale;
    struct ir_fused *f = arena_alloc(&g->mem, sizeof *f * (size_t)(g->nfused + m.ndead));
    if (g->nfused) memcpy(f, g->fused, sizeof *f * (size_t)g->nfused);
    for (int k = 0; k < m.ndead; k++) {
      dead[m.dead[k]] = 1;
      f[g->nfused++] = (struct ir_fused){g->vals[m.dead[k]]->name, c->name};
    }
    g->fused = f;
    fused++;
  }
  if (fused) ir_compact(g, dead);
  free(dead);
  return fused;
}

/*
** rules.c: the factor view of every op (as Shardy's op sharding rules and
** PartIR's tile-mapping registry). Each dim of each operand and of the
** result maps to a factor, or to none (a size-1 dim). A factor is
**   F_PASS      split it and every dim mapped to it splits alike;
**   F_CONTRACT  summed by the op: split it and the result is a partial sum;
**   F_WHOLE     the op needs it whole (softmax's dim, a slice's dim).
** Rules are grouped by op class, one table-driven case each, not one case
** per strategy.
*/
#include "interp/ir/ops.h"
#include "interp/shard/shard.h"

#include <string.h>

static int newf(sh_rule *r, int kind) {
  if (r->nf >= SH_MAXF) return -1;       /* no factor: the dim stays whole */
  r->kind[r->nf] = (int8_t)kind;
  return r->nf++;
}

static void init(sh_rule *r, const ir_graph *g, const ir_value *v, arena *mem) {
  memset(r, 0, sizeof *r);
  r->nops = v->nargs + 1;
  r->map = arena_alloc(mem, (size_t)r->nops * sizeof *r->map);
  r->rank = arena_alloc(mem, (size_t)r->nops);
  for (int k = 0; k <= v->nargs; k++) {
    const ir_value *x = k < v->nargs ? g->vals[v->args[k]] : v;
    r->rank[k] = (int8_t)x->shape.rank;
    for (int i = 0; i < IR_MAXRANK; i++) r->map[k][i] = -1;
  }
}

#define RES (r->nops - 1)

static const ir_shape *shape_of(const ir_graph *g, const ir_value *v, int k) {
  return k < v->nargs ? &g->vals[v->args[k]]->shape : &v->shape;
}

/* result dims are pass factors; operands map by NumPy alignment unless broadcast */
static void elementwise(sh_rule *r, const ir_graph *g, const ir_value *v) {
  int R = v->shape.rank;
  for (int i = 0; i < R; i++) r->map[RES][i] = (int8_t)(v->shape.d[i] == 1 ? -1 : newf(r, F_PASS));
  for (int k = 0; k < v->nargs; k++) {
    const ir_shape *s = shape_of(g, v, k);
    for (int i = 0; i < s->rank; i++) {
      int j = R - s->rank + i;
      if (j >= 0 && s->d[i] == v->shape.d[j]) r->map[k][i] = r->map[RES][j];
    }
  }
}

/* the same dims in the operands of the mask `operands` (the first 32 at
** most) and the result, with `whole` dims (a mask) whole */
static void same_dims(sh_rule *r, const ir_graph *g, const ir_value *v, unsigned whole, unsigned operands) {
  int R = v->shape.rank;
  for (int i = 0; i < R; i++) r->map[RES][i] = (int8_t)(v->shape.d[i] == 1 ? -1 : newf(r, (whole >> i) & 1 ? F_WHOLE : F_PASS));
  for (int k = 0; k < v->nargs && k < 32; k++)
    if ((operands >> k) & 1)
      for (int i = 0; i < R; i++) r->map[k][i] = r->map[RES][i];
}

/* einsum and matmul: one factor per label; contracted labels are F_CONTRACT */
static void contraction(sh_rule *r, const ir_graph *g, const ir_value *v) {
  char l[3][IR_MAXRANK + 1];
  ir_contraction_labels(g, v, l);
  int fac[128];
  for (int i = 0; i < 128; i++) fac[i] = -1;
  for (int k = 0; k < 3; k++) {
    int slot = k == 2 ? RES : k;
    const ir_shape *s = shape_of(g, v, slot == RES ? v->nargs : k);
    for (int i = 0; l[k][i]; i++) {
      int ch = (unsigned char)l[k][i];
      if (s->d[i] == 1) continue;                  /* broadcast or trivial: no factor */
      if (fac[ch] < 0) fac[ch] = newf(r, strchr(l[2], ch) ? F_PASS : F_CONTRACT);
      r->map[slot][i] = (int8_t)fac[ch];
    }
  }
}

static void reduction(sh_rule *r, const ir_graph *g, const ir_value *v, int reduced_kind) {
  const ir_shape *x = shape_of(g, v, 0);
  unsigned red = 0;
  for (int i = 0; i < v->attr.ndims; i++) red |= 1u << v->attr.dims[i];
  int j = 0;
  for (int i = 0; i < x->rank; i++) {
    int f = x->d[i] == 1 ? -1 : newf(r, (red >> i) & 1 ? reduced_kind : F_PASS);
    r->map[0][i] = (int8_t)f;
    if ((red >> i) & 1) { if (v->attr.keepdims) j++; continue; }
    if (v->op == IR_MAX_GRAD) continue;
    r->map[RES][j++] = (int8_t)f;
  }
  if (v->op == IR_MAX_GRAD) {               /* dx like x; dy like the kept dims */
    for (int i = 0; i < x->rank; i++) r->map[RES][i] = r->map[0][i];
    const ir_shape *dy = shape_of(g, v, 1);
    int jj = 0;
    for (int i = 0; i < x->rank && jj < dy->rank; i++) {
      if ((red >> i) & 1) { if (v->attr.keepdims) jj++; continue; }
      r->map[1][jj++] = r->map[0][i];
    }
  }
}

/* reshape: dims are grouped where products agree; the major dims of a
** group share a factor (a split of the major part carries over), the
** other dims of the group must be whole across the reshape */
static void reshape(sh_rule *r, const ir_graph *g, const ir_value *v) {
  const ir_shape *a = shape_of(g, v, 0), *b = &v->shape;
  int i = 0, j = 0;
  while (i < a->rank || j < b->rank) {
    while (i < a->rank && a->d[i] == 1) i++;
    while (j < b->rank && b->d[j] == 1) j++;
    if (i >= a->rank || j >= b->rank) break;
    int i0 = i, j0 = j;
    int64_t pa = a->d[i++], pb = b->d[j++];
    while (pa != pb) {
      if (pa < pb && i < a->rank) pa *= a->d[i++];
      else if (pb < pa && j < b->rank) pb *= b->d[j++];
      else break;
    }
    int f = newf(r, F_PASS);
    r->map[0][i0] = (int8_t)f;
    r->map[RES][j0] = (int8_t)f;
    for (int k = i0 + 1; k < i; k++) if (a->d[k] != 1) r->map[0][k] = (int8_t)newf(r, F_WHOLE);
    for (int k = j0 + 1; k < j; k++) if (b->d[k] != 1) r->map[RES][k] = (int8_t)newf(r, F_WHOLE);
  }
}

/* a literal zero, or one broadcast or reshaped: a scatter-add into it may
** add its updates on each device and leave a partial sum */
static int zeros(const ir_graph *g, int id) {
  const ir_value *x = g->vals[id];
  while (x->kind == IR_OP && (x->op == IR_BROADCAST || x->op == IR_RESHAPE)) x = g->vals[x->args[0]];
  return x->kind == IR_CONST && x->attr.scalar == 0;
}

/* gather (x, indices -> result) and scatter (x, indices, updates -> result
** like x), as Shardy's rules: the indices' batch dims pass to the result's
** (or the updates') and to the operand's batching dims; a window that spans
** its dim of x passes that dim through; looked-up dims, windows that do not
** span, and the indices' vector dim stay whole. A scatter-add into zeros
** sums its updates: their batch dims contract, leaving a partial sum. */
static void index_rule(sh_rule *r, const ir_graph *g, const ir_value *v) {
  const ir_index *ix = v->attr.index;
  int scatter = v->op == IR_SCATTER, U = scatter ? 2 : RES;       /* the slot of the result (gather) or the updates */
  const ir_shape *xs = shape_of(g, v, 0), *is = shape_of(g, v, 1), *us = shape_of(g, v, scatter ? 2 : v->nargs);
  int ri = is->rank;
  int batch = scatter && !(ix->combine == IR_ADD && zeros(g, v->args[0])) ? F_WHOLE : scatter ? F_CONTRACT : F_PASS;
  int8_t idim_f[IR_MAXRANK];
  for (int j = 0; j < ri; j++) idim_f[j] = -1;
  if (ix->ivd < ri && is->d[ix->ivd] != 1) r->map[1][ix->ivd] = (int8_t)newf(r, F_WHOLE);
  for (int d = 0; d < xs->rank; d++) {         /* the operand (and a scatter's result) */
    int f = -1;
    for (int k = 0; k < ix->n[IX_OPERAND_BATCH]; k++)
      if (ix->v[IX_OPERAND_BATCH][k] == d) {   /* batched with an index dim: passes (a scatter's too) */
        int j = (int)ix->v[IX_INDEX_BATCH][k];
        if (idim_f[j] < 0 && is->d[j] != 1) idim_f[j] = (int8_t)newf(r, F_PASS);
        f = idim_f[j];
      }
    if (f < 0 && xs->d[d] != 1) f = newf(r, ix->v[IX_SLICE][d] == xs->d[d] ? F_PASS : F_WHOLE);
    r->map[0][d] = (int8_t)f;
    if (scatter) r->map[RES][d] = (int8_t)f;
  }
  for (int u = 0, w = 0, b = 0; u < us->rank; u++) {   /* the result's (updates') dims, as rt_index walks them */
    int f = -1;
    if (ir_index_has(ix, IX_OFFSET, u)) {
      while (ir_index_has(ix, IX_COLLAPSED, w) || ir_index_has(ix, IX_OPERAND_BATCH, w)) w++;
      int fx = r->map[0][w];           /* a window spanning its dim shares the dim's factor */
      if (fx >= 0 && r->kind[fx] == F_PASS && ix->v[IX_SLICE][w] == xs->d[w]) f = fx;
      else if (us->d[u] != 1) f = newf(r, F_WHOLE);
      w++;
    } else {
      if (b == ix->ivd && ix->ivd < ri) b++;
      if (idim_f[b] < 0 && is->d[b] != 1) idim_f[b] = (int8_t)newf(r, batch);
      f = idim_f[b];
      r->map[1][b++] = (int8_t)f;
    }
    r->map[U][u] = (int8_t)f;
  }
}

static int attention(const ir_value *v) { return v->kind == IR_OP && (v->op == IR_ATTENTION || v->op == IR_ATTENTION_GRAD); }

void shard_set_ring(sh_plan *p, int on) {
  p->ring = on;
  for (int v = 0; v < p->g->nvals; v++) if (attention(p->g->vals[v])) p->rules[v] = NULL;
}

int shard_rule(const ir_graph *g, const ir_value *v, sh_rule *r, arena *mem) {
  if (v->kind != IR_OP) return -1;
  init(r, g, v, mem);
  const ir_opinfo *oi = ir_opinfo_of(v->op);
  int R = v->shape.rank;
  if (oi->flags & (OPF_UNARY | OPF_BINARY | OPF_TERNARY)) { elementwise(r, g, v); return 0; }
  switch (v->op) {
  case IR_RELU_GRAD: case IR_GELU_GRAD: case IR_GELU_TANH_GRAD: case IR_SILU_GRAD:
    elementwise(r, g, v); return 0;
  case IR_MATMUL: case IR_EINSUM: contraction(r, g, v); return 0;
  case IR_SUM: case IR_MEAN: reduction(r, g, v, F_CONTRACT); return 0;
  case IR_MAX: case IR_MIN: case IR_MAX_GRAD: reduction(r, g, v, F_WHOLE); return 0;
  case IR_IOTA: case IR_CONSTANT:    /* made whole on every device; a split of it is a local slice */
    same_dims(r, g, v, ~0u, 0); return 0;
  /* softmax and log_softmax pass their dim too: split, each device takes
     its rows' statistics over all the pieces (lower.c) */
  case IR_SOFTMAX: case IR_LOG_SOFTMAX: same_dims(r, g, v, 0, 1); return 0;
  case IR_NORMALIZE: same_dims(r, g, v, 1u << v->attr.dim, 1); return 0;
  case IR_SOFTMAX_GRAD: case IR_LOG_SOFTMAX_GRAD: same_dims(r, g, v, 0, 3); return 0;
  case IR_LAYERNORM: case IR_RMSNORM: case IR_LAYERNORM_GRAD: {
    same_dims(r, g, v, 1u << v->attr.dim, v->op == IR_LAYERNORM_GRAD ? 5 : 1);
    int8_t f = r->map[RES][v->attr.dim];
    r->map[1][0] = f;                                /* gamma */
    if (v->op == IR_LAYERNORM) r->map[2][0] = f;     /* beta */
    return 0;
  }
  /* the rows (queries) pass: split, each device masks its rows as the
     whole would (the lowering gives it its first row); the columns (keys)
     stay whole */
  case IR_CAUSAL_MASK: case IR_CAUSAL_MASK_GRAD:
    same_dims(r, g, v, 1u << (R - 1), 1); return 0;
  case IR_CONCAT: {
    same_dims(r, g, v, 1u << v->attr.dim, 0);
    for (int k = 0; k < v->nargs; k++)
      for (int i = 0; i < R; i++)
        if (shape_of(g, v, k)->d[i] != 1 || i == v->attr.dim) r->map[k][i] = r->map[RES][i];
    return 0;
  }
  case IR_ATTENTION: case IR_ATTENTION_GRAD:      /* batch and heads pass; seq and head dim whole */
    same_dims(r, g, v, 3u << 2, (1u << v->nargs) - 1);
    if (v->op == IR_ATTENTION_GRAD)                 /* dk vs 3 dk: whole either way, not one factor */
      for (int k = 0; k < v->nargs; k++) r->map[k][3] = (int8_t)(shape_of(g, v, k)->d[3] == 1 ? -1 : newf(r, F_WHOLE));
    return 0;
  case IR_SLICE: case IR_PAD: same_dims(r, g, v, 1u << v->attr.dim, 1); return 0;
  case IR_GATHER: case IR_SCATTER: index_rule(r, g, v); return 0;
  case IR_TRANSPOSE:
    for (int i = 0; i < R; i++) {
      int f = v->shape.d[i] == 1 ? -1 : newf(r, F_PASS);
      r->map[RES][i] = (int8_t)f;
      r->map[0][v->attr.dims[i]] = (int8_t)f;
    }
    return 0;
  case IR_BROADCAST: elementwise(r, g, v); return 0;
  case IR_SUM_TO: {
    const ir_shape *x = shape_of(g, v, 0);
    for (int i = 0; i < x->rank; i++) {
      int j = i - (x->rank - R);
      int kept = j >= 0 && v->shape.d[j] == x->d[i];
      int f = x->d[i] == 1 ? -1 : newf(r, kept ? F_PASS : F_CONTRACT);
      r->map[0][i] = (int8_t)f;
      if (kept) r->map[RES][j] = (int8_t)f;
    }
    return 0;
  }
  case IR_RESHAPE: reshape(r, g, v); return 0;
  case IR_EMBEDDING: {             /* table [V, D], ids [...] -> [..., D]; rows split: a partial sum */
    const ir_shape *ids = shape_of(g, v, 1);
    r->map[0][0] = (int8_t)newf(r, F_CONTRACT);
    int fd = newf(r, F_PASS);
    r->map[0][1] = (int8_t)fd;
    r->map[RES][R - 1] = (int8_t)fd;
    for (int i = 0; i < ids->rank; i++)
      if (ids->d[i] != 1) { int f = newf(r, F_PASS); r->map[1][i] = (int8_t)f; r->map[RES][i] = (int8_t)f; }
    return 0;
  }
  case IR_EMBEDDING_GRAD: {        /* ids [...], dy [..., D] -> [V, D]: positions are summed */
    const ir_shape *ids = shape_of(g, v, 0);
    r->map[RES][0] = (int8_t)newf(r, F_PASS);
    int fd = newf(r, F_PASS);
    r->map[RES][1] = (int8_t)fd;
    r->map[1][ids->rank] = (int8_t)fd;
    for (int i = 0; i < ids->rank; i++)
      if (ids->d[i] != 1) { int f = newf(r, F_CONTRACT); r->map[0][i] = (int8_t)f; r->map[1][i] = (int8_t)f; }
    return 0;
  }
  case IR_CROSS_ENTROPY: case IR_CROSS_ENTROPY_GRAD: {
    const ir_shape *lg = shape_of(g, v, 0);
    int grad = v->op == IR_CROSS_ENTROPY_GRAD;
    for (int i = 0; i < lg->rank - 1; i++) {
      if (lg->d[i] == 1) continue;
      int f = newf(r, grad ? F_PASS : F_CONTRACT);
      r->map[0][i] = (int8_t)f;
      r->map[1][i] = (int8_t)f;
      if (grad) r->map[RES][i] = (int8_t)f;
    }
    /* the classes split (vocabulary-parallel, as Megatron's): each device's
       part of the loss is a partial sum, the gradient split as the logits */
    int fc = newf(r, grad ? F_PASS : F_CONTRACT);
    r->map[0][lg->rank - 1] = (int8_t)fc;
    if (grad) r->map[RES][lg->rank - 1] = (int8_t)fc;
    return 0;
  }
  default:
    return -1;
  }
}

/* ---- the plan's cache ---- */

int shard_rule_of(const sh_plan *p, int v, sh_rule *r) {
  sh_rule *c = p->rules[v];
  if (!c) {
    c = arena_alloc((arena *)&p->mem, sizeof *c);
    if (shard_rule(p->g, p->g->vals[v], c, (arena *)&p->mem) < 0) c->nops = -1;
    /* ring attention: the sequence (queries, keys, values alike) passes */
    else if (p->ring && attention(p->g->vals[v]) && c->map[c->nops - 1][2] >= 0) c->kind[c->map[c->nops - 1][2]] = F_PASS;
    p->rules[v] = c;
  }
  if (c->nops < 0) return -1;
  *r = *c;
  return 0;
}

/*
** emit.c: what every part of the lowering emits with: temporaries, a
** value's buffer (a literal made on first need), an op's operands,
** transposes and reductions.
*/
#include "interp/lower/lower_int.h"
#include "util/mem.h"

int lw_tmp(lctx *c, const char *name, rt_dtype t, int rank, const int64_t *shape) {
  return rt_prog_buf(c->p, name, t, rank, shape, RT_BUF_TEMP);
}

int lw_operand(lctx *c, int k) {
  if (c->abuf[k] == LAZY) c->abuf[k] = lw_literal_in(c, c->aid[k], &c->ash[k]);
  return c->abuf[k];
}

/* literal id filled into a new buffer of the given shape */
static int fill(lctx *c, int id, const ir_shape *s) {
  int b = lw_tmp(c, V(c, id)->name, lw_type(c, V(c, id)), s->rank, s->d);
  rt_instr *in = rt_prog_emit(c->p, RT_FILL, b);
  in->alpha = (float)c->cval[id];
  in->value = c->cval[id];          /* other dtypes fill from value, exactly */
  in->src = id;
  return b;
}

/* The buffer holding v, materializing a literal on first need. */
int lw_buf(lctx *c, int id) {
  if (c->buf[id] >= 0) return c->buf[id];
  const ir_value *v = V(c, id);
  if (!c->isconst[id]) {
    if (!c->failed) diag_error(c->d, v->at, "internal error: '%s' is read before it is computed", v->name);
    c->failed = 1;
    return -1;
  }
  return c->buf[id] = fill(c, id, &v->shape);
}

/* v read as a piece of local shape s: a literal is one number repeated,
** so its piece is that number filled into s (a literal's own buffer holds
** the whole shape, which an op reading a split operand must not see). */
int lw_literal_of(lctx *c, int id, const ir_shape *s) { return c->isconst[id] ? fill(c, id, s) : lw_buf(c, id); }

int lw_literal_in(lctx *c, int id, const ir_shape *s) {
  if (!c->isconst[id] || ir_shape_eq(s, &V(c, id)->shape)) return lw_buf(c, id);
  return fill(c, id, s);
}

/* ---- transposes ---- */

/* buffer `in` of shape s permuted by perm into a new temp (or `out` if >= 0) */
/* The temporary an earlier transpose of `in` by perm wrote, if `in` has
** not been written since (a gradient's GEMM and the next layer's both want
** the same head-split copy); -1 if none. Only the last transpose of each
** buffer is remembered and only a short way back is looked at, so that
** the lowering stays linear. */
static int same_transpose(lctx *c, int in, const int64_t *s, int rank, const int *perm, rt_dtype t) {
  if (in >= c->nlast_tr || c->last_tr[in] < 0) return -1;
  int at = c->last_tr[in];
  const rt_instr *x = &c->p->instrs[at];
  if (x->op != RT_TRANSPOSE || x->in[0] != in || x->rank != rank || c->p->bufs[x->out].dtype != t ||
      c->p->bufs[x->out].kind != RT_BUF_TEMP || c->p->ninstrs - at > 64) return -1;
  for (int i = 0; i < rank; i++) if (x->shape[i] != s[i] || x->perm[i] != perm[i]) return -1;
  for (int k = at + 1; k < c->p->ninstrs; k++)
    if (c->p->instrs[k].out == in || c->p->instrs[k].out == x->out) return -1;
  return x->out;
}

int lw_transpose(lctx *c, int in, const int64_t *s, int rank, const int *perm, int out, const char *name, rt_dtype t) {
  int64_t os[IR_MAXRANK];
  int ident = 1;
  for (int i = 0; i < rank; i++) { os[i] = s[perm[i]]; ident &= perm[i] == i; }
  if (out < 0 && !ident) {
    int same = same_transpose(c, in, s, rank, perm, t);
    if (same >= 0) return same;
  }
  if (out < 0) out = lw_tmp(c, name, t, rank, os);
  if (!ident && in >= 0) {             /* remember it for same_transpose */
    if (in >= c->nlast_tr) {
      int n = c->p->nbufs > in ? c->p->nbufs * 2 : in + 1;
      c->last_tr = mem_realloc(c->last_tr, sizeof(int) * (size_t)n);
      for (int i = c->nlast_tr; i < n; i++) c->last_tr[i] = -1;
      c->nlast_tr = n;
    }
    c->last_tr[in] = c->p->ninstrs;
  }
  rt_instr *x = rt_prog_emit(c->p, ident ? RT_COPY : RT_TRANSPOSE, out);
  x->in[0] = in;
  x->nin = 1;
  x->rank = (uint8_t)rank;
  for (int i = 0; i < rank; i++) { x->shape[i] = s[i]; x->perm[i] = (int8_t)perm[i]; }
  return out;
}

/* ---- reductions ---- */

/* Reduce the marked dims of buffer `in` (shape s) by runs of adjacent dims,
** innermost run first; the last step writes `out`. */
void lw_reduce(lctx *c, int in, const ir_shape *s, const int *mark, int fn, double alpha, int out, const char *name) {
  int64_t d[IR_MAXRANK];
  int m[IR_MAXRANK], r = s->rank;
  for (int i = 0; i < r; i++) { d[i] = s->d[i]; m[i] = mark[i] && s->d[i] != 1; }
  int runs = 0;
  for (int i = 0; i < r; i++) if (m[i] && (i == 0 || !m[i - 1])) runs++;
  if (runs == 0) {                          /* only size-1 dims: a copy */
    rt_instr *x = rt_prog_emit(c->p, RT_EW, out);
    x->fn = RT_AFFINE; x->nin = 1; x->in[0] = in; x->rank = 1;
    x->shape[0] = lw_prod(d, 0, r); x->stride[0][0] = 1; x->alpha = (float)alpha; x->beta = 0;
    return;
  }
  int cur = in;
  for (int end = r; end > 0 && runs > 0; ) {
    int e = end;
    while (e > 0 && !m[e - 1]) e--;
    if (e == 0) break;
    int b0 = e;
    while (b0 > 0 && m[b0 - 1]) b0--;
    runs--;
    int64_t outer = lw_prod(d, 0, b0), n = lw_prod(d, b0, e), inner = lw_prod(d, e, r);
    int dst = runs == 0 ? out : lw_tmp(c, name, c->dt, 1, (int64_t[]){outer * inner});
    rt_instr *x = rt_prog_emit(c->p, RT_REDUCE, dst);
    x->fn = (uint8_t)fn; x->nin = 1; x->in[0] = cur;
    x->outer = outer; x->n = n; x->inner = inner;
    x->value = runs == 0 ? alpha : 1.0;     /* unrounded, for f64 (rt_alpha) */
    x->alpha = (float)x->value;
    for (int i = b0; i < e; i++) d[i] = 1;
    cur = dst;
    end = b0;
  }
}


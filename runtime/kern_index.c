/*
** kern_index.c: StableHLO's gather and scatter on the host, in any dtype.
** Each element of u (the gather's result, the scatter's updates) is one
** element of x: the window dims of u step through x from the start that
** the indices give (clamped so that the window fits, as StableHLO says),
** the batch dims of u step through the indices. A gather copies, a row at
** a time where u's last dim walks x's last; a scatter combines each update
** into its place, in order, and skips one whose place lies outside x.
** With other_bounds, the adjoints of those: a gather reads zero for an
** element outside x, a scatter clamps its starts.
*/
#include "runtime/kern_index.h"
#include "runtime/dtype.h"
#include "util/diag.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

typedef int64_t i64;

typedef struct walk {
  const rt_index *ix;
  rt_dtype it;                 /* the indices' type */
  const void *idx;
  i64 xst[RT_MAXRANK], ist[RT_MAXRANK];
  int iu[RT_MAXRANK];          /* dim of i -> the dim of u that walks it */
} walk;

static void strides(int r, const i64 *shape, i64 *st) {
  i64 s = 1;
  for (int d = r - 1; d >= 0; d--) { st[d] = s; s *= shape[d]; }
}

static void walk_init(walk *w, const rt_index *ix, rt_dtype it, const void *idx) {
  w->ix = ix;
  w->it = it;
  w->idx = idx;
  strides(ix->rx, ix->xs, w->xst);
  strides(ix->ri, ix->is, w->ist);
  for (int j = 0; j < RT_MAXRANK; j++) w->iu[j] = -1;
  for (int u = 0; u < ix->ru; u++) if (ix->u_idim[u] >= 0) w->iu[ix->u_idim[u]] = u;
}

/* The place in x of u's element at o: its flat offset, and whether it lies
** in x. clamp: a start is moved so that the window fits. */
static int place(const walk *w, const i64 *o, int clamp, i64 *xf) {
  const rt_index *ix = w->ix;
  i64 pos[RT_MAXRANK] = {0}, ib = 0;
  for (int u = 0; u < ix->ru; u++) {
    if (ix->u_idim[u] >= 0) ib += o[u] * w->ist[ix->u_idim[u]];
    else pos[ix->u_xdim[u]] += o[u];
  }
  for (int d = 0; d < ix->rx; d++) if (ix->x_idim[d] >= 0) pos[d] += o[w->iu[ix->x_idim[d]]];
  int inside = 1;
  for (int k = 0; k < ix->ncomp; k++) {
    int d = ix->comp_dim[k];
    i64 s = rt_load_i(w->it, w->idx, ib + (ix->ivd < ix->ri ? k * w->ist[ix->ivd] : 0)), hi = ix->xs[d] - ix->window[d];
    if (clamp) s = s < 0 ? 0 : s > hi ? hi : s;
    pos[d] += s;
  }
  i64 f = 0;
  for (int d = 0; d < ix->rx; d++) {
    if (pos[d] < 0 || pos[d] >= ix->xs[d]) inside = 0;
    f += pos[d] * w->xst[d];
  }
  *xf = f;
  return inside;
}

static void next(const rt_index *ix, int upto, i64 *o) {
  for (int u = upto - 1; u >= 0; u--) {
    if (++o[u] < ix->us[u]) return;
    o[u] = 0;
  }
}

int rt_kern_gather(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  (void)ctx; (void)err; (void)errlen;
  const rt_index *ix = ins->data;
  walk w;
  walk_init(&w, ix, (rt_dtype)ins->idt[1], in[1]);
  size_t es = rt_dtype_size((rt_dtype)ins->odt);
  /* rows: u's last dim walks x's last dim (contiguous in both), else single elements */
  int last = ix->ru > 0 && ix->u_xdim[ix->ru - 1] == ix->rx - 1;
  i64 run = last ? ix->us[ix->ru - 1] : 1, nu = 1;
  for (int u = 0; u < ix->ru; u++) nu *= ix->us[u];
  i64 o[RT_MAXRANK] = {0};
  const char *x = in[0];
  char *y = out;
  for (i64 e = 0; e < nu; e += run) {
    i64 xf;
    if (!ix->other_bounds) {   /* clamped: inside, unless a collapsed dim's window is empty */
      if (place(&w, o, 1, &xf)) memcpy(y + (size_t)e * es, x + (size_t)xf * es, (size_t)run * es);
      else memset(y + (size_t)e * es, 0, (size_t)run * es);
    } else {
      /* zeros where the element lies outside x: along the row, those
      ** before 0 and from x's end on */
      for (i64 k = 0; k < run; k++) {
        o[ix->ru - 1] = last ? k : o[ix->ru - 1];
        if (place(&w, o, 0, &xf)) memcpy(y + (size_t)(e + k) * es, x + (size_t)xf * es, es);
        else memset(y + (size_t)(e + k) * es, 0, es);
      }
      if (last) o[ix->ru - 1] = 0;
    }
    next(ix, last ? ix->ru - 1 : ix->ru, o);
  }
  return 0;
}

/* out[a] combined with u[b] */
static void combine(rt_dtype t, int how, void *out, i64 a, const void *u, i64 b) {
  size_t es = rt_dtype_size(t);
  if (how == RT_IX_REPLACE) { memcpy((char *)out + (size_t)a * es, (const char *)u + (size_t)b * es, es); return; }
  if (t == RT_F32 && how == RT_IX_ADD) { ((float *)out)[a] += ((const float *)u)[b]; return; }
  if (t == RT_F64 && how == RT_IX_ADD) { ((double *)out)[a] += ((const double *)u)[b]; return; }
  if (rt_dtype_isfloat(t)) {
    double p = rt_load_f(t, out, a), q = rt_load_f(t, u, b), r;
    switch (how) {
    case RT_IX_ADD: r = p + q; break;
    case RT_IX_MUL: r = p * q; break;
    case RT_IX_MAX: r = p != p || q != q ? NAN : p > q ? p : q < p ? p : q > p ? q : signbit(p) ? q : p; break;
    default:        r = p != p || q != q ? NAN : p < q ? p : q > p ? p : q < p ? q : signbit(p) ? p : q; break;
    }
    rt_store_f(t, out, a, r);
    return;
  }
  int64_t p = rt_load_i(t, out, a), q = rt_load_i(t, u, b), r;
  switch (how) {
  case RT_IX_ADD: r = (int64_t)((uint64_t)p + (uint64_t)q); break;     /* integers wrap */
  case RT_IX_MUL: r = (int64_t)((uint64_t)p * (uint64_t)q); break;
  case RT_IX_MAX: r = p > q ? p : q; break;
  default:        r = p < q ? p : q; break;
  }
  rt_store_i(t, out, a, r);
}

int rt_kern_scatter(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  (void)ctx; (void)err; (void)errlen;
  const rt_index *ix = ins->data;
  rt_dtype t = (rt_dtype)ins->odt;
  size_t es = rt_dtype_size(t);
  i64 nx = 1, nu = 1;
  for (int d = 0; d < ix->rx; d++) nx *= ix->xs[d];
  for (int u = 0; u < ix->ru; u++) nu *= ix->us[u];
  if (out != in[0]) memcpy(out, in[0], (size_t)nx * es);
  walk w;
  walk_init(&w, ix, (rt_dtype)ins->idt[1], in[1]);
  i64 o[RT_MAXRANK] = {0};
  for (i64 e = 0; e < nu; e++) {
    i64 xf;
    if (place(&w, o, ix->other_bounds, &xf)) combine(t, ix->combine, out, xf, in[2], e);
    next(ix, ix->ru, o);
  }
  return 0;
}

/* the elements of a shape: -1 for a negative size or an overflow */
static int count(int r, const int64_t *shape, int64_t *n) {
  *n = 1;
  for (int d = 0; d < r; d++)
    if (shape[d] < 0 || __builtin_mul_overflow(*n, shape[d], n)) return -1;
  return 0;
}

int rt_index_check(const rt_prog *p, const rt_instr *ins, char *why, size_t n) {
  const rt_index *ix = ins->data;
  int scatter = ins->op == RT_SCATTER;
  if (!ix) return diag_errbuf(why, n, "no dimension map");
  int bx = ins->in[0], bi = ins->in[1], bu = scatter ? ins->in[2] : ins->out;
  if (bx < 0 || bi < 0 || bu < 0 || bx >= p->nbufs || bi >= p->nbufs || bu >= p->nbufs) return diag_errbuf(why, n, "an operand names no buffer");
  const rt_buf *x = &p->bufs[bx], *i = &p->bufs[bi], *u = &p->bufs[bu], *o = &p->bufs[ins->out];
  if (o->dtype != x->dtype || u->dtype != x->dtype) return diag_errbuf(why, n, "the operand, result and updates differ in type");
  if (!rt_dtype_isint(i->dtype)) return diag_errbuf(why, n, "the indices are %s, not integers", rt_dtype_name(i->dtype));
  if (scatter && (o->nelem != x->nelem || ix->combine > RT_IX_MIN || (x->dtype == RT_I1 && ix->combine != RT_IX_REPLACE)))
    return diag_errbuf(why, n, "a scatter's result is its operand, combined by a known op");
  /* the map's shapes are the operands' own; a buffer read in place (a
  ** reshape's source) holds the same elements in another shape */
  if (ix->rx < 0 || ix->ri < 0 || ix->ru < 0 || ix->rx > RT_MAXRANK || ix->ri > RT_MAXRANK || ix->ru > RT_MAXRANK)
    return diag_errbuf(why, n, "ranks %d, %d, %d", ix->rx, ix->ri, ix->ru);
  int64_t nx, ni, nu;
  if (count(ix->rx, ix->xs, &nx) || count(ix->ri, ix->is, &ni) || count(ix->ru, ix->us, &nu) || nx != x->nelem || ni != i->nelem || nu != u->nelem)
    return diag_errbuf(why, n, "the map's shapes do not hold the buffers' elements");
  if (ix->ivd < 0 || ix->ivd > ix->ri || ix->ncomp != (ix->ivd < ix->ri ? ix->is[ix->ivd] : 1) || ix->ncomp > RT_MAXRANK)
    return diag_errbuf(why, n, "index_vector_dim %d with %d components", ix->ivd, ix->ncomp);
  for (int k = 0; k < ix->ncomp; k++) if (ix->comp_dim[k] < 0 || ix->comp_dim[k] >= ix->rx) return diag_errbuf(why, n, "component %d starts no dim", k);
  int walked_i = 0, walked_x = 0;
  for (int d = 0; d < ix->rx; d++) {
    if (ix->window[d] < 0 || ix->window[d] > ix->xs[d]) return diag_errbuf(why, n, "window %" PRId64 " along dim %d of %" PRId64, ix->window[d], d, ix->xs[d]);
    int j = ix->x_idim[d];
    if (j >= 0 && (j >= ix->ri || j == ix->ivd || ix->is[j] != ix->xs[d] || ix->window[d] > 1)) return diag_errbuf(why, n, "dim %d is batched wrongly", d);
  }
  for (int a = 0; a < ix->ru; a++) {
    int j = ix->u_idim[a], d = ix->u_xdim[a];
    if ((j >= 0) == (d >= 0)) return diag_errbuf(why, n, "result dim %d walks %s", a, j >= 0 ? "two dims" : "nothing");
    if (j >= 0) {
      if (j >= ix->ri || j == ix->ivd || (walked_i >> j & 1) || ix->us[a] != ix->is[j]) return diag_errbuf(why, n, "result dim %d walks index dim %d wrongly", a, j);
      walked_i |= 1 << j;
    } else {
      if (d >= ix->rx || (walked_x >> d & 1) || ix->us[a] != ix->window[d]) return diag_errbuf(why, n, "result dim %d walks operand dim %d wrongly", a, d);
      walked_x |= 1 << d;
    }
  }
  for (int j = 0; j < ix->ri; j++) if (j != ix->ivd && !(walked_i >> j & 1)) return diag_errbuf(why, n, "no result dim walks index dim %d", j);
  for (int d = 0; d < ix->rx; d++) if (ix->x_idim[d] >= 0 && !(walked_i >> ix->x_idim[d] & 1)) return diag_errbuf(why, n, "dim %d is batched wrongly", d);
  return 0;
}

/*
** hlo_window.c: StableHLO's windowed ops, built from ops carve already
** differentiates, partitions and exports:
**   - convolution as im2col: the input is dilated and padded, each kernel
**     tap takes one strided slice of it, the taps are concatenated along
**     the features and one einsum with the kernel does the rest;
**   - reduce_window (pooling, cumulative sums) as the elementwise
**     reduction of the same taps;
**   - pad's interior elements, slice's strides and reverse by reshapes,
**     slices and concatenations.
** A stride s is taken by splitting a dim of size s * m into [m, s] and
** keeping phase 0, so no op needs a stride of its own.
*/
#include "interp/front/hlo_int.h"

#include <stdio.h>
#include <string.h>

#define MAX_TAPS 4096           /* kernel or window positions of one op */
#define MAX_PARAM 2147483647    /* |a pad, stride, dilation or window size|: what follows from them stays in int64 */

/* the n numbers of what (pads, strides, ...) within +-MAX_PARAM */
static int bounded(hctx *b, const char *what, const int64_t *x, int n) {
  for (int i = 0; i < n; i++)
    if (x[i] > MAX_PARAM || x[i] < -MAX_PARAM)
      return hlo_error(b, b->op, "%s: %s %lld is beyond 2^31; carve reads pads, strides, dilations and windows up to that",
                       b->op->name, what, (long long)x[i]);
  return 0;
}

typedef struct window {
  int n;                        /* spatial (windowed) dims */
  int64_t size[IR_MAXRANK];     /* the kernel's or window's extent */
  int64_t stride[IR_MAXRANK], lo[IR_MAXRANK], hi[IR_MAXRANK];
  int64_t base_dil[IR_MAXRANK], win_dil[IR_MAXRANK];
  int reverse[IR_MAXRANK];
} window;

/* ---- building blocks ---- */

/* x with `size` copies of the scalar v joined to it along dim, after it or before */
static int join_block(hctx *b, const char *name, int x, int v, int dim, int64_t size, int after) {
  ir_attrs bt = hlo_no_attrs();
  bt.to = b->g->vals[x]->shape;
  bt.to.d[dim] = size;
  int blk = hlo_emit(b, hlo_fresh(b, name), IR_BROADCAST, &v, 1, &bt);
  if (blk < 0) return -1;
  int parts[2] = {after ? x : blk, after ? blk : x};
  ir_attrs at = hlo_no_attrs();
  at.dim = dim;
  return hlo_emit(b, hlo_fresh(b, name), IR_CONCAT, parts, 2, &at);
}

static int too_deep(hctx *b, int rank) {
  return hlo_error(b, b->op, "%s: carve builds this op with a tensor of rank %d, above its limit of %d", b->op->name, rank, IR_MAXRANK);
}

/* x's shape with dim split into [m, k] */
static ir_shape split_dim(const ir_shape *s, int dim, int64_t m, int64_t k) {
  ir_shape t = {.rank = s->rank + 1};
  for (int i = 0, j = 0; i < s->rank; i++) {
    if (i == dim) { t.d[j++] = m; t.d[j++] = k; }
    else t.d[j++] = s->d[i];
  }
  return t;
}

/* f - 1 copies of the scalar v between neighbours along dim (f >= 1):
** [a, b, c] -> [a, v, b, v, c] for f = 2 */
static int dilate(hctx *b, const char *name, int x, int dim, int64_t f, int v) {
  ir_shape s = b->g->vals[x]->shape;
  int64_t n = s.d[dim];
  if (f <= 1 || n <= 1) return x;
  if (s.rank + 1 > IR_MAXRANK) return too_deep(b, s.rank + 1);
  ir_shape t = split_dim(&s, dim, n, 1);
  if ((x = hlo_reshape(b, hlo_fresh(b, name), x, &t)) < 0) return -1;
  if ((x = join_block(b, name, x, v, dim + 1, f - 1, 1)) < 0) return -1;
  ir_shape w = s;
  w.d[dim] = n * f;
  if ((x = hlo_reshape(b, hlo_fresh(b, name), x, &w)) < 0) return -1;
  ir_attrs at = hlo_no_attrs();
  at.dim = dim;
  at.start = 0;
  at.end = (n - 1) * f + 1;
  return hlo_emit(b, hlo_fresh(b, name), IR_SLICE, &x, 1, &at);
}

/* x along dim with lo and hi elements of the scalar v before and after (a
** negative count cuts instead) */
static int pad_edges(hctx *b, const char *name, int x, int dim, int64_t lo, int64_t hi, int v) {
  for (int side = 0; side < 2; side++) {
    int64_t e = side ? hi : lo, d = b->g->vals[x]->shape.d[dim];
    if (e == 0) continue;
    if (e < 0) {
      if (-e > d) return hlo_error(b, b->op, "%s: %s padding %lld cuts more than dim %d's %lld", b->op->name, side ? "high" : "low",
                                   (long long)e, dim, (long long)d);
      ir_attrs at = hlo_no_attrs();
      at.dim = dim;
      at.start = side ? 0 : -e;
      at.end = side ? d + e : d;
      x = hlo_emit(b, hlo_fresh(b, name), IR_SLICE, &x, 1, &at);
    } else {
      x = join_block(b, name, x, v, dim, e, side);
    }
    if (x < 0) return -1;
  }
  return x;
}

/* the elements of x along dim in reverse order (one slice each) */
static int reverse_dim(hctx *b, const char *name, int x, int dim) {
  int64_t n = b->g->vals[x]->shape.d[dim];
  if (n <= 1) return x;
  if (n > MAX_TAPS) return hlo_error(b, b->op, "%s: carve reverses dims of at most %d elements (dim %d has %lld)", b->op->name, MAX_TAPS,
                                     dim, (long long)n);
  int *parts = arena_alloc(&b->tmp, sizeof(int) * (size_t)n);
  for (int64_t i = 0; i < n; i++) {
    ir_attrs at = hlo_no_attrs();
    at.dim = dim;
    at.start = n - 1 - i;
    at.end = n - i;
    if ((parts[i] = hlo_emit(b, hlo_fresh(b, name), IR_SLICE, &x, 1, &at)) < 0) return -1;
  }
  ir_attrs at = hlo_no_attrs();
  at.dim = dim;
  return hlo_emit(b, hlo_fresh(b, name), IR_CONCAT, parts, (int)n, &at);
}

static int zero_of(hctx *b, ir_dtype t) { return ir_const_typed(b->g, 0, t); }

/* x[lo:hi:st] on every dim. Each strided dim is grown with zeros (never
** kept) to a multiple of its stride, split into [m, st] and cut to phase 0. */
int hlo_strided_slice(hctx *b, const char *name, int x, const int64_t *lo, const int64_t *hi, const int64_t *st) {
  const ir_value *xv = b->g->vals[x];
  int r = xv->shape.rank;
  int64_t h[IR_MAXRANK], m[IR_MAXRANK];
  int nsplit = 0;
  if (bounded(b, "stride", st, r) < 0) return -1;
  for (int i = 0; i < r; i++) {
    m[i] = hi[i] > lo[i] ? (hi[i] - lo[i] + st[i] - 1) / st[i] : 0;
    h[i] = st[i] > 1 && m[i] > 0 ? lo[i] + (m[i] - 1) * st[i] + 1 : hi[i];
    nsplit += st[i] > 1 && m[i] > 1;
  }
  if ((x = hlo_slice_block(b, nsplit ? hlo_fresh(b, name) : name, x, lo, h)) < 0 || !nsplit) return x;
  if (r + nsplit > IR_MAXRANK) return too_deep(b, r + nsplit);
  ir_shape grown = b->g->vals[x]->shape, split = {.rank = 0}, kept;
  int64_t plo[IR_MAXRANK], phi[IR_MAXRANK];
  for (int i = 0; i < r; i++) {
    int cut = st[i] > 1 && m[i] > 1;
    if (cut && grown.d[i] < m[i] * st[i]) {
      int z = zero_of(b, xv->dtype);
      if ((x = join_block(b, name, x, z, i, m[i] * st[i] - grown.d[i], 1)) < 0) return -1;
      grown.d[i] = m[i] * st[i];
    }
    plo[split.rank] = 0;
    phi[split.rank] = cut ? m[i] : grown.d[i];
    split.d[split.rank++] = cut ? m[i] : grown.d[i];
    if (cut) { plo[split.rank] = 0; phi[split.rank] = 1; split.d[split.rank++] = st[i]; }
  }
  kept.rank = r;
  for (int i = 0; i < r; i++) kept.d[i] = st[i] > 1 && m[i] > 1 ? m[i] : grown.d[i];
  if ((x = hlo_reshape(b, hlo_fresh(b, name), x, &split)) < 0) return -1;
  if ((x = hlo_slice_block(b, hlo_fresh(b, name), x, plo, phi)) < 0) return -1;
  return hlo_reshape(b, name, x, &kept);
}

/* ---- pad ---- */

static int empty_result(hctx *b, const mlir_op *op, const char *name);

/* pad(x, value, low, high, interior): dim by dim, interior elements first
** (dilate), then the edges, as the spec orders them */
static int do_pad(hctx *b, const mlir_op *op, const char *name) {
  int x = hlo_operand(b, op, 0), pv = hlo_operand(b, op, 1);
  if (x < 0 || pv < 0) return -1;
  int r = b->g->vals[x]->shape.rank;
  int64_t lo[IR_MAXRANK], hi[IR_MAXRANK], in[IR_MAXRANK];
  if (hlo_ints(b, op, "low", "edge_padding_low", lo, IR_MAXRANK) != r || hlo_ints(b, op, "high", "edge_padding_high", hi, IR_MAXRANK) != r)
    return b->d->nerrors ? -1 : hlo_error(b, op, "%s: low and high need %d numbers", op->name, r);
  int nin = hlo_attr(op, "interior", "interior_padding") ? hlo_ints(b, op, "interior", "interior_padding", in, IR_MAXRANK) : 0;
  if (nin < 0) return -1;
  if (nin && nin != r) return hlo_error(b, op, "%s: interior needs %d numbers", op->name, r);
  if (b->g->vals[pv]->shape.rank != 0) return hlo_error(b, op, "%s: the padding value must be a scalar", op->name);
  if (bounded(b, "low padding", lo, r) < 0 || bounded(b, "high padding", hi, r) < 0 || bounded(b, "interior padding", in, nin) < 0) return -1;
  for (int i = 0; i < r; i++) {      /* a dim the negative edges cut to nothing: an empty result */
    int64_t d = b->g->vals[x]->shape.d[i], f = nin ? in[i] : 0, n;
    if (f >= 0 && d > 0 && !__builtin_mul_overflow(d - 1, f + 1, &n) && n + 1 + lo[i] + hi[i] == 0) return empty_result(b, op, name);
  }
  for (int i = 0; i < r; i++) {
    int64_t f = nin ? in[i] : 0;
    if (f < 0) return hlo_error(b, op, "%s: interior padding %lld of dim %d is negative", op->name, (long long)f, i);
    if ((x = dilate(b, name, x, i, f + 1, pv)) < 0 || (x = pad_edges(b, name, x, i, lo[i], hi[i], pv)) < 0) return -1;
  }
  return x;
}

/* reverse(x, dims): each listed dim in reverse order */
static int do_reverse(hctx *b, const mlir_op *op, const char *name) {
  int x = hlo_operand(b, op, 0);
  if (x < 0) return -1;
  int64_t dims[IR_MAXRANK];
  int r = b->g->vals[x]->shape.rank, n = hlo_ints(b, op, "dims", "dimensions", dims, IR_MAXRANK);
  if (n < 0) return -1;
  for (int i = 0; i < n; i++) {
    if (dims[i] < 0 || dims[i] >= r) return hlo_error(b, op, "%s: dim %lld is outside rank %d", op->name, (long long)dims[i], r);
    if ((x = reverse_dim(b, name, x, (int)dims[i])) < 0) return -1;
  }
  return x;
}

/* ---- windows ---- */

/* An attribute of n integers, or `dflt` in each when it is absent */
static int window_ints(hctx *b, const mlir_attr *a, const char *what, int64_t *out, int n, int64_t dflt) {
  for (int i = 0; i < n; i++) out[i] = dflt;
  if (!a) return 0;
  int k = hlo_ints_of(a, out, IR_MAXRANK);
  if (k == 1 && n > 1 && a->kind == MLIR_A_DENSE) for (int i = 1; i < n; i++) out[i] = out[0];   /* a splat */
  else if (k != n) return diag_error(b->d, L(b, a->off), "%s: '%s' needs %d integers", b->op->name, what, n);
  return bounded(b, what, out, n);
}

/* padding: [[lo, hi], ...] as a list of lists, a dense literal or a splat */
static int window_pads(hctx *b, const mlir_attr *a, window *w) {
  for (int i = 0; i < w->n; i++) w->lo[i] = w->hi[i] = 0;
  if (!a) return 0;
  const mlir_attr *l = a->kind == MLIR_A_DENSE && a->nitems == 1 ? a->items[0].val : a;
  if (l->kind == MLIR_A_INT) {
    for (int i = 0; i < w->n; i++) w->lo[i] = w->hi[i] = l->i;
    return bounded(b, "padding", w->lo, w->n);
  }
  int ok = (l->kind == MLIR_A_LIST || l->kind == MLIR_A_GROUP) && l->nitems == w->n;
  for (int i = 0; ok && i < w->n; i++) {
    int64_t p[2];
    ok = hlo_ints_of(l->items[i].val, p, 2) == 2;
    if (ok) { w->lo[i] = p[0]; w->hi[i] = p[1]; }
  }
  if (!ok) return diag_error(b->d, L(b, a->off), "%s: padding needs %d pairs [low, high]", b->op->name, w->n);
  return bounded(b, "padding", w->lo, w->n) < 0 || bounded(b, "padding", w->hi, w->n) < 0 ? -1 : 0;
}

/* booleans or 0/1 (window_reversal, reverse) */
static int window_bools(hctx *b, const mlir_attr *a, int *out, int n) {
  for (int i = 0; i < n; i++) out[i] = 0;
  if (!a) return 0;
  const mlir_attr *l = a->kind == MLIR_A_DENSE && a->nitems == 1 ? a->items[0].val : a;
  int ok = (l->kind == MLIR_A_LIST || l->kind == MLIR_A_ARRAY) && l->nitems == n;
  for (int i = 0; ok && i < n; i++) {
    const mlir_attr *v = l->items[i].val;
    ok = v->kind == MLIR_A_BOOL || v->kind == MLIR_A_INT;
    if (ok) out[i] = v->i != 0;
  }
  if (!ok) return diag_error(b->d, L(b, a->off), "%s: window reversal needs %d booleans", b->op->name, n);
  return 0;
}

/* Where the window's taps start: x (dilated and padded to [.., P, ..] on
** the dims of dims[]) and, when some stride is above 1, x grown to a
** multiple of each stride and split into [P / s, s] (phase decomposition),
** so that every tap is a plain slice and a reshape. */
typedef struct taps {
  int x;                        /* the split input */
  int split;                    /* x was split */
  int64_t out[IR_MAXRANK];      /* the result's extent on each window dim */
  ir_shape tap;                 /* one tap's shape */
} taps;

static int taps_prepare(hctx *b, const char *name, int x, const int *dims, const window *w, int padv, taps *t) {
  const ir_value *xv = b->g->vals[x];
  int r = xv->shape.rank, empty = 0;
  t->tap = xv->shape;
  for (int k = 0; k < w->n; k++) {
    int d = dims[k];
    if ((x = dilate(b, name, x, d, w->base_dil[k], padv)) < 0 || (x = pad_edges(b, name, x, d, w->lo[k], w->hi[k], padv)) < 0) return -1;
    int64_t p = b->g->vals[x]->shape.d[d], e = (w->size[k] - 1) * w->win_dil[k] + 1;
    t->out[k] = p >= e ? (p - e) / w->stride[k] + 1 : 0;
    t->tap.d[d] = t->out[k];
    empty |= t->out[k] == 0;
  }
  t->x = x;
  t->split = 0;
  if (empty) return 0;
  int nsplit = 0;
  for (int k = 0; k < w->n; k++) nsplit += w->stride[k] > 1;
  if (!nsplit) return 0;
  if (r + nsplit > IR_MAXRANK) return too_deep(b, r + nsplit);
  ir_shape s = b->g->vals[x]->shape, split = {.rank = 0};
  int64_t grow[IR_MAXRANK] = {0};
  for (int k = 0; k < w->n; k++) {
    int64_t st = w->stride[k], lastq = (w->size[k] - 1) * w->win_dil[k] / st;
    int64_t need = st * (lastq + t->out[k]), have = (s.d[dims[k]] + st - 1) / st * st;
    grow[dims[k]] = (need > have ? need : have) - s.d[dims[k]];
  }
  for (int i = 0; i < r; i++) {
    int k = 0;
    while (k < w->n && dims[k] != i) k++;
    if (grow[i] > 0) {
      if ((x = join_block(b, name, x, padv, i, grow[i], 1)) < 0) return -1;
      s.d[i] += grow[i];
    }
    if (k < w->n && w->stride[k] > 1) { split.d[split.rank++] = s.d[i] / w->stride[k]; split.d[split.rank++] = w->stride[k]; }
    else split.d[split.rank++] = s.d[i];
  }
  if ((t->x = hlo_reshape(b, hlo_fresh(b, name), x, &split)) < 0) return -1;
  t->split = 1;
  return 0;
}

/* The tap at window position pos[]: x[o + s * j] over the result's j on each window dim, o = pos * dilation */
static int tap_at(hctx *b, const char *name, const taps *t, const int *dims, const window *w, const int64_t *pos, int r) {
  const ir_value *xv = b->g->vals[t->x];
  int64_t lo[IR_MAXRANK], hi[IR_MAXRANK];
  for (int i = 0; i < xv->shape.rank; i++) { lo[i] = 0; hi[i] = xv->shape.d[i]; }
  for (int i = 0, j = 0; i < r; i++, j++) {
    int k = 0;
    while (k < w->n && dims[k] != i) k++;
    if (k == w->n) continue;
    int64_t o = pos[k] * w->win_dil[k], st = w->stride[k];
    if (t->split && st > 1) {
      lo[j] = o / st; hi[j] = lo[j] + t->out[k];
      j++;
      lo[j] = o % st; hi[j] = lo[j] + 1;
    } else {
      lo[j] = o; hi[j] = o + t->out[k];
    }
  }
  int x = hlo_slice_block(b, hlo_fresh(b, name), t->x, lo, hi);
  if (x < 0 || !t->split) return x;
  return hlo_reshape(b, hlo_fresh(b, name), x, &t->tap);
}

/* the next window position, row-major; 0 after the last */
static int next_pos(int64_t *pos, const window *w) {
  for (int k = w->n - 1; k >= 0; k--) {
    if (++pos[k] < w->size[k]) return 1;
    pos[k] = 0;
  }
  return 0;
}

/* the previous window position, row-major; 0 before the first */
static int prev_pos(int64_t *pos, const window *w) {
  for (int k = w->n - 1; k >= 0; k--) {
    if (--pos[k] >= 0) return 1;
    pos[k] = w->size[k] - 1;
  }
  return 0;
}

static int64_t count_taps(hctx *b, const window *w) {
  int64_t n = 1;
  for (int k = 0; k < w->n; k++) {
    if (w->size[k] < 1) return hlo_error(b, b->op, "%s: window dim %d has size %lld", b->op->name, k, (long long)w->size[k]);
    if (w->stride[k] < 1 || w->base_dil[k] < 1 || w->win_dil[k] < 1)
      return hlo_error(b, b->op, "%s: strides and dilations must be at least 1 (window dim %d)", b->op->name, k);
    n *= w->size[k];
    if (n > MAX_TAPS)
      return hlo_error(b, b->op, "%s: the window has more than %d positions; carve builds windowed ops tap by tap (write a long cumulative sum as a matmul with a triangular matrix)", b->op->name, MAX_TAPS);
  }
  return n;
}

static int empty_result(hctx *b, const mlir_op *op, const char *name) {
  ir_attrs at = hlo_no_attrs();
  ir_dtype dt;
  if (hlo_result_shape(b, op, &at.to, &dt) < 0) return -1;
  at.dtype = dt;
  at.data = ir_values_new(b->g, dt, 0);
  return hlo_emit(b, name, IR_CONSTANT, NULL, 0, &at);
}

/* ---- reduce_window ---- */

/* reduce_window(x, init) with add, maximum, minimum, and, or: the taps of
** the padded window combined elementwise, then with init unless it is the
** reducer's identity */
static int do_reduce_window(hctx *b, const mlir_op *op, const char *name) {
  if (op->noperands != 2)
    return hlo_error(b, op, "%s: windows over %d operands at once are not supported (one operand and its init)", op->name, op->noperands / 2);
  const char *fn = op->nregions ? hlo_region_reducer(op->regions[0]) : NULL;
  const hlo_redop *ro = fn ? hlo_find_redop(fn) : NULL;
  const mlir_block *bl = op->nregions == 1 && op->regions[0]->nblocks == 1 ? op->regions[0]->blocks[0] : NULL;
  if (!ro && (!bl || bl->nargs != 2))
    return hlo_error(b, op, "%s: the reducer must be a region of two arguments (or add, maximum, minimum, and, or)", op->name);
  int x = hlo_operand(b, op, 0), init = hlo_operand(b, op, 1);
  if (x < 0 || init < 0) return -1;
  const ir_value *xv = b->g->vals[x], *iv = b->g->vals[init];
  if (iv->shape.rank != 0) return hlo_error(b, op, "%s: the init value must be a scalar", op->name);
  window w = {.n = xv->shape.rank};
  int dims[IR_MAXRANK];
  for (int i = 0; i < w.n; i++) dims[i] = i;
  if (window_ints(b, hlo_attr(op, "window_dimensions", NULL), "window_dimensions", w.size, w.n, 1) < 0 ||
      window_ints(b, hlo_attr(op, "window_strides", NULL), "window_strides", w.stride, w.n, 1) < 0 ||
      window_ints(b, hlo_attr(op, "base_dilations", NULL), "base_dilations", w.base_dil, w.n, 1) < 0 ||
      window_ints(b, hlo_attr(op, "window_dilations", NULL), "window_dilations", w.win_dil, w.n, 1) < 0 ||
      window_pads(b, hlo_attr(op, "padding", NULL), &w) < 0)
    return -1;
  if (!hlo_attr(op, "window_dimensions", NULL)) return hlo_error(b, op, "%s: window_dimensions is missing", op->name);
  int64_t n = count_taps(b, &w);
  if (n < 0) return -1;
  taps t;
  if (taps_prepare(b, name, x, dims, &w, init, &t) < 0) return -1;
  for (int k = 0; k < w.n; k++) if (t.out[k] == 0) return empty_result(b, op, name);
  int identity = ro && iv->kind == IR_CONST && (iv->attr.scalar == ro->identity ||
                 (ro->ew == IR_MAXIMUM && !ir_dtype_isfloat(xv->dtype) && iv->attr.scalar <= -2147483648.0) ||
                 (ro->ew == IR_MINIMUM && !ir_dtype_isfloat(xv->dtype) && iv->attr.scalar >= 2147483647.0));
  /* init first (unless it is the identity), then the taps in window order, as XLA adds them */
  int64_t pos[IR_MAXRANK] = {0};
  int acc = identity ? -1 : init;
  int64_t i = 0;
  do {
    int tap = tap_at(b, name, &t, dims, &w, pos, w.n);
    if (tap < 0) return -1;
    i++;
    if (acc < 0) { acc = tap; continue; }
    int args[2] = {acc, tap};
    if (!ro) {                 /* any other region (multiply, a call): applied to whole tensors */
      if (b->run_region(b, op, bl, args, &acc, 1) < 0) return -1;
    } else if ((acc = hlo_emit(b, i == n ? name : hlo_fresh(b, name), ro->ew, args, 2, NULL)) < 0) {
      return -1;
    }
  } while (next_pos(pos, &w));
  return acc;
}

/* ---- convolution ---- */

typedef struct convdims {
  int n;                                   /* spatial dims */
  int in_b, in_f, in_s[IR_MAXRANK];        /* the input's batch, feature and spatial dims */
  int k_i, k_o, k_s[IR_MAXRANK];           /* the kernel's input and output features, spatial dims */
  int out_b, out_f, out_s[IR_MAXRANK];
} convdims;

/* one side of [b, 0, 1, f]: the positions of the letters and of each spatial index */
static int conv_side(const mlir_attr *l, const char *letters, int *first, int *second, int *sp, int *n) {
  if (!l || l->kind != MLIR_A_LIST || l->nitems > IR_MAXRANK) return -1;
  *first = *second = -1;
  int seen = 0;
  for (int i = 0; i < l->nitems; i++) {
    const mlir_attr *v = l->items[i].val;
    if (v->kind == MLIR_A_WORD && v->text[0] == letters[0] && !v->text[1] && *first < 0) *first = i;
    else if (v->kind == MLIR_A_WORD && v->text[0] == letters[1] && !v->text[1] && *second < 0) *second = i;
    else if (v->kind == MLIR_A_INT && v->i >= 0 && v->i < l->nitems - 2 && !(seen >> v->i & 1)) { sp[v->i] = i; seen |= 1 << v->i; }
    else return -1;
  }
  if (*first < 0 || *second < 0 || seen != (1 << (l->nitems - 2)) - 1) return -1;
  if (*n >= 0 && *n != l->nitems - 2) return -1;
  *n = l->nitems - 2;
  return 0;
}

/* one dim of #stablehlo.conv<raw ...> */
static int raw_dim(const mlir_attr *dn, const char *key, int *out, int many, int *n) {
  int64_t v[IR_MAXRANK];
  int k = hlo_ints_of(mlir_attr_get(dn, key), v, IR_MAXRANK);
  if (k < 0 || (!many && k != 1)) return -1;
  if (many) {
    if (*n >= 0 && *n != k) return -1;
    *n = k;
  }
  for (int i = 0; i < k; i++) out[i] = (int)v[i];
  return 0;
}

static int conv_dims(hctx *b, const mlir_op *op, convdims *c) {
  const mlir_attr *dn = hlo_attr(op, "dim_numbers", "dimension_numbers");
  if (!dn) return hlo_error(b, op, "%s: dimension_numbers is missing", op->name);
  const mlir_attr *cross = dn;
  if (dn->kind == MLIR_A_DIALECT && dn->nitems == 1) cross = dn->items[0].val;
  c->n = -1;
  if (cross->kind == MLIR_A_CROSS && cross->nitems == 2 && cross->out) {
    if (conv_side(cross->items[0].val, "bf", &c->in_b, &c->in_f, c->in_s, &c->n) == 0 &&
        conv_side(cross->items[1].val, "io", &c->k_i, &c->k_o, c->k_s, &c->n) == 0 &&
        conv_side(cross->out, "bf", &c->out_b, &c->out_f, c->out_s, &c->n) == 0)
      return 0;
  } else if (mlir_attr_get(dn, "input_batch_dimension")) {
    if (raw_dim(dn, "input_batch_dimension", &c->in_b, 0, &c->n) == 0 && raw_dim(dn, "input_feature_dimension", &c->in_f, 0, &c->n) == 0 &&
        raw_dim(dn, "input_spatial_dimensions", c->in_s, 1, &c->n) == 0 &&
        raw_dim(dn, "kernel_input_feature_dimension", &c->k_i, 0, &c->n) == 0 &&
        raw_dim(dn, "kernel_output_feature_dimension", &c->k_o, 0, &c->n) == 0 &&
        raw_dim(dn, "kernel_spatial_dimensions", c->k_s, 1, &c->n) == 0 &&
        raw_dim(dn, "output_batch_dimension", &c->out_b, 0, &c->n) == 0 &&
        raw_dim(dn, "output_feature_dimension", &c->out_f, 0, &c->n) == 0 &&
        raw_dim(dn, "output_spatial_dimensions", c->out_s, 1, &c->n) == 0 && c->n + 2 <= IR_MAXRANK)
      return 0;
  }
  return diag_error(b->d, L(b, dn->off), "%s: expected dimension numbers like [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]", op->name);
}

/* x transposed so that its dim perm[i] comes i-th (nothing when in order) */
static int permute(hctx *b, const char *name, int x, const int *perm, int r) {
  ir_attrs at = hlo_no_attrs();
  int id = 1;
  at.ndims = r;
  for (int i = 0; i < r; i++) { at.dims[i] = perm[i]; id &= perm[i] == i; }
  if (id) return x;
  return hlo_emit(b, name, IR_TRANSPOSE, &x, 1, &at);
}

/* convolution(lhs, rhs): im2col. The input goes to [batch, spatial..,
** features] and the kernel to [spatial.., in, out]; the input is dilated
** and padded with zeros; the taps (one per kernel position, row-major)
** are concatenated along the features, so that the kernel reshaped to
** [taps * in, out] multiplies them in one einsum. feature_group_count G
** splits the features into G groups, each with its own slice of the
** kernel's outputs: [.., taps, G, in / G] x [taps, in / G, G, out / G]. */
static int do_convolution(hctx *b, const mlir_op *op, const char *name) {
  if (op->noperands != 2) return hlo_error(b, op, "%s takes 2 operands (input, kernel), given %d", op->name, op->noperands);
  int xk[2] = {hlo_operand(b, op, 0), hlo_operand(b, op, 1)};
  if (xk[0] < 0 || xk[1] < 0 || hlo_widen_operands(b, op, xk, 2) < 0) return -1;
  int x = xk[0], k = xk[1];
  convdims c;
  if (conv_dims(b, op, &c) < 0) return -1;
  const ir_value *xv = b->g->vals[x], *kv = b->g->vals[k];
  int r = c.n + 2;
  if (xv->shape.rank != r || kv->shape.rank != r)
    return hlo_error(b, op, "%s: the dimension numbers are for rank %d; the input has rank %d and the kernel %d", op->name, r,
                     xv->shape.rank, kv->shape.rank);
  int64_t g = 1, bg = 1;
  const mlir_attr *ga = hlo_attr(op, "feature_group_count", NULL), *ba = hlo_attr(op, "batch_group_count", NULL);
  if ((ga && hlo_ints_of(ga, &g, 1) != 1) || (ba && hlo_ints_of(ba, &bg, 1) != 1))
    return hlo_error(b, op, "%s: feature_group_count and batch_group_count must be integers", op->name);
  if (bg != 1)
    return hlo_error(b, op, "%s: batch_group_count %lld is not supported (it appears in the gradients of convolutions; export the "
                     "forward program and let carve differentiate it)", op->name, (long long)bg);
  int64_t cin = xv->shape.d[c.in_f], kin = kv->shape.d[c.k_i], kout = kv->shape.d[c.k_o];
  if (g < 1 || cin % g || kout % g || kin * g != cin)
    return hlo_error(b, op, "%s: %lld input features in %lld groups do not match the kernel's %lld inputs and %lld outputs", op->name,
                     (long long)cin, (long long)g, (long long)kin, (long long)kout);
  if (xv->dtype != kv->dtype)
    return hlo_error(b, op, "%s: the input is %s and the kernel %s; convert one of them", op->name, ir_dtype_name(xv->dtype),
                     ir_dtype_name(kv->dtype));

  /* the window, from the pretty form's window = {...} or the generic attributes */
  window w = {.n = c.n};
  const mlir_attr *wd = hlo_attr(op, "window", NULL);
  const mlir_attr *a_st = wd ? mlir_attr_get(wd, "stride") : hlo_attr(op, "window_strides", NULL);
  const mlir_attr *a_pad = wd ? mlir_attr_get(wd, "pad") : hlo_attr(op, "padding", NULL);
  const mlir_attr *a_ld = wd ? mlir_attr_get(wd, "lhs_dilate") : hlo_attr(op, "lhs_dilation", NULL);
  const mlir_attr *a_rd = wd ? mlir_attr_get(wd, "rhs_dilate") : hlo_attr(op, "rhs_dilation", NULL);
  const mlir_attr *a_rev = wd ? mlir_attr_get(wd, "reverse") : hlo_attr(op, "window_reversal", NULL);
  if (window_ints(b, a_st, "window_strides", w.stride, w.n, 1) < 0 || window_pads(b, a_pad, &w) < 0 ||
      window_ints(b, a_ld, "lhs_dilation", w.base_dil, w.n, 1) < 0 || window_ints(b, a_rd, "rhs_dilation", w.win_dil, w.n, 1) < 0 ||
      window_bools(b, a_rev, w.reverse, w.n) < 0)
    return -1;
  for (int i = 0; i < c.n; i++) w.size[i] = kv->shape.d[c.k_s[i]];
  int64_t ntaps = count_taps(b, &w);
  if (ntaps < 0) return -1;

  /* input to [batch, spatial.., features], kernel to [spatial.., in, out] */
  int px[IR_MAXRANK], pk[IR_MAXRANK], dims[IR_MAXRANK];
  px[0] = c.in_b;
  px[r - 1] = c.in_f;
  for (int i = 0; i < c.n; i++) { px[1 + i] = c.in_s[i]; pk[i] = c.k_s[i]; dims[i] = 1 + i; }
  pk[r - 2] = c.k_i;
  pk[r - 1] = c.k_o;
  if ((x = permute(b, hlo_fresh(b, name), x, px, r)) < 0 || (k = permute(b, hlo_fresh(b, name), k, pk, r)) < 0) return -1;
  for (int i = 0; i < c.n; i++)
    if (w.reverse[i] && (k = reverse_dim(b, name, k, i)) < 0) return -1;

  taps t;
  if (taps_prepare(b, name, x, dims, &w, zero_of(b, xv->dtype), &t) < 0) return -1;
  for (int i = 0; i < c.n; i++) if (t.out[i] == 0) return empty_result(b, op, name);
  int *parts = arena_alloc(&b->tmp, sizeof(int) * (size_t)ntaps);
  int64_t pos[IR_MAXRANK] = {0}, i = 0;
  do {
    if ((parts[i++] = tap_at(b, name, &t, dims, &w, pos, r)) < 0) return -1;
  } while (next_pos(pos, &w));
  int col = parts[0];
  if (ntaps > 1) {
    ir_attrs at = hlo_no_attrs();
    at.dim = r - 1;
    if ((col = hlo_emit(b, hlo_fresh(b, name), IR_CONCAT, parts, (int)ntaps, &at)) < 0) return -1;
  }

  /* the contraction: letters a.. for batch and spatial dims */
  char spec[64], lead[IR_MAXRANK + 1];
  for (int d = 0; d < r - 1; d++) lead[d] = (char)('a' + d);
  lead[r - 1] = 0;
  ir_shape cs = t.tap, ks = {.rank = 0};
  int y;
  if (g == 1) {
    cs.d[r - 1] = ntaps * cin;
    ks.rank = 2; ks.d[0] = ntaps * cin; ks.d[1] = kout;
    snprintf(spec, sizeof spec, "%sx,xy->%sy", lead, lead);
  } else {
    if (r + 2 > IR_MAXRANK) return too_deep(b, r + 2);
    cs.rank = r + 2;
    cs.d[r - 1] = ntaps; cs.d[r] = g; cs.d[r + 1] = kin;
    ks.rank = 4; ks.d[0] = ntaps; ks.d[1] = kin; ks.d[2] = g; ks.d[3] = kout / g;
    snprintf(spec, sizeof spec, "%stgi,tigo->%sgo", lead, lead);
  }
  if ((col = hlo_reshape(b, hlo_fresh(b, name), col, &cs)) < 0 || (k = hlo_reshape(b, hlo_fresh(b, name), k, &ks)) < 0) return -1;
  ir_attrs at = hlo_no_attrs();
  at.spec = ir_intern(b->g, spec);
  int args[2] = {col, k};
  int perm_out[IR_MAXRANK], canon = 1;
  perm_out[c.out_b] = 0;
  perm_out[c.out_f] = r - 1;
  for (int d = 0; d < c.n; d++) perm_out[c.out_s[d]] = 1 + d;
  for (int d = 0; d < r; d++) canon &= perm_out[d] == d;
  if ((y = hlo_emit(b, canon && g == 1 ? name : hlo_fresh(b, name), IR_EINSUM, args, 2, &at)) < 0) return -1;
  if (g > 1) {
    ir_shape ys = t.tap;
    ys.d[r - 1] = kout;
    if ((y = hlo_reshape(b, canon ? name : hlo_fresh(b, name), y, &ys)) < 0) return -1;
  }
  return permute(b, name, y, perm_out, r);
}

/* ---- select_and_scatter ---- */

/* y (a tap's [out..] values) put back where tap_at took them from in an
** operand of shape xs: dilated by the strides, moved to the tap's offset
** in the padded operand, the padding cut away (joins before cuts, so that
** no cut is longer than what it cuts) */
static int untap(hctx *b, const char *name, int y, const int *dims, const window *w, const int64_t *pos, const ir_shape *xs, int zero) {
  for (int k = 0; k < w->n; k++) {
    int d = dims[k];
    if ((y = dilate(b, name, y, d, w->stride[k], zero)) < 0) return -1;
    int64_t len = b->g->vals[y]->shape.d[d], off = pos[k] * w->win_dil[k];
    int64_t before = off - w->lo[k], after = xs->d[d] - before - len;
    if (after > 0 && (y = pad_edges(b, name, y, d, 0, after, zero)) < 0) return -1;
    if (before > 0 && (y = pad_edges(b, name, y, d, before, 0, zero)) < 0) return -1;
    if (before < 0 && (y = pad_edges(b, name, y, d, before, 0, zero)) < 0) return -1;
    if (after < 0 && (y = pad_edges(b, name, y, d, 0, after, zero)) < 0) return -1;
  }
  return y;
}




/* select_and_scatter(x, source, init) (the gradient of a max pool): in
** each window of x the element the select comparison keeps (scanning the
** window in order, a later element replaces the kept one when
** select(kept, later) is false; padding is never selected, as XLA does)
** receives the window's source value; the result is init plus what each
** element received (scatter: add). Built from the taps of x: the kept
** value and tap index per window, then each tap's share put back. */
static int do_select_and_scatter(hctx *b, const mlir_op *op, const char *name) {
  static const char *const dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE", NULL};
  static const char *const flip[] = {"eq", "ne", "gt", "ge", "lt", "le"};   /* a cmp b = b flip(cmp) a */
  static const char *const low[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  if (op->noperands != 3 || op->nregions != 2)
    return hlo_error(b, op, "%s takes an operand, a source and an init, and a select and a scatter region", op->name);
  int x = hlo_operand(b, op, 0), src = hlo_operand(b, op, 1), init = hlo_operand(b, op, 2);
  if (x < 0 || src < 0 || init < 0) return -1;
  int swapped = 0;
  const mlir_op *cmp = hlo_region_op(op->regions[0], &swapped);
  const char *dir = cmp && !strcmp(hlo_short_name(cmp->name), "compare") ? hlo_op_word(cmp, dirs, "comparison_direction") : NULL;
  const char *fn = hlo_region_reducer(op->regions[1]);
  if (!dir) return hlo_error(b, op, "%s: the select region must be one comparison of its two arguments (GE for a max pool)", op->name);
  if (!fn || strcmp(fn, "add")) return hlo_error(b, op, "%s: the scatter region must add its two arguments", op->name);
  int di = 0;
  while (strcmp(dirs[di], dir)) di++;
  const char *keep_dir = swapped ? flip[di] : low[di];
  const ir_value *xv = b->g->vals[x], *sv = b->g->vals[src], *iv = b->g->vals[init];
  if (iv->shape.rank != 0 || iv->dtype != sv->dtype) return hlo_error(b, op, "%s: the init must be a scalar of the source's type", op->name);
  window w = {.n = xv->shape.rank};
  int dims[IR_MAXRANK];
  for (int i = 0; i < w.n; i++) { dims[i] = i; w.base_dil[i] = w.win_dil[i] = 1; }
  if (window_ints(b, hlo_attr(op, "window_dimensions", NULL), "window_dimensions", w.size, w.n, 1) < 0 ||
      window_ints(b, hlo_attr(op, "window_strides", NULL), "window_strides", w.stride, w.n, 1) < 0 ||
      window_pads(b, hlo_attr(op, "padding", NULL), &w) < 0)
    return -1;
  int64_t n = count_taps(b, &w);
  if (n < 0) return -1;
  taps t, tm;
  if (taps_prepare(b, name, x, dims, &w, zero_of(b, xv->dtype), &t) < 0) return -1;
  for (int k = 0; k < w.n; k++)
    if (t.out[k] != sv->shape.d[k] || sv->shape.rank != w.n)
      return hlo_error(b, op, "%s: the source is %s; the windows of the operand make %lld along dim %d", op->name,
                       ir_shape_str(&b->tmp, &sv->shape), (long long)t.out[k], k);
  int padded = 0;
  for (int k = 0; k < w.n; k++) padded |= w.lo[k] != 0 || w.hi[k] != 0;
  if (padded) {       /* where the taps read padding: a tap of "true" padded with "false" */
    ir_attrs bt = hlo_no_attrs();
    bt.to = xv->shape;
    int one = ir_const_typed(b->g, 1, IR_I1);
    int m = hlo_emit(b, hlo_fresh(b, name), IR_BROADCAST, &one, 1, &bt);
    if (m < 0 || taps_prepare(b, name, m, dims, &w, ir_const_typed(b->g, 0, IR_I1), &tm) < 0) return -1;
  }
  /* the kept value, its tap and (with padding) whether any was in the operand, per window */
  int64_t pos[IR_MAXRANK] = {0};
  int kept = -1, which = -1, any = -1;
  for (int64_t i = 0; i < n; i++, next_pos(pos, &w)) {
    int v = tap_at(b, name, &t, dims, &w, pos, w.n), ok = padded ? tap_at(b, name, &tm, dims, &w, pos, w.n) : -1;
    if (v < 0 || (padded && ok < 0)) return -1;
    if (i == 0) {
      ir_attrs bt = hlo_no_attrs();
      bt.to = t.tap;
      int zero = ir_const_typed(b->g, 0, IR_I32);
      if ((which = hlo_emit(b, hlo_fresh(b, name), IR_BROADCAST, &zero, 1, &bt)) < 0) return -1;
      kept = v;
      any = ok;
      continue;
    }
    int stay = hlo_cmp(b, name, keep_dir, kept, v);
    int take = stay < 0 ? -1 : hlo_emit(b, hlo_fresh(b, name), IR_NOT, &stay, 1, NULL);
    if (take < 0) return -1;
    if (padded) {
      int none = hlo_emit(b, hlo_fresh(b, name), IR_NOT, &any, 1, NULL);
      if (none < 0 || (take = hlo_ew(b, name, IR_AND, ok, hlo_ew(b, name, IR_OR, none, take))) < 0) return -1;
      if ((any = hlo_ew(b, name, IR_OR, any, ok)) < 0) return -1;
    }
    if ((kept = hlo_sel(b, name, take, v, kept)) < 0 ||
        (which = hlo_sel(b, name, take, ir_const_typed(b->g, (double)i, IR_I32), which)) < 0) return -1;
  }
  /* each tap's share of the source, put back, added to init; the taps in
     reverse order, so that an element receives from its windows in their
     order, as XLA adds them */
  ir_attrs bt = hlo_no_attrs();
  bt.to = xv->shape;
  int acc = hlo_emit(b, hlo_fresh(b, name), IR_BROADCAST, &init, 1, &bt), zero = zero_of(b, sv->dtype);
  if (acc < 0) return -1;
  for (int k = 0; k < w.n; k++) pos[k] = w.size[k] - 1;
  for (int64_t i = n - 1; i >= 0; i--, prev_pos(pos, &w)) {
    int hit = hlo_cmp(b, name, "eq", which, ir_const_typed(b->g, (double)i, IR_I32));
    if (hit >= 0 && padded) hit = hlo_ew(b, name, IR_AND, hit, any);
    int share = hit < 0 ? -1 : hlo_sel(b, name, hit, src, zero);
    int back = share < 0 ? -1 : untap(b, name, share, dims, &w, pos, &xv->shape, zero);
    if (back < 0) return -1;
    if ((acc = hlo_emit(b, i == 0 ? name : hlo_fresh(b, name), IR_ADD, (int[]){acc, back}, 2, NULL)) < 0) return -1;
  }
  return acc;
}

int hlo_window_op(hctx *b, const mlir_op *op, const char *sn, const char *name) {
  if (!strcmp(sn, "pad")) return do_pad(b, op, name);
  if (!strcmp(sn, "reverse")) return do_reverse(b, op, name);
  if (!strcmp(sn, "convolution")) return do_convolution(b, op, name);
  if (!strcmp(sn, "reduce_window")) return do_reduce_window(b, op, name);
  if (!strcmp(sn, "select_and_scatter")) return do_select_and_scatter(b, op, name);
  return -2;
}

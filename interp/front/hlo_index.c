/*
** hlo_index.c: StableHLO's lookups by index. A gather of whole rows of a
** table is carve's embedding, and the scatter-add of rows into a table its
** gradient; a gather of single points along some dims (jnp.take_along_axis,
** optax's cross-entropy with integer labels) becomes a one-hot selection:
** a mask from comparing an iota with the (clamped) indices, select, and a
** sum over the looked-up dims, which differentiates and splits as the rest.
** Any other gather, and dynamic slices at starts computed at run time, read
** through a one-hot of each element's flat place (onehot_take); any other
** scatter applies its updates one by one through the same places.
*/
#include "interp/front/hlo_int.h"

#include <math.h>
#include <string.h>

/* a gather's dimension numbers (lists that are absent are empty) */
typedef struct gdims {
  const mlir_attr *dn;
  int64_t off[IR_MAXRANK], col[IR_MAXRANK], map[IR_MAXRANK], sizes[IR_MAXRANK], obd[IR_MAXRANK], sbd[IR_MAXRANK], ivd;
  int noff, ncol, nmap, nobd, nsbd, nsz;
} gdims;

static int list_of(const mlir_attr *a, int64_t *v) {
  int n = hlo_ints_of(a, v, IR_MAXRANK);
  return n < 0 ? 0 : n;
}

static void gather_dims(const mlir_op *op, gdims *g) {
  g->dn = hlo_attr(op, "dimension_numbers", NULL);
  g->noff = list_of(mlir_attr_get(g->dn, "offset_dims"), g->off);
  g->ncol = list_of(mlir_attr_get(g->dn, "collapsed_slice_dims"), g->col);
  g->nmap = list_of(mlir_attr_get(g->dn, "start_index_map"), g->map);
  g->nobd = list_of(mlir_attr_get(g->dn, "operand_batching_dims"), g->obd);
  g->nsbd = list_of(mlir_attr_get(g->dn, "start_indices_batching_dims"), g->sbd);
  g->nsz = list_of(hlo_attr(op, "slice_sizes", NULL), g->sizes);
  g->ivd = 0;                  /* the spec's default */
  hlo_ints_of(mlir_attr_get(g->dn, "index_vector_dim"), &g->ivd, 1);
}

static int has(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++) if (v[i] == x) return 1;
  return 0;
}

static int index_of(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++) if (v[i] == x) return i;
  return -1;
}

/* x[lo:hi] along dim 0 */
static int slice0(hctx *b, int x, int64_t lo, int64_t hi) {
  ir_attrs at = hlo_no_attrs();
  at.dim = 0;
  at.start = lo;
  at.end = hi;
  return hlo_emit(b, hlo_fresh(b, "scatter"), IR_SLICE, &x, 1, &at);
}

/* Whether the constant indices ix all lie in [0, n): 1 yes, 0 no, -1 not
** known when carve reads the program (data). The embedding paths clamp
** (gather) or drop (scatter) only indices known to be outside; indices fed
** as data are checked by the kernels, which stop with the index's place. */
static int known_in_range(hctx *b, int ix, int64_t n) {
  const ir_value *v = b->g->vals[ix];
  while (v->kind == IR_OP && (v->op == IR_RESHAPE || v->op == IR_BROADCAST || v->op == IR_CONVERT)) v = b->g->vals[v->args[0]];
  if (v->kind == IR_CONST) return v->attr.scalar >= 0 && v->attr.scalar < (double)n;
  if (v->kind != IR_OP || v->op != IR_CONSTANT) return -1;
  for (int64_t k = 0, m = ir_nelem(&v->attr.to); k < m; k++) {
    double x = ir_value_at(v, k);
    if (x < 0 || x >= (double)n) return 0;
  }
  return 1;
}

/* 0 <= ix < n, and ix clamped into [0, n - 1] */
static int in_range(hctx *b, int ix, int64_t n) {
  ir_dtype t = b->g->vals[ix]->dtype;
  return hlo_ew(b, "index", IR_AND, hlo_cmp(b, "index", "ge", ix, ir_const_typed(b->g, 0, t)), hlo_cmp(b, "index", "lt", ix, ir_const_typed(b->g, (double)n, t)));
}

static int clamp_to(hctx *b, int ix, int64_t n) {
  ir_dtype t = b->g->vals[ix]->dtype;
  return hlo_ew(b, "index", IR_MINIMUM, hlo_ew(b, "index", IR_MAXIMUM, ix, ir_const_typed(b->g, 0, t)), ir_const_typed(b->g, (double)(n - 1), t));
}

static int emit_t(hctx *b, const char *name, int x, const int *perm, int r) {
  ir_attrs at = hlo_no_attrs();
  int id = 1;
  at.ndims = r;
  for (int i = 0; i < r; i++) { at.dims[i] = perm[i]; id &= perm[i] == i; }
  return id ? x : hlo_emit(b, hlo_fresh(b, name), IR_TRANSPOSE, &x, 1, &at);
}

/* A gather of single points along the dims of start_index_map (slice size
** 1, collapsed), batched with the index (operand_batching_dims) or not,
** whole along the other dims: jnp.take_along_axis. With Bi the index's
** batch dims, G the looked-up dims and F the whole ones, the operand
** goes to [Bi (its batching dims, else 1), G, F], a mask [Bi, G] says
** where each looked-up index (clamped into range, as the spec says)
** points, and a select and a sum over G leave [Bi, F], transposed to the
** result's order. */
#define MAX_PAIRS ((int64_t)1 << 26)

/* The lowest value of type t (max's identity) */
static int lowest_of(hctx *b, ir_dtype t) {
  if (ir_dtype_isfloat(t)) return ir_const_typed(b->g, -INFINITY, t);
  if (t == IR_I1 || ir_dtype_isunsigned(t)) return ir_const_typed(b->g, 0, t);
  double lo = t == IR_I8 ? -128.0 : t == IR_I16 ? -32768.0 : t == IR_I32 ? -2147483648.0 : -9223372036854775808.0;
  return ir_const_typed(b->g, lo, t);
}

/* src's elements at the flat places `flat` (an integer tensor of shape s):
** a one-hot [places, src] and, per place, the max of the element it picks
** and the lowest value elsewhere, so that the element comes back to the
** bit (-0 and NaN too) */
static int onehot_take(hctx *b, const char *name, int src, int flat, const ir_shape *s) {
  const ir_value *sv = b->g->vals[src];
  int64_t n = ir_nelem(&sv->shape), m = ir_nelem(s);
  if (n * m > MAX_PAIRS) return hlo_error(b, b->op, "%s: %lld places in %lld elements are too many for carve's one-hot lookup (at most 2^26 pairs)",
                                          b->op->name, (long long)m, (long long)n);
  ir_shape col = {.rank = 2, .d = {m, 1}}, row = {.rank = 2, .d = {1, n}};
  ir_attrs io = hlo_no_attrs();
  io.to = row;
  io.dim = 1;
  io.dtype = b->g->vals[flat]->dtype;
  int q = hlo_emit(b, hlo_fresh(b, name), IR_IOTA, NULL, 0, &io);
  int hit = hlo_cmp(b, name, "eq", hlo_reshape(b, hlo_fresh(b, name), flat, &col), q);
  int y = hlo_sel(b, name, hit, hlo_reshape(b, hlo_fresh(b, name), src, &row), lowest_of(b, sv->dtype));
  ir_attrs mx = hlo_no_attrs();
  mx.ndims = 1;
  mx.dims[0] = 1;
  if (y < 0 || (y = hlo_emit(b, hlo_fresh(b, name), IR_MAX, &y, 1, &mx)) < 0) return -1;
  return hlo_reshape(b, name, y, s);
}

/* Any other gather: for every result element, its source's flat place in
** the operand (the start from the index, clamped so that the slice fits,
** as the spec says, plus its offset in the slice; batched dims from the
** result's place), a one-hot [result, operand] of the places, select and
** a sum over the operand. Costs |result| x |operand|: for small gathers. */
static int general_gather(hctx *b, const mlir_op *op, const char *name, int x, int ix, const gdims *g) {
  const ir_value *xv = b->g->vals[x], *iv = b->g->vals[ix];
  ir_shape rs;
  ir_dtype rdt;
  if (hlo_result_shape(b, op, &rs, &rdt) < 0) return -1;
  int r = xv->shape.rank, ir = iv->shape.rank, rr = rs.rank, ivd = (int)g->ivd;
  int comps = ivd == ir ? 1 : ivd >= 0 && ivd < ir ? (int)iv->shape.d[ivd] : -1;
  int ok = g->dn && g->nsz == r && comps == g->nmap && g->nobd == g->nsbd && ir_dtype_isint(iv->dtype) &&
           rr == g->noff + (ivd == ir ? ir : ir - 1);
  for (int d = 0; ok && d < r; d++) ok = g->sizes[d] >= 0 && g->sizes[d] <= xv->shape.d[d];
  int64_t nr = ir_nelem(&rs), nx = ir_nelem(&xv->shape);
  if (!ok) return hlo_error(b, op, "%s: this gather's dimension numbers do not fit its operands", op->name);
  if (nr * nx > MAX_PAIRS)
    return hlo_error(b, op, "%s: a gather of %lld elements from %lld is too large for carve's one-hot gather (at most 2^26 pairs); "
                     "carve gathers whole rows of a table (an embedding) and points along a dim at any size", op->name,
                     (long long)nr, (long long)nx);
  int odim_of[IR_MAXRANK], bdim_of[IR_MAXRANK];      /* operand dim -> result offset dim; result batch dim -> index dim */
  for (int d = 0, w = 0; d < r; d++) odim_of[d] = has(g->col, g->ncol, d) || has(g->obd, g->nobd, d) ? -1 : (int)g->off[w++];
  for (int u = 0, s = 0; u < rr; u++) if (!has(g->off, g->noff, u)) { int j = s++; bdim_of[u] = ivd < ir && j >= ivd ? j + 1 : j; } else bdim_of[u] = -1;
  int64_t st[IR_MAXRANK], stride = 1;
  for (int d = r - 1; d >= 0; d--) { st[d] = stride; stride *= xv->shape.d[d]; }
  int flat = -1;
  ir_shape bshape = {.rank = rr};
  for (int u = 0; u < rr; u++) bshape.d[u] = bdim_of[u] >= 0 ? iv->shape.d[bdim_of[u]] : 1;
  for (int d = 0; d < r; d++) {
    int p = -1, k = index_of(g->map, g->nmap, d), q = index_of(g->obd, g->nobd, d);
    if (k >= 0) {                             /* component k of the index, clamped so that the slice fits */
      int c = ix;
      if (ivd < ir) {
        ir_attrs at = hlo_no_attrs();
        at.dim = ivd; at.start = k; at.end = k + 1;
        if ((c = hlo_emit(b, hlo_fresh(b, name), IR_SLICE, &ix, 1, &at)) < 0) return -1;
      }
      if ((c = hlo_reshape(b, hlo_fresh(b, name), c, &bshape)) < 0) return -1;
      p = clamp_to(b, c, xv->shape.d[d] - g->sizes[d] + 1);
    } else if (q >= 0) {                      /* batched with the index: the result's place along that dim */
      ir_attrs io = hlo_no_attrs();
      io.to = bshape;
      io.dtype = iv->dtype;
      io.dim = -1;
      for (int u = 0; u < rr; u++) if (bdim_of[u] == g->sbd[q]) io.dim = u;
      if (io.dim < 0 || (p = hlo_emit(b, hlo_fresh(b, name), IR_IOTA, NULL, 0, &io)) < 0) return -1;
    }
    if (odim_of[d] >= 0) {                    /* plus the offset in the slice */
      ir_attrs io = hlo_no_attrs();
      io.to.rank = rr;
      for (int u = 0; u < rr; u++) io.to.d[u] = u == odim_of[d] ? rs.d[u] : 1;
      io.dim = odim_of[d];
      io.dtype = iv->dtype;
      int w = hlo_emit(b, hlo_fresh(b, name), IR_IOTA, NULL, 0, &io);
      p = p < 0 ? w : hlo_ew(b, "index", IR_ADD, p, w);
    }
    if (p < 0) continue;                      /* a collapsed dim of size 1 read at 0 */
    int term = hlo_ew(b, "index", IR_MUL, p, ir_const_typed(b->g, (double)st[d], iv->dtype));
    flat = flat < 0 ? term : hlo_ew(b, "index", IR_ADD, flat, term);
    if (flat < 0) return -1;
  }
  if (flat < 0) flat = ir_const_typed(b->g, 0, iv->dtype);
  ir_attrs bt = hlo_no_attrs();
  bt.to = rs;
  if ((flat = hlo_emit(b, hlo_fresh(b, name), IR_BROADCAST, &flat, 1, &bt)) < 0) return -1;
  return onehot_take(b, name, x, flat, &rs);
}

/* ---- dynamic slices at indices computed at run time ---- */

/* start, clamped into [0, n - size] as the spec says, as an i64 scalar */
static int clamped_start(hctx *b, int s, int64_t n, int64_t size) {
  ir_attrs cv = hlo_no_attrs();
  cv.dtype = IR_I64;
  int x = b->g->vals[s]->dtype == IR_I64 ? s : hlo_emit(b, hlo_fresh(b, "start"), IR_CONVERT, &s, 1, &cv);
  return x < 0 ? -1 : clamp_to(b, x, n - size + 1);
}

/* an iota of shape s along dim d, i64 */
static int iota_i64(hctx *b, const ir_shape *s, int d) {
  ir_attrs io = hlo_no_attrs();
  io.to = *s;
  io.dim = d;
  io.dtype = IR_I64;
  return hlo_emit(b, hlo_fresh(b, "start"), IR_IOTA, NULL, 0, &io);
}

/* dynamic_slice(x, starts, sizes = part): element p of the result is
** x[clamped start + p], read by onehot_take */
int hlo_dynamic_slice(hctx *b, const char *name, int x, const int *starts, const ir_shape *part) {
  const ir_value *xv = b->g->vals[x];
  int flat = -1;
  int64_t stride = 1;
  for (int d = xv->shape.rank - 1; d >= 0; stride *= xv->shape.d[d], d--) {
    int p = hlo_ew(b, name, IR_ADD, iota_i64(b, part, d), clamped_start(b, starts[d], xv->shape.d[d], part->d[d]));
    int t = hlo_ew(b, name, IR_MUL, p, ir_const_typed(b->g, (double)stride, IR_I64));
    if ((flat = flat < 0 ? t : hlo_ew(b, name, IR_ADD, flat, t)) < 0) return -1;
  }
  if (flat < 0) return x;
  return onehot_take(b, name, x, flat, part);
}

/* dynamic_update_slice(dst, upd, starts): where an element of dst lies in
** the window at the clamped starts, upd's element at its place in the
** window (onehot_take), else dst's */
int hlo_dynamic_update(hctx *b, const char *name, int dst, int upd, const int *starts) {
  const ir_value *dv = b->g->vals[dst], *uv = b->g->vals[upd];
  int inside = -1, flat = -1;
  int64_t stride = 1;
  for (int d = dv->shape.rank - 1; d >= 0; stride *= uv->shape.d[d], d--) {
    int rel = hlo_ew(b, name, IR_SUB, iota_i64(b, &dv->shape, d), clamped_start(b, starts[d], dv->shape.d[d], uv->shape.d[d]));
    int in = in_range(b, rel, uv->shape.d[d]);
    int t = hlo_ew(b, name, IR_MUL, clamp_to(b, rel, uv->shape.d[d]), ir_const_typed(b->g, (double)stride, IR_I64));
    inside = inside < 0 ? in : hlo_ew(b, name, IR_AND, inside, in);
    if ((flat = flat < 0 ? t : hlo_ew(b, name, IR_ADD, flat, t)) < 0 || inside < 0) return -1;
  }
  if (flat < 0) return upd;
  int v = onehot_take(b, name, upd, flat, &dv->shape);
  return v < 0 ? -1 : hlo_sel(b, name, inside, v, dst);
}

static int point_gather(hctx *b, const mlir_op *op, const char *name, int x, int ix, const gdims *gd) {
  const ir_value *xv = b->g->vals[x], *iv = b->g->vals[ix];
  const mlir_attr *dn = gd->dn;
  const int64_t *off = gd->off, *col = gd->col, *map = gd->map, *sizes = gd->sizes, *obd = gd->obd, *sbd = gd->sbd, ivd = gd->ivd;
  int noff = gd->noff, ncol = gd->ncol, nmap = gd->nmap, nobd = gd->nobd, nsbd = gd->nsbd, nsz = gd->nsz;
  int r = xv->shape.rank, ir = iv->shape.rank, ok = dn && nmap >= 1 && nsz == r && nobd == nsbd && ivd >= 0 && ivd <= ir;
  int comps = ivd == ir ? 1 : ok ? (int)iv->shape.d[ivd] : 0;
  ok = ok && comps == nmap && ir_dtype_isint(iv->dtype);
  for (int d = 0; ok && d < r; d++) {
    if (has(map, nmap, d)) ok = sizes[d] == 1 && has(col, ncol, d) && !has(obd, nobd, d);
    else if (has(obd, nobd, d)) ok = sizes[d] == 1 && !has(col, ncol, d);
    else ok = sizes[d] == xv->shape.d[d] && !has(col, ncol, d);
  }
  int nb = ivd == ir ? ir : ir - 1;
  if (!ok || nb + nmap + noff > IR_MAXRANK) return general_gather(b, op, name, x, ix, gd);
  /* the index's batch dims, and for each the operand dim batched with it (-1: none) */
  int bop[IR_MAXRANK];
  ir_shape bi = {.rank = 0};
  for (int d = 0; d < ir; d++) {
    if (d == ivd) continue;
    int q = index_of(sbd, nsbd, d);
    bop[bi.rank] = q < 0 ? -1 : (int)obd[q];
    bi.d[bi.rank++] = iv->shape.d[d];
  }
  /* the operand as [Bi (batching dims, else 1), G, F] */
  int perm[IR_MAXRANK], np = 0;
  ir_shape arranged = {.rank = 0};
  for (int i = 0; i < bi.rank; i++) {
    if (bop[i] >= 0) perm[np++] = bop[i];
    arranged.d[arranged.rank++] = bop[i] >= 0 ? xv->shape.d[bop[i]] : 1;
  }
  for (int j = 0; j < nmap; j++) { perm[np++] = (int)map[j]; arranged.d[arranged.rank++] = xv->shape.d[map[j]]; }
  int nf = 0;
  for (int d = 0; d < r; d++)
    if (!has(map, nmap, d) && !has(obd, nobd, d)) { perm[np++] = d; arranged.d[arranged.rank++] = xv->shape.d[d]; nf++; }
  int xa = emit_t(b, name, x, perm, r);
  if (xa < 0 || (xa = hlo_reshape(b, hlo_fresh(b, name), xa, &arranged)) < 0) return -1;
  /* the mask [Bi, G, 1..]: each looked-up index, clamped, against an iota of its dim */
  int mask = -1;
  for (int j = 0; j < nmap; j++) {
    int64_t n = xv->shape.d[map[j]];
    int c = ix;
    if (ivd < ir) {
      ir_attrs at = hlo_no_attrs();
      at.dim = (int)ivd;
      at.start = j;
      at.end = j + 1;
      if ((c = hlo_emit(b, hlo_fresh(b, name), IR_SLICE, &ix, 1, &at)) < 0) return -1;
    }
    ir_shape cs = bi;
    for (int q = 0; q < nmap; q++) cs.d[cs.rank++] = 1;
    if ((c = hlo_reshape(b, hlo_fresh(b, name), c, &cs)) < 0) return -1;
    int lo[2] = {c, ir_const_typed(b->g, 0, iv->dtype)};
    if ((c = hlo_emit(b, hlo_fresh(b, name), IR_MAXIMUM, lo, 2, NULL)) < 0) return -1;
    int hi[2] = {c, ir_const_typed(b->g, (double)(n - 1), iv->dtype)};
    if ((c = hlo_emit(b, hlo_fresh(b, name), IR_MINIMUM, hi, 2, NULL)) < 0) return -1;
    ir_attrs io = hlo_no_attrs();
    io.to.rank = bi.rank + nmap;
    for (int q = 0; q < io.to.rank; q++) io.to.d[q] = q >= bi.rank ? xv->shape.d[map[q - bi.rank]] : 1;
    io.dim = bi.rank + j;
    io.dtype = iv->dtype;
    int iota = hlo_emit(b, hlo_fresh(b, name), IR_IOTA, NULL, 0, &io);
    ir_attrs eq = hlo_no_attrs();
    eq.spec = ir_intern(b->g, "eq");
    int args[2] = {iota, c};
    int e = iota < 0 ? -1 : hlo_emit(b, hlo_fresh(b, name), IR_COMPARE, args, 2, &eq);
    if (e < 0) return -1;
    int both[2] = {mask, e};
    if ((mask = mask < 0 ? e : hlo_emit(b, hlo_fresh(b, name), IR_AND, both, 2, NULL)) < 0) return -1;
  }
  ir_shape ms = b->g->vals[mask]->shape;
  for (int q = 0; q < nf; q++) ms.d[ms.rank++] = 1;
  if ((mask = hlo_reshape(b, hlo_fresh(b, name), mask, &ms)) < 0) return -1;
  int sel[3] = {mask, xa, ir_const_typed(b->g, 0, xv->dtype)};
  int y = hlo_emit(b, hlo_fresh(b, name), IR_SELECT, sel, 3, NULL);
  if (y < 0) return -1;
  ir_attrs sum = hlo_no_attrs();
  sum.ndims = nmap;
  for (int j = 0; j < nmap; j++) sum.dims[j] = bi.rank + j;
  if ((y = hlo_emit(b, hlo_fresh(b, name), IR_SUM, &y, 1, &sum)) < 0) return -1;
  /* [Bi, F] to the result's order: the offset dims hold F */
  int rperm[IR_MAXRANK], fi = 0, bj = 0, rr = bi.rank + nf;
  for (int d = 0; d < rr; d++) rperm[d] = has(off, noff, d) ? bi.rank + fi++ : bj++;
  if (fi != nf || bj != bi.rank) return hlo_error(b, op, "%s: offset_dims do not fit the result's rank", op->name);
  return emit_t(b, name, y, rperm, rr);
}

/* gather of whole rows of a table by an index per position: embedding */
static int do_gather(hctx *b, const mlir_op *op, const char *name) {
  ir_shape s;
  ir_dtype dt;
  if (hlo_result_shape(b, op, &s, &dt) < 0) return -1;
  int t = hlo_operand(b, op, 0), ix = hlo_operand(b, op, 1);
  if (t < 0 || ix < 0) return -1;
  const ir_value *tv = b->g->vals[t], *iv = b->g->vals[ix];
  gdims g;
  gather_dims(op, &g);
  int r = tv->shape.rank, ir = iv->shape.rank, ivd = (int)g.ivd;
  int ok = g.dn && g.ncol == 1 && g.col[0] == 0 && g.nmap == 1 && g.map[0] == 0 && g.nsz == r && g.sizes[0] == 1 && g.noff == r - 1 &&
           g.nobd == 0 && (ivd == ir || (ivd == ir - 1 && ir > 0 && iv->shape.d[ir - 1] == 1));
  for (int i = 1; ok && i < r; i++) ok = g.sizes[i] == tv->shape.d[i];
  int nb = ivd == ir ? ir : ir - 1;
  for (int i = 0; ok && i < g.noff; i++) ok = g.off[i] == nb + i;
  if (!ok) return point_gather(b, op, name, t, ix, &g);
  ir_shape ids = {.rank = nb}, tab = {.rank = 2};
  for (int i = 0; i < nb; i++) ids.d[i] = iv->shape.d[i];
  tab.d[0] = tv->shape.d[0];
  tab.d[1] = 1;
  for (int i = 1; i < r; i++) tab.d[1] *= tv->shape.d[i];
  if (iv->dtype != IR_I32) {
    if (!ir_dtype_isint(iv->dtype)) return hlo_error(b, op, "%s: indices must be integers, not %s", op->name, ir_dtype_name(iv->dtype));
    ir_attrs at = hlo_no_attrs();
    at.dtype = IR_I32;
    if ((ix = hlo_emit(b, hlo_fresh(b, name), IR_CONVERT, &ix, 1, &at)) < 0) return -1;
  }
  if ((ix = hlo_reshape(b, hlo_fresh(b, name), ix, &ids)) < 0) return -1;
  if (known_in_range(b, ix, tab.d[0]) == 0 && (ix = clamp_to(b, ix, tab.d[0])) < 0) return -1;   /* the spec clamps */
  if ((t = hlo_reshape(b, hlo_fresh(b, name), t, &tab)) < 0) return -1;
  int args[2] = {t, ix};
  int e = hlo_emit(b, ir_shape_eq(&s, &(ir_shape){0}) ? name : hlo_fresh(b, name), IR_EMBEDDING, args, 2, NULL);
  if (e < 0) return -1;
  return hlo_reshape(b, name, e, &s);
}

/* scatter-add of rows into a table (an embedding's gradient) */
#define MAX_UPDATES 4096

/* Any scatter of one operand (jax.lax.scatter_add/mul/min/max, x.at[i].set):
** each update element's place in the operand (its start from the indices,
** plus its offset in the window, batched dims from the update's place) as
** one flat position q(u), or nowhere when outside the operand (skipped, as
** the spec says); a one-hot [updates, operand] of the places; then each
** update, in order, combined by the region into the elements it lands on
** (XLA's order, so repeated indices round as XLA rounds them). A few ops
** per update element: for small scatters (an embedding's gradient, the
** large case, has its own kernel). */
static int general_scatter(hctx *b, const mlir_op *op, const char *name, int x, int ix, int up) {
  const ir_value *xv = b->g->vals[x], *iv = b->g->vals[ix], *uv = b->g->vals[up];
  const mlir_attr *dn = hlo_attr(op, "scatter_dimension_numbers", NULL);
  int64_t uw[IR_MAXRANK], ins[IR_MAXRANK], map[IR_MAXRANK], ibd[IR_MAXRANK], sbd[IR_MAXRANK], ivd = 0;
  int nuw = list_of(mlir_attr_get(dn, "update_window_dims"), uw), nins = list_of(mlir_attr_get(dn, "inserted_window_dims"), ins);
  int nmap = list_of(mlir_attr_get(dn, "scatter_dims_to_operand_dims"), map);
  int nibd = list_of(mlir_attr_get(dn, "input_batching_dims"), ibd), nsbd = list_of(mlir_attr_get(dn, "scatter_indices_batching_dims"), sbd);
  hlo_ints_of(mlir_attr_get(dn, "index_vector_dim"), &ivd, 1);
  const mlir_block *bl = op->nregions == 1 && op->regions[0]->nblocks == 1 ? op->regions[0]->blocks[0] : NULL;
  int r = xv->shape.rank, ir = iv->shape.rank, ur = uv->shape.rank;
  int comps = ivd == ir ? 1 : ivd >= 0 && ivd < ir ? (int)iv->shape.d[ivd] : -1;
  int ok = dn && bl && bl->nargs == 2 && ir_dtype_isint(iv->dtype) && comps == nmap && nibd == nsbd && uv->dtype == xv->dtype &&
           nuw + nins + nibd == r && ur == nuw + (ivd == ir ? ir : ir - 1);
  int64_t nu = ir_nelem(&uv->shape), nx = ir_nelem(&xv->shape);
  if (!ok) return hlo_error(b, op, "%s: this scatter's dimension numbers do not fit its operands (or it scatters several at once)", op->name);
  if (nu * nx > ((int64_t)1 << 26) || nu > MAX_UPDATES)
    return hlo_error(b, op, "%s: %lld updates into %lld elements is too large for carve's scatter (at most %d updates and 2^26 "
                     "pairs); only the scatter-add of whole rows (an embedding's gradient) has a kernel of its own", op->name,
                     (long long)nu, (long long)nx, MAX_UPDATES);
  /* the update's dims: window dims (in order: the operand's dims not inserted nor batched), scatter dims (the index's, in order) */
  int wdim_of[IR_MAXRANK], sdim_of[IR_MAXRANK];     /* operand dim -> update window dim; update scatter dim -> index dim */
  for (int d = 0, w = 0; d < r; d++) wdim_of[d] = has(ins, nins, d) || has(ibd, nibd, d) ? -1 : (int)uw[w++];
  for (int u = 0, s = 0; u < ur; u++) if (!has(uw, nuw, u)) { int j = s++; sdim_of[u] = j >= ivd && ivd < ir ? j + 1 : j; } else sdim_of[u] = -1;
  /* each operand dim's place for every update element, as [updates] tensors: start + window offset */
  int flat = -1, valid = -1;
  int64_t st[IR_MAXRANK], stride = 1;
  for (int d = r - 1; d >= 0; d--) { st[d] = stride; stride *= xv->shape.d[d]; }
  for (int d = 0; d < r; d++) {
    int p = -1;
    int k = index_of(map, nmap, d), q = index_of(ibd, nibd, d);
    if (k >= 0 || q >= 0) {                 /* from the indices: component k, or the batch position of index dim sbd[q] */
      int c = ix;
      ir_shape bshape = {.rank = ur};      /* the index's values along the update's scatter dims, 1 along its window dims */
      for (int u = 0; u < ur; u++) bshape.d[u] = sdim_of[u] >= 0 ? iv->shape.d[sdim_of[u]] : 1;
      if (k >= 0) {
        if (ivd < ir) {
          ir_attrs at = hlo_no_attrs();
          at.dim = (int)ivd; at.start = k; at.end = k + 1;
          if ((c = hlo_emit(b, hlo_fresh(b, name), IR_SLICE, &ix, 1, &at)) < 0) return -1;
        }
        /* the index's dims other than ivd, in order, are the update's scatter dims, in order */
        if ((c = hlo_reshape(b, hlo_fresh(b, name), c, &bshape)) < 0) return -1;
      } else {
        ir_attrs io = hlo_no_attrs();
        io.to = bshape;
        io.dtype = iv->dtype;
        io.dim = -1;
        for (int u = 0; u < ur; u++) if (sdim_of[u] == sbd[q]) io.dim = u;
        if (io.dim < 0 || (c = hlo_emit(b, hlo_fresh(b, name), IR_IOTA, NULL, 0, &io)) < 0) return -1;
      }
      p = c;
    }
    if (wdim_of[d] >= 0) {                  /* plus the offset in the window */
      ir_attrs io = hlo_no_attrs();
      io.to.rank = ur;
      for (int u = 0; u < ur; u++) io.to.d[u] = u == wdim_of[d] ? uv->shape.d[u] : 1;
      io.dim = wdim_of[d];
      io.dtype = iv->dtype;
      int w = hlo_emit(b, hlo_fresh(b, name), IR_IOTA, NULL, 0, &io);
      p = p < 0 ? w : hlo_ew(b, "index", IR_ADD, p, w);
    }
    if (p < 0) p = ir_const_typed(b->g, 0, iv->dtype);
    int in = in_range(b, p, xv->shape.d[d]);
    valid = valid < 0 ? in : hlo_ew(b, "index", IR_AND, valid, in);
    int term = hlo_ew(b, "index", IR_MUL, p, ir_const_typed(b->g, (double)st[d], iv->dtype));
    flat = flat < 0 ? term : hlo_ew(b, "index", IR_ADD, flat, term);
    if (valid < 0 || flat < 0) return -1;
  }
  /* the one-hot [updates, operand]; then the updates applied in their order, as XLA does */
  ir_attrs bt = hlo_no_attrs();
  bt.to = uv->shape;
  ir_shape col = {.rank = 2, .d = {nu, 1}}, row = {.rank = 2, .d = {1, nx}}, flat1 = {.rank = 1, .d = {nu}};
  if ((flat = hlo_emit(b, hlo_fresh(b, name), IR_BROADCAST, &flat, 1, &bt)) < 0 || (valid = hlo_emit(b, hlo_fresh(b, name), IR_BROADCAST, &valid, 1, &bt)) < 0)
    return -1;
  ir_attrs io = hlo_no_attrs();
  io.to = row;
  io.dim = 1;
  io.dtype = iv->dtype;
  int q = hlo_emit(b, hlo_fresh(b, name), IR_IOTA, NULL, 0, &io);
  int hit = hlo_ew(b, "index", IR_AND, hlo_cmp(b, "index", "eq", hlo_reshape(b, hlo_fresh(b, name), flat, &col), q), hlo_reshape(b, hlo_fresh(b, name), valid, &col));
  int uf = hlo_reshape(b, hlo_fresh(b, name), up, &flat1), acc = hlo_reshape(b, hlo_fresh(b, name), x, &(ir_shape){.rank = 1, .d = {nx}});
  if (hit < 0 || uf < 0 || acc < 0) return -1;
  ir_shape one = {.rank = 1, .d = {nx}};
  for (int64_t i = 0; i < nu; i++) {
    int hi = slice0(b, hit, i, i + 1), ui = slice0(b, uf, i, i + 1);
    if (hi < 0 || ui < 0 || (hi = hlo_reshape(b, hlo_fresh(b, name), hi, &one)) < 0) return -1;
    int args[2] = {acc, hlo_reshape(b, hlo_fresh(b, name), ui, &(ir_shape){.rank = 0})}, f;
    if (args[1] < 0 || b->run_region(b, op, bl, args, &f, 1) < 0) return -1;
    int sel[3] = {hi, f, acc};
    if ((acc = hlo_emit(b, hlo_fresh(b, name), IR_SELECT, sel, 3, NULL)) < 0) return -1;
  }
  return hlo_reshape(b, name, acc, &xv->shape);
}

static int do_scatter(hctx *b, const mlir_op *op, const char *name) {
  if (op->noperands != 3) return hlo_error(b, op, "%s: scatters of several operands at once are not supported", op->name);
  int t = hlo_operand(b, op, 0), ix = hlo_operand(b, op, 1), up = hlo_operand(b, op, 2);
  if (t < 0 || ix < 0 || up < 0) return -1;
  const ir_value *tv = b->g->vals[t], *iv = b->g->vals[ix], *uv = b->g->vals[up];
  const mlir_attr *dn = hlo_attr(op, "scatter_dimension_numbers", NULL);
  int64_t uw[IR_MAXRANK], ins[IR_MAXRANK], map[IR_MAXRANK], ivd = -1;
  int nuw = hlo_ints_of(mlir_attr_get(dn, "update_window_dims"), uw, IR_MAXRANK);
  int nins = hlo_ints_of(mlir_attr_get(dn, "inserted_window_dims"), ins, IR_MAXRANK);
  int nmap = hlo_ints_of(mlir_attr_get(dn, "scatter_dims_to_operand_dims"), map, IR_MAXRANK);
  hlo_ints_of(mlir_attr_get(dn, "index_vector_dim"), &ivd, 1);
  const char *fn = op->nregions ? hlo_region_reducer(op->regions[0]) : NULL;
  int ir = iv->shape.rank;
  int ok = dn && fn && !strcmp(fn, "add") && tv->shape.rank == 2 && nins == 1 && ins[0] == 0 && nmap == 1 && map[0] == 0 &&
           ir >= 1 && ivd == ir - 1 && iv->shape.d[ir - 1] == 1 && nuw == 1 && uw[0] == ir - 1 && uv->shape.rank == ir &&
           uv->shape.d[ir - 1] == tv->shape.d[1];
  for (int i = 0; ok && i < ir - 1; i++) ok = uv->shape.d[i] == iv->shape.d[i];
  if (!ok || !ir_dtype_isint(iv->dtype)) return general_scatter(b, op, name, t, ix, up);
  ir_shape ids = {.rank = ir - 1};
  for (int i = 0; i < ir - 1; i++) ids.d[i] = iv->shape.d[i];
  if (iv->dtype != IR_I32) {
    ir_attrs at = hlo_no_attrs();
    at.dtype = IR_I32;
    if ((ix = hlo_emit(b, hlo_fresh(b, name), IR_CONVERT, &ix, 1, &at)) < 0) return -1;
  }
  if ((ix = hlo_reshape(b, hlo_fresh(b, name), ix, &ids)) < 0) return -1;
  if (known_in_range(b, ix, tv->shape.d[0]) == 0) {   /* rows outside the table are skipped (the spec): 0 added to a row that is there */
    ir_attrs bt = hlo_no_attrs();
    ir_shape ms = ids;
    ms.d[ms.rank++] = 1;
    bt.to = uv->shape;
    int in = in_range(b, ix, tv->shape.d[0]), m = in < 0 ? -1 : hlo_reshape(b, hlo_fresh(b, name), in, &ms);
    int sel[3] = {m < 0 ? -1 : hlo_emit(b, hlo_fresh(b, name), IR_BROADCAST, &m, 1, &bt), up, ir_const_typed(b->g, 0, uv->dtype)};
    if (sel[0] < 0 || (up = hlo_emit(b, hlo_fresh(b, name), IR_SELECT, sel, 3, NULL)) < 0) return -1;
    if ((ix = clamp_to(b, ix, tv->shape.d[0])) < 0) return -1;
  }
  ir_attrs at = hlo_no_attrs();
  at.rows = tv->shape.d[0];
  int args[2] = {ix, up};
  int g = hlo_emit(b, hlo_fresh(b, name), IR_EMBEDDING_GRAD, args, 2, &at);
  if (g < 0) return -1;
  int sum[2] = {t, g};
  return hlo_emit(b, name, IR_ADD, sum, 2, NULL);
}

int hlo_index_op(hctx *b, const mlir_op *op, const char *sn, const char *name) {
  if (!strcmp(sn, "gather")) return do_gather(b, op, name);
  if (!strcmp(sn, "scatter")) return do_scatter(b, op, name);
  return -2;
}

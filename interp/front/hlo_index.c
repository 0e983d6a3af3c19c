/*
** hlo_index.c: StableHLO's lookups by index. A gather of whole rows of a
** table is carve's embedding, and the scatter-add of rows into a table its
** gradient; a gather of single points along some dims (jnp.take_along_axis,
** optax's cross-entropy with integer labels) becomes a one-hot selection:
** a mask from comparing an iota with the (clamped) indices, select, and a
** sum over the looked-up dims, which differentiates and splits as the rest.
*/
#include "interp/front/hlo_int.h"

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
  g->ivd = -1;
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
  if (!ok || nb + nmap + noff > IR_MAXRANK)
    return hlo_error(b, op, "%s: carve gathers whole rows of a table (an embedding) or single points along some dims "
                     "(jnp.take_along_axis: slice size 1 on the start_index_map dims, collapsed; whole on the others); not this one",
                     op->name);
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
  if ((t = hlo_reshape(b, hlo_fresh(b, name), t, &tab)) < 0) return -1;
  int args[2] = {t, ix};
  int e = hlo_emit(b, ir_shape_eq(&s, &(ir_shape){0}) ? name : hlo_fresh(b, name), IR_EMBEDDING, args, 2, NULL);
  if (e < 0) return -1;
  return hlo_reshape(b, name, e, &s);
}

/* scatter-add of rows into a table (an embedding's gradient) */
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
  if (!ok)
    return hlo_error(b, op, "%s: only the scatter-add of whole rows into a matrix (an embedding's gradient) is supported", op->name);
  if (!ir_dtype_isint(iv->dtype)) return hlo_error(b, op, "%s: indices must be integers", op->name);
  ir_shape ids = {.rank = ir - 1};
  for (int i = 0; i < ir - 1; i++) ids.d[i] = iv->shape.d[i];
  if (iv->dtype != IR_I32) {
    ir_attrs at = hlo_no_attrs();
    at.dtype = IR_I32;
    if ((ix = hlo_emit(b, hlo_fresh(b, name), IR_CONVERT, &ix, 1, &at)) < 0) return -1;
  }
  if ((ix = hlo_reshape(b, hlo_fresh(b, name), ix, &ids)) < 0) return -1;
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

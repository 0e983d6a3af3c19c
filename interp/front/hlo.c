/*
** hlo.c: StableHLO and MHLO syntax trees -> IR (see hlo.h).
**
** Each function call is inlined: a scope maps the SSA names of one
** function instance to value ids, and the values it defines are named
** after their SSA names under the call path ("apply_fn._var.v3"), so a
** report names the place in the .mlir program. Ops are read in either
** printed form: the pretty form's items (dims = [..], contracting_dims =
** [..] x [..]) or the generic form's properties (broadcast_dimensions,
** dot_dimension_numbers = #mhlo.dot<..>), whichever is present.
*/
#include "interp/front/hlo_int.h"
#include "runtime/dtype.h"
#include "util/strbuf.h"

#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CALL_DEPTH 64

/* ---- constants ---- */

/* A literal as a number of type t: hex literals are the bits of a float. */
static double literal(const mlir_attr *a, ir_dtype t) {
  if (a->kind == MLIR_A_FLOAT) return a->f;
  if (a->kind == MLIR_A_BOOL) return a->i != 0;
  if (a->is_hex && ir_dtype_isfloat(t)) {
    uint64_t u = (uint64_t)a->i;
    if (t == IR_F64) { double x; memcpy(&x, &u, 8); return x; }
    if (t == IR_F32) return rt_bits_f32((uint32_t)u);
    if (t == IR_BF16) return rt_bf16_to_f32((uint16_t)u);
    return rt_f16_to_f32((uint16_t)u);
  }
  return (double)a->i;
}

/* Store literal a as element k of data: integers of an integer type as
** they are (a double holds only 53 bits), anything else as a number. */
static void store_literal(void *data, ir_dtype t, int64_t k, const mlir_attr *a) {
  if (a->kind == MLIR_A_INT && !ir_dtype_isfloat(t)) ir_values_set_int(data, t, k, a->i);
  else ir_values_set(data, t, k, literal(a, t));
}

static int flat_literals(const mlir_attr *a, ir_dtype t, void *data, int64_t n, int64_t *k) {
  if (a->kind == MLIR_A_LIST || a->kind == MLIR_A_GROUP) {
    for (int i = 0; i < a->nitems; i++)
      if (flat_literals(a->items[i].val, t, data, n, k) < 0) return -1;
    return 0;
  }
  if (a->kind != MLIR_A_INT && a->kind != MLIR_A_FLOAT && a->kind != MLIR_A_BOOL) return -1;
  if (*k >= n) return -1;
  store_literal(data, t, (*k)++, a);
  return 0;
}

static int hexval(char c) { return c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1; }

static int make_param(hctx *b, const mlir_op *op, const ir_shape *s, ir_dtype dt) {
  const char *name = hlo_value_name(b, op, 0);
  if (ir_lookup(b->g, name)) name = hlo_fresh(b, name);
  if (!ir_dtype_isfloat(dt))
    return hlo_error(b, op, "an elided constant of type %s cannot stand as a parameter; export with the constant's values", ir_dtype_name(dt));
  ir_value *v = ir_add(b->g, name, IR_PARAM, IR_LEAF, NULL, 0, NULL, L(b, op->name_off));
  v->dtype = dt;
  v->shape = *s;
  v->init = (ir_init){INIT_NORMAL, 0.02, 0};
  return v->id;
}

static int do_constant(hctx *b, const mlir_op *op) {
  ir_shape s;
  ir_dtype dt;
  if (hlo_result_shape(b, op, &s, &dt) < 0) return -1;
  const mlir_attr *val = op->nitems ? op->items[0].val : mlir_op_attr(op, "value");
  if (!val) return hlo_error(b, op, "%s: no value", op->name);
  if (val->kind == MLIR_A_DENSE_RESOURCE) return make_param(b, op, &s, dt);   /* weights elided from the text */
  if (val->kind != MLIR_A_DENSE) return diag_error(b->d, L(b, val->off), "%s: expected dense<...>", op->name);
  int64_t n = ir_nelem(&s);
  const mlir_attr *lit = val->nitems ? val->items[0].val : NULL;
  int scalar = lit && (lit->kind == MLIR_A_INT || lit->kind == MLIR_A_FLOAT || lit->kind == MLIR_A_BOOL);
  /* an integer splat beyond 2^53 is not a double: its values are stored */
  int wide = scalar && lit->kind == MLIR_A_INT && !ir_dtype_isfloat(dt) && (lit->i > (1LL << 53) || lit->i < -(1LL << 53));
  if (scalar && !wide) {   /* a splat */
    int c = dt == IR_F32 ? ir_const(b->g, literal(lit, dt)) : ir_const_typed(b->g, literal(lit, dt), dt);
    if (s.rank == 0) return c;
    ir_attrs at = hlo_no_attrs();
    at.to = s;
    return hlo_emit(b, hlo_value_name(b, op, 0), IR_BROADCAST, &c, 1, &at);
  }
  if (n > ((int64_t)1 << 28)) return hlo_error(b, op, "%s: a constant of %lld elements is too large", op->name, (long long)n);
  void *data = ir_values_new(b->g, dt, n);
  if (lit && lit->kind == MLIR_A_STRING) {          /* "0x..." raw little-endian bytes */
    size_t es = ir_dtype_size(dt), bytes = (size_t)n * es;
    const char *h = lit->text;
    if (lit->len != 2 + 2 * bytes && lit->len != 2 + 2 * es)
      return diag_error(b->d, L(b, lit->off), "%s: the hex value holds %u bytes; %s%s needs %zu", op->name, (lit->len - 2) / 2,
                        ir_dtype_name(dt), ir_shape_str(&b->tmp, &s), bytes);
    unsigned char *raw = arena_alloc(&b->tmp, bytes + 1);
    size_t have = (lit->len - 2) / 2;
    for (size_t i = 0; i < have; i++) {
      int hi = hexval(h[2 + 2 * i]), lo = hexval(h[3 + 2 * i]);
      if (hi < 0 || lo < 0) return diag_error(b->d, L(b, lit->off), "%s: bad hex digit in the value", op->name);
      raw[i] = (unsigned char)(hi * 16 + lo);
    }
    for (size_t i = have; i < bytes; i++) raw[i] = raw[i % es];  /* a hex splat */
    memcpy(data, raw, bytes);
  } else if (wide) {
    for (int64_t i = 0; i < n; i++) store_literal(data, dt, i, lit);
  } else {
    int64_t k = 0;
    if ((!lit && n) || (lit && flat_literals(lit, dt, data, n, &k) < 0) || k != n)
      return diag_error(b->d, L(b, val->off), "%s: the value must hold %lld numbers for %s%s", op->name, (long long)n,
                        ir_dtype_name(dt), ir_shape_str(&b->tmp, &s));
  }
  ir_attrs at = hlo_no_attrs();
  at.to = s;
  at.dtype = dt;
  at.data = data;
  return hlo_emit(b, hlo_value_name(b, op, 0), IR_CONSTANT, NULL, 0, &at);
}

/* ---- data movement ---- */


static int do_broadcast_in_dim(hctx *b, const mlir_op *op, const char *name) {
  ir_shape s;
  ir_dtype dt;
  int64_t dims[IR_MAXRANK];
  if (hlo_result_shape(b, op, &s, &dt) < 0) return -1;
  int x = hlo_operand(b, op, 0);
  if (x < 0) return -1;
  int nd = hlo_ints(b, op, "dims", "broadcast_dimensions", dims, IR_MAXRANK);
  if (nd < 0) return -1;
  const ir_value *xv = b->g->vals[x];
  if (nd != xv->shape.rank) return hlo_error(b, op, "%s: %d dims for an operand of rank %d", op->name, nd, xv->shape.rank);
  int used[IR_MAXRANK] = {0};
  for (int i = 0; i < nd; i++) {
    if (dims[i] < 0 || dims[i] >= s.rank || used[dims[i]]++)
      return hlo_error(b, op, "%s: dims must be distinct result dims below %d", op->name, s.rank);
    if (xv->shape.d[i] != 1 && xv->shape.d[i] != s.d[dims[i]])
      return hlo_error(b, op, "%s: operand dim %d (%lld) does not broadcast to result dim %lld (%lld)", op->name, i,
                      (long long)xv->shape.d[i], (long long)dims[i], (long long)s.d[dims[i]]);
  }
  /* dims out of order: transpose the operand so that they increase */
  int perm[IR_MAXRANK], sorted = 1;
  for (int i = 0; i < nd; i++) perm[i] = i;
  for (int i = 1; i < nd; i++)
    for (int j = i; j > 0 && dims[perm[j - 1]] > dims[perm[j]]; j--) { int t = perm[j]; perm[j] = perm[j - 1]; perm[j - 1] = t; sorted = 0; }
  if (!sorted) {
    ir_attrs at = hlo_no_attrs();
    at.ndims = nd;
    for (int i = 0; i < nd; i++) at.dims[i] = perm[i];
    x = hlo_emit(b, hlo_fresh(b, name), IR_TRANSPOSE, &x, 1, &at);
    if (x < 0) return -1;
  }
  /* the operand's dims in place among 1s, then NumPy broadcasting */
  ir_shape r = {.rank = s.rank};
  for (int i = 0; i < s.rank; i++) r.d[i] = 1;
  for (int i = 0; i < nd; i++) r.d[dims[perm[i]]] = xv->shape.d[perm[i]];
  if (ir_shape_eq(&r, &s)) return hlo_reshape(b, name, x, &s);
  if (b->g->vals[x]->shape.rank) {
    x = hlo_reshape(b, hlo_fresh(b, name), x, &r);
    if (x < 0) return -1;
  }
  ir_attrs at = hlo_no_attrs();
  at.to = s;
  return hlo_emit(b, name, IR_BROADCAST, &x, 1, &at);
}

static int do_transpose(hctx *b, const mlir_op *op, const char *name) {
  int64_t p[IR_MAXRANK];
  int x = hlo_operand(b, op, 0);
  if (x < 0) return -1;
  int n = hlo_ints(b, op, "dims", "permutation", p, IR_MAXRANK);
  if (n < 0) return -1;
  ir_attrs at = hlo_no_attrs();
  at.ndims = n;
  int id = 1;
  for (int i = 0; i < n; i++) { at.dims[i] = (int)p[i]; id &= p[i] == i; }
  if (id && n == b->g->vals[x]->shape.rank) return x;
  return hlo_emit(b, name, IR_TRANSPOSE, &x, 1, &at);
}

static int do_slice(hctx *b, const mlir_op *op, const char *name) {
  int x = hlo_operand(b, op, 0);
  if (x < 0) return -1;
  const ir_value *xv = b->g->vals[x];
  int r = xv->shape.rank;
  int64_t lo[IR_MAXRANK], hi[IR_MAXRANK], st[IR_MAXRANK];
  const mlir_attr *ranges = NULL;
  for (int i = 0; i < op->nitems; i++)
    if (!op->items[i].key && op->items[i].val->kind == MLIR_A_LIST) ranges = op->items[i].val;
  if (ranges) {
    if (ranges->nitems != r) return hlo_error(b, op, "%s: %d ranges for rank %d", op->name, ranges->nitems, r);
    for (int i = 0; i < r; i++) {
      const mlir_attr *g = ranges->items[i].val;
      if (g->kind != MLIR_A_RANGE || g->nitems < 2) return diag_error(b->d, L(b, g->off), "%s: expected start:end[:stride]", op->name);
      lo[i] = g->items[0].val->i;
      hi[i] = g->items[1].val->i;
      st[i] = g->nitems > 2 ? g->items[2].val->i : 1;
    }
  } else {
    if (hlo_ints(b, op, "start_indices", NULL, lo, r) != r || hlo_ints(b, op, "limit_indices", NULL, hi, r) != r) {
      if (!b->d->nerrors) hlo_error(b, op, "%s: start_indices and limit_indices need %d numbers", op->name, r);
      return -1;
    }
    if (hlo_attr(op, "strides", NULL)) { if (hlo_ints(b, op, "strides", NULL, st, r) != r) return -1; }
    else for (int i = 0; i < r; i++) st[i] = 1;
  }
  for (int i = 0; i < r; i++) {
    if (st[i] < 1) return hlo_error(b, op, "%s: stride %lld of dim %d must be at least 1", op->name, (long long)st[i], i);
    if (lo[i] < 0 || hi[i] > xv->shape.d[i] || lo[i] > hi[i])
      return hlo_error(b, op, "%s: range %lld:%lld is outside dim %d of size %lld", op->name, (long long)lo[i], (long long)hi[i], i,
                      (long long)xv->shape.d[i]);
  }
  int last = -1, empty = 0, strided = 0;
  for (int i = 0; i < r; i++) {
    if (lo[i] != 0 || hi[i] != xv->shape.d[i] || st[i] != 1) last = i;
    empty |= lo[i] == hi[i];
    strided |= st[i] != 1 && hi[i] - lo[i] > 1;
  }
  if (last < 0) return x;
  if (empty) {                  /* no elements: nothing to read from x */
    ir_attrs at = hlo_no_attrs();
    at.dtype = xv->dtype;
    at.to.rank = r;
    for (int i = 0; i < r; i++) at.to.d[i] = (hi[i] - lo[i] + st[i] - 1) / st[i];
    at.data = ir_values_new(b->g, xv->dtype, 0);
    return hlo_emit(b, name, IR_CONSTANT, NULL, 0, &at);
  }
  if (strided) return hlo_strided_slice(b, name, x, lo, hi, st);
  return hlo_slice_block(b, name, x, lo, hi);
}

/* dst with x written at offs (x fits): along the first dim from `from` where
** they differ, dst's parts before and after around x written into dst's
** middle slab there, recursively for the later dims */
static int insert_block(hctx *b, const char *name, int x, int dst, const int64_t *offs, int from) {
  const ir_value *xv = b->g->vals[x], *dv = b->g->vals[dst];
  int r = dv->shape.rank, dim = from, later = 0;
  while (dim < r && xv->shape.d[dim] == dv->shape.d[dim]) dim++;
  if (dim == r) return x;
  for (int i = dim + 1; i < r; i++) later |= xv->shape.d[i] != dv->shape.d[i];
  int64_t cut[2] = {offs[dim], offs[dim] + xv->shape.d[dim]}, n2 = dv->shape.d[dim];
  int parts[3], n = 0;
  ir_attrs at = hlo_no_attrs();
  at.dim = dim;
  if (cut[0] > 0) {
    at.start = 0; at.end = cut[0];
    if ((parts[n++] = hlo_emit(b, hlo_fresh(b, name), IR_SLICE, &dst, 1, &at)) < 0) return -1;
  }
  int mid = x;
  if (later) {
    at.start = cut[0]; at.end = cut[1];
    int slab = hlo_emit(b, hlo_fresh(b, name), IR_SLICE, &dst, 1, &at);
    if (slab < 0 || (mid = insert_block(b, hlo_fresh(b, name), x, slab, offs, dim + 1)) < 0) return -1;
  }
  parts[n++] = mid;
  if (cut[1] < n2) {
    at.start = cut[1]; at.end = n2;
    if ((parts[n++] = hlo_emit(b, hlo_fresh(b, name), IR_SLICE, &dst, 1, &at)) < 0) return -1;
  }
  ir_attrs cat = hlo_no_attrs();
  cat.dim = dim;
  return hlo_emit(b, name, IR_CONCAT, parts, n, &cat);
}

/* dynamic_slice and dynamic_update_slice: their start operands (from
** operand `first` on) must be known when carve imports the program (a
** constant, or a loop counter of an unrolled while), and are clamped into
** range as the spec says */
static int known_starts(hctx *b, const mlir_op *op, int first, const ir_shape *whole, const ir_shape *part, int64_t *st) {
  if (op->noperands != first + whole->rank)
    return hlo_error(b, op, "%s: %d start indices for rank %d", op->name, op->noperands - first, whole->rank);
  for (int i = 0; i < whole->rank; i++) {
    int id = hlo_operand(b, op, first + i);
    if (id < 0) return -1;
    const ir_value *v = b->g->vals[id];
    if (v->kind != IR_CONST || ir_dtype_isfloat(v->dtype))
      return hlo_error(b, op, "%s: start index %d ('%s') is computed at run time; carve imports slices at indices known when it reads "
                      "the program (constants, the counter of a while loop it unrolls)", op->name, i, v->name);
    int64_t hi = whole->d[i] - part->d[i], x = (int64_t)v->attr.scalar;
    st[i] = x < 0 ? 0 : x > hi ? hi : x;
  }
  return 0;
}

static int do_dynamic_slice(hctx *b, const mlir_op *op, const char *name) {
  int x = hlo_operand(b, op, 0);
  if (x < 0) return -1;
  ir_shape whole = b->g->vals[x]->shape, part = {.rank = whole.rank};
  if (hlo_ints(b, op, "sizes", "slice_sizes", part.d, whole.rank) != whole.rank)
    return b->d->nerrors ? -1 : hlo_error(b, op, "%s: sizes need %d numbers", op->name, whole.rank);
  for (int i = 0; i < whole.rank; i++)
    if (part.d[i] < 0 || part.d[i] > whole.d[i]) return hlo_error(b, op, "%s: size %lld of dim %d is outside [0, %lld]", op->name,
                                                                   (long long)part.d[i], i, (long long)whole.d[i]);
  int64_t lo[IR_MAXRANK], hi[IR_MAXRANK];
  if (known_starts(b, op, 1, &whole, &part, lo) < 0) return -1;
  for (int i = 0; i < whole.rank; i++) hi[i] = lo[i] + part.d[i];
  return hlo_slice_block(b, name, x, lo, hi);
}

static int do_dynamic_update_slice(hctx *b, const mlir_op *op, const char *name) {
  int dst = hlo_operand(b, op, 0), x = hlo_operand(b, op, 1);
  if (dst < 0 || x < 0) return -1;
  const ir_value *dv = b->g->vals[dst], *xv = b->g->vals[x];
  if (xv->shape.rank != dv->shape.rank || xv->dtype != dv->dtype)
    return hlo_error(b, op, "%s: the update is %s%s, the operand %s%s", op->name, ir_dtype_name(xv->dtype), ir_shape_str(&b->tmp, &xv->shape),
                    ir_dtype_name(dv->dtype), ir_shape_str(&b->tmp, &dv->shape));
  for (int i = 0; i < dv->shape.rank; i++)
    if (xv->shape.d[i] > dv->shape.d[i]) return hlo_error(b, op, "%s: the update is larger than the operand in dim %d", op->name, i);
  int64_t offs[IR_MAXRANK];
  if (known_starts(b, op, 2, &dv->shape, &xv->shape, offs) < 0) return -1;
  return insert_block(b, name, x, dst, offs, 0);
}

static int do_concatenate(hctx *b, const mlir_op *op, const char *name) {
  int64_t dim;
  if (hlo_ints(b, op, "dim", "dimension", &dim, 1) != 1) return b->d->nerrors ? -1 : hlo_error(b, op, "%s: dim is missing", op->name);
  int *xs = arena_alloc(&b->tmp, sizeof(int) * (size_t)(op->noperands + 1));
  for (int k = 0; k < op->noperands; k++) if ((xs[k] = hlo_operand(b, op, k)) < 0) return -1;
  if (op->noperands == 1) return xs[0];
  ir_attrs at = hlo_no_attrs();
  at.dim = (int)dim;
  return hlo_emit(b, name, IR_CONCAT, xs, op->noperands, &at);
}

static int do_iota(hctx *b, const mlir_op *op, const char *name) {
  ir_shape s;
  ir_dtype dt;
  int64_t dim;
  if (hlo_result_shape(b, op, &s, &dt) < 0) return -1;
  if (hlo_ints(b, op, "dim", "iota_dimension", &dim, 1) != 1) return b->d->nerrors ? -1 : hlo_error(b, op, "%s: dim is missing", op->name);
  ir_attrs at = hlo_no_attrs();
  at.to = s;
  at.dim = (int)dim;
  at.dtype = dt;
  return hlo_emit(b, name, IR_IOTA, NULL, 0, &at);
}

/* tensor.insert_slice(src, dest): dest with src written at the offsets
** (insert_block) */
static int do_insert_slice(hctx *b, const mlir_op *op, const char *name) {
  int x = hlo_operand(b, op, 0), dst = hlo_operand(b, op, 1);
  if (x < 0 || dst < 0) return -1;
  const ir_value *xv = b->g->vals[x], *dv = b->g->vals[dst];
  int64_t offs[IR_MAXRANK], st[IR_MAXRANK];
  int r = dv->shape.rank;
  if (op->noperands != 2 || xv->shape.rank != r || hlo_ints(b, op, "static_offsets", NULL, offs, IR_MAXRANK) != r)
    return b->d->nerrors ? -1 : hlo_error(b, op, "%s: only static offsets, sizes and strides of a source of the destination's rank are supported", op->name);
  if (hlo_attr(op, "static_strides", NULL) && hlo_ints(b, op, "static_strides", NULL, st, IR_MAXRANK) == r)
    for (int i = 0; i < r; i++) if (st[i] != 1) return hlo_error(b, op, "%s: strides other than 1 are not supported", op->name);
  for (int i = 0; i < r; i++)
    if (offs[i] < 0 || offs[i] + xv->shape.d[i] > dv->shape.d[i]) return hlo_error(b, op, "%s: the source does not fit at dim %d", op->name, i);
  return insert_block(b, name, x, dst, offs, 0);
}

/* ---- contractions ---- */

static int do_dot_general(hctx *b, const mlir_op *op, const char *name, int plain) {
  int x = hlo_operand(b, op, 0), y = hlo_operand(b, op, 1);
  if (x < 0 || y < 0) return -1;
  const ir_value *xv = b->g->vals[x], *yv = b->g->vals[y];
  int64_t lb[IR_MAXRANK], rb[IR_MAXRANK], lc[IR_MAXRANK], rc[IR_MAXRANK];
  int nlb = 0, nrb = 0, nlc = 0, nrc = 0;
  if (plain) {                 /* dot: the last dim of lhs with the first of rhs */
    nlc = nrc = 1;
    lc[0] = xv->shape.rank - 1;
    rc[0] = 0;
  } else {
    const mlir_item *ib = mlir_op_item(op, "batching_dims"), *ic = mlir_op_item(op, "contracting_dims");
    if (ib || ic) {
      if (ib && (ib->val->kind != MLIR_A_CROSS || ib->val->nitems != 2)) return diag_error(b->d, L(b, ib->val->off), "batching_dims: expected [..] x [..]");
      if (ic && (ic->val->kind != MLIR_A_CROSS || ic->val->nitems != 2)) return diag_error(b->d, L(b, ic->val->off), "contracting_dims: expected [..] x [..]");
      if (ib) { nlb = hlo_ints_of(ib->val->items[0].val, lb, IR_MAXRANK); nrb = hlo_ints_of(ib->val->items[1].val, rb, IR_MAXRANK); }
      if (ic) { nlc = hlo_ints_of(ic->val->items[0].val, lc, IR_MAXRANK); nrc = hlo_ints_of(ic->val->items[1].val, rc, IR_MAXRANK); }
    } else {
      const mlir_attr *dn = hlo_attr(op, "dot_dimension_numbers", NULL);
      if (!dn) return hlo_error(b, op, "%s: dot_dimension_numbers is missing", op->name);
      nlb = hlo_ints_of(mlir_attr_get(dn, "lhs_batching_dimensions"), lb, IR_MAXRANK);
      nrb = hlo_ints_of(mlir_attr_get(dn, "rhs_batching_dimensions"), rb, IR_MAXRANK);
      nlc = hlo_ints_of(mlir_attr_get(dn, "lhs_contracting_dimensions"), lc, IR_MAXRANK);
      nrc = hlo_ints_of(mlir_attr_get(dn, "rhs_contracting_dimensions"), rc, IR_MAXRANK);
      if (nlb < 0) nlb = 0;
      if (nrb < 0) nrb = 0;
      if (nlc < 0) nlc = 0;
      if (nrc < 0) nrc = 0;
    }
  }
  if (nlb < 0 || nrb < 0 || nlc < 0 || nrc < 0 || nlb != nrb || nlc != nrc)
    return hlo_error(b, op, "%s: the lhs and rhs lists of batching and contracting dims must pair up", op->name);
  char l[2][IR_MAXRANK + 1], o[IR_MAXRANK + 1];
  memset(l, 0, sizeof l);
  memset(o, 0, sizeof o);
  char next = 'a';
  int no = 0;
  for (int i = 0; i < nlb; i++) {
    if (lb[i] < 0 || lb[i] >= xv->shape.rank || rb[i] < 0 || rb[i] >= yv->shape.rank || l[0][lb[i]] || l[1][rb[i]])
      return hlo_error(b, op, "%s: batching dims out of range", op->name);
    l[0][lb[i]] = l[1][rb[i]] = o[no++] = next++;
  }
  for (int i = 0; i < nlc; i++) {
    if (lc[i] < 0 || lc[i] >= xv->shape.rank || rc[i] < 0 || rc[i] >= yv->shape.rank || l[0][lc[i]] || l[1][rc[i]])
      return hlo_error(b, op, "%s: contracting dims out of range", op->name);
    l[0][lc[i]] = l[1][rc[i]] = next++;
  }
  for (int i = 0; i < xv->shape.rank; i++) if (!l[0][i]) l[0][i] = o[no++] = next++;
  for (int i = 0; i < yv->shape.rank; i++) if (!l[1][i]) l[1][i] = o[no++] = next++;
  if (no > IR_MAXRANK) return hlo_error(b, op, "%s: the result would have rank %d (at most %d)", op->name, no, IR_MAXRANK);
  char spec[64];
  snprintf(spec, sizeof spec, "%s,%s->%s", l[0], l[1], o);
  ir_attrs at = hlo_no_attrs();
  at.spec = ir_intern(b->g, spec);
  int args[2] = {x, y};
  return hlo_emit(b, name, IR_EINSUM, args, 2, &at);
}


/* The reduction carve has an op for (sum, max, min; and, or of i1), or NULL:
** the compact form's "applies OP" or a region of one binary op */
static const hlo_redop *simple_reducer(const mlir_op *op) {
  const char *fn = NULL;
  for (int i = 0; i + 1 < op->nitems; i++)
    if (!op->items[i].key && op->items[i].val->kind == MLIR_A_WORD && !strcmp(op->items[i].val->text, "applies") &&
        op->items[i + 1].val->kind == MLIR_A_WORD)
      fn = hlo_short_name(op->items[i + 1].val->text);
  if (!fn) fn = op->nregions ? hlo_region_reducer(op->regions[0]) : NULL;
  return fn && op->noperands == 2 ? hlo_find_redop(fn) : NULL;
}

static int do_reduce_tree(hctx *b, const mlir_op *op);

static int do_reduce(hctx *b, const mlir_op *op, const char *name) {
  const hlo_redop *ro = simple_reducer(op);
  if (!ro) return do_reduce_tree(b, op);
  int x = hlo_operand(b, op, 0), init = hlo_operand(b, op, 1);
  if (x < 0 || init < 0) return -1;
  const ir_value *xv = b->g->vals[x];
  if ((ro->ew == IR_OR || ro->ew == IR_AND) && xv->dtype != IR_I1) return do_reduce_tree(b, op);   /* bitwise */
  int64_t dims[IR_MAXRANK];
  int nd = hlo_ints(b, op, "dimensions", NULL, dims, IR_MAXRANK);
  if (nd < 0) return -1;
  ir_attrs at = hlo_no_attrs();
  at.ndims = nd;
  for (int i = 0; i < nd; i++) at.dims[i] = (int)dims[i];
  const ir_value *iv = b->g->vals[init];
  int identity = iv->kind == IR_CONST && (iv->attr.scalar == ro->identity ||
                 (ro->ew == IR_MAXIMUM && !ir_dtype_isfloat(xv->dtype) && iv->attr.scalar <= -2147483648.0) ||
                 (ro->ew == IR_MINIMUM && !ir_dtype_isfloat(xv->dtype) && iv->attr.scalar >= 2147483647.0));
  if (nd == 0) {
    if (identity) return x;
  }
  int r = nd ? hlo_emit(b, identity ? name : hlo_fresh(b, name), ro->red, &x, 1, &at) : x;
  if (r < 0 || identity) return r;
  int args[2] = {r, init};
  return hlo_emit(b, name, ro->ew, args, 2, NULL);
}

/* ---- elementwise ---- */

typedef struct ewop { const char *name; ir_opkind op; int arity; } ewop;

static const ewop ewops[] = {
  {"add", IR_ADD, 2}, {"subtract", IR_SUB, 2}, {"multiply", IR_MUL, 2}, {"divide", IR_DIV, 2},
  {"maximum", IR_MAXIMUM, 2}, {"minimum", IR_MINIMUM, 2}, {"power", IR_POWER, 2},
  {"and", IR_AND, 2}, {"or", IR_OR, 2}, {"xor", IR_XOR, 2},
  {"negate", IR_NEG, 1}, {"abs", IR_ABS, 1}, {"sign", IR_SIGN, 1}, {"not", IR_NOT, 1}, {"erf", IR_ERF, 1},
  {"log_plus_one", IR_LOG1P, 1}, {"exponential_minus_one", IR_EXPM1, 1}, {"sine", IR_SIN, 1}, {"cosine", IR_COS, 1},
  {"floor", IR_FLOOR, 1}, {"ceil", IR_CEIL, 1}, {"round_nearest_even", IR_ROUND, 1}, {"round_nearest_afz", IR_ROUND_AFZ, 1},
  {"exponential", IR_EXP, 1}, {"log", IR_LOG, 1}, {"sqrt", IR_SQRT, 1}, {"rsqrt", IR_RSQRT, 1},
  {"tanh", IR_TANH, 1}, {"logistic", IR_SIGMOID, 1}, {"tan", IR_TAN, 1}, {"cbrt", IR_CBRT, 1},
  {"popcnt", IR_POPCNT, 1}, {"count_leading_zeros", IR_CLZ, 1},
  {"remainder", IR_REM, 2}, {"atan2", IR_ATAN2, 2},
  {"shift_left", IR_SHL, 2}, {"shift_right_arithmetic", IR_SHRA, 2}, {"shift_right_logical", IR_SHRL, 2},
  {"select", IR_SELECT, 3},
};

static int do_compare(hctx *b, const mlir_op *op, const char *name) {
  static const char *const dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE", NULL};
  static const char *const types[] = {"TOTALORDER", "FLOAT", "SIGNED", "UNSIGNED", NULL};
  const char *dir = hlo_op_word(op, dirs, "comparison_direction");
  if (!dir) return hlo_error(b, op, "%s: the direction (EQ, NE, LT, LE, GT, GE) is missing", op->name);
  const char *ty = hlo_op_word(op, types, "compare_type");
  int x = hlo_operand(b, op, 0), y = hlo_operand(b, op, 1);
  if (x < 0 || y < 0) return -1;
  char lower[3] = {(char)(dir[0] | 0x20), (char)(dir[1] | 0x20), 0};
  ir_attrs at = hlo_no_attrs();
  at.spec = ir_intern(b->g, lower);
  at.total = ty && !strcmp(ty, "TOTALORDER");
  int args[2] = {x, y};
  return hlo_emit(b, name, IR_COMPARE, args, 2, &at);
}

/* clamp(min, x, max) = minimum(maximum(x, min), max), as the spec defines
** it (NaN propagates); min and max are scalars or x's shape */
static int do_clamp(hctx *b, const mlir_op *op, const char *name) {
  if (op->noperands != 3) return hlo_error(b, op, "%s takes 3 operands (min, operand, max), given %d", op->name, op->noperands);
  int lo = hlo_operand(b, op, 0), x = hlo_operand(b, op, 1), hi = hlo_operand(b, op, 2);
  if (lo < 0 || x < 0 || hi < 0) return -1;
  const ir_shape *xs = &b->g->vals[x]->shape;
  for (int k = 0; k < 2; k++) {
    const ir_value *m = b->g->vals[k ? hi : lo];
    if (m->shape.rank && !ir_shape_eq(&m->shape, xs))
      return hlo_error(b, op, "%s: %s is %s; it must be a scalar or the operand's shape %s", op->name, k ? "max" : "min",
                      ir_shape_str(&b->tmp, &m->shape), ir_shape_str(&b->tmp, xs));
  }
  int up = hlo_emit(b, hlo_fresh(b, name), IR_MAXIMUM, (int[]){x, lo}, 2, NULL);
  return up < 0 ? -1 : hlo_emit(b, name, IR_MINIMUM, (int[]){up, hi}, 2, NULL);
}

/* is_finite(x) = |x| < inf: false for the infinities and NaN */
static int do_is_finite(hctx *b, const mlir_op *op, const char *name) {
  if (op->noperands != 1) return hlo_error(b, op, "%s takes 1 operand, given %d", op->name, op->noperands);
  int x = hlo_operand(b, op, 0);
  if (x < 0) return -1;
  if (!ir_dtype_isfloat(b->g->vals[x]->dtype))
    return hlo_error(b, op, "%s: the operand is %s; it takes floats", op->name, ir_dtype_name(b->g->vals[x]->dtype));
  int a = hlo_emit(b, hlo_fresh(b, name), IR_ABS, &x, 1, NULL);
  if (a < 0) return -1;
  ir_attrs at = hlo_no_attrs();
  at.spec = ir_intern(b->g, "lt");
  return hlo_emit(b, name, IR_COMPARE, (int[]){a, ir_const_typed(b->g, INFINITY, b->g->vals[x]->dtype)}, 2, &at);
}

/* convert, and bitcast_convert (k = IR_BITCAST) between types of one width */
static int do_convert(hctx *b, const mlir_op *op, const char *name, ir_opkind k) {
  ir_shape s;
  ir_dtype dt;
  if (hlo_result_shape(b, op, &s, &dt) < 0) return -1;
  int x = hlo_operand(b, op, 0);
  if (x < 0) return -1;
  if (b->g->vals[x]->dtype == dt) return x;
  ir_attrs at = hlo_no_attrs();
  at.dtype = dt;
  return hlo_emit(b, name, k, &x, 1, &at);
}

/* ---- functions ---- */

static int build_body(hctx *b, const mlir_func *fn, const int *args, int *outs, int maxouts, int *nouts);
static int run_block(hctx *b, const mlir_block *bl, int *outs, int maxouts, int *nouts);
static int do_while(hctx *b, const mlir_op *op);
static int do_case(hctx *b, const mlir_op *op, int is_if);

static const mlir_func *find_func(hctx *b, const char *name) {
  for (int i = 0; i < b->m->nfuncs; i++) if (b->m->funcs[i]->name == name || !strcmp(b->m->funcs[i]->name, name)) return b->m->funcs[i];
  return NULL;
}

/* How many values op's results name (%0:2 names two). */
static int result_count(const mlir_op *op) {
  int n = 0;
  for (int r = 0; r < op->nresults; r++) n += op->results[r].count;
  return n;
}

/* op's results, in order, bound to the values ids */
static void bind_results(hctx *b, const mlir_op *op, const int *ids) {
  for (int r = 0, k = 0; r < op->nresults; r++)
    for (int j = 0; j < op->results[r].count; j++) hlo_scope_put(&b->tmp, b->sc, op->results[r].name, op->results[r].count > 1 ? j : 0, ids[k++]);
}

/* op's results checked against the types it declares, then bound */
static int check_and_bind(hctx *b, const mlir_op *op, const int *ids) {
  for (int k = 0, n = result_count(op); k < n; k++) {
    const mlir_type *t = hlo_result_type(op, k);
    ir_shape s;
    ir_dtype dt;
    if (t && (hlo_tensor_type(b, t, op->off, &s, &dt) < 0 || hlo_check_result(b, op, ids[k], &s, dt) < 0)) return -1;
  }
  bind_results(b, op, ids);
  return 0;
}

static int do_call(hctx *b, const mlir_op *op) {
  const char *callee = NULL;
  for (int i = 0; i < op->nitems; i++) if (op->items[i].val->kind == MLIR_A_SYMBOL) callee = op->items[i].val->text;
  if (!callee) { const mlir_attr *c = mlir_op_attr(op, "callee"); if (c && c->kind == MLIR_A_SYMBOL) callee = c->text; }
  if (!callee) return hlo_error(b, op, "%s: no callee", op->name);
  const mlir_func *fn = find_func(b, callee);
  if (!fn) return hlo_error(b, op, "%s: no function @%s in this module", op->name, callee);
  if (!fn->body) return hlo_error(b, op, "%s: @%s is only declared; carve inlines calls and needs its body", op->name, callee);
  if (fn->nargs != op->noperands) return hlo_error(b, op, "%s: @%s takes %d arguments, given %d", op->name, callee, fn->nargs, op->noperands);
  if (b->depth >= MAX_CALL_DEPTH) return hlo_error(b, op, "%s: calls nest deeper than %d (a recursive function?)", op->name, MAX_CALL_DEPTH);
  int *args = arena_alloc(&b->tmp, sizeof(int) * (size_t)(fn->nargs + 1));
  for (int k = 0; k < fn->nargs; k++) if ((args[k] = hlo_operand(b, op, k)) < 0) return -1;
  int nres = result_count(op);
  int *outs = arena_alloc(&b->tmp, sizeof(int) * (size_t)(nres + fn->nresults + 1)), nouts = 0;
  /* the callee's values are named under the call's path */
  const char *cn = hlo_clean_name(b, callee);
  int c = 0;
  while (c < b->ncallees && b->callees[c] != fn->name) c++;
  if (c == b->ncallees) {
    b->callees = arena_grow(&b->tmp, b->callees, (size_t)c, (size_t)c + 1, sizeof *b->callees);
    b->ncalls = arena_grow(&b->tmp, b->ncalls, (size_t)c, (size_t)c + 1, sizeof *b->ncalls);
    b->callees[c] = fn->name;
    b->ncallees++;
  }
  int nth = ++b->ncalls[c];
  char pre[512];
  if (nth > 1) snprintf(pre, sizeof pre, "%s%s%d.", b->prefix, cn ? cn : "f", nth);
  else snprintf(pre, sizeof pre, "%s%s.", b->prefix, cn ? cn : "f");
  const char *saved_prefix = b->prefix;
  scope *saved = b->sc, inner = {0};
  const mlir_op *saved_op = b->op;
  b->prefix = arena_strndup(&b->tmp, pre, strlen(pre));
  b->sc = &inner;
  b->depth++;
  int rc = build_body(b, fn, args, outs, nres + fn->nresults, &nouts);
  b->depth--;
  b->sc = saved;
  b->prefix = saved_prefix;
  b->op = saved_op;
  if (rc < 0) return -1;
  if (nouts != nres) return hlo_error(b, op, "%s: @%s returns %d values; the call names %d", op->name, callee, nouts, nres);
  bind_results(b, op, outs);
  return 0;
}

static int sdy_sharding(hctx *b, const mlir_attr *s, int id, hlo_info *info);

/* sdy.sharding_constraint %x <@mesh, [{}, {"y"}]>: x itself, its sharding
** kept for --tactics-out (a `shard value` statement) */
static int do_constraint(hctx *b, const mlir_op *op) {
  if (op->noperands != 1) return hlo_error(b, op, "%s takes 1 operand, given %d", op->name, op->noperands);
  int x = hlo_operand(b, op, 0);
  if (x < 0) return -1;
  for (int i = 0; i < op->nitems; i++)
    if (op->items[i].val->kind == MLIR_A_ANGLE) return sdy_sharding(b, op->items[i].val, x, b->info) < 0 ? -1 : x;
  return hlo_error(b, op, "%s: no <@mesh, [...]> sharding after the operand", op->name);
}

/* custom_call: @Sharding (with_sharding_constraint under GSPMD) passes its
** operand through; its mhlo.sharding is not read */
static int do_custom_call(hctx *b, const mlir_op *op) {
  const char *t = NULL;
  for (int i = 0; i < op->nitems && !t; i++)
    if (op->items[i].val->kind == MLIR_A_SYMBOL) t = op->items[i].val->text;
  if (t && !strcmp(t, "Sharding")) {
    if (op->noperands != 1) return hlo_error(b, op, "custom_call @Sharding takes 1 operand, given %d", op->noperands);
    return hlo_operand(b, op, 0);
  }
  if (t && !strncmp(t, "SPMD", 4))
    return hlo_error(b, op, "custom_call @%s (a shard_map) is not supported: carve partitions the whole program itself; "
                    "export the function without shard_map", t);
  return hlo_error(b, op, "custom_call @%s is not supported; carve reads @Sharding (passed through)", t ? t : "?");
}

/* optimization_barrier (jax.checkpoint's): each result is its operand */
static int do_barrier(hctx *b, const mlir_op *op) {
  int n = result_count(op);
  if (n != op->noperands) return hlo_error(b, op, "%s has %d operands but %d results", op->name, op->noperands, n);
  int *ids = arena_alloc(&b->tmp, sizeof(int) * (size_t)(n + 1));
  for (int k = 0; k < n; k++) if ((ids[k] = hlo_operand(b, op, k)) < 0) return -1;
  bind_results(b, op, ids);
  return 0;
}

static const char *const supported =
  "constant, broadcast_in_dim, reshape, transpose, convert, bitcast_convert (same width), slice, concatenate, iota, gather (rows), scatter (rows, add), "
  "tensor.insert_slice, dot_general, dot, "
  "reduce (add, maximum, minimum, and, or), compare, select, add, subtract, multiply, divide, maximum, minimum, power, "
  "negate, abs, sign, exponential, exponential_minus_one, log, log_plus_one, sqrt, rsqrt, tanh, logistic, sine, cosine, "
  "tan, cbrt, remainder, atan2, popcnt, count_leading_zeros, shift_left, shift_right_arithmetic, shift_right_logical, "
  "floor, ceil, round_nearest_even, round_nearest_afz, clamp, is_finite, not, and, or, xor, chlo.erf, call, "
  "optimization_barrier, sdy.sharding_constraint, custom_call @Sharding, while (unrolled), case and if (as select), pad, reverse, convolution, "
  "reduce_window (add, maximum, minimum, and, or), select_and_scatter (a comparison, add), dynamic_slice and dynamic_update_slice (at indices known when carve reads "
  "the program)";

/* One op of a function body: binds its results in the scope. */
static int build_op(hctx *b, const mlir_op *op) {
  b->op = op;
  const char *sn = hlo_short_name(op->name);
  if (!strcmp(sn, "call")) return do_call(b, op);
  if (!strcmp(sn, "optimization_barrier")) return do_barrier(b, op);
  if (!strcmp(sn, "while")) return do_while(b, op);
  if (!strcmp(sn, "case") || !strcmp(sn, "if")) return do_case(b, op, sn[0] == 'i');
  if (!strcmp(sn, "reduce") && result_count(op) != 1) return do_reduce_tree(b, op) < 0 ? -1 : 0;
  if (op->nresults != 1 || op->results[0].count != 1) {
    if (op->nresults == 0) return hlo_error(b, op, "'%s' has no result; carve imports ops that compute values (%s)", op->name, supported);
    return hlo_error(b, op, "'%s' with several results is not supported", op->name);
  }
  const char *name = hlo_value_name(b, op, 0);
  int id = -2;
  if (!strcmp(op->name, "sdy.constant") || !strcmp(sn, "constant")) id = do_constant(b, op);
  else if (!strcmp(sn, "broadcast_in_dim")) id = do_broadcast_in_dim(b, op, name);
  else if (!strcmp(sn, "reshape")) {
    ir_shape s;
    ir_dtype dt;
    int x = hlo_operand(b, op, 0);
    id = x < 0 || hlo_result_shape(b, op, &s, &dt) < 0 ? -1 : hlo_reshape(b, name, x, &s);
  }
  else if (!strcmp(sn, "transpose")) id = do_transpose(b, op, name);
  else if (!strcmp(sn, "convert")) id = do_convert(b, op, name, IR_CONVERT);
  else if (!strcmp(sn, "bitcast_convert")) id = do_convert(b, op, name, IR_BITCAST);
  else if (!strcmp(sn, "slice")) id = do_slice(b, op, name);
  else if (!strcmp(sn, "concatenate")) id = do_concatenate(b, op, name);
  else if (!strcmp(sn, "iota")) id = do_iota(b, op, name);
  else if (!strcmp(sn, "gather")) id = hlo_gather(b, op, name);
  else if (!strcmp(sn, "dot_general")) id = do_dot_general(b, op, name, 0);
  else if (!strcmp(sn, "dot")) id = do_dot_general(b, op, name, 1);
  else if (!strcmp(sn, "reduce")) id = do_reduce(b, op, name);
  else if (!strcmp(sn, "compare")) id = do_compare(b, op, name);
  else if (!strcmp(sn, "clamp")) id = do_clamp(b, op, name);
  else if (!strcmp(sn, "dynamic_slice")) id = do_dynamic_slice(b, op, name);
  else if (!strcmp(sn, "pad")) id = hlo_pad(b, op, name);
  else if (!strcmp(sn, "convolution")) id = hlo_convolution(b, op, name);
  else if (!strcmp(sn, "reduce_window")) id = hlo_reduce_window(b, op, name);
  else if (!strcmp(sn, "select_and_scatter")) id = hlo_select_and_scatter(b, op, name);
  else if (!strcmp(sn, "reverse")) id = hlo_reverse(b, op, name);
  else if (!strcmp(sn, "dynamic_update_slice")) id = do_dynamic_update_slice(b, op, name);
  else if (!strcmp(op->name, "sdy.sharding_constraint")) id = do_constraint(b, op);
  else if (!strcmp(sn, "custom_call")) id = do_custom_call(b, op);
  else if (!strcmp(sn, "is_finite")) id = do_is_finite(b, op, name);
  else if (!strcmp(op->name, "tensor.insert_slice")) id = do_insert_slice(b, op, name);
  else if (!strcmp(sn, "scatter")) id = hlo_scatter(b, op, name);
  else {
    for (size_t i = 0; i < sizeof ewops / sizeof ewops[0]; i++) {
      if (strcmp(sn, ewops[i].name) || !strchr(op->name, '.')) continue;
      if (op->noperands != ewops[i].arity)
        return hlo_error(b, op, "%s takes %d operand%s, given %d", op->name, ewops[i].arity, ewops[i].arity > 1 ? "s" : "", op->noperands);
      int args[3];
      for (int k = 0; k < ewops[i].arity; k++) if ((args[k] = hlo_operand(b, op, k)) < 0) return -1;
      id = hlo_emit(b, name, ewops[i].op, args, ewops[i].arity, NULL);
      break;
    }
  }
  if (id == -2) return hlo_error(b, op, "'%s' is not supported by carve import; it reads %s", op->name, supported);
  if (id < 0) return -1;
  ir_shape s;
  ir_dtype dt;
  if (hlo_result_type(op, 0)) {
    if (hlo_result_shape(b, op, &s, &dt) < 0) return -1;
    if (b->elementwise) s = b->g->vals[id]->shape;   /* a region applied to whole tensors: its types give the dtype only */
    if (hlo_check_result(b, op, id, &s, dt) < 0) return -1;
  }
  hlo_scope_put(&b->tmp, b->sc, op->results[0].name, 0, id);
  return 0;
}

static int build_body(hctx *b, const mlir_func *fn, const int *args, int *outs, int maxouts, int *nouts) {
  const mlir_region *r = fn->body;
  if (!r || r->nblocks < 1) return diag_error(b->d, L(b, fn->off), "@%s has no body", fn->name);
  if (r->nblocks > 1) return diag_error(b->d, L(b, r->blocks[1]->off), "@%s has several blocks (control flow); carve imports straight-line functions", fn->name);
  const mlir_block *bl = r->blocks[0];
  for (int k = 0; k < fn->nargs; k++) {
    const char *an = fn->args[k].name ? fn->args[k].name : (k < bl->nargs ? bl->args[k].name : NULL);
    if (an) hlo_scope_put(&b->tmp, b->sc, an, 0, args[k]);
  }
  int rc = run_block(b, bl, outs, maxouts, nouts);
  return rc == -2 ? diag_error(b->d, L(b, fn->off), "@%s does not end with a return", fn->name) : rc;
}

/* The ops of bl up to its return, whose operands go to outs; -2 when it
** has no return. */
static int run_block(hctx *b, const mlir_block *bl, int *outs, int maxouts, int *nouts) {
  for (int i = 0; i < bl->nops; i++) {
    const mlir_op *op = bl->ops[i];
    if (!strcmp(hlo_short_name(op->name), "return")) {
      *nouts = 0;
      for (int k = 0; k < op->noperands; k++) {
        b->op = op;
        int id = hlo_operand(b, op, k);
        if (id < 0) return -1;
        if (*nouts < maxouts) outs[*nouts] = id;
        ++*nouts;
      }
      return 0;
    }
    if (build_op(b, op) < 0) return -1;
  }
  return -2;
}

#define MAX_UNROLL 100000     /* iterations, all the program's loops together (nested ones too) */

/* The names a while region gives the loop's values: its block's arguments
** (generic form), else the keys of (%iterArg = %init, ...) */
static const char *loop_name(const mlir_op *op, const mlir_block *bl, int k) {
  if (k < bl->nargs) return bl->args[k].name;
  for (int i = 0, j = 0; i < op->nitems; i++) {
    const mlir_attr *g = op->items[i].val;
    if (g->kind != MLIR_A_GROUP) continue;
    for (int q = 0; q < g->nitems; q++)
      if (g->items[q].key && g->items[q].key[0] == '%' && j++ == k) return g->items[q].key;
  }
  return NULL;
}

/* One region of a while: its names bound to vals, its ops run; what it
** returns goes to outs (got: how many). */
static int run_region(hctx *b, const mlir_op *op, const mlir_block *bl, const int *vals, int n, int *outs, int *got) {
  for (int k = 0; k < n; k++) {
    const char *nm = loop_name(op, bl, k);
    if (!nm) return hlo_error(b, op, "%s: the loop's value %d has no name", op->name, k);
    hlo_scope_put(&b->tmp, b->sc, nm, 0, vals[k]);
  }
  int rc = run_block(b, bl, outs, n, got);
  b->op = op;
  return rc == -2 ? hlo_error(b, op, "%s: a region does not end with stablehlo.return", op->name) : rc;
}

/* while: unrolled, iteration by iteration, while its condition is known
** when carve reads it (a counter from constants: lax.scan, fori_loop);
** the values of iteration N are named iN.NAME */
static int do_while(hctx *b, const mlir_op *op) {
  int n = op->noperands, total = result_count(op);
  if (op->nregions != 2 || op->regions[0]->nblocks != 1 || op->regions[1]->nblocks != 1)
    return hlo_error(b, op, "%s needs a cond region and a body region of one block each", op->name);
  if (total != n) return hlo_error(b, op, "%s has %d operands but %d results", op->name, n, total);
  const mlir_block *cond = op->regions[0]->blocks[0], *body = op->regions[1]->blocks[0];
  int *vals = arena_alloc(&b->tmp, sizeof(int) * (size_t)(n + 1)), *outs = arena_alloc(&b->tmp, sizeof(int) * (size_t)(n + 1));
  for (int k = 0; k < n; k++) if ((vals[k] = hlo_operand(b, op, k)) < 0) return -1;
  const char *saved_prefix = b->prefix;
  int rc = 0;
  for (int it = 0; rc == 0; it++) {
    if (++b->unrolled > MAX_UNROLL) {
      rc = hlo_error(b, op, "%s: the program's loops run more than %d iterations in all; carve unrolls loops", op->name, MAX_UNROLL);
      break;
    }
    char pre[512];
    snprintf(pre, sizeof pre, "%si%d.", saved_prefix, it);
    b->prefix = arena_strndup(&b->tmp, pre, strlen(pre));
    int got = 0;
    if ((rc = run_region(b, op, cond, vals, n, outs, &got)) < 0) break;
    const ir_value *c = got == 1 ? b->g->vals[outs[0]] : NULL;
    if (!c || c->dtype != IR_I1 || c->shape.rank != 0) { rc = hlo_error(b, op, "%s: the condition must return one i1", op->name); break; }
    if (c->kind != IR_CONST) {
      rc = hlo_error(b, op, "%s: the condition is computed at run time ('%s'); carve unrolls loops whose condition it can compute "
                    "when it reads the program (a counter from constants, as lax.scan and fori_loop write)", op->name, c->name);
      break;
    }
    if (c->attr.scalar == 0) break;
    if ((rc = run_region(b, op, body, vals, n, outs, &got)) < 0) break;
    if (got != n) { rc = hlo_error(b, op, "%s: the body returns %d values for %d", op->name, got, n); break; }
    memcpy(vals, outs, sizeof(int) * (size_t)n);
  }
  b->prefix = saved_prefix;
  if (rc < 0) return -1;
  bind_results(b, op, vals);
  return 0;
}

/* case(index) {branch 0}, {branch 1}, ... and if(pred) {true}, {false}
** (lax.switch, lax.cond): with an index known when carve reads the
** program, the branch it picks (an index out of range picks the last, as
** the spec says); otherwise every branch runs and select picks each
** result, so the gradient flows into the branch taken. Branch K's values
** are named bK.NAME. */
static int do_case(hctx *b, const mlir_op *op, int is_if) {
  int n = result_count(op), nb = op->nregions;
  if (op->noperands != 1) return hlo_error(b, op, "%s takes one operand (the %s), given %d", op->name, is_if ? "predicate" : "index", op->noperands);
  if (nb < 1 || (is_if && nb != 2)) return hlo_error(b, op, "%s needs %s regions, has %d", op->name, is_if ? "2" : "1 or more", nb);
  int ix = hlo_operand(b, op, 0);
  if (ix < 0) return -1;
  const ir_value *iv = b->g->vals[ix];
  if (iv->shape.rank != 0 || (is_if ? iv->dtype != IR_I1 : !ir_dtype_isint(iv->dtype)))
    return hlo_error(b, op, "%s: the %s must be a scalar %s, not %s%s", op->name, is_if ? "predicate" : "index", is_if ? "i1" : "integer",
                     ir_dtype_name(iv->dtype), ir_shape_str(&b->tmp, &iv->shape));
  int known = -1;                           /* the branch a known index picks */
  if (iv->kind == IR_CONST) {
    int64_t k = (int64_t)iv->attr.scalar;
    known = is_if ? (k ? 0 : 1) : (k < 0 || k >= nb ? nb - 1 : (int)k);
  }
  int *res = arena_alloc(&b->tmp, sizeof(int) * (size_t)(n + 1)), *outs = arena_alloc(&b->tmp, sizeof(int) * (size_t)(n + 1));
  const char *saved_prefix = b->prefix;
  int rc = 0;
  for (int br = nb - 1; br >= 0 && rc == 0; br--) {
    if (known >= 0 && br != known) continue;
    const mlir_region *r = op->regions[br];
    if (r->nblocks != 1 || r->blocks[0]->nargs) { rc = hlo_error(b, op, "%s: branch %d must be one block without arguments", op->name, br); break; }
    char pre[512];
    snprintf(pre, sizeof pre, "%sb%d.", saved_prefix, br);
    b->prefix = arena_strndup(&b->tmp, pre, strlen(pre));
    int got = 0;
    rc = run_block(b, r->blocks[0], outs, n, &got);
    b->op = op;
    if (rc == -2) { rc = hlo_error(b, op, "%s: branch %d does not end with stablehlo.return", op->name, br); break; }
    if (rc < 0) break;
    if (got != n) { rc = hlo_error(b, op, "%s: branch %d returns %d values for %d results", op->name, br, got, n); break; }
    b->prefix = saved_prefix;
    if (known >= 0 || br == nb - 1) { memcpy(res, outs, sizeof(int) * (size_t)n); continue; }
    int pred = ix;                          /* if: the predicate; case: index == br */
    if (!is_if) {
      ir_attrs at = hlo_no_attrs();
      at.spec = ir_intern(b->g, "eq");
      int args[2] = {ix, ir_const_typed(b->g, br, iv->dtype)};
      if ((pred = hlo_emit(b, hlo_fresh(b, "case"), IR_COMPARE, args, 2, &at)) < 0) { rc = -1; break; }
    }
    for (int k = 0; k < n && rc == 0; k++) {
      const ir_value *t = b->g->vals[outs[k]], *e = b->g->vals[res[k]];
      if (t->dtype != e->dtype || !ir_shape_eq(&t->shape, &e->shape)) {
        rc = hlo_error(b, op, "%s: result %d is %s%s in branch %d but %s%s in branch %d", op->name, k, ir_dtype_name(t->dtype),
                       ir_shape_str(&b->tmp, &t->shape), br, ir_dtype_name(e->dtype), ir_shape_str(&b->tmp, &e->shape), nb - 1);
        break;
      }
      int args[3] = {pred, outs[k], res[k]};
      if ((res[k] = hlo_emit(b, hlo_value_name(b, op, k), IR_SELECT, args, 3, NULL)) < 0) rc = -1;
    }
  }
  b->prefix = saved_prefix;
  if (rc < 0) return -1;
  return check_and_bind(b, op, res);
}

/* the binary op of a compact reduce ("applies stablehlo.multiply"), or IR_NOPS */
static ir_opkind compact_op(const mlir_op *op) {
  for (int i = 0; i + 1 < op->nitems; i++)
    if (!op->items[i].key && op->items[i].val->kind == MLIR_A_WORD && !strcmp(op->items[i].val->text, "applies") &&
        op->items[i + 1].val->kind == MLIR_A_WORD) {
      const char *fn = hlo_short_name(op->items[i + 1].val->text);
      for (size_t j = 0; j < sizeof ewops / sizeof ewops[0]; j++)
        if (ewops[j].arity == 2 && !strcmp(ewops[j].name, fn)) return ewops[j].op;
    }
  return IR_NOPS;
}

/* One application of a reduce region to whole tensors: its accumulator
** arguments bound to acc, its element arguments to x, its results to
** acc. pretty: the arguments are written in pairs per operand. */
static int apply_region(hctx *b, const mlir_op *op, const mlir_block *bl, int k, int pretty, int *acc, const int *x) {
  if (!bl) {                       /* the compact form's "applies OP" (k = 1): one binary op */
    int args[2] = {acc[0], x[0]};
    return (acc[0] = hlo_emit(b, hlo_fresh(b, "reduce"), compact_op(op), args, 2, NULL)) < 0 ? -1 : 0;
  }
  for (int i = 0; i < k; i++) {
    hlo_scope_put(&b->tmp, b->sc, bl->args[pretty ? 2 * i : i].name, 0, acc[i]);
    hlo_scope_put(&b->tmp, b->sc, bl->args[pretty ? 2 * i + 1 : k + i].name, 0, x[i]);
  }
  int got = 0, out[8];
  b->elementwise++;
  int rc = run_block(b, bl, out, k, &got);
  b->elementwise--;
  b->op = op;
  if (rc == -2) return hlo_error(b, op, "%s: the region does not end with stablehlo.return", op->name);
  if (rc < 0) return -1;
  if (got != k) return hlo_error(b, op, "%s: the region returns %d values for %d operands", op->name, got, k);
  memcpy(acc, out, sizeof(int) * (size_t)k);
  return 0;
}

static int slice_last(hctx *b, int x, int64_t lo, int64_t hi) {
  ir_attrs at = hlo_no_attrs();
  at.dim = b->g->vals[x]->shape.rank - 1;
  at.start = lo;
  at.end = hi;
  return hlo_emit(b, hlo_fresh(b, "reduce"), IR_SLICE, &x, 1, &at);
}

/* reduce of any region (argmax's pairs of value and index, products,
** bitwise and/or of integers): the reduced dims go last as one dim of n
** elements, and the region, applied elementwise to whole tensors, combines
** the first half with the second, level by level (an odd last element
** waits for the next level), then the init with what is left: log2(n)
** copies of the region, named rL.NAME. The spec leaves the order of a
** reduction to the implementation; argmax's region breaks ties by index,
** so it gives the first maximum in any order. */
static int do_reduce_tree(hctx *b, const mlir_op *op) {
  int k = result_count(op), pretty = op->nregions == 1 && op->regions[0]->label && !strcmp(op->regions[0]->label, "reducer");
  if (k < 1 || k > 8 || op->noperands != 2 * k)
    return hlo_error(b, op, "%s: %d operands for %d results (each operand needs its init)", op->name, op->noperands, k);
  const mlir_block *bl = op->nregions == 1 && op->regions[0]->nblocks == 1 ? op->regions[0]->blocks[0] : NULL;
  if (bl ? bl->nargs != 2 * k : k != 1 || compact_op(op) == IR_NOPS)
    return hlo_error(b, op, "%s: the reducer is not supported; carve reduces with add, maximum, minimum, and, or, or a region of %d "
                     "arguments applied elementwise", op->name, 2 * k);
  int xs[8], cur[8], lhs[8], rhs[8], res[8];
  for (int i = 0; i < k; i++) {
    xs[i] = hlo_operand(b, op, pretty ? 2 * i : i);
    res[i] = hlo_operand(b, op, pretty ? 2 * i + 1 : k + i);
    if (xs[i] < 0 || res[i] < 0) return -1;
    if (!ir_shape_eq(&b->g->vals[xs[i]]->shape, &b->g->vals[xs[0]]->shape) || b->g->vals[res[i]]->shape.rank)
      return hlo_error(b, op, "%s: the operands must have one shape and the inits be scalars", op->name);
  }
  int64_t dims[IR_MAXRANK], n = 1;
  int nd = hlo_ints(b, op, "dimensions", NULL, dims, IR_MAXRANK);
  if (nd < 0) return -1;
  ir_shape xsh = b->g->vals[xs[0]]->shape, kept = {.rank = 0}, flat;
  int red[IR_MAXRANK] = {0};
  ir_attrs tr = hlo_no_attrs();
  tr.ndims = xsh.rank;
  for (int i = 0; i < nd; i++) {
    if (dims[i] < 0 || dims[i] >= xsh.rank || red[dims[i]]) return hlo_error(b, op, "%s: dimensions must be distinct dims of the operand", op->name);
    red[dims[i]] = 1;
  }
  int np = 0, moved = 0;
  for (int d = 0; d < xsh.rank; d++) if (!red[d]) { tr.dims[np++] = d; kept.d[kept.rank++] = xsh.d[d]; }
  for (int i = 0; i < nd; i++) { tr.dims[np++] = (int)dims[i]; n *= xsh.d[dims[i]]; }
  for (int d = 0; d < xsh.rank; d++) moved |= tr.dims[d] != d;
  flat = kept;
  flat.d[flat.rank++] = n;
  for (int i = 0; i < k; i++) {
    cur[i] = moved ? hlo_emit(b, hlo_fresh(b, "reduce"), IR_TRANSPOSE, &xs[i], 1, &tr) : xs[i];
    if (cur[i] < 0 || (cur[i] = hlo_reshape(b, hlo_fresh(b, "reduce"), cur[i], &flat)) < 0) return -1;
  }
  const char *saved_prefix = b->prefix;
  int rc = 0;
  for (int level = 0; rc == 0 && n >= 1; level++) {
    char pre[512];
    snprintf(pre, sizeof pre, "%sr%d.", saved_prefix, level);
    b->prefix = arena_strndup(&b->tmp, pre, strlen(pre));
    if (n == 1) {                    /* the init, then what is left */
      for (int i = 0; i < k && rc == 0; i++) if ((cur[i] = hlo_reshape(b, hlo_fresh(b, "reduce"), cur[i], &kept)) < 0) rc = -1;
      if (rc == 0) rc = apply_region(b, op, bl, k, pretty, res, cur);
      break;
    }
    int64_t h = n / 2;
    for (int i = 0; i < k && rc == 0; i++)
      if ((lhs[i] = slice_last(b, cur[i], 0, h)) < 0 || (rhs[i] = slice_last(b, cur[i], h, 2 * h)) < 0) rc = -1;
    if (rc == 0) rc = apply_region(b, op, bl, k, pretty, lhs, rhs);
    for (int i = 0; i < k && rc == 0; i++) {
      int parts[2] = {lhs[i], n & 1 ? slice_last(b, cur[i], 2 * h, n) : -1};
      ir_attrs cat = hlo_no_attrs();
      cat.dim = flat.rank - 1;
      if (n & 1) cur[i] = parts[1] < 0 ? -1 : hlo_emit(b, hlo_fresh(b, "reduce"), IR_CONCAT, parts, 2, &cat);
      else cur[i] = lhs[i];
      if (cur[i] < 0) rc = -1;
    }
    n = h + (n & 1);
  }
  b->prefix = saved_prefix;
  if (rc < 0) return -1;
  if (n == 0) {                      /* nothing reduced: the inits, broadcast */
    for (int i = 0; i < k; i++) {
      ir_attrs at = hlo_no_attrs();
      at.to = kept;
      if (kept.rank && (res[i] = hlo_emit(b, hlo_fresh(b, "reduce"), IR_BROADCAST, &res[i], 1, &at)) < 0) return -1;
    }
  }
  return check_and_bind(b, op, res) < 0 ? -1 : res[0];
}

/* ---- the entry function's arguments ---- */

static const char *arg_name(hctx *b, const mlir_func *fn, int k) {
  const mlir_arg *a = &fn->args[k];
  const mlir_attr *info = mlir_attr_get(a->attrs, "jax.arg_info");
  const char *n = info && info->kind == MLIR_A_STRING ? hlo_clean_name(b, info->text) : NULL;
  const mlir_loc *l = a->loc;
  while (!n && l && l->kind == MLIR_L_ALIAS && l->child) l = l->child;
  if (!n && l && l->kind == MLIR_L_NAME && l->text) n = hlo_clean_name(b, l->text);
  if (!n && a->name) n = hlo_clean_name(b, a->name);
  if (!n) n = arena_printf(&b->tmp, "arg%d", k);
  return n;
}

static int is_param(const hlo_opts *o, const char *name, const ir_value *v) {
  if (!o || !o->params) return ir_dtype_isfloat(v->dtype) && v->shape.rank >= 1;
  char pat[256];
  for (const char *p = o->params; *p; ) {
    size_t n = strcspn(p, ",");
    while (n && *p == ' ') { p++; n--; }
    size_t m = n;
    while (m && p[m - 1] == ' ') m--;
    if (m && m < sizeof pat) {
      memcpy(pat, p, m);
      pat[m] = 0;
      if (!fnmatch(pat, name, 0)) return 1;
    }
    p += n;
    if (*p == ',') p++;
  }
  return 0;
}

/* A sharding of value id, into info: an argument's #sdy.sharding<@mesh,
** [{"x"}, {}]> or a constraint's <@mesh, [...]> (s: either attribute) */
static int sdy_sharding(hctx *b, const mlir_attr *s, int id, hlo_info *info) {
  if (!s || !info) return 0;
  const mlir_attr *dims = NULL;
  for (int i = 0; i < s->nitems; i++) if (s->items[i].val->kind == MLIR_A_LIST) dims = s->items[i].val;
  const ir_value *v = b->g->vals[id];
  if (!dims || dims->nitems != v->shape.rank)
    return diag_error(b->d, L(b, s->off), "sdy.sharding of '%s' must list %d dims", v->name, v->shape.rank);
  hlo_sharding sh = {.value = id, .rank = v->shape.rank};
  int any = 0;
  for (int i = 0; i < dims->nitems; i++) {
    const mlir_attr *dd = dims->items[i].val;
    for (int j = 0; j < dd->nitems; j++) {
      const mlir_attr *ax = dd->items[j].val;
      if (dd->items[j].key || ax->kind != MLIR_A_STRING) continue;   /* '?' (open) and keyed items */
      int known = 0;
      for (int q = 0; q < info->naxes; q++) known |= !strcmp(info->axis[q], ax->text);
      if (!known) return diag_error(b->d, L(b, ax->off), "axis \"%s\" is not in the module's sdy.mesh", ax->text);
      if (sh.naxes[i] < HLO_MAXAXES) sh.axes[i][sh.naxes[i]++] = ir_intern(b->g, ax->text);
      any = 1;
    }
  }
  if (!any) return 0;
  info->shardings = arena_grow(&b->g->mem, info->shardings, (size_t)info->nshardings, (size_t)info->nshardings + 1, sizeof(hlo_sharding));
  info->shardings[info->nshardings++] = sh;
  return 0;
}

static int arg_sharding(hctx *b, const mlir_arg *a, int id, hlo_info *info) {
  return sdy_sharding(b, mlir_attr_get(a->attrs, "sdy.sharding"), id, info);
}

/* ---- GSPMD's mhlo.sharding strings ----
** "{devices=[1,2]<=[2]}", "{devices=[2,1]0,1}", "{replicated}",
** "{devices=[2,1,2]<=[4] last_tile_dim_replicate}": tile counts per dim
** over the devices in row-major order. A mesh is made from them all
** (axes _axis_0, _axis_1, ... major first), so that each split dim is a
** run of its axes, as an sdy mesh would say. */

typedef struct hlo_tiles {
  int arg;                 /* the argument's value id */
  uint32_t off;            /* the string, for messages */
  int n;                   /* tile dims (the value's rank, plus one when the last replicates) */
  int64_t t[IR_MAXRANK + 1];
  int64_t devices;
} hlo_tiles;

typedef struct shparse { const char *s; size_t i; } shparse;

static void sp_ws(shparse *p) { while (p->s[p->i] == ' ') p->i++; }
static int sp_lit(shparse *p, const char *w) {
  sp_ws(p);
  size_t n = strlen(w);
  if (strncmp(p->s + p->i, w, n)) return 0;
  p->i += n;
  return 1;
}
static int sp_int(shparse *p, int64_t *x) {
  sp_ws(p);
  if (p->s[p->i] < '0' || p->s[p->i] > '9') return 0;
  *x = 0;
  while (p->s[p->i] >= '0' && p->s[p->i] <= '9') {
    if (*x > ((int64_t)1 << 40)) return 0;
    *x = *x * 10 + (p->s[p->i++] - '0');
  }
  return 1;
}
/* "[a,b,c]" (brackets optional: a bare device list) */
static int sp_ints(shparse *p, int64_t *out, int max, int bracket) {
  int n = 0;
  if (bracket && !sp_lit(p, "[")) return -1;
  do {
    int64_t x;
    if (!sp_int(p, &x)) return -1;
    if (n < max) out[n] = x;
    n++;
  } while (sp_lit(p, ","));
  if (bracket && !sp_lit(p, "]")) return -1;
  return n;
}

/* 0: read into t (t->n = 0: replicated); 1: a form carve cannot express
** (warned); -1: malformed (an error) */
static int read_hlo_sharding(hctx *b, const mlir_attr *a, int rank, hlo_tiles *t) {
  const char *str = a->text;
  shparse p = {str, 0};
  memset(t, 0, sizeof *t);
  t->off = a->off;
#define BAD(what) return diag_error(b->d, L(b, a->off + 1 + (uint32_t)p.i), "mhlo.sharding \"%s\": %s", str, what)
#define UNSUPPORTED(what) return diag_warning(b->d, L(b, a->off), "mhlo.sharding \"%s\": %s; the argument is imported unsplit", str, what), 1
  if (!sp_lit(&p, "{")) BAD("expected '{'");
  if (sp_lit(&p, "replicated")) { if (!sp_lit(&p, "}")) BAD("expected '}' after replicated"); sp_ws(&p); if (str[p.i]) BAD("text after the sharding"); return 0; }
  if (sp_lit(&p, "maximal")) UNSUPPORTED("a value on one device (maximal) is not supported; carve splits values over a mesh");
  if (sp_lit(&p, "manual")) UNSUPPORTED("manual shardings are not supported");
  if (sp_lit(&p, "{")) UNSUPPORTED("tuple shardings are not supported");
  if (!sp_lit(&p, "devices=")) BAD("expected 'replicated', 'maximal' or 'devices=[...]'");
  int64_t dims[IR_MAXRANK + 2], list[IR_MAXRANK + 2];
  int n = sp_ints(&p, dims, IR_MAXRANK + 2, 1);
  if (n < 0) BAD("expected the tile counts [n, ...]");
  if (n > IR_MAXRANK + 1) BAD("too many tile dims");
  int64_t total = 1;
  for (int i = 0; i < n; i++) {
    if (dims[i] < 1) BAD("tile counts must be positive");
    if (total > ((int64_t)1 << 30) / dims[i]) BAD("too many devices");
    total *= dims[i];
  }
  int iota = 1;
  if (sp_lit(&p, "<=")) {
    int m = sp_ints(&p, list, IR_MAXRANK + 2, 1);
    if (m < 0) BAD("expected the device shape <=[n, ...]");
    int64_t cnt = 1;
    for (int i = 0; i < m && i < IR_MAXRANK + 2; i++) cnt *= list[i] ? list[i] : 1;
    if (cnt != total) BAD("the device shape does not hold as many devices as the tiles");
    if (sp_lit(&p, "T(")) {
      int64_t perm[IR_MAXRANK + 2];
      int k = sp_ints(&p, perm, IR_MAXRANK + 2, 0);
      if (k < 0 || !sp_lit(&p, ")")) BAD("expected T(i, ...)");
      for (int i = 0; i < k && i < IR_MAXRANK + 2; i++) iota &= perm[i] == i || list[perm[i]] == 1;
    }
  } else {
    int64_t dev = 0;
    int64_t k = 0;
    do {
      if (!sp_int(&p, &dev)) BAD("expected the device list");
      iota &= dev == k;
      k++;
    } while (sp_lit(&p, ","));
    if (k != total) BAD("the device list does not hold one device per tile");
  }
  int repl = 0;
  for (;;) {
    if (sp_lit(&p, "last_tile_dim_replicate")) { repl = 1; continue; }
    if (sp_lit(&p, "last_tile_dims=")) UNSUPPORTED("last_tile_dims (manual or subgroup tiles) is not supported");
    break;
  }
  if (!sp_lit(&p, "}")) BAD("expected '}'");
  sp_ws(&p);
  if (str[p.i]) BAD("text after the sharding");
  if (!iota) UNSUPPORTED("devices in an order other than the mesh's (a transposed or listed permutation) are not supported");
  if (n != rank + repl) {
    p.i = 0;
    BAD(arena_printf(&b->tmp, "%d tile counts for a value of rank %d%s", n, rank, repl ? " (plus the replicated one)" : ""));
  }
#undef BAD
#undef UNSUPPORTED
  t->n = n;
  for (int i = 0; i < n; i++) t->t[i] = dims[i];
  t->devices = total;
  if (repl) t->t[n - 1] = -t->t[n - 1];     /* marks the replicated tile dim */
  return 0;
}

/* The mesh of every argument's tiles and each one's axes, into info. */
static int hlo_sharding_mesh(hctx *b, const hlo_tiles *ts, int nts, hlo_info *info) {
  int64_t bound[64];
  int nb = 0;
  int64_t total = 0;
  for (int k = 0; k < nts; k++) {
    const hlo_tiles *t = &ts[k];
    if (total && t->devices != total)
      return diag_error(b->d, L(b, t->off), "mhlo.sharding: this argument is tiled over %lld devices, an earlier one over %lld; "
                        "carve needs one mesh", (long long)t->devices, (long long)total);
    total = t->devices;
    int64_t stride = 1;
    for (int i = t->n - 1; i >= 0; i--) {
      int64_t c = t->t[i] < 0 ? -t->t[i] : t->t[i];
      int64_t marks[2] = {stride, stride * c};
      for (int m = 0; m < 2; m++) {
        int have = 0;
        for (int j = 0; j < nb; j++) have |= bound[j] == marks[m];
        if (!have && nb < 64) bound[nb++] = marks[m];
      }
      stride *= c;
    }
  }
  if (!nts || total <= 1) return 0;
  for (int i = 1; i < nb; i++)
    for (int j = i; j > 0 && bound[j - 1] < bound[j]; j--) { int64_t x = bound[j]; bound[j] = bound[j - 1]; bound[j - 1] = x; }
  /* bound: N, ..., 1 (descending); each must divide the one before */
  for (int i = 1; i < nb; i++)
    if (bound[i - 1] % bound[i])
      return diag_error(b->d, L(b, ts[0].off), "mhlo.sharding: the arguments' tilings do not nest into one mesh (%lld devices cut by %lld and %lld)",
                        (long long)total, (long long)bound[i - 1], (long long)bound[i]);
  if (nb - 1 > HLO_MAXAXES) return diag_error(b->d, L(b, ts[0].off), "mhlo.sharding: the tilings need a mesh of more than %d axes", HLO_MAXAXES);
  for (int i = 0; i + 1 < nb; i++) {
    info->axis[i] = ir_intern(b->g, arena_printf(&b->tmp, "_axis_%d", i));
    info->size[i] = bound[i] / bound[i + 1];
  }
  info->naxes = nb - 1;
  for (int k = 0; k < nts; k++) {
    const hlo_tiles *t = &ts[k];
    const ir_value *v = b->g->vals[t->arg];
    hlo_sharding sh = {.value = t->arg, .rank = v->shape.rank};
    int64_t stride = 1, any = 0;
    for (int i = t->n - 1; i >= 0; i--) {
      int64_t c = t->t[i] < 0 ? -t->t[i] : t->t[i];
      if (t->t[i] > 1 && i < v->shape.rank)
        for (int a = 0; a < info->naxes; a++)
          if (bound[a + 1] >= stride && bound[a] <= stride * c) { sh.axes[i][sh.naxes[i]++] = info->axis[a]; any = 1; }
      stride *= c;
    }
    if (!any) continue;
    info->shardings = arena_grow(&b->g->mem, info->shardings, (size_t)info->nshardings, (size_t)info->nshardings + 1, sizeof(hlo_sharding));
    info->shardings[info->nshardings++] = sh;
  }
  return 0;
}

/* carve.kind = "param" | "input" | "state" and carve.init = "zeros" |
** "ones" | "normal(s)" | "uniform(lo, hi)", as 'carve export' writes them,
** so that an exported program imports as the model it came from.
** --params-from-args, when given, still decides. */
static int carve_kind(hctx *b, const mlir_arg *a, const hlo_opts *o, ir_kind *kind, ir_init *init) {
  const mlir_attr *k = mlir_attr_get(a->attrs, "carve.kind"), *in = mlir_attr_get(a->attrs, "carve.init");
  if (k && !(o && o->params)) {
    if (k->kind != MLIR_A_STRING) return diag_error(b->d, L(b, k->off), "carve.kind must be a string: \"param\", \"input\" or \"state\"");
    if (!strcmp(k->text, "param")) *kind = IR_PARAM;
    else if (!strcmp(k->text, "input")) *kind = IR_INPUT;
    else if (!strcmp(k->text, "state")) *kind = IR_STATE;
    else return diag_error(b->d, L(b, k->off), "carve.kind \"%s\": expected \"param\", \"input\" or \"state\"", k->text);
  }
  if (!in) return 0;
  double x = 0, y = 0;
  char end = 0;
  if (in->kind == MLIR_A_STRING && !strcmp(in->text, "zeros")) *init = (ir_init){INIT_ZEROS, 0, 0};
  else if (in->kind == MLIR_A_STRING && !strcmp(in->text, "ones")) *init = (ir_init){INIT_ONES, 0, 0};
  else if (in->kind == MLIR_A_STRING && sscanf(in->text, "normal(%lf%c", &x, &end) == 2 && end == ')') *init = (ir_init){INIT_NORMAL, x, 0};
  else if (in->kind == MLIR_A_STRING && sscanf(in->text, "uniform(%lf ,%lf%c", &x, &y, &end) == 3 && end == ')') *init = (ir_init){INIT_UNIFORM, x, y};
  else return diag_error(b->d, L(b, in->off), "carve.init: expected \"zeros\", \"ones\", \"normal(std)\" or \"uniform(lo, hi)\"");
  return 0;
}

static const mlir_func *entry_func(hctx *b, const hlo_opts *o) {
  const char *want = o && o->entry ? o->entry : NULL;
  const mlir_func *pub = NULL;
  int npub = 0;
  for (int m = 0; m < b->f->nmodules; m++) {
    const mlir_module *mod = b->f->modules[m];
    for (int i = 0; i < mod->nfuncs; i++) {
      const mlir_func *fn = mod->funcs[i];
      if (want ? !strcmp(fn->name, want) : !strcmp(fn->name, "main")) { b->m = mod; return fn; }
      if (!fn->visibility || !strcmp(fn->visibility, "public")) { pub = fn; npub++; b->m = mod; }
    }
  }
  if (want) { diag_error(b->d, (loc){b->src, 0}, "this program has no function @%s (--model names the function to import)", want); return NULL; }
  if (npub == 1) return pub;
  if (npub) diag_error(b->d, (loc){b->src, 0}, "this program has %d public functions and none is @main; pick one with --model NAME", npub);
  else diag_error(b->d, (loc){b->src, 0}, "this program has no function to import");
  return NULL;
}

ir_graph *hlo_build(const mlir_file *f, const hlo_opts *o, hlo_info *info, diag *d) {
  hctx bb = {.d = d, .src = f->src, .f = f, .prefix = "", .info = info}, *b = &bb;
  if (info) memset(info, 0, sizeof *info);
  arena_init(&b->tmp);
  const mlir_func *fn = entry_func(b, o);
  if (!fn) { arena_free(&b->tmp); return NULL; }
  if (info && b->m->nmeshes) {
    const mlir_mesh *me = b->m->meshes[0];
    for (int i = 0; i < me->naxes && i < HLO_MAXAXES; i++) {
      info->axis[info->naxes] = me->axes[i].name;
      info->size[info->naxes++] = me->axes[i].size;
    }
  }
  const char *gname = b->m->name ? hlo_clean_name(b, b->m->name) : NULL;
  b->g = ir_graph_new(f->src, gname ? gname : fn->name);
  if (info && info->naxes)
    for (int i = 0; i < info->naxes; i++) info->axis[i] = ir_intern(b->g, info->axis[i]);
  scope top = {0};
  b->sc = &top;
  int *args = arena_alloc(&b->tmp, sizeof(int) * (size_t)(fn->nargs + 1));
  int rc = 0, ntiles = 0;
  hlo_tiles *tiles = NULL;
  for (int k = 0; k < fn->nargs && rc == 0; k++) {
    const mlir_arg *a = &fn->args[k];
    ir_shape s;
    ir_dtype dt;
    if (hlo_tensor_type(b, a->type, a->off, &s, &dt) < 0) { rc = -1; break; }
    const char *nm = arg_name(b, fn, k);
    if (ir_lookup(b->g, nm)) nm = ir_fresh_name(b->g, nm);
    ir_value tmpv = {.dtype = dt, .shape = s};
    int param = is_param(o, nm, &tmpv);
    ir_kind kind = param ? IR_PARAM : IR_INPUT;
    ir_init init = {INIT_NORMAL, 0.02, 0};
    if (carve_kind(b, a, o, &kind, &init) < 0) { rc = -1; break; }
    param = kind != IR_INPUT;
    if (param && !ir_dtype_isfloat(dt)) {
      rc = diag_error(d, L(b, a->off), "argument '%s' is %s; parameters are trained and must be float (leave it out of --params-from-args)",
                      nm, ir_dtype_name(dt));
      break;
    }
    ir_value *v = ir_add(b->g, nm, kind, IR_LEAF, NULL, 0, NULL, L(b, a->off));
    v->dtype = dt;
    v->shape = s;
    if (param) v->init = init;
    args[k] = v->id;
    rc = arg_sharding(b, a, v->id, info);
    const mlir_attr *ms = mlir_attr_get(a->attrs, "mhlo.sharding");
    if (rc == 0 && ms && ms->kind == MLIR_A_STRING) {
      hlo_tiles t;
      int r = read_hlo_sharding(b, ms, s.rank, &t);
      if (r < 0) rc = -1;
      else if (r == 0 && t.n) {
        t.arg = v->id;
        tiles = arena_grow(&b->tmp, tiles, (size_t)ntiles, (size_t)ntiles + 1, sizeof *tiles);
        tiles[ntiles++] = t;
      }
    }
  }
  /* GSPMD strings make the mesh where the module has no sdy.mesh */
  if (rc == 0 && ntiles && info && !info->naxes) rc = hlo_sharding_mesh(b, tiles, ntiles, info);
  int nouts = 0, *outs = arena_alloc(&b->tmp, sizeof(int) * (size_t)(fn->nresults + 1));
  if (rc == 0) rc = build_body(b, fn, args, outs, fn->nresults, &nouts);
  if (rc == 0 && nouts != fn->nresults)
    rc = diag_error(d, L(b, fn->off), "@%s declares %d results but returns %d", fn->name, fn->nresults, nouts);
  if (rc == 0 && nouts == 0) rc = diag_error(d, L(b, fn->off), "@%s returns nothing; carve needs a result", fn->name);
  for (int k = 0; rc == 0 && k < nouts; k++) {
    ir_value *v = b->g->vals[outs[k]];
    ir_shape s;
    ir_dtype dt;
    if (hlo_tensor_type(b, fn->results[k].type, fn->off, &s, &dt) < 0) { rc = -1; break; }
    if (v->dtype != dt || !ir_shape_eq(&v->shape, &s)) {
      rc = diag_error(d, L(b, fn->off), "@%s: result %d is %s%s but the function declares %s%s", fn->name, k, ir_dtype_name(v->dtype),
                      ir_shape_str(&b->tmp, &v->shape), ir_dtype_name(dt), ir_shape_str(&b->tmp, &s));
      break;
    }
    if (v->is_output || v->kind == IR_CONST) {        /* returned twice, or a literal: a copy of its own */
      int x = v->id;
      ir_attrs at = hlo_no_attrs();
      at.to = v->shape;
      b->op = NULL;
      ir_value *c = ir_op(b->g, d, ir_fresh_name(b->g, "out"), IR_BROADCAST, &x, 1, &at, L(b, fn->off));
      if (!c) { rc = -1; break; }
      v = c;
    }
    /* results take the name jax.result_info gives them, else out, out1, ... */
    const mlir_attr *ri = mlir_attr_get(fn->results[k].attrs, "jax.result_info");
    const char *rn = ri && ri->kind == MLIR_A_STRING ? hlo_clean_name(b, ri->text) : NULL;
    if (rn && rn[0] == 'v' && rn[1] >= '0' && rn[1] <= '9') rn = NULL;   /* "[0]": no name in it */
    if (!rn) rn = k ? arena_printf(&b->tmp, "out%d", k) : "out";
    if (v->kind == IR_OP && !ir_lookup(b->g, rn)) ir_rename(b->g, v, ir_intern(b->g, rn));
    ir_add_output(b->g, v->id);
  }
  arena_free(&b->tmp);
  if (rc < 0) { ir_graph_free(b->g); return NULL; }
  ir_link(b->g);
  return b->g;
}

/* ---- the tactic file of the argument shardings ---- */

char *hlo_tactics(const ir_graph *g, const hlo_info *info, arena *a) {
  if (!info || !info->naxes) return NULL;
  strbuf sb;
  sb_init(&sb);
  sb_puts(&sb, "# the argument shardings of the imported program (sdy.sharding or mhlo.sharding) and its\n"
              "# sdy.sharding_constraints\nversion 1\nmesh ");
  for (int i = 0; i < info->naxes; i++) sb_printf(&sb, "%s%s = %lld", i ? ", " : "", info->axis[i], (long long)info->size[i]);
  sb_puts(&sb, "\n\ntactic imported {\n");
  for (int i = 0; i < info->nshardings; i++) {
    const hlo_sharding *s = &info->shardings[i];
    const ir_value *v = g->vals[s->value];
    for (int d = 0; d < s->rank; d++)
      for (int j = 0; j < s->naxes[d]; j++)
        sb_printf(&sb, "  shard %s \"%s\" dim %d on %s\n", v->kind == IR_PARAM ? "param" : v->kind == IR_INPUT ? "input" : "value",
                  v->name, d, s->axes[d][j]);
  }
  if (!info->nshardings) sb_puts(&sb, "  # no argument is split\n");
  sb_puts(&sb, "}\n\nschedule imported\n");
  char *out = arena_strndup(a, sb_str(&sb), strlen(sb_str(&sb)));
  sb_free(&sb);
  return out;
}

int hlo_import(arena *a, diag *d, const char *path, const hlo_opts *o, char **cir, char **tac) {
  *cir = *tac = NULL;
  const diag_src *src = diag_load_file(a, d, path);
  mlir_file *f = src ? mlir_parse(a, d, src) : NULL;
  if (!f) return -1;
  hlo_info info;
  ir_graph *g = hlo_build(f, o, &info, d);
  if (!g) return -1;
  *cir = ir_print(g, a);
  *tac = hlo_tactics(g, &info, a);
  ir_graph_free(g);
  return 0;
}

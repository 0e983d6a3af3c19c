/*
** hlo_basic.c: the StableHLO ops that map onto carve's ops one by one or
** through a few: constants (literals, or parameters where the values were
** elided), broadcast_in_dim, reshape, transpose, slices (strided ones
** through hlo_window.c), concatenate, iota, the dynamic slices at known
** indices, dot_general as einsum, reductions carve has an op for, the
** elementwise ops, compare, clamp, is_finite, convert and bitcast_convert,
** and JAX's markers that pass their values through.
*/
#include "interp/front/hlo_int.h"
#include "runtime/dtype.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- constants ---- */

/* x rounded to the float type t once (through f32 rounded to odd for the
** 16-bit types, as the runtime stores them), so that a literal holds the
** value the program's type can hold: 0.304688 : bf16 is 0.3046875 */
static double round_to(double x, ir_dtype t) {
  if (t == IR_F32) return (float)x;
  if (t == IR_BF16) return rt_bf16_to_f32(rt_f32_to_bf16(rt_f64_to_f32_odd(x)));
  if (t == IR_F16) return rt_f16_to_f32(rt_f32_to_f16(rt_f64_to_f32_odd(x)));
  return x;
}

/* A literal as a number of type t: hex literals are the bits of a float. */
static double literal(const mlir_attr *a, ir_dtype t) {
  if (a->kind == MLIR_A_FLOAT || (a->kind == MLIR_A_INT && !a->is_hex && ir_dtype_isfloat(t)))
    return round_to(a->kind == MLIR_A_FLOAT ? a->f : (double)a->i, t);
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

/* -1 with a located error when a hex literal of a or inside it has more
** bits than the float type t (0x7FF8000000000000 is an f64's NaN, not an f32's) */
static int check_hex(hctx *b, const mlir_op *op, const mlir_attr *a, ir_dtype t) {
  if (!a || !ir_dtype_isfloat(t)) return 0;
  if (a->kind == MLIR_A_LIST || a->kind == MLIR_A_GROUP) {
    for (int i = 0; i < a->nitems; i++) if (check_hex(b, op, a->items[i].val, t) < 0) return -1;
    return 0;
  }
  int bits = 8 * (int)ir_dtype_size(t);
  if (a->kind == MLIR_A_INT && a->is_hex && bits < 64 && ((uint64_t)a->i >> bits) != 0)
    return diag_error(b->d, L(b, a->off), "%s: the hex literal 0x%llX has more bits than %s holds (%d); write the %s's own bits",
                      op->name, (unsigned long long)a->i, ir_dtype_name(t), bits, ir_dtype_name(t));
  return 0;
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

static int dense_values(hctx *b, const mlir_op *op, const mlir_attr *val, ir_dtype dt, const ir_shape *sp, void *data);

static int do_constant(hctx *b, const mlir_op *op) {
  ir_shape s;
  ir_dtype dt;
  if (hlo_result_shape(b, op, &s, &dt) < 0) return -1;
  const mlir_attr *val = op->nitems ? op->items[0].val : mlir_op_attr(op, "value");
  if (!val) return hlo_error(b, op, "%s: no value", op->name);
  if (val->kind == MLIR_A_DENSE_RESOURCE) return make_param(b, op, &s, dt);   /* weights elided from the text */
  /* arith.constant 3.0 : f32, a scalar of its own (tt-mlir's and torch-mlir's exports) */
  int plain = !strcmp(op->name, "arith.constant") && (val->kind == MLIR_A_INT || val->kind == MLIR_A_FLOAT || val->kind == MLIR_A_BOOL);
  if (val->kind != MLIR_A_DENSE && !plain) return diag_error(b->d, L(b, val->off), "%s: expected dense<...>", op->name);
  int64_t n = ir_nelem(&s);
  const mlir_attr *lit = plain ? val : val->nitems ? val->items[0].val : NULL;
  int scalar = lit && (lit->kind == MLIR_A_INT || lit->kind == MLIR_A_FLOAT || lit->kind == MLIR_A_BOOL);
  /* an integer splat beyond 2^53 is not a double: its values are stored */
  int wide = scalar && lit->kind == MLIR_A_INT && !ir_dtype_isfloat(dt) && (lit->i > (1LL << 53) || lit->i < -(1LL << 53));
  if (scalar && !wide) {   /* a splat */
    if (check_hex(b, op, lit, dt) < 0) return -1;
    int c = dt == IR_F32 ? ir_const(b->g, literal(lit, dt)) : ir_const_typed(b->g, literal(lit, dt), dt);
    if (s.rank == 0) return c;
    ir_attrs at = hlo_no_attrs();
    at.to = s;
    return hlo_emit(b, hlo_value_name(b, op, 0), IR_BROADCAST, &c, 1, &at);
  }
  if (n > ((int64_t)1 << 28)) return hlo_error(b, op, "%s: a constant of %lld elements is too large", op->name, (long long)n);
  void *data = ir_values_new(b->g, dt, n);
  if (dense_values(b, op, val, dt, &s, data) < 0) return -1;
  ir_attrs at = hlo_no_attrs();
  at.to = s;
  at.dtype = dt;
  at.data = data;
  return hlo_emit(b, hlo_value_name(b, op, 0), IR_CONSTANT, NULL, 0, &at);
}

/* The n values of s of a dense<...> attribute val into data: nested lists,
** a splat, or raw little-endian hex bytes */
static int dense_values(hctx *b, const mlir_op *op, const mlir_attr *val, ir_dtype dt, const ir_shape *sp, void *data) {
  ir_shape s = *sp;
  int64_t n = ir_nelem(&s);
  const mlir_attr *lit = val->nitems ? val->items[0].val : NULL;
  int scalar = lit && (lit->kind == MLIR_A_INT || lit->kind == MLIR_A_FLOAT || lit->kind == MLIR_A_BOOL);
  if (check_hex(b, op, lit, dt) < 0) return -1;
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
  } else if (scalar) {                              /* a splat */
    for (int64_t i = 0; i < n; i++) store_literal(data, dt, i, lit);
  } else {
    int64_t k = 0;
    if ((!lit && n) || (lit && flat_literals(lit, dt, data, n, &k) < 0) || k != n)
      return diag_error(b->d, L(b, val->off), "%s: the value must hold %lld numbers for %s%s", op->name, (long long)n,
                        ir_dtype_name(dt), ir_shape_str(&b->tmp, &s));
  }
  return 0;
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
static int known_starts(hctx *b, const mlir_op *op, int first, const ir_shape *whole, const ir_shape *part, int64_t *st, int *ids) {
  if (op->noperands != first + whole->rank)
    return hlo_error(b, op, "%s: %d start indices for rank %d", op->name, op->noperands - first, whole->rank);
  int known = 1;
  for (int i = 0; i < whole->rank; i++) {
    int id = hlo_operand(b, op, first + i);
    if (id < 0) return -1;
    const ir_value *v = b->g->vals[id];
    if (v->shape.rank != 0 || !ir_dtype_isint(v->dtype))
      return hlo_error(b, op, "%s: start index %d ('%s') must be an integer scalar", op->name, i, v->name);
    ids[i] = id;
    if (v->kind != IR_CONST) { known = 0; continue; }
    int64_t hi = whole->d[i] - part->d[i], x = (int64_t)v->attr.scalar;
    st[i] = x < 0 ? 0 : x > hi ? hi : x;
  }
  return known;
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
  int ids[IR_MAXRANK], known = known_starts(b, op, 1, &whole, &part, lo, ids);
  if (known < 0) return -1;
  if (!known) return hlo_dynamic_slice(b, name, x, ids, &part);     /* computed at run time: a one-hot lookup */
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
  int ids[IR_MAXRANK], known = known_starts(b, op, 2, &dv->shape, &xv->shape, offs, ids);
  if (known < 0) return -1;
  if (!known) return hlo_dynamic_update(b, name, dst, x, ids);
  return insert_block(b, name, x, dst, offs, 0);
}

static int do_concatenate(hctx *b, const mlir_op *op, const char *name) {
  int64_t dim;
  if (hlo_ints(b, op, "dim", "dimension", &dim, 1) != 1) return b->d->nerrors ? -1 : hlo_error(b, op, "%s: dim is missing", op->name);
  if (op->noperands < 1) return hlo_error(b, op, "%s needs at least one operand", op->name);
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
  int xy[2] = {hlo_operand(b, op, 0), hlo_operand(b, op, 1)};
  if (xy[0] < 0 || xy[1] < 0 || hlo_widen_operands(b, op, xy, 2) < 0) return -1;
  int x = xy[0], y = xy[1];
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

int hlo_reduce_is_simple(hctx *b, const mlir_op *op) {
  const hlo_redop *ro = simple_reducer(op);
  if (!ro || (ro->ew != IR_OR && ro->ew != IR_AND)) return ro != NULL;
  int x = hlo_lookup(b, op, 0);                        /* bitwise and/or of integers: by region */
  return x < 0 || b->g->vals[x]->dtype == IR_I1;
}

/* reduce with a reducer carve has an op for (hlo_reduce_is_simple) */
static int do_reduce(hctx *b, const mlir_op *op, const char *name) {
  const hlo_redop *ro = simple_reducer(op);
  if (!ro) return hlo_error(b, op, "%s: no single op reduces with this region (internal error)", op->name);
  int x = hlo_operand(b, op, 0), init = hlo_operand(b, op, 1);
  if (x < 0 || init < 0) return -1;
  const ir_value *xv = b->g->vals[x];
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
  {"negate", IR_NEG, 1}, {"abs", IR_ABS, 1}, {"sign", IR_SIGN, 1}, {"not", IR_NOT, 1}, {"erf", IR_ERF, 1}, {"erfc", IR_ERFC, 1},
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

/* ---- JAX's markers ---- */

/* sdy.sharding_constraint %x <@mesh, [{}, {"y"}]>: x itself, its sharding
** kept for --tactics-out (a `shard value` statement) */
static int do_constraint(hctx *b, const mlir_op *op) {
  if (op->noperands != 1) return hlo_error(b, op, "%s takes 1 operand, given %d", op->name, op->noperands);
  int x = hlo_operand(b, op, 0);
  if (x < 0) return -1;
  for (int i = 0; i < op->nitems; i++)
    if (op->items[i].val->kind == MLIR_A_ANGLE) return hlo_sdy_sharding(b, op->items[i].val, x, b->info) < 0 ? -1 : x;
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

/* ---- the reference interpreter's checks ---- */

/* The kind of a check op ("expect_eq", "expect_almost_eq", ...): StableHLO's
** testdata writes custom_call @check.expect_close(actual, expected), its
** interpret tests check.expect_eq_const %x, dense<..>; NULL for others */
const char *hlo_check_kind(const mlir_op *op) {
  if (!strncmp(op->name, "check.", 6)) return op->name + 6;
  if (strcmp(hlo_short_name(op->name), "custom_call")) return NULL;
  for (int i = 0; i < op->nitems; i++)
    if (op->items[i].val->kind == MLIR_A_SYMBOL && !strncmp(op->items[i].val->text, "check.", 6)) return op->items[i].val->text + 6;
  const mlir_attr *t = mlir_op_attr(op, "call_target_name");
  if (t && (t->kind == MLIR_A_STRING || t->kind == MLIR_A_SYMBOL) && !strncmp(t->text, "check.", 6)) return t->text + 6;
  return NULL;
}



/* The reference interpreter's approximate equality of floats
** (areApproximatelyEqual), elementwise: equal (-0 = +0), or both NaN, or
** both finite and |a - b| <= tol in f64 */
static int almost_equal(hctx *b, int a, int e, double tol) {
  const char *h = "check";
  ir_attrs cv = hlo_no_attrs();
  cv.dtype = IR_F64;
  int x = hlo_emit(b, hlo_fresh(b, h), IR_CONVERT, &a, 1, &cv), y = hlo_emit(b, hlo_fresh(b, h), IR_CONVERT, &e, 1, &cv);
  int inf = ir_const_typed(b->g, INFINITY, IR_F64);
  int both_nan = hlo_ew(b, h, IR_AND, hlo_cmp(b, h, "ne", x, x), hlo_cmp(b, h, "ne", y, y));
  /* |x| < inf is false for inf and NaN */
  int finite = hlo_ew(b, h, IR_AND, hlo_cmp(b, h, "lt", hlo_ew(b, h, IR_ABS, x, HLO_UNARY), inf),
                      hlo_cmp(b, h, "lt", hlo_ew(b, h, IR_ABS, y, HLO_UNARY), inf));
  int near = hlo_cmp(b, h, "le", hlo_ew(b, h, IR_ABS, hlo_ew(b, h, IR_SUB, x, y), HLO_UNARY), ir_const_typed(b->g, tol, IR_F64));
  return hlo_ew(b, h, IR_OR, hlo_cmp(b, h, "eq", x, y), hlo_ew(b, h, IR_OR, both_nan, hlo_ew(b, h, IR_AND, finite, near)));
}

/* The reference interpreter's closeness in ULPs (expect_close),
** elementwise: the same bits, or both NaN, or both finite and lo <= the
** count of values of the type between them <= hi. On the bits of |a| and
** |b| as integers: |ia - ib| when the signs agree, ia + ib when not,
** compared as ia <= hi - ib so that nothing overflows. */
static int ulp_close(hctx *b, int a, int e, int64_t lo, int64_t hi) {
  const char *h = "check";
  ir_dtype t = b->g->vals[a]->dtype;
  ir_dtype it = t == IR_F64 ? IR_I64 : t == IR_F32 ? IR_I32 : IR_I16;
  /* counted in i64 (a distance across zero passes i32's range); no bound
     beyond 2^62 is needed, none below 0 means anything */
  int64_t cap = (int64_t)1 << 62;
  hi = hi < 0 ? 0 : hi > cap ? cap : hi;
  lo = lo < 0 ? 0 : lo > cap ? cap : lo;
  ir_attrs to = hlo_no_attrs(), wide = hlo_no_attrs();
  to.dtype = it;
  wide.dtype = IR_I64;
  int za = ir_const_typed(b->g, 0, IR_I64), lo_ = ir_const_typed(b->g, (double)lo, IR_I64), hi_ = ir_const_typed(b->g, (double)hi, IR_I64);
  int xa = hlo_emit(b, hlo_fresh(b, h), IR_BITCAST, &a, 1, &to), ya = hlo_emit(b, hlo_fresh(b, h), IR_BITCAST, &e, 1, &to);
  int ax = hlo_ew(b, h, IR_ABS, a, HLO_UNARY), ay = hlo_ew(b, h, IR_ABS, e, HLO_UNARY);
  int ia = ax < 0 ? -1 : hlo_emit(b, hlo_fresh(b, h), IR_BITCAST, &ax, 1, &to);
  int ib = ay < 0 ? -1 : hlo_emit(b, hlo_fresh(b, h), IR_BITCAST, &ay, 1, &to);
  if (it != IR_I64) {
    xa = xa < 0 ? -1 : hlo_emit(b, hlo_fresh(b, h), IR_CONVERT, &xa, 1, &wide);
    ya = ya < 0 ? -1 : hlo_emit(b, hlo_fresh(b, h), IR_CONVERT, &ya, 1, &wide);
    ia = ia < 0 ? -1 : hlo_emit(b, hlo_fresh(b, h), IR_CONVERT, &ia, 1, &wide);
    ib = ib < 0 ? -1 : hlo_emit(b, hlo_fresh(b, h), IR_CONVERT, &ib, 1, &wide);
  }
  int same_sign = hlo_cmp(b, h, "eq", hlo_cmp(b, h, "lt", xa, za), hlo_cmp(b, h, "lt", ya, za));
  int d = hlo_ew(b, h, IR_ABS, hlo_ew(b, h, IR_SUB, ia, ib), HLO_UNARY);
  int ok_same = hlo_ew(b, h, IR_AND, hlo_cmp(b, h, "le", d, hi_), hlo_cmp(b, h, "ge", d, lo_));
  int ok_cross = hlo_ew(b, h, IR_AND, hlo_cmp(b, h, "le", ia, hlo_ew(b, h, IR_SUB, hi_, ib)),
                        hlo_cmp(b, h, "ge", ia, hlo_ew(b, h, IR_SUB, lo_, ib)));
  int inf = ir_const_typed(b->g, INFINITY, t);
  int finite = hlo_ew(b, h, IR_AND, hlo_cmp(b, h, "lt", ax, inf), hlo_cmp(b, h, "lt", ay, inf));
  int within = hlo_ew(b, h, IR_AND, finite, hlo_sel(b, h, same_sign, ok_same, ok_cross));
  int both_nan = hlo_ew(b, h, IR_AND, hlo_cmp(b, h, "ne", a, a), hlo_cmp(b, h, "ne", e, e));
  /* the same bits, or NaN and NaN, are 0 ULPs apart */
  int zero_apart = hlo_ew(b, h, IR_AND, hlo_ew(b, h, IR_OR, hlo_cmp(b, h, "eq", xa, ya), both_nan), hlo_cmp(b, h, "le", lo_, za));
  return hlo_ew(b, h, IR_OR, zero_apart, within);
}

/* A check: an i1 scalar, true when the actual tensor matches the expected
** one, kept as an output named check.KIND for carve run to verify.
** Floats compare as stablehlo-translate --interpret does: expect_eq
** (op or custom call) with IEEE equality; the expect_almost_eq op within
** its tolerance (default 0.0001), the custom call within 0.001, the
** custom call @check.eq within 0.0001; the expect_close op within its
** [min_ulp_difference, max_ulp_difference] (default [0, 1]), the custom
** call within 3 ULPs. Integers compare exactly. */
int hlo_check(hctx *b, const mlir_op *op, const char *kind) {
  int a = hlo_operand(b, op, 0), e = -1;
  if (a < 0) return -1;
  const ir_value *av = b->g->vals[a];
  if (strstr(kind, "_const")) {              /* check.expect_eq_const %x, dense<..> : T */
    const mlir_attr *lit = NULL;
    for (int i = 0; i < op->nitems; i++) if (op->items[i].val->kind == MLIR_A_DENSE) lit = op->items[i].val;
    if (!lit) return hlo_error(b, op, "%s: the expected dense<...> literal is missing", op->name);
    ir_attrs at = hlo_no_attrs();
    at.to = av->shape;
    at.dtype = av->dtype;
    void *data = ir_values_new(b->g, av->dtype, ir_nelem(&av->shape));
    if (dense_values(b, op, lit, av->dtype, &av->shape, data) < 0) return -1;
    at.data = data;
    if ((e = hlo_emit(b, hlo_fresh(b, "check.expected"), IR_CONSTANT, NULL, 0, &at)) < 0) return -1;
  } else if ((e = hlo_operand(b, op, 1)) < 0) {
    return -1;
  }
  const ir_value *ev = b->g->vals[e];
  if (av->dtype != ev->dtype || !ir_shape_eq(&av->shape, &ev->shape))
    return hlo_error(b, op, "%s: the actual value is %s%s but the expected one %s%s", op->name, ir_dtype_name(av->dtype),
                     ir_shape_str(&b->tmp, &av->shape), ir_dtype_name(ev->dtype), ir_shape_str(&b->tmp, &ev->shape));
  int is_op = !strncmp(op->name, "check.", 6), ok;
  if (!ir_dtype_isfloat(av->dtype) || !strncmp(kind, "expect_eq", 9)) ok = hlo_cmp(b, "check", "eq", a, e);
  else if (!strncmp(kind, "expect_close", 12)) {
    int64_t lo = 0, hi = is_op ? 1 : 3;
    hlo_ints_of(hlo_attr(op, "max_ulp_difference", NULL), &hi, 1);
    hlo_ints_of(hlo_attr(op, "min_ulp_difference", NULL), &lo, 1);
    ok = ulp_close(b, a, e, lo, hi);
  } else {
    double tol = is_op || !strcmp(kind, "eq") ? 1e-4 : 1e-3;
    const mlir_attr *ta = hlo_attr(op, "tolerance", NULL);
    if (ta && (ta->kind == MLIR_A_FLOAT || ta->kind == MLIR_A_INT)) tol = ta->kind == MLIR_A_FLOAT ? ta->f : (double)ta->i;
    ok = almost_equal(b, a, e, tol);
  }
  if (ok < 0) return -1;
  if (av->shape.rank) {
    ir_attrs all = hlo_no_attrs();
    all.ndims = av->shape.rank;
    for (int d = 0; d < av->shape.rank; d++) all.dims[d] = d;
    if ((ok = hlo_emit(b, hlo_fresh(b, "check"), IR_MIN, &ok, 1, &all)) < 0) return -1;
  }
  if (b->g->vals[ok]->kind != IR_OP) {      /* folded to a literal: a value of its own */
    ir_attrs at = hlo_no_attrs();
    at.to = b->g->vals[ok]->shape;
    if ((ok = hlo_emit(b, hlo_fresh(b, "check"), IR_BROADCAST, &ok, 1, &at)) < 0) return -1;
  }
  char nm[64];
  snprintf(nm, sizeof nm, "check.%.40s", kind);
  ir_rename(b->g, b->g->vals[ok], ir_fresh_name(b->g, nm));
  if (b->nchecks == b->capchecks) {
    int cap = b->capchecks ? 2 * b->capchecks : 16;
    int *grown = arena_alloc(&b->tmp, sizeof(int) * (size_t)cap);
    if (b->nchecks) memcpy(grown, b->checks, sizeof(int) * (size_t)b->nchecks);
    b->checks = grown;
    b->capchecks = cap;
  }
  b->checks[b->nchecks++] = ok;
  return 0;
}

/* ---- the dispatch ---- */

int hlo_basic_op(hctx *b, const mlir_op *op, const char *sn, const char *name) {
  if (!strcmp(op->name, "sdy.constant") || !strcmp(op->name, "arith.constant") || !strcmp(sn, "constant")) return do_constant(b, op);
  if (!strcmp(sn, "broadcast_in_dim")) return do_broadcast_in_dim(b, op, name);
  if (!strcmp(sn, "reshape")) {
    ir_shape s;
    ir_dtype dt;
    int x = hlo_operand(b, op, 0);
    return x < 0 || hlo_result_shape(b, op, &s, &dt) < 0 ? -1 : hlo_reshape(b, name, x, &s);
  }
  if (!strcmp(sn, "transpose")) return do_transpose(b, op, name);
  if (!strcmp(sn, "convert")) return do_convert(b, op, name, IR_CONVERT);
  if (!strcmp(sn, "bitcast_convert")) return do_convert(b, op, name, IR_BITCAST);
  if (!strcmp(sn, "slice")) return do_slice(b, op, name);
  if (!strcmp(sn, "concatenate")) return do_concatenate(b, op, name);
  if (!strcmp(sn, "iota")) return do_iota(b, op, name);
  if (!strcmp(sn, "dot_general")) return do_dot_general(b, op, name, 0);
  if (!strcmp(sn, "dot")) return do_dot_general(b, op, name, 1);
  if (!strcmp(sn, "reduce")) return do_reduce(b, op, name);
  if (!strcmp(sn, "compare")) return do_compare(b, op, name);
  if (!strcmp(sn, "clamp")) return do_clamp(b, op, name);
  if (!strcmp(sn, "dynamic_slice")) return do_dynamic_slice(b, op, name);
  if (!strcmp(sn, "dynamic_update_slice")) return do_dynamic_update_slice(b, op, name);
  if (!strcmp(op->name, "sdy.sharding_constraint")) return do_constraint(b, op);
  if (!strcmp(sn, "custom_call")) return do_custom_call(b, op);
  if (!strcmp(sn, "is_finite")) return do_is_finite(b, op, name);
  if (!strcmp(op->name, "tensor.insert_slice")) return do_insert_slice(b, op, name);
  for (size_t i = 0; i < sizeof ewops / sizeof ewops[0]; i++) {
    if (strcmp(sn, ewops[i].name) || !strchr(op->name, '.')) continue;
    if (op->noperands != ewops[i].arity)
      return hlo_error(b, op, "%s takes %d operand%s, given %d", op->name, ewops[i].arity, ewops[i].arity > 1 ? "s" : "", op->noperands);
    int args[3];
    for (int k = 0; k < ewops[i].arity; k++) if ((args[k] = hlo_operand(b, op, k)) < 0) return -1;
    return hlo_emit(b, name, ewops[i].op, args, ewops[i].arity, NULL);
  }
  return -2;
}

ir_opkind hlo_binary_op(const char *sn) {
  for (size_t j = 0; j < sizeof ewops / sizeof ewops[0]; j++)
    if (ewops[j].arity == 2 && !strcmp(ewops[j].name, sn)) return ewops[j].op;
  return IR_NOPS;
}

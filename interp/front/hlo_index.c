/*
** hlo_index.c: StableHLO's lookups by index. A gather of whole rows of a
** table is carve's embedding, and the scatter-add of rows into a table its
** gradient (kernels of their own, a vocabulary split of the table); any
** other gather and scatter is carve's gather or scatter op with the same
** dimension numbers (take_along_axis, x[i, j], x.at[i].add/set/max/min/mul),
** and so are dynamic slices at starts computed at run time (a KV cache's
** read and write). A scatter whose region is none of add, multiply,
** maximum, minimum or replace applies its updates one by one (few updates).
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

/* ---- dynamic slices at indices computed at run time ---- */

/* the starts (integer scalars) as an i64 index vector [r] */
static int start_vector(hctx *b, const char *name, const int *starts, int r) {
  int *parts = arena_alloc(&b->tmp, sizeof(int) * (size_t)(r + 1));
  ir_shape one = {.rank = 1, .d = {1}};
  for (int d = 0; d < r; d++) {
    int x = starts[d];
    if (b->g->vals[x]->dtype != IR_I64) {
      ir_attrs cv = hlo_no_attrs();
      cv.dtype = IR_I64;
      if ((x = hlo_emit(b, hlo_fresh(b, name), IR_CONVERT, &x, 1, &cv)) < 0) return -1;
    }
    if ((parts[d] = hlo_reshape(b, hlo_fresh(b, name), x, &one)) < 0) return -1;
  }
  if (r == 1) return parts[0];
  ir_attrs cat = hlo_no_attrs();
  cat.dim = 0;
  return hlo_emit(b, hlo_fresh(b, name), IR_CONCAT, parts, r, &cat);
}

/* the dimension numbers of a window at a start per dim (dynamic slices) */
static ir_index *window_at_start(hctx *b, int r, const ir_shape *part) {
  ir_index *ix = arena_alloc(&b->g->mem, sizeof *ix);
  memset(ix, 0, sizeof *ix);
  ix->n[IX_OFFSET] = ix->n[IX_START_MAP] = ix->n[IX_SLICE] = r;
  for (int d = 0; d < r; d++) { ix->v[IX_OFFSET][d] = ix->v[IX_START_MAP][d] = d; ix->v[IX_SLICE][d] = part->d[d]; }
  ix->ivd = 0;
  return ix;
}

/* dynamic_slice(x, starts, sizes = part): a gather of one window (its
** starts clamped into the operand, as both ops' specs say) */
int hlo_dynamic_slice(hctx *b, const char *name, int x, const int *starts, const ir_shape *part) {
  int r = b->g->vals[x]->shape.rank;
  if (r == 0) return x;
  int args[2] = {x, start_vector(b, name, starts, r)};
  if (args[1] < 0) return -1;
  ir_attrs at = hlo_no_attrs();
  at.index = window_at_start(b, r, part);
  return hlo_emit(b, name, IR_GATHER, args, 2, &at);
}

/* dynamic_update_slice(dst, upd, starts): a scatter that replaces one
** window, its start clamped so that the window fits (as the spec says) */
int hlo_dynamic_update(hctx *b, const char *name, int dst, int upd, const int *starts) {
  const ir_value *uv = b->g->vals[upd];
  int r = uv->shape.rank;
  if (r == 0) return upd;
  int args[3] = {dst, start_vector(b, name, starts, r), upd};
  if (args[1] < 0) return -1;
  ir_attrs at = hlo_no_attrs();
  ir_index *ix = window_at_start(b, r, &uv->shape);
  ix->combine = IR_LEAF;
  ix->other_bounds = 1;
  at.index = ix;
  return hlo_emit(b, name, IR_SCATTER, args, 3, &at);
}

/* StableHLO's dimension numbers as carve's (a scatter's under their names) */
static ir_index *index_numbers(hctx *b, const mlir_op *op, int scatter) {
  const mlir_attr *dn = hlo_attr(op, scatter ? "scatter_dimension_numbers" : "dimension_numbers", NULL);
  if (!dn) { hlo_error(b, op, "%s: no %s", op->name, scatter ? "scatter_dimension_numbers" : "dimension_numbers"); return NULL; }
  ir_index *ix = arena_alloc(&b->g->mem, sizeof *ix);
  memset(ix, 0, sizeof *ix);
  static const char *const names[2][IX_NLISTS] = {   /* ORDER IR_IX */
    {"offset_dims", "collapsed_slice_dims", "start_index_map", NULL, "operand_batching_dims", "start_indices_batching_dims"},
    {"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims", NULL, "input_batching_dims", "scatter_indices_batching_dims"},
  };
  for (int k = 0; k < IX_NLISTS; k++) {
    if (!names[scatter][k]) continue;
    const mlir_attr *a = mlir_attr_get(dn, names[scatter][k]);
    int n = a ? hlo_ints_of(a, ix->v[k], IR_MAXRANK) : 0;
    if (n < 0) { hlo_error(b, op, "%s: %s must be a list of at most %d dims", op->name, names[scatter][k], IR_MAXRANK); return NULL; }
    ix->n[k] = n;
  }
  int64_t ivd = 0;            /* the spec's default */
  hlo_ints_of(mlir_attr_get(dn, "index_vector_dim"), &ivd, 1);
  if (ivd < 0 || ivd > IR_MAXRANK) { hlo_error(b, op, "%s: index_vector_dim %lld is out of range", op->name, (long long)ivd); return NULL; }
  ix->ivd = (int)ivd;
  if (!scatter) {
    int n = hlo_ints(b, op, "slice_sizes", NULL, ix->v[IX_SLICE], IR_MAXRANK);
    if (n < 0) return NULL;
    ix->n[IX_SLICE] = n;
  }
  ix->combine = IR_ADD;
  return ix;
}

static int emit_checked(hctx *b, const mlir_op *op, const char *name, ir_opkind k, const int *args, int nargs, const ir_index *ix) {
  ir_shape s;
  ir_dtype dt;
  if (hlo_result_shape(b, op, &s, &dt) < 0) return -1;
  ir_attrs at = hlo_no_attrs();
  at.index = ix;
  int v = hlo_emit(b, name, k, args, nargs, &at);
  return v < 0 ? -1 : hlo_check_result(b, op, v, &s, dt) < 0 ? -1 : v;
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
  if (!ok) {
    ir_index *gix = index_numbers(b, op, 0);
    int args[2] = {t, ix};
    return gix ? emit_checked(b, op, name, IR_GATHER, args, 2, gix) : -1;
  }
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

/* the combiner of a scatter's region: one of carve's, or IR_LEAF where the
** region returns the update (replace); -1 for any other region */
static int scatter_combiner(const mlir_op *op) {
  if (op->nregions != 1 || op->regions[0]->nblocks != 1) return -1;
  const mlir_block *bl = op->regions[0]->blocks[0];
  const mlir_op *ret = bl->nops ? bl->ops[bl->nops - 1] : NULL;
  if (bl->nargs == 2 && bl->nops == 1 && ret && !strcmp(hlo_short_name(ret->name), "return") && ret->noperands == 1 &&
      ret->operands[0]->text == bl->args[1].name)
    return IR_LEAF;
  const char *fn = hlo_region_reducer(op->regions[0]);
  if (!fn) return -1;
  if (!strcmp(fn, "add")) return IR_ADD;
  if (!strcmp(fn, "multiply")) return IR_MUL;
  if (!strcmp(fn, "maximum")) return IR_MAXIMUM;
  if (!strcmp(fn, "minimum")) return IR_MINIMUM;
  return -1;
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
  if (!ok || !ir_dtype_isint(iv->dtype)) {
    int combine = scatter_combiner(op);
    if (combine < 0) return general_scatter(b, op, name, t, ix, up);
    ir_index *six = index_numbers(b, op, 1);
    if (!six) return -1;
    six->combine = combine;
    int args[3] = {t, ix, up};
    return emit_checked(b, op, name, IR_SCATTER, args, 3, six);
  }
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
  const ir_value *z = b->g->vals[t];       /* into zeros (a gradient's table): the rows are the result */
  while (z->kind == IR_OP && (z->op == IR_BROADCAST || z->op == IR_RESHAPE)) z = b->g->vals[z->args[0]];
  int into_zeros = z->kind == IR_CONST && z->attr.scalar == 0 && !signbit(z->attr.scalar);
  int g = hlo_emit(b, into_zeros ? name : hlo_fresh(b, name), IR_EMBEDDING_GRAD, args, 2, &at);
  if (g < 0 || into_zeros) return g;
  int sum[2] = {t, g};
  return hlo_emit(b, name, IR_ADD, sum, 2, NULL);
}

int hlo_index_op(hctx *b, const mlir_op *op, const char *sn, const char *name) {
  if (!strcmp(sn, "gather")) return do_gather(b, op, name);
  if (!strcmp(sn, "scatter")) return do_scatter(b, op, name);
  return -2;
}

/*
** hlo_flow.c: the op dispatcher of the StableHLO importer and everything
** that runs regions: calls (inlined: a scope maps the SSA names of one
** function instance to value ids, and the values it defines are named
** after their SSA names under the call path, "apply_fn._var.v3"), while
** (unrolled), case and if (the known branch, or every branch and select),
** optimization_barrier, and reductions whose region carve has no single
** op for (the region applied elementwise to whole tensors, as a tree).
*/
#include "interp/front/hlo_int.h"
#include "interp/ir/ops.h"

#include <stdio.h>
#include <math.h>
#include <string.h>

#define MAX_CALL_DEPTH 64

static int run_block(hctx *b, const mlir_block *bl, int *outs, int maxouts, int *nouts);
static int do_while(hctx *b, const mlir_op *op);
static int do_case(hctx *b, const mlir_op *op, int is_if);
static int do_reduce_tree(hctx *b, const mlir_op *op);
static int do_sort(hctx *b, const mlir_op *op, int topk);

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

static int inline_call(hctx *b, const mlir_op *op, const char *callee);

static int do_call(hctx *b, const mlir_op *op) {
  const char *callee = NULL;
  for (int i = 0; i < op->nitems; i++) if (op->items[i].val->kind == MLIR_A_SYMBOL) callee = op->items[i].val->text;
  if (!callee) { const mlir_attr *c = mlir_op_attr(op, "callee"); if (c && c->kind == MLIR_A_SYMBOL) callee = c->text; }
  if (!callee) return hlo_error(b, op, "%s: no callee", op->name);
  return inline_call(b, op, callee);
}

/* carve's op of a composite "carve.NAME": its operands, and its attributes
** from composite_attributes by the names the op's signature gives them */
static int carve_composite(hctx *b, const mlir_op *op, int k, const mlir_attr *attrs) {
  ir_attrs at = hlo_no_attrs();
  char name[IR_SIG_NAME], t;
  int opt;
  for (const char *p = ir_opinfo_of((ir_opkind)k)->sig; ir_sig_next(&p, name, &t, &opt);) {
    if (t != 'i' && t != 'f' && t != 'b' && t != 'I') continue;
    const mlir_attr *a = mlir_attr_get(attrs, name);
    if (!a) continue;                          /* the op's default */
    int64_t xs[IR_MAXRANK];
    int n = t == 'f' ? 0 : hlo_ints_of(a, xs, IR_MAXRANK);
    double x = a->kind == MLIR_A_FLOAT ? a->f : a->kind == MLIR_A_INT ? (double)a->i : NAN;
    if (t == 'b' && a->kind == MLIR_A_BOOL) {
      ir_attr_set_flag(&at, name, (int)a->i);
    } else if (t == 'f' && x == x) {
      if (!strcmp(name, "eps")) at.eps = x; else at.scale = x;
    } else if (t == 'i' && n == 1) {
      if (!strcmp(name, "dim")) at.dim = (int)xs[0]; else if (!strcmp(name, "rows")) at.rows = xs[0];
    } else if (t == 'I' && n >= 0) {
      at.ndims = n;
      for (int i = 0; i < n; i++) at.dims[i] = (int)xs[i];
    } else {
      return diag_error(b->d, L(b, a->off), "%s \"carve.%s\": attribute '%s' does not fit the op", op->name, ir_opinfo_of((ir_opkind)k)->name, name);
    }
  }
  int *args = arena_alloc(&b->tmp, sizeof(int) * (size_t)(op->noperands + 1));
  for (int i = 0; i < op->noperands; i++) if ((args[i] = hlo_operand(b, op, i)) < 0) return -1;
  ir_shape s;
  ir_dtype dt;
  if (hlo_result_shape(b, op, &s, &dt) < 0) return -1;
  int v = hlo_emit(b, hlo_value_name(b, op, 0), (ir_opkind)k, args, op->noperands, &at);
  if (v < 0 || hlo_check_result(b, op, v, &s, dt) < 0) return -1;
  hlo_scope_put(&b->tmp, b->sc, op->results[0].name, 0, v);
  return 0;
}

/* stablehlo.composite: carve's own composites ("carve.softmax", as carve
** export writes them) become the op again; any other (JAX's
** lax.composite), or all with --no-fuse, runs its decomposition */
static int do_composite(hctx *b, const mlir_op *op) {
  const mlir_attr *nm = mlir_op_attr(op, "name"), *dec = mlir_op_attr(op, "decomposition");
  if (!nm || nm->kind != MLIR_A_STRING) return hlo_error(b, op, "%s: no name", op->name);
  int k = !strncmp(nm->text, "carve.", 6) ? ir_op_lookup(nm->text + 6) : -1;
  if (k > 0 && ir_op_is_composite((ir_opkind)k) && !b->as_written && op->nresults == 1 && op->results[0].count == 1)
    return carve_composite(b, op, k, mlir_op_attr(op, "composite_attributes"));
  if (!dec || dec->kind != MLIR_A_SYMBOL) return hlo_error(b, op, "%s \"%s\": no decomposition to run", op->name, nm->text);
  return inline_call(b, op, dec->text);
}

/* op's callee inlined: its body run with op's operands as arguments */
static int inline_call(hctx *b, const mlir_op *op, const char *callee) {
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
  int rc = hlo_build_body(b, fn, args, outs, nres + fn->nresults, &nouts);
  b->depth--;
  b->sc = saved;
  b->prefix = saved_prefix;
  b->op = saved_op;
  if (rc < 0) return -1;
  if (nouts != nres) return hlo_error(b, op, "%s: @%s returns %d values; the call names %d", op->name, callee, nouts, nres);
  bind_results(b, op, outs);
  return 0;
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
  "constant (and arith.constant), broadcast_in_dim, reshape, transpose, convert, bitcast_convert (same width), slice, concatenate, iota, gather, scatter, "
  "tensor.insert_slice, dot_general, dot, "
  "reduce (add, maximum, minimum, and, or), compare, select, add, subtract, multiply, divide, maximum, minimum, power, "
  "negate, abs, sign, exponential, exponential_minus_one, log, log_plus_one, sqrt, rsqrt, tanh, logistic, sine, cosine, "
  "tan, cbrt, remainder, atan2, popcnt, count_leading_zeros, shift_left, shift_right_arithmetic, shift_right_logical, "
  "floor, ceil, round_nearest_even, round_nearest_afz, clamp, is_finite, not, and, or, xor, call, "
  "optimization_barrier, sdy.sharding_constraint, custom_call @Sharding, while (unrolled), case and if (as select), pad, reverse, convolution, "
  "reduce_window, select_and_scatter (a comparison, add), sort, chlo.top_k, dynamic_slice, dynamic_update_slice, "
  "custom_call @check.* and check.expect_*, chlo's erf, erfc, tan, sinh, cosh, atan, asin, acos, asinh, acosh, atanh, "
  "erf_inv, lgamma, digamma and next_after, reduce_precision";

/* One op of a function body: binds its results in the scope. */
static int build_op(hctx *b, const mlir_op *op) {
  b->op = op;
  const char *sn = hlo_short_name(op->name);
  if (!strcmp(sn, "call")) return do_call(b, op);
  if (!strcmp(sn, "composite")) return do_composite(b, op);
  if (!strcmp(sn, "optimization_barrier")) return do_barrier(b, op);
  if (!strcmp(sn, "while")) return do_while(b, op);
  if (!strcmp(sn, "case") || !strcmp(sn, "if")) return do_case(b, op, sn[0] == 'i');
  if (!strcmp(sn, "sort")) return do_sort(b, op, 0);
  const char *ck = hlo_check_kind(op);
  if (ck) return hlo_check(b, op, ck);
  if (!strcmp(op->name, "chlo.top_k")) return do_sort(b, op, 1);
  if (!strcmp(sn, "reduce") && (result_count(op) != 1 || !hlo_reduce_is_simple(b, op))) return do_reduce_tree(b, op) < 0 ? -1 : 0;
  if (op->nresults != 1 || op->results[0].count != 1) {
    if (op->nresults == 0) return hlo_error(b, op, "'%s' has no result; carve imports ops that compute values (%s)", op->name, supported);
    return hlo_error(b, op, "'%s' with several results is not supported", op->name);
  }
  const char *name = hlo_value_name(b, op, 0);
  int id = hlo_basic_op(b, op, sn, name);
  if (id == -2) id = hlo_index_op(b, op, sn, name);
  if (id == -2) id = hlo_window_op(b, op, sn, name);
  if (id == -2) id = hlo_math_op(b, op, sn, name);
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

int hlo_build_body(hctx *b, const mlir_func *fn, const int *args, int *outs, int maxouts, int *nouts) {
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
    if (b->g->nvals > HLO_MAX_OPS)      /* loops unrolled past the bound */
      return hlo_error(b, op, "the program grows beyond %d ops here as carve reads it (loops are unrolled, calls inlined)", HLO_MAX_OPS);
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
        op->items[i + 1].val->kind == MLIR_A_WORD)
      return hlo_binary_op(hlo_short_name(op->items[i + 1].val->text));
  return IR_NOPS;
}

/* One application of a reduce region to whole tensors: its accumulator
** arguments bound to acc, its element arguments to x, its results to
** acc. pretty: the arguments are written in pairs per operand. */
int hlo_run_elementwise(hctx *b, const mlir_op *op, const mlir_block *bl, const int *args, int *out, int nout) {
  for (int i = 0; i < bl->nargs; i++) hlo_scope_put(&b->tmp, b->sc, bl->args[i].name, 0, args[i]);
  int got = 0;
  b->elementwise++;
  int rc = run_block(b, bl, out, nout, &got);
  b->elementwise--;
  b->op = op;
  if (rc == -2) return hlo_error(b, op, "%s: the region does not end with stablehlo.return", op->name);
  if (rc < 0) return -1;
  if (got != nout) return hlo_error(b, op, "%s: the region returns %d values for %d", op->name, got, nout);
  return 0;
}

static int apply_region(hctx *b, const mlir_op *op, const mlir_block *bl, int k, int pretty, int *acc, const int *x) {
  if (!bl) {                       /* the compact form's "applies OP" (k = 1): one binary op */
    int args[2] = {acc[0], x[0]};
    return (acc[0] = hlo_emit(b, hlo_fresh(b, "reduce"), compact_op(op), args, 2, NULL)) < 0 ? -1 : 0;
  }
  int args[16];
  for (int i = 0; i < k; i++) {
    args[pretty ? 2 * i : i] = acc[i];
    args[pretty ? 2 * i + 1 : k + i] = x[i];
  }
  return hlo_run_elementwise(b, op, bl, args, acc, k);
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

/* ---- sort and top_k ---- */

typedef struct sorter {
  hctx *b;
  const mlir_op *op;
  const mlir_block *cmp;  /* the comparator, or NULL: operand 0 descending (top_k; floats in total order) */
  int k;                  /* operands sorted together */
} sorter;


/* 1 where x comes before y: the comparator on the pairs (x_i, y_i) */
static int sort_before(sorter *s, const int *x, const int *y) {
  hctx *b = s->b;
  if (!s->cmp) {
    ir_attrs at = hlo_no_attrs();
    at.spec = ir_intern(b->g, "gt");
    at.total = ir_dtype_isfloat(b->g->vals[x[0]]->dtype);
    int args[2] = {x[0], y[0]};
    return hlo_emit(b, hlo_fresh(b, "sort"), IR_COMPARE, args, 2, &at);
  }
  int args[16], out;
  for (int i = 0; i < s->k; i++) { args[2 * i] = x[i]; args[2 * i + 1] = y[i]; }
  return hlo_run_elementwise(b, s->op, s->cmp, args, &out, 1) < 0 ? -1 : out;
}

/* x strictly before y: the comparator, then the original index (so the
** order is total and the sort stable), and padding after everything */
static int sort_first(sorter *s, const int *x, const int *y, int xy, int yx, int padded) {
  hctx *b = s->b;
  int ix = x[s->k], iy = y[s->k];
  ir_attrs lt = hlo_no_attrs();
  lt.spec = ir_intern(b->g, "lt");
  int args[2] = {ix, iy};
  int idx = hlo_emit(b, hlo_fresh(b, "sort"), IR_COMPARE, args, 2, &lt);
  int r = hlo_ew(b, "sort", IR_OR, xy, hlo_ew(b, "sort", IR_AND, hlo_ew(b, "sort", IR_NOT, yx, HLO_UNARY), idx));
  if (!padded || r < 0) return r;
  int vx = x[s->k + 1], vy = y[s->k + 1];
  return hlo_ew(b, "sort", IR_OR, hlo_ew(b, "sort", IR_AND, vx, hlo_ew(b, "sort", IR_NOT, vy, HLO_UNARY)), hlo_ew(b, "sort", IR_AND, hlo_ew(b, "sort", IR_AND, vx, vy), r));
}

/* sort(inputs, dimension, comparator) and chlo.top_k(x, k): a bitonic
** network along the sorted dim, padded to a power of two. Each
** compare-exchange step views the data as [rows, blocks, 2, d]: the halves
** of each block are compared (the comparator applied to whole tensors)
** and select swaps them where a block's direction asks. The original
** index breaks ties, so the result is the stable order; top_k is the
** stable descending sort of (x, index), cut to the first k. */
static int do_sort(hctx *b, const mlir_op *op, int topk) {
  int nres = result_count(op), k = topk ? 1 : op->noperands;
  if (k < 1 || k > 6 || (topk ? nres != 2 || op->noperands != 1 : nres != k))
    return hlo_error(b, op, "%s: %d operands and %d results; carve sorts 1 to 6 operands together", op->name, op->noperands, nres);
  sorter s = {b, op, NULL, k};
  if (!topk) {
    s.cmp = op->nregions == 1 && op->regions[0]->nblocks == 1 ? op->regions[0]->blocks[0] : NULL;
    if (!s.cmp || s.cmp->nargs != 2 * k) return hlo_error(b, op, "%s needs a comparator region of %d arguments", op->name, 2 * k);
  }
  int xs[8];
  for (int i = 0; i < k; i++) {
    if ((xs[i] = hlo_operand(b, op, i)) < 0) return -1;
    if (!ir_shape_eq(&b->g->vals[xs[i]]->shape, &b->g->vals[xs[0]]->shape)) return hlo_error(b, op, "%s: the operands must have one shape", op->name);
  }
  ir_shape xsh = b->g->vals[xs[0]]->shape;
  int64_t dim = xsh.rank - 1, kk = 0;
  if (xsh.rank < 1) return hlo_error(b, op, "%s: the operands must have rank 1 or more", op->name);
  if (!topk && hlo_attr(op, "dimension", NULL) && hlo_ints(b, op, "dimension", NULL, &dim, 1) != 1) return -1;
  if (dim < 0) dim += xsh.rank;
  if (dim < 0 || dim >= xsh.rank) return hlo_error(b, op, "%s: dimension %lld is outside rank %d", op->name, (long long)dim, xsh.rank);
  if (topk) {
    const mlir_attr *ka = hlo_attr(op, "k", NULL);
    for (int i = 0; !ka && i < op->nitems; i++) ka = mlir_attr_get(op->items[i].val, "k");
    if (hlo_ints_of(ka, &kk, 1) != 1 || kk < 0 || kk > xsh.d[dim])
      return hlo_error(b, op, "%s: k must be a number of elements of the last dim (0 to %lld)", op->name, (long long)xsh.d[dim]);
  }
  /* the sorted dim last, everything else one dim of rows: [m, n] */
  int64_t n = xsh.d[dim], m = n ? ir_nelem(&xsh) / n : 0, npow = 1;
  while (npow < n) npow *= 2;
  ir_attrs tr = hlo_no_attrs();
  tr.ndims = xsh.rank;
  ir_shape moved = {.rank = 0};
  for (int d = 0, j = 0; d < xsh.rank; d++) if (d != dim) { tr.dims[j++] = d; moved.d[moved.rank++] = xsh.d[d]; }
  tr.dims[xsh.rank - 1] = (int)dim;
  moved.d[moved.rank++] = n;
  int padded = npow > n, nt = k + 1 + padded, cur[8];
  ir_shape rows = {.rank = 2, .d = {m, n}}, full = {.rank = 2, .d = {m, npow}};
  for (int i = 0; i < k; i++) {
    cur[i] = dim == xsh.rank - 1 ? xs[i] : hlo_emit(b, hlo_fresh(b, "sort"), IR_TRANSPOSE, &xs[i], 1, &tr);
    if (cur[i] < 0 || (cur[i] = hlo_reshape(b, hlo_fresh(b, "sort"), cur[i], &rows)) < 0) return -1;
  }
  ir_attrs io = hlo_no_attrs();
  io.to = full;
  io.dim = 1;
  io.dtype = IR_I32;
  if ((cur[k] = hlo_emit(b, hlo_fresh(b, "sort"), IR_IOTA, NULL, 0, &io)) < 0) return -1;
  if (padded) {     /* zeros after the data, and a flag that they are padding */
    ir_attrs bt = hlo_no_attrs(), cat = hlo_no_attrs();
    cat.dim = 1;
    bt.to = (ir_shape){.rank = 2, .d = {m, npow - n}};
    for (int i = 0; i < k; i++) {
      int z = ir_const_typed(b->g, 0, b->g->vals[cur[i]]->dtype);
      int parts[2] = {cur[i], hlo_emit(b, hlo_fresh(b, "sort"), IR_BROADCAST, &z, 1, &bt)};
      if (parts[1] < 0 || (cur[i] = hlo_emit(b, hlo_fresh(b, "sort"), IR_CONCAT, parts, 2, &cat)) < 0) return -1;
    }
    int lim[2] = {cur[k], ir_const_typed(b->g, (double)n, IR_I32)};
    ir_attrs lt = hlo_no_attrs();
    lt.spec = ir_intern(b->g, "lt");
    if ((cur[k + 1] = hlo_emit(b, hlo_fresh(b, "sort"), IR_COMPARE, lim, 2, &lt)) < 0) return -1;
  }
  const char *saved_prefix = b->prefix;
  int rc = 0, step = 0;
  for (int64_t blk = 2; blk <= npow && rc == 0; blk *= 2) {
    for (int64_t d = blk / 2; d >= 1 && rc == 0; d /= 2, step++) {
      char pre[512];
      snprintf(pre, sizeof pre, "%ss%d.", saved_prefix, step);
      b->prefix = arena_strndup(&b->tmp, pre, strlen(pre));
      int64_t nb = npow / (2 * d);
      ir_shape view = {.rank = 3, .d = {m, nb, 2 * d}};
      int lo[8], hi[8];
      for (int t = 0; t < nt && rc == 0; t++) {
        ir_attrs at = hlo_no_attrs();
        at.dim = 2;
        int v = hlo_reshape(b, hlo_fresh(b, "sort"), cur[t], &view);
        at.start = 0; at.end = d;
        lo[t] = v < 0 ? -1 : hlo_emit(b, hlo_fresh(b, "sort"), IR_SLICE, &v, 1, &at);
        at.start = d; at.end = 2 * d;
        hi[t] = v < 0 ? -1 : hlo_emit(b, hlo_fresh(b, "sort"), IR_SLICE, &v, 1, &at);
        if (lo[t] < 0 || hi[t] < 0) rc = -1;
      }
      if (rc < 0) break;
      /* the direction of each block of blk elements: ascending where its place in the row is even */
      ir_attrs up = hlo_no_attrs();
      up.to = (ir_shape){.rank = 3, .d = {1, nb, 1}};
      up.dtype = IR_I1;
      void *bits = ir_values_new(b->g, IR_I1, nb);
      for (int64_t q = 0; q < nb; q++) ir_values_set(bits, IR_I1, q, ((q * 2 * d) / blk) % 2 == 0);
      up.data = bits;
      int upm = hlo_emit(b, hlo_fresh(b, "sort"), IR_CONSTANT, NULL, 0, &up);
      int hl = sort_before(&s, hi, lo), lh = hl < 0 ? -1 : sort_before(&s, lo, hi);
      int swap_up = lh < 0 ? -1 : sort_first(&s, hi, lo, hl, lh, padded);
      int swap_down = swap_up < 0 ? -1 : sort_first(&s, lo, hi, lh, hl, padded);
      int sel[3] = {upm, swap_up, swap_down};
      int swap = upm < 0 || swap_down < 0 ? -1 : hlo_emit(b, hlo_fresh(b, "sort"), IR_SELECT, sel, 3, NULL);
      if (swap < 0) { rc = -1; break; }
      for (int t = 0; t < nt && rc == 0; t++) {
        int a[3] = {swap, hi[t], lo[t]}, c[3] = {swap, lo[t], hi[t]}, cat[2];
        ir_attrs ct = hlo_no_attrs();
        ct.dim = 2;
        cat[0] = hlo_emit(b, hlo_fresh(b, "sort"), IR_SELECT, a, 3, NULL);
        cat[1] = hlo_emit(b, hlo_fresh(b, "sort"), IR_SELECT, c, 3, NULL);
        int j = cat[0] < 0 || cat[1] < 0 ? -1 : hlo_emit(b, hlo_fresh(b, "sort"), IR_CONCAT, cat, 2, &ct);
        if (j < 0 || (cur[t] = hlo_reshape(b, hlo_fresh(b, "sort"), j, &full)) < 0) rc = -1;
      }
    }
  }
  b->prefix = saved_prefix;
  if (rc < 0) return -1;
  /* the first n (or k) of each row, back to the operands' layout */
  int res[8], pick[2] = {0, k}, nout = topk ? 2 : k;
  int64_t keep = topk ? kk : n;
  ir_attrs inv = hlo_no_attrs();
  inv.ndims = xsh.rank;
  for (int d = 0; d < xsh.rank; d++) inv.dims[tr.dims[d]] = d;
  for (int i = 0; i < nout; i++) {
    int t = topk ? pick[i] : i;
    ir_attrs at = hlo_no_attrs();
    at.dim = 1;
    at.start = 0;
    at.end = keep;
    int y = keep == npow ? cur[t] : hlo_emit(b, hlo_fresh(b, "sort"), IR_SLICE, &cur[t], 1, &at);
    ir_shape back = moved;
    back.d[back.rank - 1] = keep;
    if (y < 0 || (y = hlo_reshape(b, hlo_fresh(b, "sort"), y, &back)) < 0) return -1;
    if (!topk && dim != xsh.rank - 1 && (y = hlo_emit(b, hlo_fresh(b, "sort"), IR_TRANSPOSE, &y, 1, &inv)) < 0) return -1;
    res[i] = y;
  }
  return check_and_bind(b, op, res);
}

/*
** hlo_int.h: what the StableHLO importer's files share: the import
** context, the op readers (attributes, operands, result types) and the
** builders of IR values, all in hlo_op.c. Above it the op files:
** hlo_basic.c (ops carve has one by one), hlo_index.c (gathers and
** scatters), hlo_window.c (convolution, reduce_window, select_and_scatter,
** strided slices, interior padding, reverse, out of slices,
** concatenations and einsums), hlo_math.c (CHLO's special functions and
** reduce_precision out of elementwise ops). Above them hlo_flow.c dispatches each op
** and runs regions (calls, while, case, region reductions), and hlo.c
** reads the module: the entry function, its arguments and shardings.
*/
#ifndef interp_front_hlo_int_h
#define interp_front_hlo_int_h

#include "interp/front/hlo.h"

#define HLO_MAX_VALUES 4000000

/* ---- scopes: SSA name (interned) and result number -> value id ---- */
typedef struct sslot { const char *name; int k, id; } sslot;
typedef struct scope {
  sslot *s;
  int n, cap;             /* cap: a power of two */
} scope;

typedef struct hctx {
  ir_graph *g;
  diag *d;
  const diag_src *src;
  const mlir_file *f;
  const mlir_module *m;
  arena tmp;              /* scopes and scratch, freed at the end */
  scope *sc;              /* the current function instance */
  const char *prefix;     /* its call path, "" at the entry */
  int depth;
  const char **callees;   /* how many times each function was inlined, for unique paths */
  int *ncalls, ncallees;
  const mlir_op *op;      /* the op being read, for messages */
  hlo_info *info;         /* the mesh and the shardings found, or NULL */
  long unrolled;          /* while iterations unrolled so far, all loops together */
  int elementwise;        /* inside a region applied to whole tensors: result types give the dtype only */
  int as_written;         /* composites read as their decompositions (hlo_opts) */
  int *checks, nchecks, capchecks;  /* the program's checks (i1 scalars), outputs after its results */
  /* a region run on whole tensors (hlo_run_elementwise), for the op files below hlo_flow.c */
  int (*run_region)(struct hctx *b, const mlir_op *op, const mlir_block *bl, const int *args, int *out, int nout);
} hctx;

static inline loc L(hctx *b, uint32_t off) { return (loc){b->src, off}; }

/* ---- reading ops (hlo_op.c) ---- */

void hlo_scope_put(arena *a, scope *sc, const char *name, int k, int id);
/* the id put under (name, k), or -1 */
int hlo_scope_get(const scope *sc, const char *name, int k);

/* A message about an op, at its name, with the Python place its loc names; -1. */
int hlo_error(hctx *b, const mlir_op *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* ops only inside functions, each function name once, each SSA value
** defined once where it is visible (hlo_check.c): 0, or -1 with an error */
int hlo_check_module(hctx *b, const mlir_module *m);
/* The most ops a program may grow to as carve reads it (calls inlined at
** each call, loops unrolled): a bound on the work and memory of reading. */
#define HLO_MAX_OPS 2000000
/* entry's ops, calls inlined, within HLO_MAX_OPS and no recursion
** (hlo_check.c; loops are counted once, their unrolling as it happens) */
int hlo_check_size(hctx *b, const mlir_func *entry);
/* Operand k's value id, or -1 after an error. */
int hlo_operand(hctx *b, const mlir_op *op, int k);
/* A tensor type's shape and element type, with a located error for what carve cannot hold. */
int hlo_tensor_type(hctx *b, const mlir_type *t, uint32_t off, ir_shape *s, ir_dtype *dt);
/* The k-th result type of op, or NULL. */
const mlir_type *hlo_result_type(const mlir_op *op, int k);
/* The result's shape and type. */
int hlo_result_shape(hctx *b, const mlir_op *op, ir_shape *s, ir_dtype *dt);
/* The operands of a dot or convolution converted to its wider declared result type. */
int hlo_widen_operands(hctx *b, const mlir_op *op, int *args, int nargs);
/* -1 with a located error unless value id has shape s and type dt. */
int hlo_check_result(hctx *b, const mlir_op *op, int id, const ir_shape *s, ir_dtype dt);
/* The attribute keyed k1 among the pretty items, else k1 or k2 among the properties. */
const mlir_attr *hlo_attr(const mlir_op *op, const char *k1, const char *k2);
/* The integers of a list attribute (count), -1 when it is not one. */
int hlo_ints_of(const mlir_attr *a, int64_t *out, int max);
/* The same for an op's attribute, with a located error when missing or malformed. */
int hlo_ints(hctx *b, const mlir_op *op, const char *k1, const char *k2, int64_t *out, int max);
/* The first word of set among the op's items, else inside its attribute key. */
const char *hlo_op_word(const mlir_op *op, const char *const *set, const char *key);
/* A carve name from an SSA name or a Python path ("%0" -> "v0"), NULL when nothing is left. */
const char *hlo_clean_name(hctx *b, const char *s);
/* The name of the k-th value op defines: its SSA name under the call path. */
const char *hlo_value_name(hctx *b, const mlir_op *op, int k);
/* "add" for "stablehlo.add" (and mhlo., func., chlo.). */
const char *hlo_short_name(const char *n);
/* The op of a region that combines its block's two arguments (*swapped: read in the other order), or NULL. */
const mlir_op *hlo_region_op(const mlir_region *r, int *swapped);
/* The short name of the op that combines a reduction region's two arguments ("add"), or NULL. */
const char *hlo_region_reducer(const mlir_region *r);

/* A reduction StableHLO writes as a region: its op, as a reduction and elementwise. */
typedef struct hlo_redop { const char *name; ir_opkind red, ew; double identity; } hlo_redop;
const hlo_redop *hlo_find_redop(const char *name);

/* ---- building values (hlo_op.c) ---- */

ir_attrs hlo_no_attrs(void);
/* A new op value named base (or fresh from it); integer literal arithmetic is folded. */
int hlo_emit(hctx *b, const char *base, ir_opkind k, const int *args, int nargs, const ir_attrs *at);
/* A name for a helper value of the op whose result is base ("v5.p", "v5.p.2"). */
const char *hlo_fresh(hctx *b, const char *base);
/* Helper values named after base, -1 when an operand is -1 (an error already said):
** k of x and y (y = HLO_UNARY: of x alone), compare(x, y, dir), select(p, x, y). */
#define HLO_UNARY (-2)
int hlo_ew(hctx *b, const char *base, ir_opkind k, int x, int y);
int hlo_cmp(hctx *b, const char *base, const char *dir, int x, int y);
int hlo_sel(hctx *b, const char *base, int p, int x, int y);
/* x reshaped to s (x itself when it has s). */
int hlo_reshape(hctx *b, const char *name, int x, const ir_shape *s);
/* x[lo:hi] on every dim (x where nothing is cut). */
int hlo_slice_block(hctx *b, const char *name, int x, const int64_t *lo, const int64_t *hi);

/* The value of operand k, or -1 (no message) when it is not defined. */
int hlo_lookup(hctx *b, const mlir_op *op, int k);
/* Shardy's sharding attribute s of value id recorded in info (a `shard value` in --tactics-out). */
int hlo_sdy_sharding(hctx *b, const mlir_attr *s, int id, hlo_info *info);

/* ---- the op files: each builds the ops it knows, -2 for the others ---- */

/* constants, layout ops, slices, dot_general, reductions with an op, elementwise ops, markers (hlo_basic.c) */
int hlo_basic_op(hctx *b, const mlir_op *op, const char *sn, const char *name);
/* the binary op named sn ("multiply"), or IR_NOPS */
ir_opkind hlo_binary_op(const char *sn);
/* StableHLO's checks (custom_call @check.expect_close, check.expect_eq_const): the kind, or NULL */
const char *hlo_check_kind(const mlir_op *op);
/* a check as an i1 scalar output named check.KIND, verified by carve run */
int hlo_check(hctx *b, const mlir_op *op, const char *kind);
/* reduce whose reducer is one of carve's ops (else hlo_flow.c applies its region) */
int hlo_reduce_is_simple(hctx *b, const mlir_op *op);
/* gather and scatter (hlo_index.c) */
int hlo_index_op(hctx *b, const mlir_op *op, const char *sn, const char *name);
/* dynamic_slice and dynamic_update_slice at starts (i-scalar value ids) computed at run time */
int hlo_dynamic_slice(hctx *b, const char *name, int x, const int *starts, const ir_shape *part);
int hlo_dynamic_update(hctx *b, const char *name, int dst, int upd, const int *starts);
/* pad, reverse, convolution, reduce_window, select_and_scatter (hlo_window.c) */
int hlo_window_op(hctx *b, const mlir_op *op, const char *sn, const char *name);
/* x[lo:hi:st] on every dim (stride st >= 1), for slice (hlo_window.c) */
int hlo_strided_slice(hctx *b, const char *name, int x, const int64_t *lo, const int64_t *hi, const int64_t *st);

/* chlo's sinh .. atanh, erf_inv, lgamma, digamma, next_after; reduce_precision (hlo_math.c) */
int hlo_math_op(hctx *b, const mlir_op *op, const char *sn, const char *name);

/* ---- regions and the dispatcher (hlo_flow.c) ---- */

/* A region of op run on whole tensors: its block's arguments bound to args, its nout results to out */
int hlo_run_elementwise(hctx *b, const mlir_op *op, const mlir_block *bl, const int *args, int *out, int nout);
/* fn's body run with its arguments bound to args; what it returns to outs */
int hlo_build_body(hctx *b, const mlir_func *fn, const int *args, int *outs, int maxouts, int *nouts);

#endif

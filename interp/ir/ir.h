/*
** ir.h: the typed SSA intermediate representation, the hub every pass
** reads. A graph is an array of values; each value is a leaf (input,
** parameter, optimizer state, literal) or the single result of one op
** over earlier values. Values are numbered in definition order, so the
** array is already a topological order. All memory sits in the graph's
** arena and names are interned in it (compare names by pointer).
*/
#ifndef interp_ir_h
#define interp_ir_h

#include <stdint.h>
#include "util/arena.h"
#include "util/diag.h"

#define IR_MAXRANK 16

/* f32 runs everywhere; bf16 and f16 are stored in two bytes and computed
** with f32 arithmetic; f64, i64, i1 (a boolean), i8, ui8, i16, ui16 and ui32
** compute in their own width, as imported StableHLO programs use them (JAX's
** PRNG works in ui32). ORDER IR_DTYPE */
/* the dtypes as a message lists them (ORDER IR_DTYPE aside) */
#define IR_DTYPE_LIST "f32, bf16, f16, f64, i64, i32, i16, i8, ui32, ui16, ui8 or i1"

typedef enum ir_dtype { IR_F32, IR_BF16, IR_F16, IR_I32, IR_F64, IR_I64, IR_I1, IR_I8, IR_UI8, IR_I16, IR_UI16, IR_UI32,
                        IR_NDTYPES } ir_dtype;

typedef struct ir_shape {
  int rank;
  int64_t d[IR_MAXRANK];
} ir_shape;

/* grep "ORDER IR_OP" if you change this: interp/ops.c has the table */
typedef enum ir_opkind {
  IR_LEAF,
  /* elementwise unary */
  IR_NEG, IR_EXP, IR_LOG, IR_SQRT, IR_RSQRT, IR_TANH, IR_RELU, IR_GELU, IR_GELU_TANH,
  IR_SIGMOID, IR_SILU,
  /* elementwise binary, NumPy broadcasting */
  IR_ADD, IR_SUB, IR_MUL, IR_DIV, IR_MAXIMUM, IR_MINIMUM,
  /* contractions */
  IR_MATMUL, IR_EINSUM,
  /* reductions */
  IR_SUM, IR_MEAN, IR_MAX, IR_MIN,
  /* row-wise */
  IR_SOFTMAX, IR_LOG_SOFTMAX, IR_LAYERNORM,
  /* data movement */
  IR_RESHAPE, IR_TRANSPOSE, IR_BROADCAST, IR_CONCAT, IR_SLICE,
  /* lookups and losses */
  IR_EMBEDDING, IR_CROSS_ENTROPY, IR_CAUSAL_MASK,
  /* StableHLO's other elementwise ops, in every dtype (imported programs use them) */
  IR_ABS, IR_SIGN,      /* abs(x), sign(x) (-1, 0 or 1; NaN and -0 stay) */
  IR_ERF,               /* erf(x), floats (chlo.erf: JAX's exact GELU) */
  IR_ERFC,              /* erfc(x) = 1 - erf(x), exact where it is small (chlo.erfc) */
  IR_LOG1P, IR_EXPM1,   /* log(1 + x), exp(x) - 1, exact near 0 (softplus, elu) */
  IR_SIN, IR_COS,       /* (rotary embeddings) */
  IR_FLOOR, IR_CEIL,    /* no gradient, as in JAX */
  IR_ROUND,             /* round half to even (jnp.round, round_nearest_even) */
  IR_ROUND_AFZ,         /* round half away from zero (round_nearest_afz) */
  IR_TAN, IR_CBRT,      /* tan(x), the cube root (jnp.tan, jnp.cbrt) */
  IR_POPCNT, IR_CLZ,    /* integers: set bits, leading zero bits in the type's width */
  IR_NOT,               /* not(x): logical on i1, bitwise on integers */
  IR_CONVERT,           /* convert(x, dtype = T) as StableHLO's convert */
  IR_BITCAST,           /* bitcast(x, dtype = T): the same bits read as T, of the same width (no gradient) */
  IR_POWER,             /* power(a, b) */
  IR_AND, IR_OR, IR_XOR,
  IR_REM,               /* rem(a, b): a - b * trunc(a / b), the sign of a (C's fmod; integers as XLA) */
  IR_ATAN2,             /* atan2(a, b): the angle of (b, a), floats */
  IR_SHL, IR_SHRA, IR_SHRL, /* integers: shift left, right arithmetic, right logical (as XLA:
                           a shift by the width or more gives 0, or -1 for a negative a >> ) */
  IR_COMPARE,           /* compare(a, b, "lt", total = false) -> i1 */
  IR_SELECT,            /* select(pred, a, b): a where pred, else b (broadcasting) */
  IR_IOTA,              /* iota(shape = [..], dim = d, dtype = T): the index along dim */
  IR_CONSTANT,          /* constant([values], shape = [..], dtype = T): a tensor of given values */
  IR_ATTENTION,         /* attention(q, k, v, causal = true, scale = s): softmax(scale q k^T) v over
                           [b, h, s, dk], fused (the scores are never stored whole) */
  IR_GATHER,            /* gather(x, indices, offset_dims = .., ...): StableHLO's gather (attr.index) */
  IR_SCATTER,           /* scatter(x, indices, updates, update_window_dims = .., ..., combine = "add"):
                           StableHLO's scatter with one of carve's combiners (attr.index) */
  IR_RMSNORM,           /* rmsnorm(x, gamma, dim = -1, eps = 1e-5): x / sqrt(mean(x^2) + eps) * gamma */
  /* internal: made by autodiff and the optimizers, printable and parseable */
  IR_GE,                /* ge(a, b): 1 where a >= b else 0 (broadcasting) */
  IR_RELU_GRAD,         /* relu_grad(x, dy) */
  IR_GELU_GRAD, IR_GELU_TANH_GRAD, IR_SILU_GRAD,
  IR_SOFTMAX_GRAD,      /* softmax_grad(y, dy, dim) */
  IR_LOG_SOFTMAX_GRAD,  /* log_softmax_grad(y, dy, dim) */
  IR_NORMALIZE,         /* normalize(x, dim, eps, rms): layernorm (rmsnorm with rms = true)
                           without gamma and beta */
  IR_LAYERNORM_GRAD,    /* layernorm_grad(x, gamma, dy, dim, eps, rms) -> dx (of rmsnorm with rms) */
  IR_MAX_GRAD,          /* max_grad(x, dy, dims, keepdims) */
  IR_EMBEDDING_GRAD,    /* embedding_grad(ids, dy, rows = V) */
  IR_CROSS_ENTROPY_GRAD,/* cross_entropy_grad(logits, labels, dloss) */
  IR_CAUSAL_MASK_GRAD,  /* causal_mask_grad(dy): masked entries become 0 */
  IR_SUM_TO,            /* sum_to(x, [shape]): sums broadcast dims away (gradient of broadcasting) */
  IR_PAD,               /* pad(x, dim, start, size): zeros around x (gradient of slice) */
  IR_ATTENTION_GRAD,    /* attention_grad(q, k, v, dy, causal, scale) -> [b, h, s, 3 dk]:
                           dq, dk, dv side by side along the last dim */
  IR_NOPS
} ir_opkind;

typedef enum ir_kind {
  IR_INPUT,             /* data fed per step (input declarations) */
  IR_PARAM,             /* trained parameters */
  IR_STATE,             /* optimizer state and the step counter */
  IR_CONST,             /* a literal scalar */
  IR_OP                 /* the result of an op */
} ir_kind;

/* What tactic selectors see (DESIGN "Selectors"). */
typedef enum ir_role { ROLE_VALUE, ROLE_INPUT, ROLE_PARAM, ROLE_GRAD, ROLE_STATE } ir_role;

typedef enum ir_initkind { INIT_NORMAL, INIT_ZEROS, INIT_ONES, INIT_UNIFORM, INIT_NKINDS } ir_initkind;   /* ORDER ir_initkind */

typedef struct ir_init {
  ir_initkind kind;
  double a, b;          /* normal: std; uniform: lo, hi */
} ir_init;

/* gather and scatter: StableHLO's dimension numbers. A scatter's lists are
** the gather's under their scatter names: update_window_dims (offset),
** inserted_window_dims (collapsed), scatter_dims_to_operand_dims (start
** map), input_batching_dims and scatter_indices_batching_dims; its window
** sizes (slice) are worked out from the updates' shape. ORDER IR_IX */
enum { IX_OFFSET, IX_COLLAPSED, IX_START_MAP, IX_SLICE, IX_OPERAND_BATCH, IX_INDEX_BATCH, IX_NLISTS };
typedef struct ir_index {
  int n[IX_NLISTS];
  int64_t v[IX_NLISTS][IR_MAXRANK];
  int ivd;              /* index_vector_dim */
  int combine;          /* scatter: IR_ADD, IR_MUL, IR_MAXIMUM, IR_MINIMUM, or IR_LEAF to replace */
  int other_bounds;     /* indices out of range: 0 as StableHLO says (gather clamps the start,
                           scatter skips an element that falls outside); 1 the other way (a
                           gather's element outside is zero, a scatter clamps its start), as
                           the two's gradients need */
} ir_index;

/* Does list k of ix hold x? */
static inline int ir_index_has(const ir_index *ix, int k, int64_t x) {
  for (int i = 0; i < ix->n[k]; i++) if (ix->v[k][i] == x) return 1;
  return 0;
}

typedef struct ir_attrs {
  int ndims;            /* sum/mean/max/max_grad: reduced dims (sorted, non-negative) */
  int dims[IR_MAXRANK]; /* transpose: the permutation (ndims = rank) */
  int keepdims;
  int dim;              /* softmax, log_softmax, layernorm, normalize, concat, slice, pad (non-negative) */
  int64_t start, end;   /* slice [start, end); pad: start and the padded size (end) */
  int64_t rows;         /* embedding_grad: table rows */
  double eps;           /* layernorm, rmsnorm, normalize, layernorm_grad */
  int rms;              /* normalize, layernorm_grad: root mean square, not centred (rmsnorm's) */
  ir_shape to;          /* reshape, broadcast, sum_to: the target shape */
  const char *spec;     /* einsum: "bsd,dhk->bshk"; compare: its direction "lt" (interned) */
  double scalar;        /* IR_CONST: the value */
  int cmp;              /* compare: the direction (ir_cmp), set from spec by the shape rule */
  int total;            /* compare: IEEE-754 totalOrder for floats */
  ir_dtype dtype;       /* convert, iota, constant: the result's type */
  const void *data;     /* constant: nelem values of dtype (in the graph's arena) */
  double scale;         /* attention: the factor of the scores (0 before the shape rule: 1/sqrt(dk)) */
  int causal;           /* attention: a query sees only the keys at or before it */
  const ir_index *index;/* gather, scatter (in the graph's arena) */
} ir_attrs;

typedef enum ir_cmp { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE } ir_cmp;

typedef struct ir_value {
  int id;               /* index in graph->vals */
  const char *name;     /* interned; unique in the graph */
  ir_kind kind;
  ir_role role;
  ir_dtype dtype;
  ir_shape shape;
  ir_opkind op;         /* IR_LEAF for inputs, params, state, constants */
  int nargs;
  int *args;            /* operand value ids (each < id) */
  ir_attrs attr;
  ir_init init;         /* IR_PARAM and IR_STATE: how to start it */
  loc at;               /* where the source wrote it (LOC_NONE for generated values) */
  int carry;            /* a step's output: the id of the leaf it replaces next step, else -1 */
  int is_output;
  int origin;           /* autodiff: the value whose gradient rule made this one (the
                           backward pass of a pipeline stage runs where its forward
                           value does), else -1 */
  int update;           /* an optimizer's update of the state (train/optim.c): where storage
                           splits (ZeRO's) propagate */
  int nusers;           /* filled by ir_link */
  int *users;           /* ids of the values that read this one (each once) */
} ir_value;

typedef struct ir_graph {
  arena mem;            /* owns everything reachable from the graph */
  const diag_src *src;
  const char *name;     /* the model's name */
  ir_value **vals;
  int nvals, cap;
  int *outputs;         /* ids, in return order; for a training step the loss comes first */
  int nouts, outcap;
  int train;            /* train_kind: 0 forward; 1 sgd; 2 adam; 3 a step of its own */
  /* values a fusion rewrote away (ir_fuse_attention), each with the value
     that now computes them: messages name where a user's value went */
  struct ir_fused { const char *name, *into; } *fused;
  int nfused;
  /* name -> id, open addressing on the interned pointer */
  int *index;
  int nindex, ntomb;
} ir_graph;

ir_graph *ir_graph_new(const diag_src *src, const char *name);
void      ir_graph_free(ir_graph *g);

const char *ir_intern(ir_graph *g, const char *s);
ir_value   *ir_lookup(const ir_graph *g, const char *name);   /* interned or not */
/* The first value a fusion rewrote away whose name the glob matches, or NULL. */
const struct ir_fused *ir_fused_match(const ir_graph *g, const char *glob);
ir_value   *ir_val(const ir_graph *g, int id);

/* Add a leaf or an op value whose type is already known. The name must be
** new (interned here); returns NULL if the name is taken. */
ir_value *ir_add(ir_graph *g, const char *name, ir_kind kind, ir_opkind op,
                 const int *args, int nargs, const ir_attrs *attr, loc at);
/* A fresh name from a prefix: "%s.1", "%s.2", ... never clashing with a user name. */
const char *ir_fresh_name(ir_graph *g, const char *prefix);
/* Give v another name (-1 if taken). */
int ir_rename(ir_graph *g, ir_value *v, const char *name);
void ir_add_output(ir_graph *g, int id);
/* Does g compute anything in bf16 or f16 (mixed precision, or a model declared so)? */
int ir_computes_low(const ir_graph *g);
/* The literal scalar x (one value per distinct number, printed inline). */
int ir_const(ir_graph *g, double x);
/* The same of type t (f32 literals adapt to the operands they meet; other
** types are fixed: i64 ids, f64 values that must keep their precision). */
int ir_const_typed(ir_graph *g, double x, ir_dtype t);
/* Element k of a constant op's values, as a double; and the storage for
** n values of type t (zeroed, in the graph's arena) with a setter. */
double ir_value_at(const ir_value *v, int64_t k);
int64_t ir_value_at_int(const ir_value *v, int64_t k);    /* an integer constant's, exactly */
void  *ir_values_new(ir_graph *g, ir_dtype t, int64_t n);
void   ir_values_set(void *data, ir_dtype t, int64_t k, double x);
void   ir_values_set_int(void *data, ir_dtype t, int64_t k, int64_t x);   /* exact beyond 2^53 */
/* Before adding op: when it is elementwise, give its f32 literal operands
** the type of its other operands when that is not f32, bf16 or f16 (so
** that add(ids, 1) adds an integer and mul(x, 3.14159..) keeps f64's
** digits); select's predicate is left alone. Rewrites args in place. */
void ir_type_literals(ir_graph *g, ir_opkind op, int *args, int nargs);
/* Elementwise ops read what their broadcast operands broadcast (a literal,
** a row sum) and the broadcasts nothing reads any more go (simplify.c);
** the count of operands changed. */
int ir_simplify_broadcasts(ir_graph *g);
/* Compute users of every value (call after the graph is complete). */
void ir_link(ir_graph *g);
/* A program that is one training step of its own (an imported JAX step, a
** model file that returns new values): each output named new.NAME, where
** NAME is a leaf of the same shape and type, is that leaf's value in the
** next step (carry). The count of such outputs. */
int ir_carry_new_values(ir_graph *g);

/* The true/false and number attributes by their signature names (ops.h):
** keepdims, total, causal; eps, scale. */
int    ir_attr_flag(const ir_attrs *a, const char *name);
void   ir_attr_set_flag(ir_attrs *a, const char *name, int on);
/* whether the literal x is a value of type t (integral and in range for an integer type) */
int    ir_literal_fits(double x, ir_dtype t);
double ir_attr_number(const ir_attrs *a, const char *name);

/* Drop the values marked in dead[id] (no kept value may read one): the
** others are renumbered in order, names and users rebuilt. */
void ir_compact(ir_graph *g, const char *dead);
/* Put the values in the order given (a permutation of the ids in which
** every value comes after its operands): renumbered, users rebuilt. */
void ir_reorder(ir_graph *g, const int *order);

/* Rewrite softmax(causal_mask(scale * q k^T)) v, written as einsums over
** [b, h, s, dk] f32 values whose scores have no other reader, into one
** attention op (fuse.c). Call on a linked graph before autodiff; returns
** how many were fused. */
int ir_fuse_attention(ir_graph *g);
/* Does an einsum spec have the form of tmpl ("0123,0143->0124": digits
** stand for distinct labels, the same digit for the same label)? */
int ir_spec_is(const char *spec, const char *tmpl);

/* Shape inference and verification for one op value whose args and attrs
** are set: fills v->shape and v->dtype or records a located error. */
int ir_infer(ir_graph *g, ir_value *v, diag *d);

/* Build one op value: adds, infers, and returns it (NULL after an error in d). */
ir_value *ir_op(ir_graph *g, diag *d, const char *name, ir_opkind op,
                const int *args, int nargs, const ir_attrs *attr, loc at);
/* A generated op (autodiff, optimizers) under a fresh name made from
** prefix; attr NULL means none. Its id, or -1 after an error in d. */
int ir_emit(ir_graph *g, diag *d, const char *prefix, ir_opkind op, const int *args, int nargs, const ir_attrs *attr);

/* The labels of a matmul or einsum value's operands and result: l[0], l[1],
** l[2] (matmul as "..MK,..KN->..MN", batch dims right-aligned). */
void ir_contraction_labels(const ir_graph *g, const ir_value *v, char l[3][IR_MAXRANK + 1]);

/* Text that parses back to the same IR (carve check --print). */
char *ir_print(const ir_graph *g, arena *out);

const char *ir_dtype_name(ir_dtype t);
int         ir_dtype_parse(const char *s, ir_dtype *t);
size_t      ir_dtype_size(ir_dtype t);
int         ir_dtype_isfloat(ir_dtype t);   /* f32 bf16 f16 f64 */
int         ir_dtype_isint(ir_dtype t);     /* i32 i64 i8 ui8 i16 ui16 ui32 (not i1) */
int         ir_dtype_isunsigned(ir_dtype t); /* ui8 ui16 ui32 */
int64_t     ir_nelem(const ir_shape *s);
int         ir_shape_eq(const ir_shape *a, const ir_shape *b);
/* "[2048, 768]" into an arena */
const char *ir_shape_str(arena *a, const ir_shape *s);

#endif

/*
** prog.h: the per-device program, as lopcodes.h is to Lua: interp's
** lowering emits it, the executor runs it. A program is a flat list of
** instructions over numbered buffers. Each instruction writes one buffer
** (allocated at its first write, freed after its last read) and reads up
** to four. Shapes here are local (per device); collectives name a group
** of mesh axes. Nothing here knows about the IR or the source language.
*/
#ifndef runtime_prog_h
#define runtime_prog_h

#include <stddef.h>
#include <stdint.h>
#include "util/arena.h"

#define RT_MAXRANK 16
#define RT_MAXIN 8

/* Element types. f32 is the fast path of every kernel; bf16 and f16 are
** stored in two bytes and computed with f32 arithmetic; f64, i64, i8, ui8
** and i1 (a boolean, one byte holding 0 or 1) compute in their own width
** (runtime/dtype.h). ORDER RT_DTYPE */
typedef enum rt_dtype { RT_F32, RT_I32, RT_BF16, RT_F16, RT_F64, RT_I64, RT_I1, RT_I8, RT_UI8, RT_I16, RT_UI16, RT_UI32,
                        RT_NDTYPES } rt_dtype;

/* grep "ORDER RT_OP" if you change this */
typedef enum rt_op {
  RT_FILL,          /* out[:] = alpha */
  RT_COPY,          /* out = in0, same element count (reshape is a copy) */
  RT_EW,            /* out[idx] = fn(in0, in1, in2) over shape[rank], inputs read through
                       stride[k] (element strides, 0 broadcasts); see rt_ewfn. With in3
                       (f32, dense operands, arity 1 or 2): in3[c] = the sum of out's
                       column c over all its rows, also written (a bias gradient
                       folded into the pass that makes it: interp/lower/biasgrad.c) */
  RT_TRANSPOSE,     /* out = permute(in0): in0 has shape[rank]; out dim i = in dim perm[i] */
  RT_GEMM,          /* for b < batch: C_b = alpha * op(A_b) op(B_b) + beta * C_b, row-major;
                       A = in0 (m x k after op), B = in1 (k x n after op), C = out;
                       stride_a/b/c: elements between batches (0 = shared) */
  RT_REDUCE,        /* in0 viewed as [outer, n, inner] -> out [outer, inner];
                       fn RT_RSUM (times alpha, for mean), RT_RMAX or RT_RMIN */
  RT_REDUCE_MAX_GRAD,/* in0 = x [outer, n, inner], in1 = dy [outer, inner] -> dx: dy shared
                       evenly among the maxima of each (outer, inner) row */
  RT_SOFTMAX,       /* in0 [outer, n] -> softmax over n (numerically stable) */
  RT_LOG_SOFTMAX,   /* in0 [outer, n] -> log_softmax over n (log-sum-exp) */
  RT_SOFTMAX_GRAD,  /* in0 = y, in1 = dy, [outer, n] -> y * (dy - sum(dy * y)) */
  RT_LOG_SOFTMAX_GRAD,/* in0 = y, in1 = dy -> dy - exp(y) * sum(dy) */
  RT_LAYERNORM,     /* in0 = x [outer, n], in1 = gamma [n] or -1, in2 = beta [n] or -1;
                       biased variance, alpha = eps inside the square root; with mode
                       RT_LN_RMS the mean is 0 (the mean square for the variance) */
  RT_LAYERNORM_GRAD,/* in0 = x, in1 = gamma or -1, in2 = dy -> dx; alpha = eps; with mode
                       RT_LN_GAMMA (in1 = -1) -> [n], the sum over rows of dy * xhat
                       (gamma's gradient, folded from layernorm, mul and reduce_sum) */
  RT_GATHER_ROWS,   /* in0 = table [n, inner] (f32), in1 = ids [outer] (i32) -> [outer, inner];
                       rows are table rows off .. off+n-1; other ids give zero rows
                       (a vocabulary shard); an id outside [0, n2) is an error */
  RT_SCATTER_ROWS,  /* in0 = ids [outer], in1 = dy [outer, inner] -> [n, inner], zero then
                       rows accumulated (repeated ids add up; beta != 0: added to out as
                       it is, without the zeroing); same off/n2 meaning.
                       Both: with group >= 0 and n < n2 the table is split by rows over
                       group and the executor adds (this device's index in group) * n to off */
  RT_XENT,          /* in0 = logits [outer, n], in1 = labels [outer] (i32) -> scalar
                       alpha * sum over rows of -log_softmax[label]; a label outside
                       [0, n) is an error */
  RT_XENT_GRAD,     /* in0 = logits, in1 = labels, in2 = dloss (scalar)
                       -> (softmax - onehot) * dloss * alpha; in3 = a scalar or -1: where
                       given, also the loss written there, as RT_XENT with alpha = beta
                       would (the two folded: rt_instr_writes_in).
                       Both, the classes split (vocabulary-parallel): in4 = each row's max
                       over all n2 classes, in5 = its sum of exp(x - max) over them (both
                       [outer]); the logits hold classes off .. off+n-1 of n2 (group and
                       off as RT_SCATTER_ROWS's rows); a label outside [0, n2) is an
                       error. xent writes this device's part of the loss: alpha * the sum
                       over rows of log in5 + in4 (the device at off 0 only) less the
                       logit of a label that is one of its classes; xent_grad writes
                       (exp(x - in4) / in5 - onehot) * dloss * alpha, and no loss (in3 -1) */
  RT_XENT_PROJ,     /* cross-entropy of a projection and its gradients, inner rows at a time
                       (interp/lower/lmloss.c): in0 = x [outer, k], in1 = w ([n, k] when
                       transb, else [k, n]), in2 = labels [outer], in3 = dloss, in4 = the
                       loss (written, scale beta), in5 = dw (written, w's shape; mode 1:
                       added to), in6 = scratch [inner, n] (written); out = dx [outer, k].
                       Per chunk: logits = x w, their xent_grad (alpha), dx = d w^T,
                       dw += d^T x: the [outer, n] logits never exist whole */
  RT_XENT_SUMEXP,   /* in0 = logits [outer, n], in1 = m [outer] -> [outer]: each row's sum of
                       exp(x - m) (a vocabulary-parallel cross-entropy's local sums) */
  RT_CAUSAL_MASK,   /* in0 viewed as [outer, m, n]: entries with col > row + off become alpha
                       (-inf forward, 0 for the gradient) */
  RT_BLOCK_COPY,    /* in0 viewed [outer, m, inner]: its rows [k, k+n) go to rows
                       [off, off+n) of out viewed [outer, n2, inner]; the rest of out
                       is left as it is (slice, concat, pad) */
  RT_SHARD_SLICE,   /* in0 [outer, n, inner] -> out [outer, n / P, inner]: this device's
                       piece along n, where P and the piece index come from group */
  RT_IOTA,          /* out viewed [outer, n, inner]: each element its index along n */
  RT_CONST,         /* out = the nelem elements at data (bytes of out's dtype, in the program) */
  /* fused optimizer updates (f32, nelem elements each, one pass); they also write
     their state inputs in place; hyper[] holds the constants */
  RT_ADAM,          /* in0 = p, in1 = g, in2 = m, in3 = v, in4 = lr sqrt(1 - beta2^t) / (1 - beta1^t),
                       in5 = eps sqrt(1 - beta2^t) (scalars); hyper = beta1, beta2, eps, weight
                       decay, and the gradient's coefficients in the moments (1 - beta1, 1 - beta2
                       as the program writes them), alpha = lr (lr and eps shown only):
                       torch.optim.Adam in the Adam paper's order; m and v are rewritten, out =
                       the new p (may be in0); mode RT_ADAM_DECOUPLED: AdamW */
  RT_SGD,           /* in0 = p, in1 = g, in2 = momentum buffer (rewritten) or -1; alpha = lr,
                       hyper = momentum, weight decay: torch.optim.SGD; out = the new p */
  RT_ATTENTION,     /* in0 = q, in1 = k, in2 = v, each [outer, m, k] (f32) -> out [outer, m, k]:
                       softmax(alpha * q k^T) v per outer slice, with keys after the query
                       masked when fn is 1 (causal); the scores exist a block at a time */
  RT_ATTENTION_GRAD,/* in0..2 = q, k, v, in3 = dy, as RT_ATTENTION -> out [outer, m, 3 k]:
                       dq, dk, dv side by side in each row; the scores are recomputed.
                       Both: an operand whose RT_ATTN_BSHD bit is set in mode is laid out
                       [b, m, n2, k] instead (out: [b, m, n2, 3 k]), outer = b n2: the
                       heads interleaved, as projections make them (no transposes) */
  /* ring attention (context parallelism; runtime/kern_ring.c), f32, each of
     [outer, rows, k]: m queries from position off, a block of n keys from
     position n2, fn 1 causal (a key after its query masked), alpha the
     scale. With group >= 0 they are the ring's: the executor sets off to
     (this device's index in group) * m and n2 to that of the device
     split_dim places back along the ring (the block it holds at step
     split_dim) times n */
  RT_ATTN_BLOCK,    /* in0 = q, in1 = k, in2 = v; out = the running output (read and written),
                       in3 = each row's running max, in4 = its running sum (both written):
                       the block added to an online softmax */
  RT_ATTN_FINISH,   /* in0 = the running output, in1 = the sums, in2 = the maxima -> out =
                       output / sum; in3 (written, or -1): each row's log-sum-exp */
  RT_ATTN_BLOCK_GRAD,/* in0..3 = q, k, v, dy, in4 = each row's log-sum-exp, in5 = rowsum(dy o):
                       the block's part of dq added to out, of dk to in6, of dv to in7 */
  RT_GATHER,        /* StableHLO's gather, any dtype: in0 = operand, in1 = indices (an integer
                       type) -> out; data: the rt_index that maps their dims */
  RT_SCATTER,       /* StableHLO's scatter: out = in0 (the operand), then each element of
                       in2 (the updates) combined into out where in1 (the indices) puts it,
                       in order; data: the rt_index (the updates in the result's place) */
  RT_FUSED,         /* elementwise functions in one pass (interp/lower/fuse.c): data is an
                       rt_fused whose steps read in[0, nin) (f32 or i1, through its strides
                       over shape[rank]) and each other's results; the last step's is out (f32),
                       or with mode RT_FUSED_REDUCE its reduction (below) */
  RT_ALL_REDUCE,    /* collectives over the devices of group; fn RT_RSUM (a sum), RT_RMAX or
                       RT_RMIN (all_reduce only: the other collectives sum) */
  RT_ALL_GATHER,    /* in0 [outer, n, inner] -> out [outer, n * P, inner] */
  RT_REDUCE_SCATTER,/* in0 [outer, n, inner] -> out [outer, n / P, inner], summed */
  RT_ALL_TO_ALL,    /* in0 of shape[rank]: dim split_dim is cut into P pieces, piece q goes
                       to device q, and the pieces received are joined along concat_dim
                       (in device order); moves a split from concat_dim to split_dim */
  RT_SEND,          /* pipeline stages, point to point over group (the stage axis): in0 goes to
                       the device of the group at index n2 (out is in0: nothing is written);
                       off is the transfer's tag */
  RT_RECV,          /* out is what the device of the group at index n2 sent under tag off */
  RT_NOPS
} rt_op;

/* grep "ORDER RT_EWFN" if you change this */
typedef enum rt_ewfn {
  /* unary: in0 */
  RT_NEG, RT_EXP, RT_LOG, RT_SQRT, RT_RSQRT, RT_TANH, RT_RELU, RT_GELU, RT_GELU_TANH,
  RT_SIGMOID, RT_SILU,
  RT_AFFINE,        /* in0 * alpha + beta */
  /* binary: in0, in1 */
  RT_ADD, RT_SUB, RT_MUL, RT_DIV, RT_MAX, RT_MIN,
  RT_GE,            /* 1 where in0 >= in1, else 0 */
  RT_RELU_GRAD,     /* in0 = x, in1 = dy: dy where x > 0 */
  RT_GELU_GRAD,     /* in0 = x, in1 = dy */
  RT_GELU_TANH_GRAD,
  RT_SILU_GRAD,
  RT_AXPY,          /* in0 + alpha * in1 (an SGD update in one pass) */
  RT_AXPBY,         /* alpha * in0 + beta * in1 (Adam's moments in one pass) */
  /* ternary: in0, in1, in2 */
  RT_ADAM_DENOM,    /* sqrt(in0) * alpha + beta; kept binary-free for clarity */
  /* the ops of imported StableHLO programs, in every dtype (in0 to out's dtype unless said) */
  RT_ABS, RT_SIGN, RT_ERF, RT_ERFC,  /* unary (erf and the rest of this line: floats) */
  RT_LOG1P, RT_EXPM1, RT_SIN, RT_COS, RT_FLOOR, RT_CEIL, RT_ROUND, RT_ROUND_AFZ, RT_TAN, RT_CBRT,
  RT_POPCNT, RT_CLZ,/* integers: set bits, leading zeros, in the dtype's width */
  RT_NOT,           /* logical not of an i1, bitwise not of an integer */
  RT_BITCAST,       /* in0's bits read as out's dtype, of the same width */
  RT_CONVERT,       /* in0's dtype to out's: floats to integers truncate toward zero and
                       saturate (NaN gives 0), integers wrap, anything to i1 is != 0 */
  RT_POW,           /* binary; integers by repeated squaring (a negative power gives 0 unless |in0| = 1) */
  RT_AND, RT_OR, RT_XOR,   /* logical on i1, bitwise on integers */
  RT_REM,           /* binary: the remainder of truncated division (fmod; integers: x % 0 = x, INT_MIN % -1 = 0) */
  RT_ATAN2,         /* binary, floats */
  RT_SHL, RT_SHRA, RT_SHRL, /* integers: in0 shifted by in1 (a count outside [0, width) gives 0,
                       or the sign's fill for an arithmetic right shift) */
  RT_CMP_EQ, RT_CMP_NE, RT_CMP_LT, RT_CMP_LE, RT_CMP_GT, RT_CMP_GE,
                    /* in0 against in1 in their dtype, into an i1; floats compare as IEEE-754
                       quiet comparisons, or by totalOrder when mode is RT_CMP_TOTAL */
  RT_SELECT,        /* ternary: in1 where in0 (an i1) is true, else in2 */
  RT_NEWFN
} rt_ewfn;

enum { RT_RSUM, RT_RMAX, RT_RMIN };
/* RT_ATTENTION(_GRAD) mode bits: which operands are [b, m, heads, k] */
enum { RT_ATTN_BSHD_Q = 1, RT_ATTN_BSHD_K = 2, RT_ATTN_BSHD_V = 4, RT_ATTN_BSHD_DY = 8, RT_ATTN_BSHD_OUT = 16 };
/* RT_ATTN_BLOCK(_GRAD) mode bit (the executor sets it): the queries are two
** halves, the first at off in the whole sequence, the second at stride_a;
** the keys likewise at n2 and stride_b (a sequence dealt zig-zag) */
enum { RT_ATTN_ZIGZAG = 32 };
enum { RT_CMP_TOTAL = 1 };
/* RT_SEND and RT_RECV mode: the peer is n2 places on along the group's ring
** (index + n2 mod its size), not the device at index n2 */
enum { RT_P2P_RING = 1 };
/* RT_ADAM mode: AdamW's decoupled decay, p scaled by hyper[3] (1 - lr wd)
** before the step and nothing added to the gradient */
enum { RT_ADAM_DECOUPLED = 1 };
/* RT_LAYERNORM(_GRAD) mode bits: gamma's gradient (_GRAD only); root mean
** square, not centred (rmsnorm: the mean taken as 0) */
enum { RT_LN_GAMMA = 1, RT_LN_RMS = 2 };

/* RT_GATHER's and RT_SCATTER's dimension map, over the local shapes of
** the operand (x), the indices (i) and the result or updates (u): each
** dim of u walks either a window dim of x or a batch dim of i. */
typedef struct rt_index {
  int8_t rx, ri, ru;              /* the ranks of x, i and u ... */
  int64_t xs[RT_MAXRANK], is[RT_MAXRANK], us[RT_MAXRANK];   /* ... and their local shapes */
  int8_t ivd;                     /* the indices' dim that holds an index's components (ri: none) */
  int8_t ncomp;                   /* components of an index */
  int8_t comp_dim[RT_MAXRANK];    /* component k is the start along x's dim comp_dim[k] */
  int8_t u_idim[RT_MAXRANK];      /* dim of u: the indices' dim it walks, or -1 ... */
  int8_t u_xdim[RT_MAXRANK];      /* ... the dim of x its window walks, or -1 */
  int8_t x_idim[RT_MAXRANK];      /* dim of x: the indices' dim it is batched with, or -1 */
  int64_t window[RT_MAXRANK];     /* the window's size along each dim of x */
  uint8_t other_bounds;           /* 0: a gather's start is clamped, a scatter's element out of x
                                     skipped (StableHLO); 1: a gather's element out of x is zero,
                                     a scatter's start is clamped (the two's adjoints) */
  uint8_t combine;                /* scatter: RT_IX_REPLACE, RT_IX_ADD, ... */
} rt_index;
enum { RT_IX_REPLACE, RT_IX_ADD, RT_IX_MUL, RT_IX_MAX, RT_IX_MIN };

/* RT_FUSED's steps: elementwise functions over out's shape, in order, an
** element block at a time, so that no step's result goes to memory but
** the last. Values are f32; an i1 input, and a comparison's result, are
** 0 or 1. The fusion pass makes at most RT_FUSE_MAXSTEPS a pass. */
#define RT_FUSE_MAXSTEPS 32
typedef struct rt_fstep {
  uint8_t fn;                     /* an rt_ewfn below RT_ABS, a quiet comparison, or select */
  int8_t arg[3];                  /* >= 0: an earlier step's result; < 0: input -1 - arg */
  float alpha, beta;              /* as RT_EW's */
} rt_fstep;
/* RT_FUSED mode: the result is the steps' values viewed [outer, n, inner]
** reduced over n, [outer, inner], as RT_REDUCE (fn RT_RSUM times alpha,
** RT_RMAX, RT_RMIN) */
enum { RT_FUSED_REDUCE = 1 };
/* Can a fused step compute fn (and the last step of one, into f32)? */
int rt_fused_fn(int fn, int last);
typedef struct rt_fused {
  int nsteps;
  int64_t stride[RT_MAXIN][RT_MAXRANK];   /* each input's element strides over shape */
  rt_fstep step[RT_FUSE_MAXSTEPS];
} rt_fused;

typedef struct rt_instr {
  uint8_t op;                 /* rt_op */
  uint8_t fn;                 /* RT_EW: rt_ewfn; RT_REDUCE, RT_ALL_REDUCE: RT_RSUM/RT_RMAX/RT_RMIN */
  uint8_t rank;               /* RT_EW, RT_TRANSPOSE */
  uint8_t nin;                /* inputs used */
  int32_t out;                /* buffer written */
  int32_t in[RT_MAXIN];       /* buffers read (-1: none) */
  int32_t group;              /* collectives and RT_SHARD_SLICE: index into prog->groups */
  int32_t src;                /* index of the IR value this came from, for dumps (-1: none) */
  int64_t shape[RT_MAXRANK];  /* RT_EW: output shape; RT_TRANSPOSE: input shape */
  int64_t stride[3][RT_MAXRANK]; /* RT_EW: per-input element strides over shape */
  int8_t  perm[RT_MAXRANK];   /* RT_TRANSPOSE */
  int64_t outer, n, inner;    /* the [outer, n, inner] view of row-wise ops */
  int64_t n2, off;            /* RT_BLOCK_COPY, RT_GATHER_ROWS/SCATTER_ROWS, RT_XENT(_GRAD), RT_CAUSAL_MASK */
  int64_t batch, m, k;        /* RT_GEMM (n is the GEMM's n) */
  int8_t  transa, transb;
  int8_t  split_dim, concat_dim; /* RT_ALL_TO_ALL */
  int64_t stride_a, stride_b, stride_c;
  float   alpha, beta;        /* see each op */
  double  hyper[6];           /* RT_ADAM, RT_SGD: see each */
  double  value;              /* RT_FILL of a dtype other than f32: the value (alpha for f32);
                                 elsewhere alpha unrounded, for f64 kernels (see rt_alpha) */
  const void *data;           /* RT_CONST: nelem elements of out's dtype; RT_GATHER, RT_SCATTER:
                                 an rt_index; RT_FUSED: an rt_fused; in the program's arena */
  uint8_t mode;               /* RT_EW comparisons: RT_CMP_TOTAL for IEEE-754 totalOrder;
                                 RT_ATTENTION(_GRAD): RT_ATTN_BSHD_* bits */
  uint8_t odt;                /* out's dtype, and each input's: set by rt_prog_finish */
  uint8_t idt[RT_MAXIN];
  int64_t nelem;              /* elements of out (RT_FILL, RT_COPY...); rt_prog_finish sets it */
  uint64_t stages;            /* a pipelined program: the stages that run it (bit s: the devices
                                 whose coordinate on the stage axis is s); 0: every device */
} rt_instr;

typedef enum rt_bufkind {
  RT_BUF_TEMP,                /* lives from its first write to its last read */
  RT_BUF_INPUT,               /* bound by the caller before the run (inputs, params, state) */
  RT_BUF_OUTPUT               /* kept after the run for the caller */
} rt_bufkind;

typedef struct rt_buf {
  const char *name;           /* the IR value's name (for dumps, binding and errors) */
  rt_dtype dtype;
  rt_bufkind kind;
  int rank;
  int64_t shape[RT_MAXRANK];  /* local shape */
  int64_t nelem;
  int32_t last_use;           /* index of the last instruction reading it (-1: none) */
  int32_t carry_from;         /* INPUT: after a step, take this OUTPUT's value (-1: none) */
  /* where the local piece sits in the full tensor, for reading and saving:
     for each dim the number of pieces and which mesh-axis group picks the piece */
  int64_t global_shape[RT_MAXRANK];
  int32_t dim_group[RT_MAXRANK];  /* -1: whole along that dim */
  uint64_t stages;            /* a pipelined program: the stages that hold it (0: every device) */
} rt_buf;

typedef struct rt_group {       /* a set of mesh axes a collective runs over */
  int naxes;
  int axes[RT_MAXRANK];        /* mesh axis indices, major to minor */
} rt_group;

typedef struct rt_prog {
  arena mem;                  /* owns everything below */
  int nbufs, ninstrs, ngroups;
  rt_buf *bufs;
  rt_instr *instrs;
  rt_group *groups;
  int mesh_rank;              /* number of mesh axes (0: one device) */
  int64_t mesh[RT_MAXRANK];
  const char *axis_names[RT_MAXRANK];
  int stage_axis;             /* a pipelined program: the mesh axis of its stages (-1: none) */
  uint32_t zigzag;            /* mesh axes whose pieces are dealt zig-zag (runtime/mesh.h) */
} rt_prog;

size_t rt_dtype_size(rt_dtype t);
/* The bytes of buffer b of p (0 for no buffer). */
size_t rt_buf_bytes(const rt_prog *p, int b);
const char *rt_dtype_name(rt_dtype t);   /* "f32" */
/* Bytes one device sends or receives in a collective that reads in_elems
** and writes out_elems elements of elem bytes: the larger of the two. */
int64_t rt_coll_bytes_of(int64_t in_elems, int64_t out_elems, size_t elem);
/* The same for a collective instruction of p. */
int64_t rt_coll_bytes(const rt_prog *p, const rt_instr *x);
int rt_is_collective(rt_op op);
/* Does x write its input slot k too (an update's state, the loss that
** xent_grad computes beside the gradient)? */
int rt_instr_writes_in(const rt_instr *x, int k);
/* Does x write buffer b (its out, or an input it writes too)? */
int rt_instr_writes(const rt_instr *x, int b);
/* The elements an instruction works through, as costs count them: the
** rows it moves for gather/scatter, the rows of a cross-entropy over split
** classes (a logit each), else the larger of its output and its first input. */
double rt_instr_elems(const rt_prog *p, const rt_instr *x);
/* The rows of a row-wise instruction (softmax, layernorm, cross-entropy
** and their gradients), else 0. */
double rt_instr_rows(const rt_instr *x);
/* alpha as the lowering meant it: value where value rounds to alpha (a
** mean's 1/n, an eps or a scale kept exact for f64 kernels), else alpha. */
double rt_alpha(const rt_instr *x);
/* Is op one of the composite kernels that compute an f64 result in double
** (softmax, layer norm, cross-entropy, attention, ...: runtime/kern_f64.c)?
** Their other float operands are f64 too; the rest are f32 only. */
int rt_op_has_f64(rt_op op);
const char *rt_op_name(rt_op op);
/* A collective's kind as listings show it: "all_reduce(max)" for an
** all-reduce taking the max or min, else its op's name. */
const char *rt_coll_name(const rt_instr *x);
/* Is x a cross-entropy or its gradient over split classes (in4 and in5, n2)? */
int rt_xent_split(const rt_instr *x);
const char *rt_ewfn_name(rt_ewfn fn);
int rt_ewfn_arity(rt_ewfn fn);
/* Does elementwise x (RT_EW or RT_FUSED) read its input k element for
** element, contiguous over its output's shape (no broadcast, no stride)? */
int rt_ew_dense(const rt_instr *x, int k);
/* The dims an elementwise kernel walks: shape[rank] read by n inputs
** through strides st[k], with unit dims dropped and the dims every input
** walks contiguously merged, into shp and mst (a scalar is [1]). The
** merged rank, or 0 when the shape holds no element. */
int rt_merge_dims(int rank, const int64_t *shape, int n, const int64_t (*st)[RT_MAXRANK], int64_t *shp,
                  int64_t (*mst)[RT_MAXRANK]);
/* Do strides over shape walk an array contiguously, in order? */
int rt_strides_dense(int rank, const int64_t *shape, const int64_t *stride);

/* Builders used by the lowering. */
void rt_prog_init(rt_prog *p);
void rt_prog_free(rt_prog *p);
int  rt_prog_buf(rt_prog *p, const char *name, rt_dtype t, int rank, const int64_t *shape, rt_bufkind kind);
rt_instr *rt_prog_emit(rt_prog *p, rt_op op, int out);   /* zeroed, in[] = -1, group = -1 */
rt_instr  rt_instr_new(rt_op op, int out);                /* the same, not yet in a program */
int  rt_prog_group(rt_prog *p, int naxes, const int *axes);
/* Compute last_use of every buffer and each instruction's nelem and dtypes (call once after emitting). */
void rt_prog_finish(rt_prog *p);
/* An instruction's odt and idt from its buffers (rt_prog_finish does it for all). */
void rt_instr_dtypes(const rt_prog *p, rt_instr *ins);
/* A pipelined program: the stage of device (its coordinate on the stage
** axis; 0 without stages), and whether the stage holds buffer b or runs x. */
int  rt_prog_stage(const rt_prog *p, int device);
int  rt_stage_holds(const rt_prog *p, int stage, int b);
int  rt_stage_runs(const rt_instr *x, int stage);
/* Keep only the instructions stage runs, in order (a device's own program). */
void rt_prog_keep_stage(rt_prog *p, int stage);
/* The same into a new program (freed with rt_prog_free) that borrows p's
** names, constants and indices: p must outlive it. */
void rt_prog_copy_stage(const rt_prog *p, int stage, rt_prog *out);
/* A pipelined program: 0 when every receive over the stage axis meets its
** send, with the stages run in order and sends not waiting; else -1, why in
** err (a stage that would wait for ever, a copy never received) and in *at
** (when at is not NULL) the instruction it is about, or -1. */
int  rt_prog_check_transfers(const rt_prog *p, int *at, char *err, size_t errlen);
/* Human-readable listing (carve lower), one instruction a line. */
char *rt_prog_dump(const rt_prog *p, arena *a);

#endif

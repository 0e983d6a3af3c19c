/*
** lower_int.h: what the parts of the lowering share (lower.c: values and
** ops; lower_gemm.c: contractions as GEMMs; lower_reshard.c: collectives
** between layouts). One context per lowering; nothing here is global.
*/
#ifndef interp_lower_int_h
#define interp_lower_int_h

#include "interp/lower/lower.h"
#include "interp/ir/ops.h"
#include "interp/shard/shard.h"
#include "interp/shard/layout.h"

/* one parameter's optimizer update, lowered as one instruction (update.c) */
typedef struct lw_update {
  int kind;                 /* RT_ADAM or RT_SGD */
  int param, grad, m, v;    /* values read; m: Adam's first moment or SGD's momentum buffer (-1: none) */
  int newm, newv;           /* the state's new values, computed in place of m and v */
  int lr_t, eps_t;          /* Adam: the scalars lr sqrt(1 - beta2^t) / (1 - beta1^t) and eps sqrt(1 - beta2^t) */
  double lr, b1, b2, eps, wd, mom;
  double c1, c2;            /* Adam: the gradient's coefficients, 1 - b1 and 1 - b2 as the program has them */
  double keep;              /* AdamW: p is scaled by keep (1 - lr wd) before the step; 0: not */
  int ok;                   /* a dynamic loss scale's "every gradient finite" (i1 scalar): 0 leaves all as it was; -1: none */
} lw_update;

/* a vocabulary-parallel cross-entropy's statistics (lower.c): each row's
** max and sum of exponentials over every class of the logits as laid out
** in dims, kept for the gradient that reads the same logits alike */
typedef struct lw_xstats {
  int logits;
  sh_dim dims[IR_MAXRANK];
  int m, s;                 /* their buffers */
} lw_xstats;

/* a value moved to another layout for an op, kept for the others of its pass (reshard.c) */
typedef struct lw_moved {
  sh_dim want[IR_MAXRANK];
  int pass, buf;
  int later;            /* the other pass may read it too (see lw_operand_in) */
  struct lw_moved *next;
} lw_moved;

typedef struct lctx {
  const ir_graph *g;
  const sh_plan *plan;  /* NULL: one device */
  rt_prog *p;
  diag *d;
  int *buf;             /* value -> buffer (its final layout) */
  char *isconst;        /* value folds to a literal */
  double *cval;
  int failed;
  /* the op being lowered: operands as it reads them, its result as it computes it */
  int *abuf;           /* (as many as the graph's widest op has operands) */
  ir_shape *ash;
  ir_shape osh;
  int *aid;             /* the operands' value ids */
  int *args;            /* scratch: the values the op reads */
  sh_dim rows[2];       /* the split of the table's rows as the op reads them (embedding) and writes them (its gradient) */
  sh_dim xdims[IR_MAXRANK];   /* the first operand's layout as cross-entropy, softmax, log_softmax (or a gradient) reads it */
  lw_xstats *xst;       /* the statistics of the cross-entropies over split classes lowered so far */
  int nxst;
  rt_dtype dt;          /* the dtype of the value being lowered: its temporaries' */
  int *src;             /* value -> the value its buffer really is (a reshape or a broadcast read in place) */
  int *axpy;            /* sub/add value -> the mul(g, literal) folded into it, or -1 */
  int *chain;           /* an affine value -> the affine value it reads, folded into it, or -1 */
  char *axpby;          /* an add of two scaled values done in one pass */
  char *skip;           /* values folded into their single user */
  uint32_t *partial;    /* value -> the axes its buffer holds a partial sum over (lower_result.partial) */
  int group_cache[1 << SH_MAXAXES];
  int *fuse;             /* a new parameter value -> its update in ups, or -1 */
  lw_update *ups;
  int nups;
  lower_opts opt;
  int nall_reduce;      /* all_reduces emitted so far (opt.drop_collective counts them) */
  int *last_tr;         /* buffer -> the last transpose instruction that read it, or -1 (emit.c) */
  int nlast_tr;
  sh_dim **fin;         /* value -> the layout it is reduced into where not the plan's (reshard.c), or NULL */
  char *fwd;            /* value -> 1 in the forward pass (the loss depends on it) */
  lw_moved **moved;     /* value -> its moves so far */
  int cur;              /* the value being lowered, or -1 */
} lctx;

#define AS(c, k) (&(c)->ash[k])
#define AB(c, k) lw_operand(c, k)
#define OS(c) (&(c)->osh)
#define LAZY (-2)      /* a literal operand: made into a buffer only if an instruction reads it */


static inline const ir_value *V(lctx *c, int id) { return c->g->vals[id]; }
/* An output, or every value under keep_values: it keeps a buffer of its own. */
static inline int lw_kept(const lctx *c, const ir_value *v) { return v->is_output || (c->opt.keep_values && v->kind == IR_OP); }
static inline rt_dtype rtype(ir_dtype t) {
  static const rt_dtype m[] = {RT_F32, RT_BF16, RT_F16, RT_I32, RT_F64, RT_I64, RT_I1, RT_I8, RT_UI8, RT_I16, RT_UI16, RT_UI32};   /* ORDER IR_DTYPE */
  return (unsigned)t < IR_NDTYPES ? m[t] : RT_F32;
}
/* The buffer type of value v: its dtype's, f32 for a bf16 or f16 one under opt.widen. */
static inline rt_dtype lw_type(const lctx *c, const ir_value *v) {
  if (c->opt.widen && (v->dtype == IR_BF16 || v->dtype == IR_F16)) return RT_F32;
  return rtype(v->dtype);
}
/* computed with f32 arithmetic: where the f32 folds (literals into affine passes) apply */
static inline int f32arith(ir_dtype t) { return t == IR_F32 || t == IR_BF16 || t == IR_F16; }
static inline int64_t lw_prod(const int64_t *d, int a, int b) {
  int64_t n = 1;
  for (int i = a; i < b; i++) n *= d[i];
  return n;
}


/* bucket.c: join gradient reductions into buckets (after the program is
** finished); the number of buckets made */
int  lw_bucket(const ir_graph *g, rt_prog *p, int64_t bytes, int64_t most);   /* most > 0: only reductions of at most that many bytes */

/* fold.c: transposes taken into attention and GEMMs (after the program is
** finished); the number of instructions dropped */
int  lw_fold_transposes(rt_prog *p);
int  lw_fold_adds(rt_prog *p, const uint64_t *stage_of);   /* stage_of: a pipeline's stages by IR value, else NULL */
int  lw_hoist_updates(rt_prog *p);
int  lw_sink_updates(rt_prog *p);   /* a pipelined program's: down within their stage, after the reductions */
int  lw_fold_norm_grads(rt_prog *p);
int  lw_fold_loss(rt_prog *p);
/* a projection's cross-entropy in chunks of at most this many bytes of logits (lmloss.c) */
#define LW_LOSS_CHUNK_BYTES ((int64_t)256 << 20)
int  lw_fold_lm_loss(rt_prog *p, int64_t chunk_bytes);
int  lw_fold_bias_grads(rt_prog *p);
/* fuse.c: chains of f32 elementwise instructions into RT_FUSED passes; the
** number of instructions taken into others */
int  lw_fuse_elementwise(rt_prog *p);

/* pipeline.c: a pipelined plan's program from its SPMD program (the last pass) */
int  lw_pipeline(const ir_graph *g, const sh_plan *plan, rt_prog *p, const int *buf_of, uint32_t *partial, diag *d);

/* ring.c: fused attention with its sequence split over group g (ring attention) */
void lw_ring_attention(lctx *c, const ir_value *v, int out, int g);

/* emit.c */
int  lw_tmp(lctx *c, const char *name, rt_dtype t, int rank, const int64_t *shape);
int  lw_buf(lctx *c, int id);                  /* v's buffer, a literal made on first need */
int  lw_operand(lctx *c, int k);               /* operand k of the op being lowered */
int  lw_literal_of(lctx *c, int id, const ir_shape *s);   /* literal id filled into a new buffer of shape s (else id's buffer) */
int  lw_literal_in(lctx *c, int id, const ir_shape *s);   /* v, or a literal filled into a piece of shape s */
int  lw_transpose(lctx *c, int in, const int64_t *s, int rank, const int *perm, int out, const char *name, rt_dtype t);
void lw_reduce(lctx *c, int in, const ir_shape *s, const int *mark, int fn, double alpha, int out, const char *name);

/* update.c */
void lw_plan_updates(lctx *c);                 /* which updates fuse (before the other folds) */
void lw_lower_update(lctx *c, const ir_value *v, int out, const sh_dim *comp);   /* comp NULL: one device */

/* lower_gemm.c */
void lower_contract(lctx *c, const ir_value *v, int out);

/* lower_reshard.c */
int  lw_group(lctx *c, uint32_t axes);
int  lw_dim_group(lctx *c, const sh_dim *d);
int  lw_emit_steps(lctx *c, int in, ir_shape s, const layout_step *st, int n, int dst, const char *name, rt_dtype t);
/* out = in all-reduced over group by fn (RT_RSUM, RT_RMAX or RT_RMIN), whole buffers */
void lw_all_reduce(lctx *c, int in, int out, int group, int fn);
const sh_dim *lw_final_dims(lctx *c, int v);
int  lw_operand_in(lctx *c, int id, const sh_dim *want, ir_shape *shape);
void lw_plan_finals(lctx *c);
void lw_plan_passes(lctx *c);
void lw_free_passes(lctx *c);

#endif

/*
** lower.c: emit the per-device program: a buffer per value, literals folded
** into the instructions that read them, each op's operands brought to the
** layout it computes in (lower_reshard.c), contractions as GEMMs
** (lower_gemm.c), the rest here.
*/
#include "interp/lower/lower_int.h"
#include "runtime/mesh.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- elementwise ---- */

static void ew_strides(const int64_t *out, int rank, const ir_shape *in, int64_t *st) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    int j = in->rank - rank + i;
    int64_t dj = j >= 0 ? in->d[j] : 1;
    st[i] = (dj == 1 && out[i] != 1) || j < 0 ? 0 : s;
    s *= dj;
  }
}

static rt_instr *ew(lctx *c, int out, const ir_shape *os, rt_ewfn fn, const int *ins, const ir_shape *const *shapes, int n) {
  rt_instr *in = rt_prog_emit(c->p, RT_EW, out);
  in->fn = (uint8_t)fn;
  in->nin = (uint8_t)n;
  in->rank = (uint8_t)os->rank;
  for (int i = 0; i < os->rank; i++) in->shape[i] = os->d[i];
  for (int k = 0; k < n; k++) {
    in->in[k] = ins[k];
    ew_strides(os->d, os->rank, shapes[k], in->stride[k]);
  }
  return in;
}

static int fold_unary(ir_opkind op, double x, double *r) {
  switch (op) {
  case IR_NEG: *r = -x; return 1;
  case IR_EXP: *r = exp(x); return 1;
  case IR_LOG: *r = log(x); return 1;
  case IR_SQRT: *r = sqrt(x); return 1;
  case IR_RSQRT: *r = 1 / sqrt(x); return 1;
  case IR_TANH: *r = tanh(x); return 1;
  case IR_ERF: *r = erf(x); return 1;
  default: return 0;
  }
}

static int fold_binary(ir_opkind op, double a, double b, double *r) {
  switch (op) {
  case IR_ADD: *r = a + b; return 1;
  case IR_SUB: *r = a - b; return 1;
  case IR_MUL: *r = a * b; return 1;
  case IR_DIV: *r = a / b; return 1;
  case IR_MAXIMUM: *r = a > b ? a : b; return 1;
  case IR_MINIMUM: *r = a < b ? a : b; return 1;
  default: return 0;
  }
}

static int affine_of(lctx *c, const ir_value *v, int *x, double *al, double *be);

/* 1 / k when it is exact in f32 (k a power of two), so that x / k = x * (1 / k)
** to the bit; other divisions stay divisions, as IEEE-754 and every framework
** round them */
static int exact_recip(double k, double *r) {
  int e;
  if (fabs(frexp(k, &e)) != 0.5 || e < -124 || e > 126) return 0;
  *r = 1 / k;
  return 1;
}

static const rt_ewfn unary_fn[] = {  /* ORDER IR_OP from IR_NEG */
  RT_NEG, RT_EXP, RT_LOG, RT_SQRT, RT_RSQRT, RT_TANH, RT_RELU, RT_GELU, RT_GELU_TANH, RT_SIGMOID, RT_SILU
};
static const rt_ewfn binary_fn[] = { /* ORDER IR_OP from IR_ADD */
  RT_ADD, RT_SUB, RT_MUL, RT_DIV, RT_MAX, RT_MIN
};
_Static_assert(sizeof unary_fn / sizeof unary_fn[0] == IR_SILU - IR_NEG + 1, "ORDER IR_OP: unary_fn");
_Static_assert(sizeof binary_fn / sizeof binary_fn[0] == IR_MINIMUM - IR_ADD + 1, "ORDER IR_OP: binary_fn");

/* StableHLO's other elementwise ops: one instruction each, in any dtype */
static int lower_stablehlo_ew(lctx *c, const ir_value *v, int out) {
  rt_ewfn fn;
  switch (v->op) {
  case IR_ABS: fn = RT_ABS; break;
  case IR_SIGN: fn = RT_SIGN; break;
  case IR_ERF: fn = RT_ERF; break;
  case IR_ERFC: fn = RT_ERFC; break;
  case IR_LOG1P: fn = RT_LOG1P; break;
  case IR_EXPM1: fn = RT_EXPM1; break;
  case IR_SIN: fn = RT_SIN; break;
  case IR_COS: fn = RT_COS; break;
  case IR_FLOOR: fn = RT_FLOOR; break;
  case IR_CEIL: fn = RT_CEIL; break;
  case IR_ROUND: fn = RT_ROUND; break;
  case IR_ROUND_AFZ: fn = RT_ROUND_AFZ; break;
  case IR_TAN: fn = RT_TAN; break;
  case IR_CBRT: fn = RT_CBRT; break;
  case IR_POPCNT: fn = RT_POPCNT; break;
  case IR_CLZ: fn = RT_CLZ; break;
  case IR_NOT: fn = RT_NOT; break;
  case IR_CONVERT: fn = RT_CONVERT; break;
  case IR_BITCAST: fn = RT_BITCAST; break;
  case IR_POWER: fn = RT_POW; break;
  case IR_AND: fn = RT_AND; break;
  case IR_OR: fn = RT_OR; break;
  case IR_XOR: fn = RT_XOR; break;
  case IR_REM: fn = RT_REM; break;
  case IR_ATAN2: fn = RT_ATAN2; break;
  case IR_SHL: fn = RT_SHL; break;
  case IR_SHRA: fn = RT_SHRA; break;
  case IR_SHRL: fn = RT_SHRL; break;
  case IR_COMPARE: fn = (rt_ewfn)(RT_CMP_EQ + v->attr.cmp); break;   /* ORDER ir_cmp */
  case IR_SELECT: fn = RT_SELECT; break;
  default: return 0;
  }
  const ir_shape *ss[3];
  int bs[3];
  for (int k = 0; k < v->nargs && k < 3; k++) { ss[k] = AS(c, k); bs[k] = AB(c, k); }
  rt_instr *in = ew(c, out, OS(c), fn, bs, ss, v->nargs);
  if (v->op == IR_COMPARE && v->attr.total) in->mode = RT_CMP_TOTAL;
  return 1;
}

static void lower_ew(lctx *c, const ir_value *v, int out) {
  const ir_opinfo *oi = ir_opinfo_of(v->op);
  if (lower_stablehlo_ew(c, v, out)) return;
  if (oi->flags & OPF_UNARY) {
    const ir_shape *s = AS(c, 0);
    int b = AB(c, 0);
    ew(c, out, OS(c), unary_fn[v->op - IR_NEG], &b, &s, 1);
    return;
  }
  int a = c->src[v->args[0]], bb = c->src[v->args[1]];   /* a broadcast literal is a literal */
  /* x op literal: one affine pass (in f32 arithmetic: f64 and integers keep their own) */
  if (v->op != IR_GE && v->op != IR_MAXIMUM && v->op != IR_MINIMUM && f32arith(v->dtype) && (c->isconst[a] || c->isconst[bb])) {
    int lit_first = c->isconst[a];
    double k = lit_first ? c->cval[a] : c->cval[bb];
    double al = 1, be = 0;
    switch (v->op) {
    case IR_ADD: be = k; break;
    case IR_SUB: if (lit_first) { al = -1; be = k; } else be = -k; break;
    case IR_MUL: al = k; be = -0.0; break;          /* + -0: x * k keeps the sign of a zero */
    case IR_DIV: if (lit_first || !exact_recip(k, &al)) goto general; be = -0.0; break;
    default: goto general;
    }
    int xk = lit_first ? 1 : 0;
    const ir_shape *s;
    int xb;
    if (c->chain[v->id] < 0) { s = AS(c, xk); xb = AB(c, xk); }
    else {   /* scalings read in a row fold into one: alpha2 (alpha1 x + beta1) + beta2 */
      int y = c->chain[v->id], x0 = -1;
      for (; y >= 0; y = c->chain[y]) {
        double a1, b1;
        affine_of(c, V(c, y), &x0, &a1, &b1);
        be = al * b1 + be;
        al = al * a1;
      }
      /* the fold needs one shape and one layout all along: the output's; or
         x0 is a broadcast of one number, read in place as its source */
      s = c->src[x0] != x0 ? &V(c, c->src[x0])->shape : OS(c);
      xb = lw_buf(c, c->src[x0]);
    }
    rt_instr *in = ew(c, out, OS(c), RT_AFFINE, &xb, &s, 1);
    in->alpha = (float)al;
    in->beta = (float)be;
    return;
  }
general:;
  const ir_shape *ss[2] = {AS(c, 0), AS(c, 1)};
  int bs[2] = {AB(c, 0), AB(c, 1)};
  rt_ewfn fn;
  switch (v->op) {
  case IR_GE: fn = RT_GE; break;
  case IR_RELU_GRAD: fn = RT_RELU_GRAD; break;
  case IR_GELU_GRAD: fn = RT_GELU_GRAD; break;
  case IR_GELU_TANH_GRAD: fn = RT_GELU_TANH_GRAD; break;
  case IR_SILU_GRAD: fn = RT_SILU_GRAD; break;
  default: fn = binary_fn[v->op - IR_ADD];
  }
  ew(c, out, OS(c), fn, bs, ss, 2);
}

/* out = in (any shape) broadcast to shape s */
static void copy_broadcast(lctx *c, int out, const ir_shape *os, int in, const ir_shape *is) {
  rt_instr *x = ew(c, out, os, RT_AFFINE, &in, &is, 1);
  x->alpha = 1;
  x->beta = 0;
}

static void lower_reduce(lctx *c, const ir_value *v, int out) {
  const ir_value *x = V(c, v->args[0]);
  int mark[IR_MAXRANK] = {0};
  double count = 1;      /* a mean divides by the global count: partial sums add up to it */
  for (int i = 0; i < v->attr.ndims; i++) { mark[v->attr.dims[i]] = 1; count *= (double)x->shape.d[v->attr.dims[i]]; }
  int fn = v->op == IR_MAX ? RT_RMAX : v->op == IR_MIN ? RT_RMIN : RT_RSUM;
  lw_reduce(c, AB(c, 0), AS(c, 0), mark, fn, v->op == IR_MEAN ? 1.0 / count : 1.0, out, v->name);
}

static void lower_sum_to(lctx *c, const ir_value *v, int out) {
  const ir_value *x = V(c, v->args[0]);   /* which dims are summed: from the global shapes */
  int mark[IR_MAXRANK] = {0}, r = x->shape.rank, t = v->shape.rank;
  for (int i = 0; i < r; i++) {
    int j = i - (r - t);
    mark[i] = j < 0 || (v->shape.d[j] == 1 && x->shape.d[i] != 1);
  }
  lw_reduce(c, AB(c, 0), AS(c, 0), mark, RT_RSUM, 1.0, out, v->name);
}

/* Permutation moving the marked dims last (in order); returns how many. */
static int marked_last(const int *mark, int r, int *perm) {
  int k = 0, n = 0;
  for (int i = 0; i < r; i++) if (!mark[i]) perm[k++] = i;
  for (int i = 0; i < r; i++) if (mark[i]) { perm[k++] = i; n++; }
  return n;
}

static void lower_max_grad(lctx *c, const ir_value *v, int out) {
  const ir_shape *xs = AS(c, 0);
  int mark[IR_MAXRANK] = {0}, perm[IR_MAXRANK], inv[IR_MAXRANK], r = xs->rank;
  for (int i = 0; i < v->attr.ndims; i++) mark[v->attr.dims[i]] = 1;
  marked_last(mark, r, perm);
  int ident = 1;
  for (int i = 0; i < r; i++) { ident &= perm[i] == i; inv[perm[i]] = i; }
  int64_t n = 1;
  for (int i = 0; i < v->attr.ndims; i++) n *= xs->d[v->attr.dims[i]];
  int64_t outer = ir_nelem(xs) / (n ? n : 1);
  int xb = AB(c, 0), dy = AB(c, 1);
  /* the reduced dims may sit anywhere: work with them last, which leaves dy's layout as it is */
  int xt = ident ? xb : lw_transpose(c, xb, xs->d, r, perm, -1, v->name, c->dt);
  int64_t ts[IR_MAXRANK];
  for (int i = 0; i < r; i++) ts[i] = xs->d[perm[i]];
  int dst = ident ? out : lw_tmp(c, v->name, c->dt, r, ts);
  rt_instr *in = rt_prog_emit(c->p, RT_REDUCE_MAX_GRAD, dst);
  in->nin = 2; in->in[0] = xt; in->in[1] = dy;
  in->outer = outer; in->n = n; in->inner = 1;
  if (!ident) lw_transpose(c, dst, ts, r, inv, out, v->name, c->dt);
}

/* ---- row-wise ops along one dim ---- */

typedef struct rowframe { int ident; int perm[IR_MAXRANK], inv[IR_MAXRANK]; int64_t ts[IR_MAXRANK]; int r; int64_t outer, n; } rowframe;

static void frame(const ir_shape *s, int dim, rowframe *f) {
  int mark[IR_MAXRANK] = {0};
  mark[dim] = 1;
  f->r = s->rank;
  marked_last(mark, s->rank, f->perm);
  f->ident = 1;
  for (int i = 0; i < s->rank; i++) { f->ident &= f->perm[i] == i; f->inv[f->perm[i]] = i; f->ts[i] = s->d[f->perm[i]]; }
  f->n = s->d[dim];
  f->outer = ir_nelem(s) / (f->n ? f->n : 1);
}

static int to_rows(lctx *c, const rowframe *f, int buf, const ir_shape *s, const char *name) {
  return f->ident ? buf : lw_transpose(c, buf, s->d, s->rank, f->perm, -1, name, c->dt);
}

static int dim_group(lctx *c, int dim);
static void row_stats(lctx *c, const char *name, int x, int64_t rows, int64_t n, int group, int m, int s);
static int stats_tmp(lctx *c, const char *name, const char *what, int64_t rows);
static void xent_stats(lctx *c, const ir_value *v, int logit, int64_t rows, int64_t n, int group, int *m, int *s);

/* e = a (rows x n) fn b (rows x n, or a column when bcol), into a new
** temp, or into out (>= 0) */
static int rows_ew(lctx *c, const char *name, rt_ewfn fn, int a, int b, int bcol, int64_t rows, int64_t n, int out) {
  ir_shape full = {.rank = 2, .d = {rows, n}}, col = {.rank = 2, .d = {rows, 1}};
  const ir_shape *sh[2] = {&full, bcol ? &col : &full};
  int ins[2] = {a, b};
  if (out < 0) out = lw_tmp(c, name, c->dt, 2, full.d);
  ew(c, out, &full, fn, ins, sh, b >= 0 ? 2 : 1);
  return out;
}

/* each row's sum of x (rows x n), summed over group */
static int row_sum(lctx *c, const char *name, int x, int64_t rows, int64_t n, int group) {
  int local = stats_tmp(c, name, "rowsum.local", rows), sum = stats_tmp(c, name, "rowsum", rows);
  rt_instr *in = rt_prog_emit(c->p, RT_REDUCE, local);
  in->fn = RT_RSUM; in->nin = 1; in->in[0] = x;
  in->outer = rows; in->n = n; in->inner = 1; in->alpha = 1; in->value = 1;
  lw_all_reduce(c, local, sum, group, RT_RSUM);
  return sum;
}

/* softmax, log_softmax and their gradients with the dim split over group
** (rows x n local, dst the same): from each row's statistics over all the
** pieces, as the vocabulary-parallel cross-entropy takes them, and never
** gathered. softmax: exp(x - max) / sum; log_softmax: x - max - log(sum),
** the max all-reduced by max, the sum of exp(x - max) by sum; their
** gradients: y * (dy - sum(y dy)) and dy - exp(y) * sum(dy), the row sums
** all-reduced. */
static void lower_rowwise_split(lctx *c, const ir_value *v, const rowframe *f, int x, int dy, int group, int dst) {
  int64_t R = f->outer, n = f->n;
  const char *nm = v->name;
  switch (v->op) {
  case IR_SOFTMAX: case IR_LOG_SOFTMAX: {
    int m, s;
    if (f->ident && v->attr.dim == f->r - 1) {    /* over the last dim: shared with a cross-entropy of the same logits */
      xent_stats(c, v, x, R, n, group, &m, &s);
    } else {
      m = stats_tmp(c, nm, "max", R);
      s = stats_tmp(c, nm, "sumexp", R);
      row_stats(c, nm, x, R, n, group, m, s);
    }
    if (v->op == IR_SOFTMAX) {
      int e = rows_ew(c, nm, RT_EXP, rows_ew(c, nm, RT_SUB, x, m, 1, R, n, -1), -1, 0, R, n, -1);
      rows_ew(c, nm, RT_DIV, e, s, 1, R, n, dst);
    } else {
      int ls = stats_tmp(c, nm, "logsumexp", R);
      ir_shape col = {.rank = 1, .d = {R}};
      const ir_shape *sh[1] = {&col};
      ew(c, ls, &col, RT_LOG, &s, sh, 1);
      rows_ew(c, nm, RT_SUB, rows_ew(c, nm, RT_SUB, x, m, 1, R, n, -1), ls, 1, R, n, dst);
    }
    return;
  }
  case IR_SOFTMAX_GRAD: {
    int d = row_sum(c, nm, rows_ew(c, nm, RT_MUL, x, dy, 0, R, n, -1), R, n, group);
    rows_ew(c, nm, RT_MUL, x, rows_ew(c, nm, RT_SUB, dy, d, 1, R, n, -1), 0, R, n, dst);
    return;
  }
  default: {     /* IR_LOG_SOFTMAX_GRAD */
    int d = row_sum(c, nm, dy, R, n, group);
    int t = rows_ew(c, nm, RT_MUL, rows_ew(c, nm, RT_EXP, x, -1, 0, R, n, -1), d, 1, R, n, -1);
    rows_ew(c, nm, RT_SUB, dy, t, 0, R, n, dst);
    return;
  }
  }
}

static void lower_rowwise(lctx *c, const ir_value *v, int out) {
  const ir_shape *xs = AS(c, 0);
  rowframe f;
  frame(xs, v->attr.dim, &f);
  int dst = f.ident ? out : lw_tmp(c, v->name, c->dt, f.r, f.ts);
  rt_op op;
  int ins[3] = {-1, -1, -1};
  /* softmax and log_softmax may read their dim split (c->xdims says how);
     the norms keep it whole */
  int grad = v->op == IR_SOFTMAX_GRAD || v->op == IR_LOG_SOFTMAX_GRAD;
  int group = grad || v->op == IR_SOFTMAX || v->op == IR_LOG_SOFTMAX ? dim_group(c, v->attr.dim) : -1;
  if (group >= 0) {
    lower_rowwise_split(c, v, &f, to_rows(c, &f, AB(c, 0), xs, v->name), grad ? to_rows(c, &f, AB(c, 1), xs, v->name) : -1, group, dst);
    if (!f.ident) lw_transpose(c, dst, f.ts, f.r, f.inv, out, v->name, c->dt);
    return;
  }
  switch (v->op) {
  case IR_SOFTMAX: op = RT_SOFTMAX; ins[0] = to_rows(c, &f, AB(c, 0), xs, v->name); break;
  case IR_LOG_SOFTMAX: op = RT_LOG_SOFTMAX; ins[0] = to_rows(c, &f, AB(c, 0), xs, v->name); break;
  case IR_SOFTMAX_GRAD: case IR_LOG_SOFTMAX_GRAD:
    op = v->op == IR_SOFTMAX_GRAD ? RT_SOFTMAX_GRAD : RT_LOG_SOFTMAX_GRAD;
    ins[0] = to_rows(c, &f, AB(c, 0), xs, v->name);
    ins[1] = to_rows(c, &f, AB(c, 1), xs, v->name);
    break;
  case IR_NORMALIZE: op = RT_LAYERNORM; ins[0] = to_rows(c, &f, AB(c, 0), xs, v->name); break;
  case IR_LAYERNORM: case IR_RMSNORM:
    op = RT_LAYERNORM;
    ins[0] = to_rows(c, &f, AB(c, 0), xs, v->name);
    ins[1] = AB(c, 1);
    if (v->op == IR_LAYERNORM) ins[2] = AB(c, 2);
    break;
  case IR_LAYERNORM_GRAD:
    op = RT_LAYERNORM_GRAD;
    ins[0] = to_rows(c, &f, AB(c, 0), xs, v->name);
    ins[1] = AB(c, 1);
    ins[2] = to_rows(c, &f, AB(c, 2), xs, v->name);
    break;
  default: c->failed = 1; return;
  }
  rt_instr *in = rt_prog_emit(c->p, op, dst);
  for (int k = 0; k < 3; k++) in->in[k] = ins[k];
  in->nin = 3;
  in->outer = f.outer; in->n = f.n; in->inner = 1;
  if (v->op == IR_RMSNORM || v->attr.rms) in->mode = RT_LN_RMS;
  in->alpha = (float)v->attr.eps;
  in->value = v->attr.eps;     /* unrounded, for f64 (rt_alpha) */
  if (!f.ident) lw_transpose(c, dst, f.ts, f.r, f.inv, out, v->name, c->dt);
}

/* ---- data movement ---- */

static void block_copy(lctx *c, int out, int in, int64_t outer, int64_t m, int64_t k, int64_t n, int64_t n2, int64_t off, int64_t inner) {
  rt_instr *x = rt_prog_emit(c->p, RT_BLOCK_COPY, out);
  x->nin = 1; x->in[0] = in;
  x->outer = outer; x->m = m; x->k = k; x->n = n; x->n2 = n2; x->off = off; x->inner = inner;
}

static void lower_move(lctx *c, const ir_value *v, int out) {
  const ir_shape *xs = AS(c, 0), *os = OS(c);
  int xb = AB(c, 0);
  switch (v->op) {
  case IR_RESHAPE: {
    rt_instr *in = rt_prog_emit(c->p, RT_COPY, out);
    in->nin = 1; in->in[0] = xb;
    return;
  }
  case IR_TRANSPOSE: {
    int perm[IR_MAXRANK];
    for (int i = 0; i < v->attr.ndims; i++) perm[i] = v->attr.dims[i];
    lw_transpose(c, xb, xs->d, xs->rank, perm, out, v->name, lw_type(c, v));
    return;
  }
  case IR_BROADCAST: copy_broadcast(c, out, os, xb, xs); return;
  case IR_CONCAT: {
    int dim = v->attr.dim;
    int64_t outer = lw_prod(os->d, 0, dim), inner = lw_prod(os->d, dim + 1, os->rank), off = 0;
    for (int k = 0; k < v->nargs; k++) {
      int64_t n = AS(c, k)->d[dim];
      block_copy(c, out, AB(c, k), outer, n, 0, n, os->d[dim], off, inner);
      off += n;
    }
    return;
  }
  case IR_SLICE: {
    int dim = v->attr.dim;
    int64_t outer = lw_prod(xs->d, 0, dim), inner = lw_prod(xs->d, dim + 1, xs->rank);
    int64_t n = v->attr.end - v->attr.start;
    block_copy(c, out, xb, outer, xs->d[dim], v->attr.start, n, n, 0, inner);
    return;
  }
  case IR_PAD: {
    int dim = v->attr.dim;
    int64_t outer = lw_prod(xs->d, 0, dim), inner = lw_prod(xs->d, dim + 1, xs->rank);
    int64_t n = xs->d[dim];
    rt_instr *f = rt_prog_emit(c->p, RT_FILL, out);
    f->alpha = 0;
    block_copy(c, out, xb, outer, n, 0, n, v->attr.end, v->attr.start, inner);
    return;
  }
  default: c->failed = 1;
  }
}

/* gather's and scatter's dimension numbers as the runtime walks them, over
** this device's pieces: a window that spans its dim of x spans the piece */
static rt_index *index_map(lctx *c, const ir_value *v, const ir_shape *xs, const ir_shape *is, const ir_shape *us) {
  const ir_index *g = v->attr.index;
  const ir_value *gx = V(c, v->args[0]);
  rt_index *r = arena_alloc(&c->p->mem, sizeof *r);
  memset(r, 0, sizeof *r);
  r->rx = (int8_t)xs->rank; r->ri = (int8_t)is->rank; r->ru = (int8_t)us->rank;
  memcpy(r->xs, xs->d, sizeof(int64_t) * (size_t)xs->rank);
  memcpy(r->is, is->d, sizeof(int64_t) * (size_t)is->rank);
  memcpy(r->us, us->d, sizeof(int64_t) * (size_t)us->rank);
  r->ivd = (int8_t)g->ivd;
  r->ncomp = (int8_t)g->n[IX_START_MAP];
  for (int k = 0; k < g->n[IX_START_MAP]; k++) r->comp_dim[k] = (int8_t)g->v[IX_START_MAP][k];
  for (int d = 0; d < xs->rank; d++) {
    r->x_idim[d] = -1;
    r->window[d] = g->v[IX_SLICE][d] == gx->shape.d[d] ? xs->d[d] : g->v[IX_SLICE][d];
  }
  for (int j = 0; j < g->n[IX_OPERAND_BATCH]; j++) r->x_idim[g->v[IX_OPERAND_BATCH][j]] = (int8_t)g->v[IX_INDEX_BATCH][j];
  int w = 0, b = 0;
  for (int u = 0; u < us->rank; u++) {
    r->u_idim[u] = r->u_xdim[u] = -1;
    int window = 0;
    for (int k = 0; k < g->n[IX_OFFSET]; k++) window |= g->v[IX_OFFSET][k] == u;
    if (window) {
      while (r->x_idim[w] >= 0 || ir_index_has(g, IX_COLLAPSED, w)) w++;
      r->u_xdim[u] = (int8_t)w++;
    } else {
      if (b == g->ivd && g->ivd < is->rank) b++;
      r->u_idim[u] = (int8_t)b++;
    }
  }
  r->other_bounds = (uint8_t)g->other_bounds;
  r->combine = g->combine == IR_ADD ? RT_IX_ADD : g->combine == IR_MUL ? RT_IX_MUL : g->combine == IR_MAXIMUM ? RT_IX_MAX :
               g->combine == IR_MINIMUM ? RT_IX_MIN : RT_IX_REPLACE;
  return r;
}

/* ---- cross-entropy ----
** With the classes (the logits' last dim) split over a group, as a vocabulary-
** split embedding tied to the output projection leaves them, the loss is
** Megatron's vocabulary-parallel one: each row's max and sum of exp(x - max)
** over all classes come from two all-reduces of [rows] values, and each
** device's part of the loss (its partial sum, reduced by the plan as the
** loss's other partial sums) and its piece of the gradient from its own
** classes. The logits are never gathered. */

/* The group dim `dim` of the op's first operand is split over as the op
** reads it (c->xdims), or -1 (whole, or over axes of one device). */
static int dim_group(lctx *c, int dim) {
  if (!c->plan) return -1;
  const sh_dim *d = &c->xdims[dim];
  int64_t P = 1;
  for (int i = 0; i < d->n; i++) P *= c->plan->mesh.size[d->ax[i]];
  return P > 1 ? lw_dim_group(c, d) : -1;
}

/* a [rows] buffer named NAME.WHAT */
static int stats_tmp(lctx *c, const char *name, const char *what, int64_t rows) {
  char nm[256];
  snprintf(nm, sizeof nm, "%s.%s", name, what);
  return lw_tmp(c, nm, c->dt, 1, (int64_t[]){rows});
}

/* m = each row's max of x [rows, n], s = its sum of exp(x - m); a
** collective over group after each where the classes are split (group >= 0) */
static void row_stats(lctx *c, const char *name, int x, int64_t rows, int64_t n, int group, int m, int s) {
  int lm = group >= 0 ? stats_tmp(c, name, "max", rows) : m, ls = group >= 0 ? stats_tmp(c, name, "sumexp", rows) : s;
  rt_instr *in = rt_prog_emit(c->p, RT_REDUCE, lm);
  in->fn = RT_RMAX; in->nin = 1; in->in[0] = x;
  in->outer = rows; in->n = n; in->inner = 1; in->alpha = 1; in->value = 1;
  if (group >= 0) lw_all_reduce(c, lm, m, group, RT_RMAX);
  in = rt_prog_emit(c->p, RT_XENT_SUMEXP, ls);
  in->nin = 2; in->in[0] = x; in->in[1] = m;
  in->outer = rows; in->n = n; in->inner = 1;
  if (group >= 0) lw_all_reduce(c, ls, s, group, RT_RSUM);
}

/* The statistics of the logits logit (local [rows, n], classes split over
** group): those an earlier cross-entropy of the same logits laid out alike
** computed; else from the logits' own buffer where that holds the classes
** whole, the rest laid out alike (only the op splits them: no collective);
** else the local max all-reduced by max, then the local sums of
** exp(x - max) all-reduced by sum. */
static void xent_stats(lctx *c, const ir_value *v, int logit, int64_t rows, int64_t n, int group, int *m, int *s) {
  int lg = v->args[0], rank = V(c, lg)->shape.rank;
  for (int i = 0; i < c->nxst; i++)
    if (c->xst[i].logits == lg && layout_same(c->xst[i].dims, c->xdims, rank)) { *m = c->xst[i].m; *s = c->xst[i].s; return; }
  *m = stats_tmp(c, v->name, "max", rows);
  *s = stats_tmp(c, v->name, "sumexp", rows);
  const sh_dim *have = lw_final_dims(c, lg);
  if (!have[rank - 1].n && layout_same(have, c->xdims, rank - 1) && c->src[lg] == lg && !c->isconst[lg] && !c->partial[lg])
    row_stats(c, v->name, lw_buf(c, lg), rows, V(c, lg)->shape.d[rank - 1], -1, *m, *s);
  else
    row_stats(c, v->name, logit, rows, n, group, *m, *s);
  c->xst = mem_realloc(c->xst, sizeof *c->xst * (size_t)(c->nxst + 1));
  lw_xstats *k = &c->xst[c->nxst++];
  k->logits = lg;
  memcpy(k->dims, c->xdims, sizeof k->dims);
  k->m = *m;
  k->s = *s;
}

static void lower_xent(lctx *c, const ir_value *v, int out) {
  const ir_shape *lg = AS(c, 0);
  const ir_value *glg = V(c, v->args[0]);
  int64_t n = lg->d[lg->rank - 1], rows = ir_nelem(lg) / (n ? n : 1), N = glg->shape.d[lg->rank - 1];
  int64_t grows = ir_nelem(&glg->shape) / (N ? N : 1);   /* the mean is over every position */
  int group = dim_group(c, lg->rank - 1), m = -1, s = -1;
  if (group >= 0) xent_stats(c, v, AB(c, 0), rows, n, group, &m, &s);
  rt_instr *in = rt_prog_emit(c->p, v->op == IR_CROSS_ENTROPY ? RT_XENT : RT_XENT_GRAD, out);
  in->nin = (uint8_t)v->nargs;
  for (int k = 0; k < v->nargs; k++) in->in[k] = AB(c, k);
  in->outer = rows; in->n = n; in->inner = 1;
  in->value = 1.0 / (double)(grows ? grows : 1);
  in->alpha = (float)in->value;
  if (group < 0) return;
  in->nin = 6;
  in->in[4] = m; in->in[5] = s;
  in->group = group;
  in->n2 = N;           /* the executor offsets off by this device's piece */
}

static void lower_other(lctx *c, const ir_value *v, int out) {
  rt_instr *in;
  switch (v->op) {
  case IR_GATHER: case IR_SCATTER: {
    int scatter = v->op == IR_SCATTER;
    in = rt_prog_emit(c->p, scatter ? RT_SCATTER : RT_GATHER, out);
    in->nin = (uint8_t)v->nargs;
    for (int k = 0; k < v->nargs; k++) in->in[k] = AB(c, k);
    in->data = index_map(c, v, AS(c, 0), AS(c, 1), scatter ? AS(c, 2) : OS(c));
    return;
  }
  case IR_EMBEDDING: case IR_EMBEDDING_GRAD: {
    int emb = v->op == IR_EMBEDDING;
    const ir_shape *ts = emb ? AS(c, 0) : OS(c);      /* the (local) table */
    const ir_value *tg = emb ? V(c, v->args[0]) : v;  /* the global one */
    const ir_shape *ids = emb ? AS(c, 1) : AS(c, 0);
    in = rt_prog_emit(c->p, emb ? RT_GATHER_ROWS : RT_SCATTER_ROWS, out);
    in->nin = 2;
    in->in[0] = AB(c, 0);
    in->in[1] = AB(c, 1);
    in->outer = ir_nelem(ids);
    in->n = ts->d[0];
    in->inner = ts->d[1];
    in->off = 0;
    in->n2 = tg->shape.d[0];
    if (c->plan) in->group = lw_dim_group(c, &c->rows[emb ? 0 : 1]);  /* a shard of the rows: ids are offset by the piece */
    return;
  }
  case IR_CROSS_ENTROPY: case IR_CROSS_ENTROPY_GRAD: lower_xent(c, v, out); return;
  case IR_CAUSAL_MASK: case IR_CAUSAL_MASK_GRAD: {
    const ir_shape *xs = AS(c, 0);
    int r = xs->rank;
    in = rt_prog_emit(c->p, RT_CAUSAL_MASK, out);
    in->nin = 1; in->in[0] = AB(c, 0);
    in->outer = lw_prod(xs->d, 0, r - 2); in->m = xs->d[r - 2]; in->n = xs->d[r - 1];
    in->off = 0;
    in->group = dim_group(c, r - 2);          /* the rows split (context parallelism): the executor offsets off */
    in->n2 = V(c, v->args[0])->shape.d[r - 2];
    in->alpha = v->op == IR_CAUSAL_MASK ? -INFINITY : 0.0f;
    return;
  }
  case IR_ATTENTION: case IR_ATTENTION_GRAD: {    /* [b, h, s, dk]: b and h may be split; s split: a ring (ring.c) */
    if (dim_group(c, 2) >= 0) { lw_ring_attention(c, v, out, dim_group(c, 2)); return; }
    const ir_shape *qs = AS(c, 0);
    in = rt_prog_emit(c->p, v->op == IR_ATTENTION ? RT_ATTENTION : RT_ATTENTION_GRAD, out);
    in->nin = (uint8_t)v->nargs;
    for (int k = 0; k < v->nargs; k++) in->in[k] = AB(c, k);
    in->outer = qs->d[0] * qs->d[1]; in->m = in->n = qs->d[2]; in->k = qs->d[3];
    in->fn = (uint8_t)(v->attr.causal != 0);
    in->alpha = (float)v->attr.scale;
    in->value = v->attr.scale;
    return;
  }
  case IR_MAX_GRAD: lower_max_grad(c, v, out); return;
  case IR_IOTA: {             /* computed whole (its factors are whole), sliced after if split */
    const ir_shape *os = OS(c);
    int d = v->attr.dim;
    in = rt_prog_emit(c->p, RT_IOTA, out);
    in->outer = lw_prod(os->d, 0, d); in->n = os->d[d]; in->inner = lw_prod(os->d, d + 1, os->rank);
    return;
  }
  case IR_CONSTANT: {
    size_t bytes = (size_t)ir_nelem(&v->shape) * ir_dtype_size(v->dtype);
    in = rt_prog_emit(c->p, RT_CONST, out);
    in->data = bytes ? arena_dup(&c->p->mem, v->attr.data, bytes) : NULL;
    return;
  }
  default: c->failed = 1;
  }
}

static int foldable(lctx *c, const ir_value *v, double *r) {
  const ir_opinfo *oi = ir_opinfo_of(v->op);
  if ((v->op == IR_RESHAPE || v->op == IR_BROADCAST) && c->isconst[v->args[0]]) {   /* one number, repeated */
    *r = c->cval[v->args[0]];
    return 1;
  }
  if (ir_nelem(&v->shape) != 1 || !f32arith(v->dtype)) return 0;   /* integers and f64 compute at run time */
  if (oi->flags & OPF_UNARY) return c->isconst[v->args[0]] && fold_unary(v->op, c->cval[v->args[0]], r);
  if ((oi->flags & OPF_BINARY) && v->op != IR_GE)
    return c->isconst[v->args[0]] && c->isconst[v->args[1]] && fold_binary(v->op, c->cval[v->args[0]], c->cval[v->args[1]], r);
  return 0;
}

static void lower_op_f32(lctx *c, const ir_value *v, int out);

/* carve's composite ops (softmax, layer norm, cross-entropy, ...) have f32
** and f64 kernels: in bf16 and f16 they read f32 copies of their operands
** and write an f32 result that is converted back (f32 arithmetic, as
** those types' elementwise ops compute). */
static int f32_kernel(const ir_value *v) {
  switch (v->op) {
  case IR_SOFTMAX: case IR_LOG_SOFTMAX: case IR_SOFTMAX_GRAD: case IR_LOG_SOFTMAX_GRAD:
  case IR_LAYERNORM: case IR_RMSNORM: case IR_NORMALIZE: case IR_LAYERNORM_GRAD: case IR_MAX_GRAD:
  case IR_EMBEDDING_GRAD: case IR_CROSS_ENTROPY: case IR_CROSS_ENTROPY_GRAD:
  case IR_CAUSAL_MASK: case IR_CAUSAL_MASK_GRAD: case IR_ATTENTION: case IR_ATTENTION_GRAD:
    return 1;
  default:
    return 0;
  }
}

static int low_float(ir_dtype t) { return t == IR_BF16 || t == IR_F16; }

static void lower_op(lctx *c, const ir_value *v, int out) {
  int wrap = f32_kernel(v) && low_float(v->dtype);
  for (int k = 0; k < v->nargs; k++) wrap |= f32_kernel(v) && low_float(V(c, v->args[k])->dtype);   /* bf16 logits' f32 loss */
  if (!wrap) { lower_op_f32(c, v, out); return; }
  rt_dtype keep = c->dt;
  for (int k = 0; k < v->nargs; k++) {
    int b = AB(c, k);
    rt_dtype t = c->p->bufs[b].dtype;
    if (t != RT_BF16 && t != RT_F16) continue;   /* ids and labels stay */
    const ir_shape *s = AS(c, k);
    int w = lw_tmp(c, v->name, RT_F32, s->rank ? s->rank : 1, s->rank ? s->d : (int64_t[]){1});
    ew(c, w, s, RT_CONVERT, &b, &s, 1);
    c->abuf[k] = w;
  }
  const ir_shape *os = OS(c);
  int t = low_float(v->dtype) ? lw_tmp(c, v->name, RT_F32, os->rank ? os->rank : 1, os->rank ? os->d : (int64_t[]){1}) : out;
  c->dt = RT_F32;
  lower_op_f32(c, v, t);
  c->dt = keep;
  if (t != out) ew(c, out, os, RT_CONVERT, &t, &os, 1);
}

static void lower_op_f32(lctx *c, const ir_value *v, int out) {
  const ir_opinfo *oi = ir_opinfo_of(v->op);
  if (oi->flags & (OPF_UNARY | OPF_BINARY | OPF_TERNARY)) lower_ew(c, v, out);
  else switch (v->op) {
  case IR_RELU_GRAD: case IR_GELU_GRAD: case IR_GELU_TANH_GRAD: case IR_SILU_GRAD: lower_ew(c, v, out); break;
  case IR_MATMUL: case IR_EINSUM: lower_contract(c, v, out); break;
  case IR_SUM: case IR_MEAN: case IR_MAX: case IR_MIN: lower_reduce(c, v, out); break;
  case IR_SUM_TO: lower_sum_to(c, v, out); break;
  case IR_SOFTMAX: case IR_LOG_SOFTMAX: case IR_SOFTMAX_GRAD: case IR_LOG_SOFTMAX_GRAD:
  case IR_LAYERNORM: case IR_RMSNORM: case IR_NORMALIZE: case IR_LAYERNORM_GRAD: lower_rowwise(c, v, out); break;
  case IR_RESHAPE: case IR_TRANSPOSE: case IR_BROADCAST: case IR_CONCAT: case IR_SLICE: case IR_PAD:
    lower_move(c, v, out); break;
  default: lower_other(c, v, out); break;
  }
}

static rt_bufkind kind_of(const lctx *c, const ir_value *v) { return lw_kept(c, v) ? RT_BUF_OUTPUT : RT_BUF_TEMP; }

/* The buffer of value i in its final layout, with where its piece sits. */
static int value_buf(lctx *c, const ir_value *v, rt_bufkind kind) {
  ir_shape ls = v->shape;
  const sh_dim *dims = c->plan ? lw_final_dims(c, v->id) : NULL;
  if (dims) layout_local_shape(c->plan, &v->shape, dims, &ls);
  int b = rt_prog_buf(c->p, v->name, lw_type(c, v), ls.rank, ls.d, kind);
  rt_buf *rb = &c->p->bufs[b];
  for (int i = 0; i < v->shape.rank; i++) {
    rb->global_shape[i] = v->shape.d[i];
    rb->dim_group[i] = dims ? lw_dim_group(c, &dims[i]) : -1;
  }
  return b;
}

static int elementwise_op(const ir_value *v);

/* v = alpha * x + beta with a literal: which x, and the coefficients. */
static int affine_of(lctx *c, const ir_value *v, int *x, double *al, double *be) {
  if (v->kind != IR_OP || !(v->op == IR_ADD || v->op == IR_SUB || v->op == IR_MUL || v->op == IR_DIV) || !f32arith(v->dtype)) return 0;
  int a = c->src[v->args[0]], b = c->src[v->args[1]];
  int lit_first = c->isconst[a];
  if (lit_first == c->isconst[b]) return 0;
  double k = lit_first ? c->cval[a] : c->cval[b];
  *x = lit_first ? v->args[1] : v->args[0];
  if (!ir_shape_eq(&V(c, *x)->shape, &v->shape)) return 0;
  *al = 1; *be = 0;
  switch (v->op) {
  case IR_ADD: *be = k; return 1;
  case IR_SUB: if (lit_first) { *al = -1; *be = k; } else *be = -k; return 1;
  case IR_MUL: *al = k; *be = -0.0; return 1;
  case IR_DIV: if (lit_first || !exact_recip(k, al)) return 0; *be = -0.0; return 1;
  default: return 0;
  }
}

/* sub(a, mul(g, k)) and add(a, mul(g, k)) in one pass: a + alpha * g */
static void lower_axpy(lctx *c, const ir_value *v, int out) {
  const ir_value *m = V(c, c->axpy[v->id]);
  double k = c->isconst[m->args[0]] ? c->cval[m->args[0]] : c->cval[m->args[1]];
  const ir_shape *ss[2] = {AS(c, 0), AS(c, 1)};
  int bs[2] = {AB(c, 0), AB(c, 1)};
  rt_instr *in = ew(c, out, OS(c), RT_AXPY, bs, ss, 2);
  in->alpha = (float)(v->op == IR_SUB ? -k : k);
}

static void lower_axpby(lctx *c, int out, const double *k) {
  const ir_shape *ss[2] = {AS(c, 0), AS(c, 1)};
  int bs[2] = {AB(c, 0), AB(c, 1)};
  rt_instr *in = ew(c, out, OS(c), RT_AXPBY, bs, ss, 2);
  in->alpha = (float)k[0];
  in->beta = (float)k[1];
}

/* v's instruction into out: a fused update, a fold, or its op */
static void emit_value(lctx *c, const ir_value *v, int out, const double *ab_k, const sh_dim *comp) {
  if (c->fuse[v->id] >= 0) lw_lower_update(c, v, out, comp);
  else if (c->axpby[v->id]) lower_axpby(c, out, ab_k);
  else if (c->axpy[v->id] >= 0) lower_axpy(c, v, out);
  else lower_op(c, v, out);
}

static void lower_value(lctx *c, const ir_value *v) {
  c->dt = lw_type(c, v);
  int *args = c->args;
  for (int k = 0; k < v->nargs; k++) args[k] = v->args[k];
  if (c->axpy[v->id] >= 0) {          /* read g where the folded mul would be */
    const ir_value *m = V(c, c->axpy[v->id]);
    args[1] = c->isconst[m->args[0]] ? m->args[1] : m->args[0];
  }
  double ab_k[2] = {0, 0};
  if (c->axpby[v->id])                 /* read a and b where the two folded muls would be */
    for (int k = 0; k < 2; k++) {
      const ir_value *m = V(c, v->args[k]);
      int lit = c->isconst[c->src[m->args[0]]] ? 0 : 1;
      args[k] = m->args[1 - lit];
      ab_k[k] = c->cval[c->src[m->args[lit]]];
    }
  sh_oplayout o;
  sh_dim want[IR_MAXRANK];
  if (c->plan) shard_oplayout(c->plan, v->id, &o);
  for (int k = 0; k < v->nargs; k++) {
    const ir_value *a = V(c, args[k]);
    if (c->skip[a->id]) {                  /* folded into this op: never read as a buffer */
      c->aid[k] = a->id; c->abuf[k] = LAZY; c->ash[k] = a->shape;
      continue;
    }
    if (!c->plan || c->isconst[a->id]) {   /* a broadcast read in place is its source */
      int s = c->src[a->id];
      c->aid[k] = s;
      if (c->skip[s]) { c->abuf[k] = LAZY; c->ash[k] = V(c, s)->shape; continue; }   /* folded into this op */
      /* a literal of an op's shape is read as the op's piece of it; a
      ** gather or scatter walks its operands' own shapes: a literal one is
      ** made in full */
      int own = v->op == IR_GATHER || v->op == IR_SCATTER;
      c->ash[k] = V(c, own ? a->id : s)->shape;
      if (c->plan && (s == a->id || own)) {
        shard_required(c->plan, &o, k, want, a->shape.rank);
        layout_local_shape(c->plan, &a->shape, want, &c->ash[k]);
      }
      /* only elementwise ops fold literals away; others read them before they are emitted */
      if (own) { c->abuf[k] = lw_literal_of(c, s, &c->ash[k]); continue; }
      c->abuf[k] = c->isconst[s] && c->buf[s] < 0 && elementwise_op(v) ? LAZY : lw_literal_in(c, s, &c->ash[k]);
      continue;
    }
    shard_required(c->plan, &o, k, want, a->shape.rank);
    c->abuf[k] = lw_operand_in(c, a->id, want, &c->ash[k]);
  }
  if (!c->plan) {
    c->osh = v->shape;
    if (v->op == IR_RESHAPE && !lw_kept(c, v)) { c->buf[v->id] = AB(c, 0); return; }   /* same bytes, no copy */
    int out = value_buf(c, v, kind_of(c, v));
    c->buf[v->id] = out;
    emit_value(c, v, out, ab_k, NULL);
    return;
  }
  sh_dim comp[IR_MAXRANK];
  shard_required(c->plan, &o, v->nargs, comp, v->shape.rank);
  if (v->op == IR_EMBEDDING) shard_required(c->plan, &o, 0, c->rows, 2);
  if (v->op == IR_EMBEDDING_GRAD) c->rows[1] = comp[0];
  if (v->op == IR_CROSS_ENTROPY || v->op == IR_CROSS_ENTROPY_GRAD || v->op == IR_SOFTMAX || v->op == IR_LOG_SOFTMAX ||
      v->op == IR_SOFTMAX_GRAD || v->op == IR_LOG_SOFTMAX_GRAD || v->op == IR_CAUSAL_MASK || v->op == IR_CAUSAL_MASK_GRAD ||
      v->op == IR_ATTENTION || v->op == IR_ATTENTION_GRAD)
    shard_required(c->plan, &o, 0, c->xdims, V(c, v->args[0])->shape.rank);
  layout_local_shape(c->plan, &v->shape, comp, &c->osh);
  uint32_t partial = c->plan->lay[v->id].partial;
  if (shard_keeps_partial(c->plan, v->id)) { c->partial[v->id] = partial; partial = 0; }   /* its users take the partial sum */
  const sh_dim *fin = lw_final_dims(c, v->id);
  layout_step st[LAYOUT_MAXSTEPS];
  int n = layout_steps(c->plan, v->shape.rank, comp, partial, fin, st);
  if (!n && v->op == IR_RESHAPE && !lw_kept(c, v)) { c->buf[v->id] = AB(c, 0); return; }
  int out = value_buf(c, v, kind_of(c, v));
  c->buf[v->id] = out;
  if (!n) { emit_value(c, v, out, ab_k, comp); return; }
  int t = lw_tmp(c, v->name, lw_type(c, v), c->osh.rank, c->osh.d);
  emit_value(c, v, t, ab_k, comp);
  lw_emit_steps(c, t, c->osh, st, n, out, v->name, c->dt);
}

static int elementwise_op(const ir_value *v) {
  return (ir_opinfo_of(v->op)->flags & (OPF_UNARY | OPF_BINARY | OPF_TERNARY)) || v->op == IR_RELU_GRAD ||
         v->op == IR_GELU_GRAD || v->op == IR_GELU_TANH_GRAD || v->op == IR_SILU_GRAD;
}

/* mul(x, literal) with one user, in the same layout as that user: foldable. */
static int scaled(lctx *c, const ir_value *v, int m, int *x, double *k) {
  const ir_value *mv = V(c, m);
  if (mv->op != IR_MUL || mv->nusers != 1 || lw_kept(c, mv) || c->skip[m] || c->chain[m] >= 0 || !f32arith(mv->dtype)) return 0;
  int lit = c->isconst[c->src[mv->args[0]]] ? 0 : c->isconst[c->src[mv->args[1]]] ? 1 : -1;
  if (lit < 0 || c->isconst[c->src[mv->args[1 - lit]]]) return 0;
  *x = mv->args[1 - lit];
  *k = c->cval[c->src[mv->args[lit]]];
  if (!ir_shape_eq(&V(c, *x)->shape, &v->shape)) return 0;
  if (c->plan) {
    const sh_plan *p = c->plan;
    if (!layout_same(p->lay[*x].dim, p->lay[m].dim, v->shape.rank) || !layout_same(p->lay[m].dim, p->lay[v->id].dim, v->shape.rank) ||
        p->lay[m].partial || shard_keeps_partial(p, *x) || p->lay[v->id].partial) return 0;
  }
  return 1;
}

/* add(mul(a, k1), mul(b, k2)): one pass, alpha a + beta b (Adam's moments) */
static int fold_axpby(lctx *c, const ir_value *v) {
  int a, b;
  double k1, k2;
  if (v->args[0] == v->args[1] || !scaled(c, v, v->args[0], &a, &k1) || !scaled(c, v, v->args[1], &b, &k2)) return 0;
  c->axpby[v->id] = 1;
  c->skip[v->args[0]] = c->skip[v->args[1]] = 1;
  return 1;
}

/* Which values need no instruction of their own: broadcasts of one number
** read by elementwise ops (they broadcast as they read), and products with a
** literal folded into the update they feed (w - lr * g in one pass). */
static void plan_folds(lctx *c) {
  const ir_graph *g = c->g;
  for (int i = 0; i < g->nvals; i++) { c->src[i] = i; c->axpy[i] = -1; c->chain[i] = -1; }
  for (int i = 0; i < g->nvals; i++) {
    const ir_value *v = g->vals[i];
    if (v->kind != IR_OP || c->skip[i] || c->fuse[i] >= 0) continue;   /* in a fused update */
    if (!lw_kept(c, v) && (v->op == IR_BROADCAST || (v->op == IR_RESHAPE && ir_nelem(&v->shape) == 1))) {
      int s = c->src[v->args[0]];
      int users_ew = v->nusers > 0;
      /* (a fused update, and what folds into it, read its gradient's own buffer) */
      for (int k = 0; k < v->nusers; k++) {
        int u = v->users[k];
        users_ew &= elementwise_op(g->vals[u]) && c->axpy[u] < 0 && c->fuse[u] < 0 && !c->skip[u];
      }
      /* not a partial sum: it is reduced where v is made (or where s is),
         and reading s in place would skip that */
      int partial = c->plan && (c->plan->lay[i].partial || c->plan->lay[s].partial);
      if (ir_nelem(&g->vals[s]->shape) == 1 && g->vals[s]->kind == IR_OP && users_ew && !partial) c->src[i] = s;
    }
    int x;
    double al, be;
    if (c->axpy[i] < 0 && affine_of(c, v, &x, &al, &be)) {
      int xa;
      double a1, b1;
      const ir_value *xv = g->vals[x];
      int fits = 1;
      if (c->plan) {    /* the same layout all along, and nothing pending to sum */
        const sh_plan *p = c->plan;
        fits = layout_same(p->lay[i].dim, p->lay[x].dim, v->shape.rank) && !p->lay[i].partial && !p->lay[x].partial;   /* made whole, not summed later */
      }
      if (fits && xv->nusers == 1 && !lw_kept(c, xv) && !c->skip[x] && c->axpy[x] < 0 && affine_of(c, xv, &xa, &a1, &b1) &&
          (!c->plan || (layout_same(c->plan->lay[x].dim, c->plan->lay[xa].dim, v->shape.rank) && !shard_keeps_partial(c->plan, xa)))) {
        c->chain[i] = x;      /* x's scaling happens inside v's */
        c->skip[x] = 1;
      }
    }
    if (v->op == IR_ADD && fold_axpby(c, v)) continue;
    if ((v->op == IR_SUB || v->op == IR_ADD) && !c->isconst[v->args[0]] && f32arith(v->dtype)) {
      const ir_value *m = g->vals[v->args[1]];
      /* a product already folding a scaling of its own (chain) is not folded again:
         the update would read a value that no instruction computes */
      if (m->op != IR_MUL || m->nusers != 1 || lw_kept(c, m) || m->id == v->args[0] || c->chain[m->id] >= 0) continue;
      int lit = c->isconst[m->args[0]] ? 0 : c->isconst[m->args[1]] ? 1 : -1;
      if (lit < 0 || c->isconst[m->args[1 - lit]]) continue;
      const ir_value *gv = g->vals[m->args[1 - lit]];
      if (!ir_shape_eq(&gv->shape, &v->shape) || !ir_shape_eq(&g->vals[v->args[0]]->shape, &v->shape)) continue;
      if (c->plan) {    /* only where g is laid out as the product is and neither is a pending sum */
        const sh_plan *p = c->plan;
        if (!layout_same(p->lay[gv->id].dim, p->lay[m->id].dim, v->shape.rank) ||
            shard_keeps_partial(p, m->id) || shard_keeps_partial(p, gv->id) || (p->lay[m->id].partial & ~p->lay[gv->id].partial)) continue;
      }
      c->axpy[i] = m->id;
      c->skip[m->id] = 1;
    }
  }
}

/* A parameter's update written over the parameter itself: where the
** elementwise instruction computing new.w is the last to read w, it writes
** into w's buffer, and the step needs neither a second copy of w nor a
** carry. (Hand-written trainers update in place; so does carve.) */
static void update_in_place(lctx *c) {
  rt_prog *p = c->p;
  int nb = p->nbufs;
  int *writer = mem_alloc(sizeof(int) * (size_t)(nb + 1)), *writes = mem_calloc((size_t)nb + 1, sizeof(int));
  int *to = mem_alloc(sizeof(int) * (size_t)(nb + 1));   /* a buffer's writes now land in another, or -1 */
  for (int b = 0; b < nb; b++) { writer[b] = -1; to[b] = -1; }
  for (int i = 0; i < p->ninstrs; i++) { writer[p->instrs[i].out] = i; writes[p->instrs[i].out]++; }
  int changed = 0;
  for (int bw = 0; bw < nb; bw++) {
    int bo = p->bufs[bw].carry_from;
    if (bo < 0 || writes[bo] != 1) continue;
    rt_instr *w = &p->instrs[writer[bo]];
    if ((w->op != RT_EW && w->op != RT_ADAM && w->op != RT_SGD) || p->bufs[bw].last_use != writer[bo] || p->bufs[bw].nelem != p->bufs[bo].nelem) continue;
    int reads_w = 0;
    for (int k = 0; k < w->nin; k++) reads_w |= w->in[k] == bw;
    if (!reads_w) continue;
    w->out = bw;
    to[bo] = bw;
    p->bufs[bw].carry_from = -1;
    p->bufs[bo].kind = RT_BUF_TEMP;       /* never written now */
    changed = 1;
  }
  if (changed) {
    for (int i = 0; i < p->ninstrs; i++)   /* later readers of new.w read w */
      for (int k = 0; k < RT_MAXIN; k++) {
        int b = p->instrs[i].in[k];
        if (b >= 0 && to[b] >= 0) p->instrs[i].in[k] = to[b];
      }
    for (int v = 0; v < c->g->nvals; v++) if (c->buf[v] >= 0 && to[c->buf[v]] >= 0) c->buf[v] = to[c->buf[v]];
    rt_prog_finish(p);
  }
  free(writer);
  free(writes);
  free(to);
}

/* Every dim split over an axis that deals its pieces zig-zag, in the plan's
** layouts and the final ones: over that axis alone, in pieces of an even
** length (each device two blocks of 2P). A reshape that splits such a dim
** keeps the order where the split lands on a factor of even pieces. */
static void check_zigzag(lctx *c) {
  const sh_plan *p = c->plan;
  for (int v = 0; v < c->g->nvals && !c->failed; v++) {
    const ir_value *x = c->g->vals[v];
    loc at = x->at;                      /* a generated value (a gradient): where what it is made from was written */
    for (int o = x->origin, hops = 0; !at.src && o >= 0 && hops < 8; o = c->g->vals[o]->origin, hops++) at = c->g->vals[o]->at;
    if (!at.src) at = p->at;
    for (int pass = 0; pass < 2 && !c->failed; pass++) {
      const sh_dim *dims = pass ? lw_final_dims(c, v) : p->lay[v].dim;
      for (int i = 0; i < x->shape.rank && !c->failed; i++) {
        int64_t pieces = 1;
        int zz = -1;
        for (int k = 0; k < dims[i].n; k++) {
          pieces *= p->mesh.size[dims[i].ax[k]];
          if (p->mesh.zigzag >> dims[i].ax[k] & 1) zz = dims[i].ax[k];
        }
        if (zz < 0) continue;
        if (dims[i].n > 1)
          c->failed = diag_error(c->d, at, "dim %d of '%s' is split over '%s' with another axis, and '%s' deals its pieces zig-zag "
                                 "(the context tactic's balance): split that dim over '%s' alone, or give the context tactic "
                                 "balance = \"none\"", i, x->name, p->mesh.name[zz], p->mesh.name[zz], p->mesh.name[zz]) < 0;
        else if (x->shape.d[i] % (2 * pieces))
          c->failed = diag_error(c->d, at, "dim %d of '%s' (%lld) does not split into the %lld blocks that dealing it zig-zag over "
                                 "'%s' needs (two a device); give a length divisible by %lld, or the context tactic balance = \"none\"",
                                 i, x->name, (long long)x->shape.d[i], 2 * (long long)pieces, p->mesh.name[zz], 2 * (long long)pieces) < 0;
      }
    }
  }
}

/* The buckets the gradients' reductions join: of opt.bucket_bytes, or
   (0) the tiny ones alone in buckets of LOWER_TINY_BUCKET; none with a
   negative size or every value kept. */
static int bucket_size(const lctx *c, int64_t *bytes, int64_t *most) {
  *bytes = c->opt.bucket_bytes > 0 ? c->opt.bucket_bytes : LOWER_TINY_BUCKET;
  *most = c->opt.bucket_bytes > 0 ? 0 : LOWER_TINY_BYTES;
  return c->opt.bucket_bytes > 0 || (c->opt.bucket_bytes == 0 && !c->opt.keep_values);
}

int lower_program(const ir_graph *g, const sh_plan *plan, rt_prog *p, lower_result *r, diag *d) {
  return lower_program_opts(g, plan, NULL, p, r, d);
}

int lower_program_opts(const ir_graph *g, const sh_plan *plan, const lower_opts *opt, rt_prog *p, lower_result *r, diag *d) {
  rt_prog_init(p);
  lctx c = {g, plan, p, d};
  if (opt) c.opt = *opt;
  int n = g->nvals;
  for (int i = 0; i < (1 << SH_MAXAXES); i++) c.group_cache[i] = -1;
  if (plan) {
    p->zigzag = plan->mesh.zigzag;
    p->mesh_rank = plan->mesh.n;
    for (int i = 0; i < plan->mesh.n; i++) { p->mesh[i] = plan->mesh.size[i]; p->axis_names[i] = arena_intern_cstr(&p->mem, plan->mesh.name[i]); }
  }
  c.buf = mem_alloc(sizeof(int) * (size_t)(n ? n : 1));
  c.isconst = mem_calloc((size_t)n + 1, 1);
  c.cval = mem_calloc((size_t)n + 1, sizeof(double));
  c.src = mem_alloc(sizeof(int) * (size_t)(n ? n : 1));
  c.axpy = mem_alloc(sizeof(int) * (size_t)(n ? n : 1));
  c.chain = mem_alloc(sizeof(int) * (size_t)(n ? n : 1));
  c.axpby = mem_calloc((size_t)n + 1, 1);
  c.skip = mem_calloc((size_t)n + 1, 1);
  c.partial = mem_calloc((size_t)n + 1, sizeof(uint32_t));
  c.fuse = mem_alloc(sizeof(int) * (size_t)(n ? n : 1));
  c.ups = mem_alloc(sizeof(lw_update) * (size_t)(n ? n : 1));
  int wide = 1;
  for (int i = 0; i < n; i++) if (g->vals[i]->nargs > wide) wide = g->vals[i]->nargs;
  c.abuf = mem_alloc(sizeof(int) * (size_t)wide);
  c.aid = mem_alloc(sizeof(int) * (size_t)wide);
  c.args = mem_alloc(sizeof(int) * (size_t)wide);
  c.ash = mem_alloc(sizeof(ir_shape) * (size_t)wide);
  for (int i = 0; i < n; i++) c.buf[i] = c.fuse[i] = -1;
  for (int i = 0; i < n; i++) {         /* literals first: folds need them */
    const ir_value *v = g->vals[i];
    double fv;
    if (v->kind == IR_CONST) { c.isconst[i] = 1; c.cval[i] = v->attr.scalar; }
    else if (v->kind == IR_OP && !v->is_output && foldable(&c, v, &fv)) { c.isconst[i] = 1; c.cval[i] = fv; }
  }
  for (int i = 0; i < n; i++) c.src[i] = i;   /* (plan_folds sets it again) */
  if (!c.opt.keep_values && !c.opt.no_fused_optim) lw_plan_updates(&c);
  plan_folds(&c);
  c.cur = -1;
  if (plan) { lw_plan_finals(&c); lw_plan_passes(&c); }
  if (plan && plan->mesh.zigzag) check_zigzag(&c);
  for (int i = 0; i < n && !c.failed; i++) {
    const ir_value *v = g->vals[i];
    if (v->kind == IR_CONST || c.skip[i] || c.src[i] != i) continue;
    if (v->kind != IR_OP) { c.buf[i] = value_buf(&c, v, RT_BUF_INPUT); continue; }
    if (c.isconst[i]) continue;
    int first = p->ninstrs;
    c.cur = i;
    lower_value(&c, v);
    c.cur = -1;
    for (int k = first; k < p->ninstrs; k++) if (p->instrs[k].src < 0) p->instrs[k].src = i;
  }
  for (int i = 0; i < p->ninstrs && !c.failed; i++) {   /* what a dim dealt zig-zag cannot be (runtime/zigzag.h) */
    const rt_instr *x = &p->instrs[i];
    if ((rt_xent_split(x) || ((x->op == RT_GATHER_ROWS || x->op == RT_SCATTER_ROWS) && x->n < x->n2)) && rt_mesh_zigzag(p, x->group)) {
      const ir_value *v = x->src >= 0 ? g->vals[x->src] : NULL;
      int ax = p->groups[x->group].axes[0];
      c.failed = diag_error(d, v ? v->at : LOC_NONE, "'%s' %s split over '%s', which deals its pieces zig-zag (the context tactic's "
                            "balance): a table's rows and the classes keep to blocks in order; split them over another axis, or "
                            "give the context tactic balance = \"none\"", v ? v->name : "?",
                            rt_xent_split(x) ? "takes a cross-entropy whose classes are" : "looks up a table whose rows are",
                            p->axis_names[ax]) < 0;
    }
  }
  if (!c.failed) {
    for (int i = 0; i < n; i++) {
      const ir_value *v = g->vals[i];
      /* a new state value computed where its leaf lies (a fused update): nothing to copy or carry */
      if (v->carry >= 0 && c.buf[i] >= 0 && c.buf[i] == c.buf[v->carry]) continue;
      if (v->is_output && c.buf[i] >= 0 && p->bufs[c.buf[i]].kind == RT_BUF_INPUT) {
        /* returning a leaf: the program outputs a copy of its own, but the
           value stays bound to its input buffer (which is what callers set;
           the two hold the same numbers after a run) */
        int o = value_buf(&c, v, RT_BUF_OUTPUT);
        rt_instr *in = rt_prog_emit(p, RT_COPY, o);
        in->nin = 1; in->in[0] = c.buf[i]; in->src = i;
      }
      if (v->carry >= 0 && c.buf[i] >= 0 && c.buf[v->carry] >= 0) p->bufs[c.buf[v->carry]].carry_from = c.buf[i];
    }
    rt_prog_finish(p);
    if (!c.opt.keep_values) update_in_place(&c);   /* kept values: a parameter keeps its old value beside the new */
    if (!c.opt.keep_values && !c.opt.no_fold) lw_fold_transposes(p);
    /* (in a pipeline, within a stage: a GEMM that adds into a sum's other part would wait for that part's stage;
       none under the interleaved schedule, whose parts of one stage run out of the program's order) */
    if (!c.opt.keep_values && !c.opt.no_fold_adds && !(plan && plan->pipe.axis >= 0)) lw_fold_adds(p, NULL);
    else if (!c.opt.keep_values && !c.opt.no_fold_adds && plan->pipe.chunks <= 1) {
      sh_stages st;
      diag quiet;                        /* (a program that cannot be cut: the pipeline pass says so) */
      diag_init(&quiet);
      if (shard_stages(plan, &st, &quiet) == 0) lw_fold_adds(p, st.mask);
      shard_stages_free(&st);
      diag_free(&quiet);
    }
    if (!c.opt.keep_values && !c.opt.no_fold_rows) lw_fold_norm_grads(p);
    if (!c.opt.keep_values && !c.opt.no_fold_rows) lw_fold_loss(p);
    if (!c.opt.keep_values && !c.opt.no_fold_rows && c.opt.loss_chunk_bytes >= 0) lw_fold_lm_loss(p, c.opt.loss_chunk_bytes);
    if (!c.opt.keep_values && !c.opt.no_fold_rows) lw_fold_bias_grads(p);
    /* (a pipeline's stages reduce their own gradients: bucketed after its pass) */
    int pipelined = plan && plan->pipe.axis >= 0;
    int64_t bucket_bytes, bucket_most;
    int bucketed = plan && bucket_size(&c, &bucket_bytes, &bucket_most);
    if (bucketed && !pipelined) lw_bucket(g, p, bucket_bytes, bucket_most);
    if (!c.opt.keep_values && !c.opt.no_hoist) lw_hoist_updates(p);
    if (!c.opt.keep_values && !c.opt.no_fuse_elementwise && !pipelined) lw_fuse_elementwise(p);
    if (plan && plan->pipe.axis >= 0) {
      if (c.opt.keep_values) c.failed = diag_error(d, plan->pipe.at, "a pipelined program does not keep every value (bisect it without the "
                                                   "pipeline tactic)") < 0;
      else if (lw_pipeline(g, plan, p, c.buf, c.partial, d) < 0) c.failed = 1;
      else {
        if (bucketed) {                  /* each stage's reductions after its last microbatch */
          lw_sink_updates(p);
          lw_bucket(g, p, bucket_bytes, bucket_most);
        }
        /* a pipeline's chains are joined once its pass has copied them per microbatch and placed them */
        if (!c.opt.no_fuse_elementwise) lw_fuse_elementwise(p);
      }
    }
  } else if (!d->nerrors) {
    diag_error(d, LOC_NONE, "internal error: lowering failed");
  }
  lw_free_passes(&c);
  free(c.isconst);
  free(c.cval);
  free(c.src);
  free(c.axpy);
  free(c.chain);
  free(c.axpby);
  free(c.skip);
  free(c.fuse);
  free(c.ups);
  free(c.last_tr);
  free(c.xst);
  free(c.abuf);
  free(c.aid);
  free(c.args);
  free(c.ash);
  if (c.failed) { free(c.buf); free(c.partial); rt_prog_free(p); return -1; }   /* callers free nothing on failure */
  r->buf_of = c.buf;
  r->partial = c.partial;
  r->nvals = n;
  return 0;
}

void lower_result_free(lower_result *r) {
  free(r->buf_of);
  free(r->partial);
  r->buf_of = NULL;
  r->partial = NULL;
}

/*
** grad.c: reverse-mode autodiff and optimizers, as IR rewriting.
**
** The sweep walks values in reverse definition order. Every value the
** loss depends on collects the contributions of its users; when the sweep
** reaches it, they are summed into its adjoint, then the value's own rule
** (its vector-Jacobian product) hands contributions to its operands. The
** number of contributions each value will receive is counted first, so a
** lone contribution is created directly under its final name (grad.w)
** and a sum is needed only where a value has several users (tied
** weights, residual streams).
*/
#include "interp/train/train.h"
#include "interp/ir/ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gctx {
  ir_graph *g;
  diag *d;
  int n;              /* values before the sweep began */
  char *needs;        /* needs[v]: v depends on a parameter */
  char *live;         /* live[v]: the loss depends on v */
  int *expect;        /* contributions v will receive */
  int **contrib;      /* the contributions received so far */
  int *ncontrib;
  int *adj;           /* the adjoint of v, once summed (-1: none) */
  int cur;            /* the value whose rule or adjoint is being made (ir_value.origin) */
  int failed;
} gctx;

static ir_value *V(gctx *c, int id) { return c->g->vals[id]; }

/* Add an op with a fresh name from prefix; internal errors are fatal to the step. */
static int emit(gctx *c, const char *name, ir_opkind op, const int *args, int nargs, const ir_attrs *at) {
  if (c->failed) return -1;
  int v = ir_emit(c->g, c->d, name, op, args, nargs, at);
  if (v < 0) c->failed = 1;
  else c->g->vals[v]->origin = c->cur;
  return v;
}

static int emit2(gctx *c, const char *name, ir_opkind op, int x, int y) {
  int a[2] = {x, y};
  return emit(c, name, op, a, 2, NULL);
}

static int emit1(gctx *c, const char *name, ir_opkind op, int x) { return emit(c, name, op, &x, 1, NULL); }

static int reshape_to(gctx *c, const char *name, int x, const ir_shape *s) {
  if (x < 0) return -1;                 /* an emit before failed */
  if (ir_shape_eq(&V(c, x)->shape, s)) return x;
  ir_attrs a = {0};
  a.to = *s;
  return emit(c, name, IR_RESHAPE, &x, 1, &a);
}

static int sum_to(gctx *c, const char *name, int x, const ir_shape *s) {
  if (x < 0) return -1;                 /* an emit before failed */
  if (ir_shape_eq(&V(c, x)->shape, s)) return x;
  ir_attrs a = {0};
  a.to = *s;
  return emit(c, name, IR_SUM_TO, &x, 1, &a);
}

static int broadcast_to(gctx *c, const char *name, int x, const ir_shape *s) {
  if (x < 0) return -1;                 /* an emit before failed */
  if (ir_shape_eq(&V(c, x)->shape, s)) return x;
  ir_attrs a = {0};
  a.to = *s;
  return emit(c, name, IR_BROADCAST, &x, 1, &a);
}

static int einsum(gctx *c, const char *name, const char *spec, int x, int y) {
  ir_attrs a = {0};
  a.spec = ir_intern(c->g, spec);
  int args[2] = {x, y};
  return emit(c, name, IR_EINSUM, args, 2, &a);
}

/* ---- the rules ---- */

/* A contribution to the adjoint of operand `to`; `val` may be an existing value. */
static void give(gctx *c, int to, int val) {
  if (val < 0 || !c->needs[to]) return;
  if (c->ncontrib[to] == c->expect[to]) { c->failed = 1; return; }  /* counted wrong: a bug */
  if (!c->contrib[to]) c->contrib[to] = mem_calloc((size_t)c->expect[to], sizeof(int));
  c->contrib[to][c->ncontrib[to]++] = val;
}

/* Name for intermediates of the rule of value u. */
static const char *bwd(gctx *c, int u, const char *what) {
  return arena_printf(&c->g->mem, "bwd.%s.%s", V(c, u)->name, what);
}

static void keep_shape(const ir_shape *x, const ir_attrs *a, ir_shape *out) {
  *out = *x;
  for (int i = 0; i < a->ndims; i++) out->d[a->dims[i]] = 1;
}

/* matmul as einsum: labels for the batch dims of an operand of rank r
** against the result's batch rank rb (right-aligned); broadcast size-1
** dims get their own label, so they are summed in the gradient. */
static void mm_labels(const ir_shape *s, const ir_shape *out, int *fresh, char *lab, char *kept) {
  int r = s->rank - 2, ro = out->rank - 2, n = 0;
  for (int i = 0; i < r; i++) {
    int j = ro - r + i;
    char l;
    if (s->d[i] == out->d[j]) l = (char)('a' + j);
    else l = (char)('n' + (*fresh)++);
    lab[i] = l;
    if (s->d[i] == out->d[j]) kept[n++] = l;
  }
  lab[r] = 0;
  kept[n] = 0;
}

static void rule_matmul(gctx *c, int u, int dy) {
  ir_value *y = V(c, u), *a = V(c, y->args[0]), *b = V(c, y->args[1]);
  char la[16], ka[16], lb[16], kb[16], lo[16], spec[96];
  int fresh = 0, ro = y->shape.rank - 2;
  mm_labels(&a->shape, &y->shape, &fresh, la, ka);
  mm_labels(&b->shape, &y->shape, &fresh, lb, kb);
  for (int i = 0; i < ro; i++) lo[i] = (char)('a' + i);
  lo[ro] = 0;
  if (c->needs[a->id]) {
    snprintf(spec, sizeof spec, "%sMN,%sKN->%sMK", lo, lb, ka);
    int t = einsum(c, bwd(c, u, "da"), spec, dy, b->id);
    if (t >= 0) give(c, a->id, reshape_to(c, bwd(c, u, "da.r"), t, &a->shape));
  }
  if (c->needs[b->id]) {
    snprintf(spec, sizeof spec, "%sMK,%sMN->%sKN", la, lo, kb);
    int t = einsum(c, bwd(c, u, "db"), spec, a->id, dy);
    if (t >= 0) give(c, b->id, reshape_to(c, bwd(c, u, "db.r"), t, &b->shape));
  }
}

/* y = einsum("A,B->C", a, b): da = einsum("C,B->A'", dy, b), A' the labels of
** A seen in B or C, then broadcast along the labels summed away. */
static void rule_einsum(gctx *c, int u, int dy) {
  ir_value *y = V(c, u);
  char part[3][IR_MAXRANK + 1];
  ir_contraction_labels(c->g, y, part);
  for (int side = 0; side < 2; side++) {
    ir_value *x = V(c, y->args[side]);
    if (!c->needs[x->id]) continue;
    const char *other = part[1 - side];
    char kept[16] = {0}, s2[64];
    int nk = 0;
    ir_shape ks = {0};
    for (int i = 0; part[side][i]; i++) {
      char l = part[side][i];
      int seen = strchr(other, l) || strchr(part[2], l);
      if (seen) kept[nk++] = l;
      ks.d[ks.rank++] = seen ? x->shape.d[i] : 1;
    }
    if (side == 0) snprintf(s2, sizeof s2, "%s,%s->%s", part[2], other, kept);
    else snprintf(s2, sizeof s2, "%s,%s->%s", other, part[2], kept);
    int t = side == 0 ? einsum(c, bwd(c, u, "da"), s2, dy, y->args[1])
                      : einsum(c, bwd(c, u, "db"), s2, y->args[0], dy);
    if (t < 0) return;
    t = reshape_to(c, bwd(c, u, side ? "db.r" : "da.r"), t, &ks);
    give(c, x->id, broadcast_to(c, bwd(c, u, side ? "db.b" : "da.b"), t, &x->shape));
  }
}

/* elementwise functions of one operand */
static int rule_unary(gctx *c, int u, int dy) {
  ir_value *y = V(c, u);
  int a = y->args[0];
  switch (y->op) {
  case IR_NEG: give(c, a, emit1(c, bwd(c, u, "neg"), IR_NEG, dy)); break;
  case IR_EXP: give(c, a, emit2(c, bwd(c, u, "exp"), IR_MUL, dy, u)); break;
  case IR_LOG: give(c, a, emit2(c, bwd(c, u, "log"), IR_DIV, dy, a)); break;
  case IR_SQRT: {
    int t = emit2(c, bwd(c, u, "sqrt"), IR_DIV, dy, u);
    give(c, a, emit2(c, bwd(c, u, "sqrt.h"), IR_MUL, t, ir_const(c->g, 0.5)));
    break;
  }
  case IR_RSQRT: {       /* d x^-1/2 = -1/2 y^3 */
    int y2 = emit2(c, bwd(c, u, "y2"), IR_MUL, u, u);
    int y3 = emit2(c, bwd(c, u, "y3"), IR_MUL, y2, u);
    int t = emit2(c, bwd(c, u, "t"), IR_MUL, dy, y3);
    give(c, a, emit2(c, bwd(c, u, "rsqrt"), IR_MUL, t, ir_const(c->g, -0.5)));
    break;
  }
  case IR_TANH: {
    int y2 = emit2(c, bwd(c, u, "y2"), IR_MUL, u, u);
    int s = emit2(c, bwd(c, u, "s"), IR_SUB, ir_const(c->g, 1), y2);
    give(c, a, emit2(c, bwd(c, u, "tanh"), IR_MUL, dy, s));
    break;
  }
  case IR_SIGMOID: {
    int s = emit2(c, bwd(c, u, "s"), IR_SUB, ir_const(c->g, 1), u);
    int t = emit2(c, bwd(c, u, "t"), IR_MUL, u, s);
    give(c, a, emit2(c, bwd(c, u, "sigmoid"), IR_MUL, dy, t));
    break;
  }
  case IR_RELU: give(c, a, emit2(c, bwd(c, u, "relu"), IR_RELU_GRAD, a, dy)); break;
  case IR_GELU: give(c, a, emit2(c, bwd(c, u, "gelu"), IR_GELU_GRAD, a, dy)); break;
  case IR_GELU_TANH: give(c, a, emit2(c, bwd(c, u, "gelu"), IR_GELU_TANH_GRAD, a, dy)); break;
  case IR_SILU: give(c, a, emit2(c, bwd(c, u, "silu"), IR_SILU_GRAD, a, dy)); break;
  case IR_ABS: give(c, a, emit2(c, bwd(c, u, "abs"), IR_MUL, dy, emit1(c, bwd(c, u, "sign"), IR_SIGN, a))); break;
  case IR_LOG1P: give(c, a, emit2(c, bwd(c, u, "log1p"), IR_DIV, dy, emit2(c, bwd(c, u, "x1"), IR_ADD, a, ir_const(c->g, 1)))); break;
  case IR_EXPM1: give(c, a, emit2(c, bwd(c, u, "expm1"), IR_MUL, dy, emit2(c, bwd(c, u, "y1"), IR_ADD, u, ir_const(c->g, 1)))); break;
  case IR_SIN: give(c, a, emit2(c, bwd(c, u, "sin"), IR_MUL, dy, emit1(c, bwd(c, u, "cos"), IR_COS, a))); break;
  case IR_COS: {
    int s = emit1(c, bwd(c, u, "sin"), IR_SIN, a);
    give(c, a, emit2(c, bwd(c, u, "cos"), IR_MUL, dy, emit1(c, bwd(c, u, "nsin"), IR_NEG, s)));
    break;
  }
  case IR_TAN: {         /* d tan(x) = 1 + tan(x)^2 */
    int s = emit2(c, bwd(c, u, "s"), IR_ADD, emit2(c, bwd(c, u, "y2"), IR_MUL, u, u), ir_const(c->g, 1));
    give(c, a, emit2(c, bwd(c, u, "tan"), IR_MUL, dy, s));
    break;
  }
  case IR_CBRT: {        /* d cbrt(x) = 1 / (3 cbrt(x)^2) */
    int t = emit2(c, bwd(c, u, "y2"), IR_MUL, emit2(c, bwd(c, u, "y3"), IR_MUL, u, ir_const(c->g, 3)), u);
    give(c, a, emit2(c, bwd(c, u, "cbrt"), IR_DIV, dy, t));
    break;
  }
  case IR_ERF: case IR_ERFC: {   /* d erf(x) = 2/sqrt(pi) exp(-x^2) = -d erfc(x) */
    int x2 = emit2(c, bwd(c, u, "x2"), IR_MUL, a, a);
    int e = emit1(c, bwd(c, u, "e"), IR_EXP, emit1(c, bwd(c, u, "nx2"), IR_NEG, x2));
    int t = emit2(c, bwd(c, u, "t"), IR_MUL, dy, e);
    double k = y->op == IR_ERF ? 1.1283791670955126 : -1.1283791670955126;
    give(c, a, emit2(c, bwd(c, u, "erf"), IR_MUL, t, ir_const(c->g, k)));
    break;
  }
  case IR_CONVERT: {     /* between floats: the adjoint converts back */
    ir_attrs at = {0};
    at.dtype = V(c, a)->dtype;
    give(c, a, emit(c, bwd(c, u, "convert"), IR_CONVERT, &dy, 1, &at));
    break;
  }
  default: return 0;
  }
  return 1;
}

/* elementwise functions of two operands (sum_to undoes broadcasting) */
static int rule_binary(gctx *c, int u, int dy) {
  ir_value *y = V(c, u);
  if (y->nargs != 2) return 0;
  int a = y->args[0], b = y->args[1];
  ir_shape *sa = &V(c, a)->shape, *sb = &V(c, b)->shape;
  switch (y->op) {
  case IR_ADD:
    if (c->needs[a]) give(c, a, sum_to(c, bwd(c, u, "da"), dy, sa));
    if (c->needs[b]) give(c, b, sum_to(c, bwd(c, u, "db"), dy, sb));
    break;
  case IR_SUB:
    if (c->needs[a]) give(c, a, sum_to(c, bwd(c, u, "da"), dy, sa));
    if (c->needs[b]) give(c, b, sum_to(c, bwd(c, u, "db"), emit1(c, bwd(c, u, "neg"), IR_NEG, dy), sb));
    break;
  case IR_MUL:
    if (a == b) {   /* a * a: one product, twice */
      int t = emit2(c, bwd(c, u, "sq"), IR_MUL, dy, a);
      give(c, a, sum_to(c, bwd(c, u, "da"), emit2(c, bwd(c, u, "sq2"), IR_MUL, t, ir_const(c->g, 2.0)), sa));
      break;
    }
    if (c->needs[a]) give(c, a, sum_to(c, bwd(c, u, "da"), emit2(c, bwd(c, u, "da.m"), IR_MUL, dy, b), sa));
    if (c->needs[b]) give(c, b, sum_to(c, bwd(c, u, "db"), emit2(c, bwd(c, u, "db.m"), IR_MUL, dy, a), sb));
    break;
  case IR_DIV:
    if (c->needs[a]) give(c, a, sum_to(c, bwd(c, u, "da"), emit2(c, bwd(c, u, "da.m"), IR_DIV, dy, b), sa));
    if (c->needs[b]) {   /* d(a/b)/db = -y/b */
      int t = emit2(c, bwd(c, u, "db.m"), IR_MUL, dy, u);
      int q = emit2(c, bwd(c, u, "db.q"), IR_DIV, t, b);
      give(c, b, sum_to(c, bwd(c, u, "db"), emit1(c, bwd(c, u, "db.n"), IR_NEG, q), sb));
    }
    break;
  case IR_POWER: {       /* d a^b = b a^(b-1) da + log(a) a^b db */
    if (c->needs[a]) {
      int e = emit2(c, bwd(c, u, "da.e"), IR_SUB, b, ir_const(c->g, 1));
      int p = emit2(c, bwd(c, u, "da.p"), IR_POWER, a, e);
      int m = emit2(c, bwd(c, u, "da.m"), IR_MUL, p, b);
      give(c, a, sum_to(c, bwd(c, u, "da"), emit2(c, bwd(c, u, "da.d"), IR_MUL, dy, m), sa));
    }
    if (c->needs[b]) {
      int l = emit1(c, bwd(c, u, "db.l"), IR_LOG, a);
      int m = emit2(c, bwd(c, u, "db.m"), IR_MUL, u, l);
      give(c, b, sum_to(c, bwd(c, u, "db"), emit2(c, bwd(c, u, "db.d"), IR_MUL, dy, m), sb));
    }
    break;
  }
  case IR_REM: {         /* a - b trunc(a / b): da = dy, db = -dy trunc(a / b) (JAX's rule) */
    if (c->needs[a]) give(c, a, sum_to(c, bwd(c, u, "da"), dy, sa));
    if (c->needs[b]) {
      int q = emit2(c, bwd(c, u, "db.q"), IR_DIV, a, b);
      int t = emit2(c, bwd(c, u, "db.t"), IR_MUL, emit1(c, bwd(c, u, "db.s"), IR_SIGN, q),
                    emit1(c, bwd(c, u, "db.f"), IR_FLOOR, emit1(c, bwd(c, u, "db.a"), IR_ABS, q)));
      give(c, b, sum_to(c, bwd(c, u, "db"), emit1(c, bwd(c, u, "db.n"), IR_NEG, emit2(c, bwd(c, u, "db.m"), IR_MUL, dy, t)), sb));
    }
    break;
  }
  case IR_ATAN2: {       /* d atan2(a, b) = (b da - a db) / (a^2 + b^2) */
    int r = emit2(c, bwd(c, u, "r"), IR_ADD, emit2(c, bwd(c, u, "a2"), IR_MUL, a, a), emit2(c, bwd(c, u, "b2"), IR_MUL, b, b));
    int g = emit2(c, bwd(c, u, "g"), IR_DIV, dy, r);
    if (c->needs[a]) give(c, a, sum_to(c, bwd(c, u, "da"), emit2(c, bwd(c, u, "da.m"), IR_MUL, g, b), sa));
    if (c->needs[b]) give(c, b, sum_to(c, bwd(c, u, "db"), emit1(c, bwd(c, u, "db.n"), IR_NEG, emit2(c, bwd(c, u, "db.m"), IR_MUL, g, a)), sb));
    break;
  }
  case IR_MAXIMUM: case IR_MINIMUM: {
    /* the winner takes the gradient; on a tie the first operand does */
    int m = y->op == IR_MAXIMUM ? emit2(c, bwd(c, u, "mask"), IR_GE, a, b) : emit2(c, bwd(c, u, "mask"), IR_GE, b, a);
    int da = emit2(c, bwd(c, u, "da.m"), IR_MUL, dy, m);
    if (c->needs[a]) give(c, a, sum_to(c, bwd(c, u, "da"), da, sa));
    if (c->needs[b]) give(c, b, sum_to(c, bwd(c, u, "db"), emit2(c, bwd(c, u, "db.m"), IR_SUB, dy, da), sb));
    break;
  }
  default: return 0;
  }
  return 1;
}

/* select(p, a, b): the adjoint goes to the branch taken, zero to the other */
static int rule_select(gctx *c, int u, int dy) {
  ir_value *y = V(c, u);
  if (y->op != IR_SELECT) return 0;
  int p = y->args[0], a = y->args[1], b = y->args[2];
  if (c->needs[a]) {
    int args[3] = {p, dy, ir_const(c->g, 0)};
    give(c, a, sum_to(c, bwd(c, u, "da"), emit(c, bwd(c, u, "da.s"), IR_SELECT, args, 3, NULL), &V(c, a)->shape));
  }
  if (c->needs[b]) {
    int args[3] = {p, ir_const(c->g, 0), dy};
    give(c, b, sum_to(c, bwd(c, u, "db"), emit(c, bwd(c, u, "db.s"), IR_SELECT, args, 3, NULL), &V(c, b)->shape));
  }
  return 1;
}

/* reductions */
static int rule_reduce(gctx *c, int u, int dy) {
  ir_value *y = V(c, u);
  int a = y->args[0];
  ir_shape *sa = &V(c, a)->shape;
  ir_attrs at;
  switch (y->op) {
  case IR_SUM: case IR_MEAN: {
    int t = dy;
    if (y->op == IR_MEAN) {
      int64_t n = 1;
      for (int i = 0; i < y->attr.ndims; i++) n *= sa->d[y->attr.dims[i]];
      t = emit2(c, bwd(c, u, "scale"), IR_MUL, dy, ir_const(c->g, 1.0 / (double)n));
    }
    ir_shape ks;
    keep_shape(sa, &y->attr, &ks);
    t = reshape_to(c, bwd(c, u, "keep"), t, &ks);
    give(c, a, broadcast_to(c, bwd(c, u, "bcast"), t, sa));
    break;
  }
  case IR_MAX: {
    at = y->attr;
    int args[2] = {a, dy};
    give(c, a, emit(c, bwd(c, u, "max"), IR_MAX_GRAD, args, 2, &at));
    break;
  }
  case IR_MIN: {         /* min(x) = -max(-x) */
    at = y->attr;
    int args[2] = {emit1(c, bwd(c, u, "negx"), IR_NEG, a), emit1(c, bwd(c, u, "negdy"), IR_NEG, dy)};
    int m = emit(c, bwd(c, u, "min"), IR_MAX_GRAD, args, 2, &at);
    give(c, a, emit1(c, bwd(c, u, "min.n"), IR_NEG, m));
    break;
  }
  default: return 0;
  }
  return 1;
}

/* softmax, log_softmax, layernorm */
static int rule_rowwise(gctx *c, int u, int dy) {
  ir_value *y = V(c, u);
  int a = y->args[0], b = y->nargs > 1 ? y->args[1] : -1;
  ir_shape *sa = &V(c, a)->shape;
  ir_attrs at;
  switch (y->op) {
  case IR_SOFTMAX: case IR_LOG_SOFTMAX: {
    memset(&at, 0, sizeof at);
    at.dim = y->attr.dim;
    int args[2] = {u, dy};
    give(c, a, emit(c, bwd(c, u, "x"), y->op == IR_SOFTMAX ? IR_SOFTMAX_GRAD : IR_LOG_SOFTMAX_GRAD, args, 2, &at));
    break;
  }
  case IR_LAYERNORM: case IR_RMSNORM: {
    memset(&at, 0, sizeof at);
    at.dim = y->attr.dim;
    at.eps = y->attr.eps;
    at.rms = y->op == IR_RMSNORM;
    if (c->needs[a]) {
      int args[3] = {a, b, dy};
      give(c, a, emit(c, bwd(c, u, "dx"), IR_LAYERNORM_GRAD, args, 3, &at));
    }
    ir_attrs rs = {0};
    for (int i = 0; i < sa->rank; i++) if (i != y->attr.dim) rs.dims[rs.ndims++] = i;
    if (c->needs[b]) {
      int xh = emit(c, bwd(c, u, "xhat"), IR_NORMALIZE, &a, 1, &at);
      int p = emit2(c, bwd(c, u, "dg.m"), IR_MUL, dy, xh);
      give(c, b, emit(c, bwd(c, u, "dgamma"), IR_SUM, &p, 1, &rs));
    }
    if (y->op == IR_LAYERNORM && c->needs[y->args[2]]) give(c, y->args[2], emit(c, bwd(c, u, "dbeta"), IR_SUM, &dy, 1, &rs));
    break;
  }
  default: return 0;
  }
  return 1;
}

/* data movement: each moves the adjoint back */
static int rule_move(gctx *c, int u, int dy) {
  ir_value *y = V(c, u);
  int a = y->args[0];
  ir_shape *sa = &V(c, a)->shape;
  ir_attrs at;
  switch (y->op) {
  case IR_RESHAPE: give(c, a, reshape_to(c, bwd(c, u, "x"), dy, sa)); break;
  case IR_TRANSPOSE: {
    memset(&at, 0, sizeof at);
    at.ndims = y->attr.ndims;
    for (int i = 0; i < at.ndims; i++) at.dims[y->attr.dims[i]] = i;
    give(c, a, emit(c, bwd(c, u, "x"), IR_TRANSPOSE, &dy, 1, &at));
    break;
  }
  case IR_BROADCAST: give(c, a, sum_to(c, bwd(c, u, "x"), dy, sa)); break;
  case IR_SUM_TO: give(c, a, broadcast_to(c, bwd(c, u, "x"), dy, sa)); break;
  case IR_CONCAT: {
    int64_t off = 0;
    for (int k = 0; k < y->nargs; k++) {
      ir_value *x = V(c, y->args[k]);
      memset(&at, 0, sizeof at);
      at.dim = y->attr.dim;
      at.start = off;
      at.end = off + x->shape.d[at.dim];
      off = at.end;
      if (c->needs[x->id]) give(c, x->id, emit(c, bwd(c, u, "x"), IR_SLICE, &dy, 1, &at));
    }
    break;
  }
  case IR_SLICE:
    memset(&at, 0, sizeof at);
    at.dim = y->attr.dim;
    at.start = y->attr.start;
    at.end = sa->d[at.dim];
    give(c, a, emit(c, bwd(c, u, "x"), IR_PAD, &dy, 1, &at));
    break;
  case IR_PAD:
    memset(&at, 0, sizeof at);
    at.dim = y->attr.dim;
    at.start = y->attr.start;
    at.end = y->attr.start + sa->d[at.dim];
    give(c, a, emit(c, bwd(c, u, "x"), IR_SLICE, &dy, 1, &at));
    break;
  default: return 0;
  }
  return 1;
}

/* attention: one attention_grad recomputes the scores block by block and
** gives dq, dk, dv side by side; each operand takes its slice */
static void rule_attention(gctx *c, int u, int dy) {
  ir_value *y = V(c, u);
  ir_attrs at;
  memset(&at, 0, sizeof at);
  at.causal = y->attr.causal;
  at.scale = y->attr.scale;
  int args[4] = {y->args[0], y->args[1], y->args[2], dy};
  int packed = emit(c, bwd(c, u, "qkv"), IR_ATTENTION_GRAD, args, 4, &at);
  static const char *const what[3] = {"q", "k", "v"};
  int64_t dk = y->shape.d[3];
  for (int k = 0; k < 3; k++) {
    int a = y->args[k];
    if (!c->needs[a] || packed < 0) continue;
    memset(&at, 0, sizeof at);
    at.dim = 3;
    at.start = k * dk;
    at.end = (k + 1) * dk;
    give(c, a, emit(c, bwd(c, u, what[k]), IR_SLICE, &packed, 1, &at));
  }
}

/* gather and scatter-add are each other's adjoints over the same
** dimension numbers: a gather's operand receives its cotangent added where
** the gather read it (from zeros, so that it may stay a partial sum), a
** scatter-add's updates read theirs where they were added; the bounds flip
** with them (a clamped start stays clamped, an element skipped reads zero) */
static int index_adjoint(gctx *c, const char *name, ir_opkind op, int x, int i, int upd, const ir_index *from) {
  ir_index *ix = arena_alloc(&c->g->mem, sizeof *ix);
  *ix = *from;
  ix->other_bounds = !from->other_bounds;
  ix->combine = IR_ADD;
  ir_attrs at = {0};
  at.index = ix;
  int args[3] = {x, i, upd};
  return emit(c, name, op, args, op == IR_SCATTER ? 3 : 2, &at);
}

static void rule_index(gctx *c, int u, int dy) {
  ir_value *y = V(c, u);
  int x = y->args[0], i = y->args[1];
  if (y->op == IR_GATHER) {
    ir_attrs at = {0};
    at.to = V(c, x)->shape;
    int zero = ir_const_typed(c->g, 0, V(c, x)->dtype), zeros = emit(c, bwd(c, u, "zeros"), IR_BROADCAST, &zero, 1, &at);
    give(c, x, index_adjoint(c, bwd(c, u, "x"), IR_SCATTER, zeros, i, dy, y->attr.index));
    return;
  }
  give(c, x, dy);                                   /* result = x + the updates added in */
  give(c, y->args[2], index_adjoint(c, bwd(c, u, "updates"), IR_GATHER, dy, i, -1, y->attr.index));
}

/* contractions, lookups, losses, masks */
static int rule_other(gctx *c, int u, int dy) {
  ir_value *y = V(c, u);
  int a = y->nargs > 0 ? y->args[0] : -1, b = y->nargs > 1 ? y->args[1] : -1;
  ir_shape *sa = a >= 0 ? &V(c, a)->shape : NULL;
  ir_attrs at;
  switch (y->op) {
  case IR_MATMUL: rule_matmul(c, u, dy); break;
  case IR_EINSUM: rule_einsum(c, u, dy); break;
  case IR_EMBEDDING: {
    memset(&at, 0, sizeof at);
    at.rows = sa->d[0];
    int args[2] = {b, dy};
    give(c, a, emit(c, bwd(c, u, "table"), IR_EMBEDDING_GRAD, args, 2, &at));
    break;
  }
  case IR_CROSS_ENTROPY: {
    int args[3] = {a, b, dy};
    give(c, a, emit(c, bwd(c, u, "logits"), IR_CROSS_ENTROPY_GRAD, args, 3, NULL));
    break;
  }
  case IR_CAUSAL_MASK: give(c, a, emit1(c, bwd(c, u, "x"), IR_CAUSAL_MASK_GRAD, dy)); break;
  case IR_ATTENTION: rule_attention(c, u, dy); break;
  case IR_GATHER: rule_index(c, u, dy); break;
  case IR_SCATTER:
    if (y->attr.index->combine != IR_ADD) return 0;   /* replace, mul, max, min: no gradient */
    rule_index(c, u, dy);
    break;
  default: return 0;
  }
  return 1;
}

/* u's vector-Jacobian product: contributions to its operands' adjoints. */
static void rule(gctx *c, int u, int dy) {
  if (rule_unary(c, u, dy) || rule_binary(c, u, dy) || rule_select(c, u, dy) || rule_reduce(c, u, dy) || rule_rowwise(c, u, dy) ||
      rule_move(c, u, dy) || rule_other(c, u, dy)) return;
  ir_value *y = V(c, u);
  if (y->op == IR_SCATTER)
    diag_error(c->d, y->at, "cannot differentiate scatter with combine = \"%s\" ('%s'); of the scatters only combine = \"add\" has a gradient",
               ir_combiner_name(y->attr.index->combine), y->name);
  else
    diag_error(c->d, y->at, "cannot differentiate %s ('%s')", ir_opinfo_of(y->op)->name, y->name);
  c->failed = 1;
}

/* Which operands of u receive a contribution from u's rule. */
static int gives_to(gctx *c, const ir_value *u, int k) {
  if (!c->needs[u->args[k]]) return 0;
  switch (u->op) {
  case IR_EMBEDDING: case IR_CROSS_ENTROPY: case IR_GATHER: return k == 0;
  case IR_SCATTER: return k != 1;
  default: break;
  }
  if (u->op == IR_MUL && k == 1 && u->args[0] == u->args[1]) return 0;   /* a * a gives once */
  return 1;
}

/* Sum what v received; the result is named grad.NAME. A parameter's lone
** contribution made by the sweep is renamed rather than copied. */
static int finish_adjoint(gctx *c, int v) {
  ir_value *x = V(c, v);
  int n = c->ncontrib[v];
  const char *final = arena_printf(&c->g->mem, "grad.%s", x->name);
  int acc = c->contrib[v][0];
  for (int i = 1; i < n; i++)
    acc = emit2(c, i == n - 1 ? final : arena_printf(&c->g->mem, "grad.%s.part", x->name), IR_ADD, acc, c->contrib[v][i]);
  if (acc < 0 || n > 1 || x->kind != IR_PARAM) return acc;
  ir_value *s = V(c, acc);
  if (s->id >= c->n && strncmp(s->name, "grad.", 5) != 0 && ir_rename(c->g, s, final) == 0) return acc;
  ir_attrs a = {0};
  a.to = x->shape;
  return emit(c, final, IR_RESHAPE, &acc, 1, &a);
}

int grad_build(ir_graph *g, diag *d) { return grad_build_seeded(g, 1.0, -1, d); }

int grad_build_seeded(ir_graph *g, double seed, int seed_value, diag *d) {
  if (g->nouts != 1) {
    ir_value *o = g->vals[g->outputs[0]];
    return diag_error(d, o->at, "--train needs a model that returns one scalar loss; '%s' returns %d values", g->name, g->nouts);
  }
  ir_value *loss = g->vals[g->outputs[0]];
  if (loss->shape.rank == 0 && loss->dtype != IR_F32 && loss->dtype != IR_F64)
    return diag_error(d, loss->at, "--train needs an f32 or f64 loss; '%s' is %s (return an f32 one, '%s32 = convert(%s, f32)': "
                      "the model keeps its own types and the gradients flow back through the convert)", loss->name,
                      ir_dtype_name(loss->dtype), loss->name, loss->name);
  if (loss->shape.rank != 0 || (loss->dtype != IR_F32 && loss->dtype != IR_F64))
    return diag_error(d, loss->at, "--train needs a scalar f32 or f64 loss; '%s' is %s%s (reduce it with mean or sum)",
                      loss->name, ir_dtype_name(loss->dtype), ir_shape_str(&g->mem, &loss->shape));
  gctx c = {g, d, g->nvals};
  c.cur = -1;
  int n = c.n;
  c.needs = mem_calloc((size_t)n, 1);
  c.live = mem_calloc((size_t)n, 1);
  c.expect = mem_calloc((size_t)n, sizeof(int));
  c.contrib = mem_calloc((size_t)n, sizeof(int *));
  c.ncontrib = mem_calloc((size_t)n, sizeof(int));
  int nparams = 0;
  for (int i = 0; i < n; i++) {
    ir_value *v = g->vals[i];
    if (v->kind == IR_PARAM) { c.needs[i] = 1; nparams++; continue; }
    if (v->kind != IR_OP || (ir_opinfo_of(v->op)->flags & OPF_NODIFF) || !ir_dtype_isfloat(v->dtype)) continue;
    for (int k = 0; k < v->nargs; k++) c.needs[i] |= c.needs[v->args[k]];
  }
  c.live[loss->id] = 1;
  for (int i = n - 1; i >= 0; i--) {
    ir_value *v = g->vals[i];
    if (!c.live[i] || !c.needs[i] || v->kind != IR_OP) continue;
    for (int k = 0; k < v->nargs; k++)
      if (gives_to(&c, v, k)) { c.live[v->args[k]] = 1; c.expect[v->args[k]]++; }
  }
  int rc = 0;
  if (!nparams) rc = diag_error(d, loss->at, "--train: model '%s' has no param to train", g->name);
  else if (!c.needs[loss->id]) rc = diag_error(d, loss->at, "--train: the loss '%s' does not depend on any param", loss->name);
  for (int i = 0; i < n && rc == 0; i++)     /* a param declared but never reaching the loss: a typo, most often */
    if (g->vals[i]->kind == IR_PARAM && !c.live[i] &&
        diag_warning(d, g->vals[i]->at, "--train: param '%s' does not reach the loss '%s' (no gradient flows to it), so the step "
                     "leaves it as it is", g->vals[i]->name, loss->name) < 0)
      rc = -1;
  if (rc == 0) {
    c.expect[loss->id] = 1;
    give(&c, loss->id, seed_value >= 0 ? seed_value : ir_const_typed(g, seed, loss->dtype));
    for (int i = n - 1; i >= 0 && !c.failed; i--) {
      if (!c.ncontrib[i]) continue;
      if (c.ncontrib[i] != c.expect[i]) { diag_error(d, g->vals[i]->at, "internal error: gradient count of '%s'", g->vals[i]->name); c.failed = 1; break; }
      ir_value *v = g->vals[i];
      int adj;
      c.cur = i;
      if (v->kind == IR_PARAM) {
        adj = finish_adjoint(&c, i);
        if (adj >= 0) g->vals[adj]->role = ROLE_GRAD;
        continue;
      }
      adj = c.ncontrib[i] == 1 ? c.contrib[i][0] : finish_adjoint(&c, i);
      if (adj >= 0 && v->kind == IR_OP) rule(&c, i, adj);
    }
    if (c.failed) rc = -1;
  }
  for (int i = 0; i < n; i++) free(c.contrib[i]);
  free(c.contrib); free(c.ncontrib); free(c.expect); free(c.live); free(c.needs);
  return rc;
}

/*
** shape.c: type and shape inference for every op, with located errors
** that say what was expected. Attributes are normalized here (negative
** dims counted from the end, default reduction dims filled in), so the
** passes after this see one canonical form.
*/
#include "interp/ir/ir.h"
#include "interp/ir/ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_ELEMS ((int64_t)1 << 62)

typedef struct ctx { ir_graph *g; ir_value *v; diag *d; const char *op; } ctx;

static ir_value *arg(ctx *c, int k) { return c->g->vals[c->v->args[k]]; }

static const char *shp(ctx *c, const ir_shape *s) { return ir_shape_str(&c->g->mem, s); }

#define FAIL(...) return diag_error(c->d, c->v->at, __VA_ARGS__)

static int isfloat(ir_dtype t) { return ir_dtype_isfloat(t); }

static int check_elems(ctx *c, const ir_shape *s) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    if (s->d[i] < 0) FAIL("%s: negative dimension %lld", c->op, (long long)s->d[i]);
    if (s->d[i] && __builtin_mul_overflow(n, s->d[i], &n)) n = MAX_ELEMS;
    if (n >= MAX_ELEMS) FAIL("%s: result of shape %s has more than 2^62 elements", c->op, shp(c, s));
  }
  return 0;
}

/* dim in [-rank, rank) -> [0, rank) */
static int norm_dim(ctx *c, int *dim, int rank, const char *what) {
  if (*dim < -rank || *dim >= rank) {
    if (rank == 0) FAIL("%s: %s %d is out of range for a scalar", c->op, what, *dim);
    FAIL("%s: %s %d is out of range for rank %d (use %d..%d)", c->op, what, *dim, rank, -rank, rank - 1);
  }
  if (*dim < 0) *dim += rank;
  return 0;
}

/* The float dtype of elementwise operands: f32 literals adapt to the others
** (a literal typed otherwise, as an imported f64 one, keeps its type). */
static int float_operands(ctx *c, ir_dtype *out) {
  int have = 0;
  for (int k = 0; k < c->v->nargs; k++) {
    ir_value *a = arg(c, k);
    if (!isfloat(a->dtype))
      FAIL("%s: operand %d ('%s') is %s; this op needs floating-point values", c->op, k + 1, a->name, ir_dtype_name(a->dtype));
    if (a->kind == IR_CONST && a->dtype == IR_F32) continue;
    if (have && a->dtype != *out)
      FAIL("%s: operands mix %s and %s; convert one of them first", c->op, ir_dtype_name(*out), ir_dtype_name(a->dtype));
    *out = a->dtype; have = 1;
  }
  if (!have) *out = IR_F32;
  return 0;
}

static int ir_broadcast_shapes(const ir_shape *a, const ir_shape *b, ir_shape *out) {
  int r = a->rank > b->rank ? a->rank : b->rank;
  out->rank = r;
  for (int i = 0; i < r; i++) {
    int ia = a->rank - r + i, ib = b->rank - r + i;
    int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
    if (da != db && da != 1 && db != 1) return -1 - i;
    out->d[i] = da == 1 ? db : da;
  }
  return 0;
}

/* What an elementwise op accepts: floats only, numbers (no i1), integers and i1, anything. */
enum { T_FLOAT, T_NUMBER, T_LOGIC, T_INT, T_ANY };

/* The common dtype of operands k0.. (literals adapt to the others). */
static int same_operands(ctx *c, int k0, int kind, ir_dtype *out) {
  if (kind == T_FLOAT) {
    if (k0 == 0) return float_operands(c, out);
  }
  int have = 0;
  for (int k = k0; k < c->v->nargs; k++) {
    ir_value *a = arg(c, k);
    if (a->kind == IR_CONST && a->dtype == IR_F32) continue;
    if (have && a->dtype != *out)
      FAIL("%s: operands mix %s and %s; convert one of them first", c->op, ir_dtype_name(*out), ir_dtype_name(a->dtype));
    *out = a->dtype; have = 1;
  }
  if (!have) *out = IR_F32;
  for (int k = k0; k < c->v->nargs && !isfloat(*out); k++) {
    ir_value *a = arg(c, k);
    char num[NUM_LEN];
    if (a->kind == IR_CONST && a->dtype == IR_F32 && !ir_literal_fits(a->attr.scalar, *out))
      FAIL("%s: the literal %s is not a value of %s (the type of the other operands); write one that is, or convert them",
           c->op, num_double(num, a->attr.scalar), ir_dtype_name(*out));
  }
  const char *why = NULL;
  if (kind == T_FLOAT && !isfloat(*out)) why = "floating-point values";
  if (kind == T_NUMBER && *out == IR_I1) why = "numbers (not i1)";
  if (kind == T_LOGIC && isfloat(*out)) why = "integer or i1 values";
  if (kind == T_INT && (isfloat(*out) || *out == IR_I1)) why = "integers";
  if (why) {
    for (int k = k0; k < c->v->nargs; k++)
      if (arg(c, k)->dtype == *out) FAIL("%s: operand %d ('%s') is %s; this op needs %s", c->op, k + 1, arg(c, k)->name, ir_dtype_name(*out), why);
    FAIL("%s: this op needs %s, not %s", c->op, why, ir_dtype_name(*out));
  }
  return 0;
}

/* NumPy broadcasting of operands k0..nargs-1 into the result's shape */
static int broadcast_operands(ctx *c, int k0) {
  ir_shape s = arg(c, k0)->shape;
  for (int k = k0 + 1; k < c->v->nargs; k++) {
    ir_value *a = arg(c, k);
    ir_shape out;
    int r = ir_broadcast_shapes(&s, &a->shape, &out);
    if (r < 0) {
      int i = -r - 1, rk = out.rank;
      int ia = s.rank - rk + i, ib = a->shape.rank - rk + i;
      FAIL("%s: shapes %s and %s do not broadcast (%lld vs %lld, dim %d from the end)", c->op,
           shp(c, &s), shp(c, &a->shape), (long long)s.d[ia], (long long)a->shape.d[ib], rk - i);
    }
    s = out;
  }
  c->v->shape = s;
  return 0;
}

static int infer_broadcast2(ctx *c) {
  if (float_operands(c, &c->v->dtype) < 0) return -1;
  return broadcast_operands(c, 0);
}

static int parse_cmp(const char *s, int *cmp) {
  static const char *const names[] = {"eq", "ne", "lt", "le", "gt", "ge"};   /* ORDER ir_cmp */
  for (int i = 0; i < 6; i++)
    if (s && strlen(s) == 2 && (s[0] | 0x20) == names[i][0] && (s[1] | 0x20) == names[i][1]) { *cmp = i; return 0; }
  return -1;
}

/* StableHLO's elementwise ops over every dtype; -2 when v is not one of them */
static int infer_stablehlo_ew(ctx *c) {
  ir_value *v = c->v;
  switch (v->op) {
  case IR_NEG: case IR_ABS: case IR_SIGN:
    if (same_operands(c, 0, T_NUMBER, &v->dtype) < 0) return -1;
    v->shape = arg(c, 0)->shape;
    return 0;
  case IR_NOT:
    if (same_operands(c, 0, T_LOGIC, &v->dtype) < 0) return -1;
    v->shape = arg(c, 0)->shape;
    return 0;
  case IR_POPCNT: case IR_CLZ:
    if (same_operands(c, 0, T_INT, &v->dtype) < 0) return -1;
    v->shape = arg(c, 0)->shape;
    return 0;
  case IR_BITCAST: {
    ir_dtype from = arg(c, 0)->dtype, to = v->attr.dtype;
    if ((unsigned)to >= IR_NDTYPES) FAIL("bitcast: no such dtype");
    if (ir_dtype_size(from) != ir_dtype_size(to) || from == IR_I1 || to == IR_I1)
      FAIL("bitcast: '%s' is %s and %s has another width; bitcast reads the bits of one element as another type of the same width",
           arg(c, 0)->name, ir_dtype_name(from), ir_dtype_name(to));
    v->dtype = to;
    v->shape = arg(c, 0)->shape;
    return 0;
  }
  case IR_CONVERT:
    if ((unsigned)v->attr.dtype >= IR_NDTYPES) FAIL("convert: no such dtype");
    v->dtype = v->attr.dtype;
    v->shape = arg(c, 0)->shape;
    return 0;
  case IR_ADD: case IR_MUL: case IR_MAXIMUM: case IR_MINIMUM:
    if (same_operands(c, 0, T_ANY, &v->dtype) < 0) return -1;
    return broadcast_operands(c, 0);
  case IR_SUB: case IR_DIV: case IR_POWER: case IR_REM:
    if (same_operands(c, 0, T_NUMBER, &v->dtype) < 0) return -1;
    return broadcast_operands(c, 0);
  case IR_AND: case IR_OR: case IR_XOR:
    if (same_operands(c, 0, T_LOGIC, &v->dtype) < 0) return -1;
    return broadcast_operands(c, 0);
  case IR_SHL: case IR_SHRA: case IR_SHRL:
    if (same_operands(c, 0, T_INT, &v->dtype) < 0) return -1;
    return broadcast_operands(c, 0);
  case IR_COMPARE: {
    ir_dtype t;
    if (parse_cmp(v->attr.spec, &v->attr.cmp) < 0)
      FAIL("compare: direction \"%s\" is not one of \"eq\", \"ne\", \"lt\", \"le\", \"gt\", \"ge\"", v->attr.spec ? v->attr.spec : "");
    if (same_operands(c, 0, T_ANY, &t) < 0) return -1;
    if (v->attr.total && !isfloat(t)) FAIL("compare: total = true orders floats; '%s' is %s", arg(c, 0)->name, ir_dtype_name(t));
    v->dtype = IR_I1;
    return broadcast_operands(c, 0);
  }
  case IR_SELECT: {
    ir_value *p = arg(c, 0);
    if (p->dtype != IR_I1) FAIL("select: the predicate '%s' must be i1, not %s", p->name, ir_dtype_name(p->dtype));
    if (same_operands(c, 1, T_ANY, &v->dtype) < 0) return -1;
    return broadcast_operands(c, 0);
  }
  default:
    return -2;
  }
}

static int same_shape(ctx *c, int k0, int k1) {
  ir_value *a = arg(c, k0), *b = arg(c, k1);
  if (!ir_shape_eq(&a->shape, &b->shape))
    FAIL("%s: '%s' has shape %s but '%s' has %s; they must be equal", c->op,
         a->name, shp(c, &a->shape), b->name, shp(c, &b->shape));
  return 0;
}

/* ---- einsum ---- */

typedef struct espec {
  int n[3];             /* labels of a, b, out */
  char l[3][IR_MAXRANK];
} espec;

static int ir_einsum_parse(const char *spec, espec *e, char *err, size_t errlen) {
  memset(e, 0, sizeof *e);
  int part = 0;
  const char *p = spec;
  for (; *p; p++) {
    char ch = *p;
    if (ch == ' ') continue;
    if (ch == ',') { if (part != 0) goto bad; part = 1; continue; }
    if (ch == '-' && p[1] == '>') { if (part != 1) goto bad; part = 2; p++; continue; }
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))) {
      snprintf(err, errlen, "spec \"%s\": '%c' is not a label (labels are letters; '...' is not supported)", spec, ch);
      return -1;
    }
    if (e->n[part] == IR_MAXRANK) { snprintf(err, errlen, "spec \"%s\": more than %d labels in one operand", spec, IR_MAXRANK); return -1; }
    for (int i = 0; i < e->n[part]; i++)
      if (e->l[part][i] == ch) {
        snprintf(err, errlen, "spec \"%s\": label '%c' repeats in %s (diagonals are not supported)",
                 spec, ch, part == 2 ? "the result" : part == 0 ? "the first operand" : "the second operand");
        return -1;
      }
    e->l[part][e->n[part]++] = ch;
  }
  if (part != 2) goto bad;
  for (int i = 0; i < e->n[2]; i++) {
    char ch = e->l[2][i];
    if (!memchr(e->l[0], ch, (size_t)e->n[0]) && !memchr(e->l[1], ch, (size_t)e->n[1])) {
      snprintf(err, errlen, "spec \"%s\": result label '%c' appears in no operand", spec, ch);
      return -1;
    }
  }
  return 0;
bad:
  snprintf(err, errlen, "spec \"%s\" is not of the form \"ab,bc->ac\" (two operands)", spec);
  return -1;
}

void ir_contraction_labels(const ir_graph *g, const ir_value *v, char l[3][IR_MAXRANK + 1]) {
  memset(l, 0, 3 * (IR_MAXRANK + 1));
  if (v->op == IR_EINSUM) {          /* the spec, checked by infer_einsum */
    int k = 0, n = 0;
    for (const char *p = v->attr.spec; *p; p++) {
      if (*p == ' ') continue;
      if (*p == ',') { k = 1; n = 0; continue; }
      if (*p == '-') { k = 2; n = 0; p++; continue; }
      if (n < IR_MAXRANK) l[k][n++] = *p;
    }
    return;
  }
  /* matmul: batch dims right-aligned, then M K times K N */
  int ro = v->shape.rank, ra = g->vals[v->args[0]]->shape.rank, rb = g->vals[v->args[1]]->shape.rank;
  for (int i = 0; i < ro - 2; i++) l[2][i] = (char)('a' + i);
  l[2][ro - 2] = 'M'; l[2][ro - 1] = 'N';
  for (int i = 0; i < ra - 2; i++) l[0][i] = (char)('a' + ro - ra + i);
  l[0][ra - 2] = 'M'; l[0][ra - 1] = 'K';
  for (int i = 0; i < rb - 2; i++) l[1][i] = (char)('a' + ro - rb + i);
  l[1][rb - 2] = 'K'; l[1][rb - 1] = 'N';
}

static int infer_einsum(ctx *c) {
  espec e;
  char err[300];
  if (ir_einsum_parse(c->v->attr.spec, &e, err, sizeof err) < 0) FAIL("einsum: %s", err);
  int64_t size[128];
  for (int i = 0; i < 128; i++) size[i] = -1;
  for (int k = 0; k < 2; k++) {
    ir_value *a = arg(c, k);
    if (a->shape.rank != e.n[k])
      FAIL("einsum: operand %d ('%s') has rank %d but the spec \"%s\" gives it %d labels",
           k + 1, a->name, a->shape.rank, c->v->attr.spec, e.n[k]);
    for (int i = 0; i < e.n[k]; i++) {
      int ch = e.l[k][i];
      if (size[ch] >= 0 && size[ch] != a->shape.d[i])
        FAIL("einsum: label '%c' is %lld in one place and %lld in '%s'", ch,
             (long long)size[ch], (long long)a->shape.d[i], a->name);
      size[ch] = a->shape.d[i];
    }
  }
  /* integers too (StableHLO's dot_general of integers; sums wrap) */
  if (same_operands(c, 0, T_NUMBER, &c->v->dtype) < 0) return -1;
  c->v->shape.rank = e.n[2];
  for (int i = 0; i < e.n[2]; i++) c->v->shape.d[i] = size[(int)e.l[2][i]];
  return 0;
}

static int infer_matmul(ctx *c) {
  ir_value *a = arg(c, 0), *b = arg(c, 1);
  if (a->shape.rank < 2 || b->shape.rank < 2)
    FAIL("matmul: operands need rank >= 2 ('%s' is %s, '%s' is %s); reshape vectors to [1, n] or [n, 1]",
         a->name, shp(c, &a->shape), b->name, shp(c, &b->shape));
  int ra = a->shape.rank, rb = b->shape.rank;
  if (a->shape.d[ra - 1] != b->shape.d[rb - 2])
    FAIL("matmul: inner dims differ (%lld vs %lld): '%s' is %s, '%s' is %s",
         (long long)a->shape.d[ra - 1], (long long)b->shape.d[rb - 2],
         a->name, shp(c, &a->shape), b->name, shp(c, &b->shape));
  ir_shape ba = a->shape, bb = b->shape, out;
  ba.rank -= 2; bb.rank -= 2;
  if (ir_broadcast_shapes(&ba, &bb, &out) < 0)
    FAIL("matmul: batch dims %s and %s do not broadcast", shp(c, &ba), shp(c, &bb));
  if (float_operands(c, &c->v->dtype) < 0) return -1;
  out.d[out.rank++] = a->shape.d[ra - 2];
  out.d[out.rank++] = b->shape.d[rb - 1];
  c->v->shape = out;
  return 0;
}

static int infer_reduce(ctx *c) {
  ir_value *x = arg(c, 0);
  ir_attrs *at = &c->v->attr;
  int r = x->shape.rank, mark[IR_MAXRANK] = {0};
  if (at->ndims < 0) {            /* not given: every dim */
    at->ndims = r;
    for (int i = 0; i < r; i++) at->dims[i] = i;
  }
  for (int i = 0; i < at->ndims; i++) {
    if (norm_dim(c, &at->dims[i], r, "dim") < 0) return -1;
    if (mark[at->dims[i]]++) FAIL("%s: dim %d is listed twice", c->op, at->dims[i]);
  }
  at->ndims = 0;
  for (int i = 0; i < r; i++) if (mark[i]) at->dims[at->ndims++] = i;
  ir_shape s = {0};
  for (int i = 0; i < r; i++) {
    if (!mark[i]) s.d[s.rank++] = x->shape.d[i];
    else if (at->keepdims) s.d[s.rank++] = 1;
  }
  if (c->v->op == IR_MAX_GRAD) {   /* dy has the max's shape */
    ir_value *dy = arg(c, 1);
    if (!ir_shape_eq(&dy->shape, &s)) FAIL("max_grad: dy '%s' has shape %s but the max of '%s' has %s", dy->name, shp(c, &dy->shape), x->name, shp(c, &s));
    c->v->shape = x->shape;
    c->v->dtype = x->dtype;
    return 0;
  }
  if (c->v->op == IR_MEAN && !isfloat(x->dtype)) FAIL("%s: '%s' is %s; mean needs floating-point values", c->op, x->name, ir_dtype_name(x->dtype));
  c->v->shape = s;
  c->v->dtype = x->dtype;
  return 0;
}

static int infer_reshape(ctx *c) {
  ir_value *x = arg(c, 0);
  ir_shape *to = &c->v->attr.to;
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < to->rank; i++) {
    if (to->d[i] == -1) {
      if (infer >= 0) FAIL("reshape: only one dim may be -1");
      infer = i;
    } else if (to->d[i] < 0) FAIL("reshape: dim %d is %lld; dims must be >= 0 (or -1 to infer one)", i, (long long)to->d[i]);
    else if (__builtin_mul_overflow(known, to->d[i], &known) || known >= MAX_ELEMS)
      FAIL("reshape: target %s has more than 2^62 elements", shp(c, to));
  }
  int64_t n = ir_nelem(&x->shape);
  if (infer >= 0) {
    if (known == 0 || n % known) FAIL("reshape: cannot infer the -1 dim: %lld elements do not split into %s", (long long)n, shp(c, to));
    to->d[infer] = n / known;
    known = n;
  }
  if (known != n)
    FAIL("reshape: '%s' has %lld elements (%s) but the target %s has %lld",
         x->name, (long long)n, shp(c, &x->shape), shp(c, to), (long long)known);
  c->v->shape = *to;
  c->v->dtype = x->dtype;
  return 0;
}

static int infer_transpose(ctx *c) {
  ir_value *x = arg(c, 0);
  ir_attrs *at = &c->v->attr;
  int r = x->shape.rank, seen[IR_MAXRANK] = {0};
  if (at->ndims != r) FAIL("transpose: the permutation has %d entries but '%s' has rank %d", at->ndims, x->name, r);
  for (int i = 0; i < r; i++) {
    if (norm_dim(c, &at->dims[i], r, "axis") < 0) return -1;
    if (seen[at->dims[i]]++) FAIL("transpose: axis %d appears twice in the permutation", at->dims[i]);
  }
  c->v->shape.rank = r;
  for (int i = 0; i < r; i++) c->v->shape.d[i] = x->shape.d[at->dims[i]];
  c->v->dtype = x->dtype;
  return 0;
}

/* x broadcasts to `to` under NumPy rules (right-aligned, 1s stretch). */
static int broadcastable(const ir_shape *x, const ir_shape *to) {
  if (x->rank > to->rank) return 0;
  for (int i = 0; i < x->rank; i++) {
    int64_t dx = x->d[x->rank - 1 - i], dt = to->d[to->rank - 1 - i];
    if (dx != dt && dx != 1) return 0;
  }
  return 1;
}

static int infer_broadcast(ctx *c) {
  ir_value *x = arg(c, 0);
  if (check_elems(c, &c->v->attr.to) < 0) return -1;
  if (!broadcastable(&x->shape, &c->v->attr.to))
    FAIL("broadcast: '%s' of shape %s does not broadcast to %s", x->name, shp(c, &x->shape), shp(c, &c->v->attr.to));
  c->v->shape = c->v->attr.to;
  c->v->dtype = x->dtype;
  return 0;
}

static int infer_sum_to(ctx *c) {
  ir_value *x = arg(c, 0);
  if (!broadcastable(&c->v->attr.to, &x->shape))
    FAIL("sum_to: %s does not broadcast to '%s' of shape %s", shp(c, &c->v->attr.to), x->name, shp(c, &x->shape));
  c->v->shape = c->v->attr.to;
  c->v->dtype = x->dtype;
  return 0;
}

static int infer_concat(ctx *c) {
  if (c->v->nargs < 1) FAIL("concat: needs at least one value");
  ir_value *a = arg(c, 0);
  int dim = c->v->attr.dim;
  if (norm_dim(c, &dim, a->shape.rank, "dim") < 0) return -1;
  c->v->attr.dim = dim;
  ir_shape s = a->shape;
  for (int k = 1; k < c->v->nargs; k++) {
    ir_value *b = arg(c, k);
    if (b->dtype != a->dtype) FAIL("concat: '%s' is %s but '%s' is %s", a->name, ir_dtype_name(a->dtype), b->name, ir_dtype_name(b->dtype));
    if (b->shape.rank != a->shape.rank) FAIL("concat: '%s' has rank %d but '%s' has rank %d", a->name, a->shape.rank, b->name, b->shape.rank);
    for (int i = 0; i < s.rank; i++)
      if (i != dim && b->shape.d[i] != a->shape.d[i])
        FAIL("concat: '%s' %s and '%s' %s differ in dim %d (only dim %d may differ)",
             a->name, shp(c, &a->shape), b->name, shp(c, &b->shape), i, dim);
    s.d[dim] += b->shape.d[dim];
  }
  c->v->shape = s;
  c->v->dtype = a->dtype;
  return check_elems(c, &s);
}

static int infer_slice(ctx *c) {
  ir_value *x = arg(c, 0);
  ir_attrs *at = &c->v->attr;
  if (norm_dim(c, &at->dim, x->shape.rank, "dim") < 0) return -1;
  int64_t n = x->shape.d[at->dim];
  if (at->start < 0 || at->end > n || at->start >= at->end)
    FAIL("slice: [%lld, %lld) is not a non-empty range inside dim %d of '%s' (size %lld)",
         (long long)at->start, (long long)at->end, at->dim, x->name, (long long)n);
  c->v->shape = x->shape;
  c->v->shape.d[at->dim] = at->end - at->start;
  c->v->dtype = x->dtype;
  return 0;
}

static int infer_pad(ctx *c) {
  ir_value *x = arg(c, 0);
  ir_attrs *at = &c->v->attr;
  if (norm_dim(c, &at->dim, x->shape.rank, "dim") < 0) return -1;
  if (at->start < 0 || at->start + x->shape.d[at->dim] > at->end)
    FAIL("pad: '%s' does not fit at %lld in a dim of %lld", x->name, (long long)at->start, (long long)at->end);
  c->v->shape = x->shape;
  c->v->shape.d[at->dim] = at->end;
  c->v->dtype = x->dtype;
  return 0;
}

static int infer_rowwise(ctx *c) {
  ir_value *x = arg(c, 0);
  if (!isfloat(x->dtype)) FAIL("%s: '%s' is %s; this op needs floating-point values", c->op, x->name, ir_dtype_name(x->dtype));
  if (norm_dim(c, &c->v->attr.dim, x->shape.rank, "dim") < 0) return -1;
  c->v->shape = x->shape;
  c->v->dtype = x->dtype;
  return 0;
}

static int check_affine(ctx *c, int k, const char *what) {
  ir_value *x = arg(c, 0), *g = arg(c, k);
  int64_t n = x->shape.d[c->v->attr.dim];
  if (g->shape.rank != 1 || g->shape.d[0] != n)
    FAIL("%s: %s '%s' has shape %s but must be [%lld] (dim %d of '%s')", c->op, what,
         g->name, shp(c, &g->shape), (long long)n, c->v->attr.dim, x->name);
  if (g->dtype != x->dtype) FAIL("%s: %s '%s' is %s but '%s' is %s", c->op, what, g->name, ir_dtype_name(g->dtype), x->name, ir_dtype_name(x->dtype));
  return 0;
}

static int infer_embedding(ctx *c) {
  ir_value *t = arg(c, 0), *ids = arg(c, 1);
  if (t->shape.rank != 2)   /* any dtype: rows are copied (imported gathers read integer tables too) */
    FAIL("embedding: the table '%s' must be a matrix [rows, dim], not %s %s", t->name, ir_dtype_name(t->dtype), shp(c, &t->shape));
  if (ids->dtype != IR_I32) FAIL("embedding: the ids '%s' must be i32, not %s", ids->name, ir_dtype_name(ids->dtype));
  if (ids->shape.rank >= IR_MAXRANK) FAIL("embedding: ids of rank %d leave no room for the row dim", ids->shape.rank);
  c->v->shape = ids->shape;
  c->v->shape.d[c->v->shape.rank++] = t->shape.d[1];
  c->v->dtype = t->dtype;
  return check_elems(c, &c->v->shape);
}

static int check_labels(ctx *c, ir_value *lg, ir_value *lb) {
  if (!isfloat(lg->dtype) || lg->shape.rank < 1)
    FAIL("%s: logits '%s' must be float with a class dim, not %s %s", c->op, lg->name, ir_dtype_name(lg->dtype), shp(c, &lg->shape));
  if (lb->dtype != IR_I32) FAIL("%s: labels '%s' must be i32, not %s", c->op, lb->name, ir_dtype_name(lb->dtype));
  ir_shape want = lg->shape;
  want.rank--;
  if (!ir_shape_eq(&want, &lb->shape))
    FAIL("%s: labels '%s' have shape %s but logits %s want %s", c->op, lb->name,
         shp(c, &lb->shape), shp(c, &lg->shape), shp(c, &want));
  return 0;
}

/* q, k, v (and dy) all [b, h, s, dk] in one float type; the scale
** defaults to 1/sqrt(dk) */
static int infer_attention(ctx *c) {
  ir_value *q = arg(c, 0);
  if (q->shape.rank != 4)
    FAIL("%s: q '%s' has shape %s; it needs [batch, heads, seq, head_dim]", c->op, q->name, shp(c, &q->shape));
  if (!isfloat(q->dtype)) FAIL("%s: q '%s' must be float", c->op, q->name);
  for (int k = 1; k < c->v->nargs; k++) {
    ir_value *x = arg(c, k);
    if (!ir_shape_eq(&x->shape, &q->shape) || x->dtype != q->dtype)
      FAIL("%s: '%s' is %s%s but q '%s' is %s%s; they must match", c->op, x->name, ir_dtype_name(x->dtype),
           shp(c, &x->shape), q->name, ir_dtype_name(q->dtype), shp(c, &q->shape));
  }
  if (c->v->attr.scale == 0 && q->shape.d[3] > 0) c->v->attr.scale = 1.0 / sqrt((double)q->shape.d[3]);
  c->v->shape = q->shape;
  c->v->dtype = q->dtype;
  if (c->v->op == IR_ATTENTION_GRAD) c->v->shape.d[3] *= 3;
  return check_elems(c, &c->v->shape);
}

/* ---- gather and scatter: StableHLO's constraints, in its words ---- */

static int has_dim(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++) if (v[i] == x) return 1;
  return 0;
}

/* list k of ix: each entry in [0, bound), unique, sorted when asked */
static int check_list(ctx *c, const ir_index *ix, int k, int64_t bound, int sorted, const char *name, const char *of) {
  for (int i = 0; i < ix->n[k]; i++) {
    int64_t x = ix->v[k][i];
    if (x < 0 || x >= bound) FAIL("%s: %s entry %lld is out of range for %s (use 0..%lld)", c->op, name, (long long)x, of, (long long)bound - 1);
    if (has_dim(ix->v[k], i, x)) FAIL("%s: %s names dim %lld twice", c->op, name, (long long)x);
    if (sorted && i && x < ix->v[k][i - 1]) FAIL("%s: %s must be sorted", c->op, name);
  }
  return 0;
}

/* What gather and scatter share: the index and its batch dims, the
** operand's dims looked up, collapsed and batched. names: gather's or
** scatter's names of the lists (ORDER IR_IX). */
static int check_index(ctx *c, const ir_index *ix, const ir_value *x, const ir_value *idx, const char *const *names) {
  int r = x->shape.rank, ri = idx->shape.rank;
  if (!ir_dtype_isint(idx->dtype)) FAIL("%s: the indices '%s' are %s; they must be integers", c->op, idx->name, ir_dtype_name(idx->dtype));
  if (ix->ivd < 0 || ix->ivd > ri) FAIL("%s: index_vector_dim %d is out of range for indices of rank %d (use 0..%d)", c->op, ix->ivd, ri, ri);
  int64_t comps = ix->ivd < ri ? idx->shape.d[ix->ivd] : 1;
  if (ix->n[IX_START_MAP] != comps)
    FAIL("%s: %s has %d entries but each index has %lld components (dim %d of '%s')", c->op, names[IX_START_MAP], ix->n[IX_START_MAP],
         (long long)comps, ix->ivd, idx->name);
  if (check_list(c, ix, IX_START_MAP, r, 0, names[IX_START_MAP], "the operand") < 0) return -1;
  if (check_list(c, ix, IX_COLLAPSED, r, 1, names[IX_COLLAPSED], "the operand") < 0) return -1;
  if (check_list(c, ix, IX_OPERAND_BATCH, r, 1, names[IX_OPERAND_BATCH], "the operand") < 0) return -1;
  if (check_list(c, ix, IX_INDEX_BATCH, ri, 0, names[IX_INDEX_BATCH], "the indices") < 0) return -1;
  for (int i = 0; i < ix->n[IX_COLLAPSED]; i++)
    if (has_dim(ix->v[IX_OPERAND_BATCH], ix->n[IX_OPERAND_BATCH], ix->v[IX_COLLAPSED][i]))
      FAIL("%s: dim %lld is both in %s and in %s", c->op, (long long)ix->v[IX_COLLAPSED][i], names[IX_COLLAPSED], names[IX_OPERAND_BATCH]);
  if (ix->n[IX_OPERAND_BATCH] != ix->n[IX_INDEX_BATCH])
    FAIL("%s: %s and %s must have as many entries (%d and %d)", c->op, names[IX_OPERAND_BATCH], names[IX_INDEX_BATCH],
         ix->n[IX_OPERAND_BATCH], ix->n[IX_INDEX_BATCH]);
  for (int i = 0; i < ix->n[IX_INDEX_BATCH]; i++) {
    int64_t d = ix->v[IX_INDEX_BATCH][i], o = ix->v[IX_OPERAND_BATCH][i];
    if (d == ix->ivd) FAIL("%s: %s names index_vector_dim %d", c->op, names[IX_INDEX_BATCH], ix->ivd);
    if (idx->shape.d[d] != x->shape.d[o])
      FAIL("%s: batch dim %lld of the indices (%lld) and dim %lld of the operand (%lld) differ", c->op, (long long)d,
           (long long)idx->shape.d[d], (long long)o, (long long)x->shape.d[o]);
  }
  if (r + ri > 2 * IR_MAXRANK) FAIL("%s: too many dims", c->op);
  return 0;
}

static const char *const gather_names[IX_NLISTS] = {
  "offset_dims", "collapsed_slice_dims", "start_index_map", "slice_sizes", "operand_batching_dims", "start_indices_batching_dims"};
static const char *const scatter_names[IX_NLISTS] = {
  "update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims", "window sizes", "input_batching_dims", "scatter_indices_batching_dims"};

static int infer_gather(ctx *c) {
  ir_value *v = c->v, *x = arg(c, 0), *idx = arg(c, 1);
  const ir_index *ix = v->attr.index;
  if (!ix) FAIL("gather: no dimension numbers (internal error)");
  if (check_index(c, ix, x, idx, gather_names) < 0) return -1;
  int r = x->shape.rank, ri = idx->shape.rank, nb = ix->ivd < ri ? ri - 1 : ri;
  if (ix->n[IX_SLICE] != r) FAIL("gather: slice_sizes has %d entries for an operand of rank %d", ix->n[IX_SLICE], r);
  if (ix->n[IX_OFFSET] + ix->n[IX_COLLAPSED] + ix->n[IX_OPERAND_BATCH] != r)
    FAIL("gather: offset_dims, collapsed_slice_dims and operand_batching_dims have %d entries together; the operand has rank %d",
         ix->n[IX_OFFSET] + ix->n[IX_COLLAPSED] + ix->n[IX_OPERAND_BATCH], r);
  int rr = ix->n[IX_OFFSET] + nb;
  if (rr > IR_MAXRANK) FAIL("gather: the result would have %d dims; at most %d are supported", rr, IR_MAXRANK);
  if (check_list(c, ix, IX_OFFSET, rr, 1, "offset_dims", "the result") < 0) return -1;
  for (int d = 0; d < r; d++) {
    int64_t sz = ix->v[IX_SLICE][d];
    if (sz < 0 || sz > x->shape.d[d]) FAIL("gather: slice_sizes[%d] = %lld is outside 0..%lld (dim %d of '%s')", d, (long long)sz, (long long)x->shape.d[d], d, x->name);
    if ((has_dim(ix->v[IX_COLLAPSED], ix->n[IX_COLLAPSED], d) || has_dim(ix->v[IX_OPERAND_BATCH], ix->n[IX_OPERAND_BATCH], d)) && sz > 1)
      FAIL("gather: dim %d is collapsed or batched, so its slice size must be 0 or 1, not %lld", d, (long long)sz);
  }
  v->shape.rank = rr;
  for (int u = 0, b = 0, w = 0; u < rr; u++) {
    if (has_dim(ix->v[IX_OFFSET], ix->n[IX_OFFSET], u)) {
      while (has_dim(ix->v[IX_COLLAPSED], ix->n[IX_COLLAPSED], w) || has_dim(ix->v[IX_OPERAND_BATCH], ix->n[IX_OPERAND_BATCH], w)) w++;
      v->shape.d[u] = ix->v[IX_SLICE][w++];
    } else {
      if (b == ix->ivd && ix->ivd < ri) b++;
      v->shape.d[u] = idx->shape.d[b++];
    }
  }
  v->dtype = x->dtype;
  return check_elems(c, &v->shape);
}

static int infer_scatter(ctx *c) {
  ir_value *v = c->v, *x = arg(c, 0), *idx = arg(c, 1), *up = arg(c, 2);
  const ir_index *ix0 = v->attr.index;
  if (!ix0) FAIL("scatter: no dimension numbers (internal error)");
  ir_index *ix = arena_alloc(&c->g->mem, sizeof *ix);     /* with its window sizes worked out */
  *ix = *ix0;
  if (check_index(c, ix, x, idx, scatter_names) < 0) return -1;
  int r = x->shape.rank, ri = idx->shape.rank, ru = up->shape.rank, nb = ix->ivd < ri ? ri - 1 : ri;
  if (up->dtype != x->dtype) FAIL("scatter: the updates '%s' are %s but the operand '%s' is %s", up->name, ir_dtype_name(up->dtype), x->name, ir_dtype_name(x->dtype));
  if (ix->combine < 0 || (ix->combine != IR_LEAF && ix->combine != IR_ADD && ix->combine != IR_MUL && ix->combine != IR_MAXIMUM && ix->combine != IR_MINIMUM))
    FAIL("scatter: no such combiner (internal error)");
  if (x->dtype == IR_I1 && ix->combine != IR_LEAF) FAIL("scatter: '%s' is i1; only combine = \"replace\" applies to it", x->name);
  if (ix->n[IX_OFFSET] + ix->n[IX_COLLAPSED] + ix->n[IX_OPERAND_BATCH] != r)
    FAIL("scatter: update_window_dims, inserted_window_dims and input_batching_dims have %d entries together; the operand has rank %d",
         ix->n[IX_OFFSET] + ix->n[IX_COLLAPSED] + ix->n[IX_OPERAND_BATCH], r);
  if (ru != ix->n[IX_OFFSET] + nb)
    FAIL("scatter: the updates '%s' have rank %d; with %d window dims and %d batch dims of the indices they need rank %d", up->name, ru,
         ix->n[IX_OFFSET], nb, ix->n[IX_OFFSET] + nb);
  if (check_list(c, ix, IX_OFFSET, ru, 1, "update_window_dims", "the updates") < 0) return -1;
  ix->n[IX_SLICE] = r;
  for (int d = 0, w = 0; d < r; d++) {
    if (has_dim(ix->v[IX_COLLAPSED], ix->n[IX_COLLAPSED], d) || has_dim(ix->v[IX_OPERAND_BATCH], ix->n[IX_OPERAND_BATCH], d)) { ix->v[IX_SLICE][d] = 1; continue; }
    int64_t u = ix->v[IX_OFFSET][w++], sz = up->shape.d[u];
    if (sz > x->shape.d[d]) FAIL("scatter: window dim %lld of the updates (%lld) is larger than dim %d of the operand (%lld)", (long long)u,
                                 (long long)sz, d, (long long)x->shape.d[d]);
    ix->v[IX_SLICE][d] = sz;
  }
  for (int u = 0, b = 0; u < ru; u++) {
    if (has_dim(ix->v[IX_OFFSET], ix->n[IX_OFFSET], u)) continue;
    if (b == ix->ivd && ix->ivd < ri) b++;
    if (up->shape.d[u] != idx->shape.d[b])
      FAIL("scatter: dim %d of the updates (%lld) must match dim %d of the indices (%lld)", u, (long long)up->shape.d[u], b, (long long)idx->shape.d[b]);
    b++;
  }
  v->attr.index = ix;
  v->shape = x->shape;
  v->dtype = x->dtype;
  return 0;
}

int ir_infer(ir_graph *g, ir_value *v, diag *d) {
  ctx cc = {g, v, d, ir_opinfo_of(v->op)->name}, *c = &cc;
  const ir_opinfo *oi = ir_opinfo_of(v->op);
  int rc = infer_stablehlo_ew(c);
  if (rc != -2) return rc < 0 ? -1 : check_elems(c, &v->shape);
  if (oi->flags & OPF_UNARY) {
    if (float_operands(c, &v->dtype) < 0) return -1;
    v->shape = arg(c, 0)->shape;
    return 0;
  }
  if (oi->flags & OPF_BINARY) return infer_broadcast2(c);
  switch (v->op) {
  case IR_MATMUL: return infer_matmul(c);
  case IR_EINSUM: return infer_einsum(c);
  case IR_SUM: case IR_MEAN: case IR_MAX: case IR_MIN: return infer_reduce(c);
  case IR_IOTA: case IR_CONSTANT: {
    if ((unsigned)v->attr.dtype >= IR_NDTYPES) FAIL("%s: no such dtype", c->op);
    if (check_elems(c, &v->attr.to) < 0) return -1;
    if (v->op == IR_IOTA) {
      if (norm_dim(c, &v->attr.dim, v->attr.to.rank, "dim") < 0) return -1;
      if (v->attr.dtype == IR_I1) FAIL("iota: i1 holds no index; use an integer or float type");
    } else if (!v->attr.data && ir_nelem(&v->attr.to) > 0) {
      FAIL("constant: no values (internal error)");
    }
    v->shape = v->attr.to;
    v->dtype = v->attr.dtype;
    return 0;
  }
  case IR_MAX_GRAD:
    if (infer_reduce(c) < 0) return -1;
    return 0;
  case IR_SOFTMAX: case IR_LOG_SOFTMAX: case IR_NORMALIZE: return infer_rowwise(c);
  case IR_SOFTMAX_GRAD: case IR_LOG_SOFTMAX_GRAD:
    if (infer_rowwise(c) < 0) return -1;
    return same_shape(c, 0, 1);
  case IR_LAYERNORM:
    if (infer_rowwise(c) < 0) return -1;
    if (check_affine(c, 1, "gamma") < 0 || check_affine(c, 2, "beta") < 0) return -1;
    return 0;
  case IR_RMSNORM: case IR_LAYERNORM_GRAD:
    if (infer_rowwise(c) < 0 || check_affine(c, 1, "gamma") < 0) return -1;
    if (c->v->op == IR_RMSNORM) return 0;
    return same_shape(c, 0, 2);
  case IR_RESHAPE: return infer_reshape(c);
  case IR_TRANSPOSE: return infer_transpose(c);
  case IR_BROADCAST: return infer_broadcast(c);
  case IR_SUM_TO: return infer_sum_to(c);
  case IR_CONCAT: return infer_concat(c);
  case IR_SLICE: return infer_slice(c);
  case IR_PAD: return infer_pad(c);
  case IR_ATTENTION: case IR_ATTENTION_GRAD: return infer_attention(c);
  case IR_GATHER: return infer_gather(c);
  case IR_SCATTER: return infer_scatter(c);
  case IR_EMBEDDING: return infer_embedding(c);
  case IR_EMBEDDING_GRAD: {
    ir_value *ids = arg(c, 0), *dy = arg(c, 1);
    if (ids->dtype != IR_I32) FAIL("embedding_grad: ids '%s' must be i32", ids->name);
    if (dy->shape.rank != ids->shape.rank + 1) FAIL("embedding_grad: '%s' must have rank %d", dy->name, ids->shape.rank + 1);
    if (v->attr.rows <= 0) FAIL("embedding_grad: rows must be positive");
    v->shape.rank = 2;
    v->shape.d[0] = v->attr.rows;
    v->shape.d[1] = dy->shape.d[dy->shape.rank - 1];
    v->dtype = dy->dtype;
    return check_elems(c, &v->shape);
  }
  case IR_CROSS_ENTROPY:     /* the loss of bf16 or f16 logits is f32, as it is computed */
    if (check_labels(c, arg(c, 0), arg(c, 1)) < 0) return -1;
    v->shape.rank = 0;
    v->dtype = arg(c, 0)->dtype == IR_F64 ? IR_F64 : IR_F32;
    return 0;
  case IR_CROSS_ENTROPY_GRAD:
    if (check_labels(c, arg(c, 0), arg(c, 1)) < 0) return -1;
    if (arg(c, 2)->shape.rank != 0) FAIL("cross_entropy_grad: dloss must be a scalar");
    v->shape = arg(c, 0)->shape;
    v->dtype = arg(c, 0)->dtype;
    return 0;
  case IR_CAUSAL_MASK: case IR_CAUSAL_MASK_GRAD: {
    ir_value *x = arg(c, 0);
    if (x->shape.rank < 2) FAIL("%s: '%s' has shape %s; it needs rank >= 2 ([..., queries, keys])", c->op, x->name, shp(c, &x->shape));
    if (!isfloat(x->dtype)) FAIL("%s: '%s' must be float", c->op, x->name);
    v->shape = x->shape;
    v->dtype = x->dtype;
    return 0;
  }
  case IR_RELU_GRAD: case IR_GELU_GRAD: case IR_GELU_TANH_GRAD: case IR_SILU_GRAD:
    if (same_shape(c, 0, 1) < 0) return -1;
    v->shape = arg(c, 0)->shape;
    v->dtype = arg(c, 0)->dtype;
    return 0;
  default:
    FAIL("%s: no shape rule (internal error)", c->op);
  }
}

/* ---- building checked ops ---- */

ir_value *ir_op(ir_graph *g, diag *d, const char *name, ir_opkind op,
                const int *args, int nargs, const ir_attrs *attr, loc at) {
  ir_value *v = ir_add(g, name, IR_OP, op, args, nargs, attr, at);
  if (!v) { diag_error(d, at, "'%s' is already defined", name); return NULL; }
  if (ir_infer(g, v, d) < 0) return NULL;
  return v;
}

int ir_emit(ir_graph *g, diag *d, const char *prefix, ir_opkind op, const int *args, int nargs, const ir_attrs *attr) {
  ir_attrs a;
  if (attr) a = *attr; else { memset(&a, 0, sizeof a); a.ndims = -1; }
  int typed[3];
  if (nargs > 0 && nargs <= 3) {
    /* a literal takes the type of what it meets, as in a model file: an
       f64 gradient is scaled by an f64 1/n, not an f32 one */
    memcpy(typed, args, sizeof(int) * (size_t)nargs);
    ir_type_literals(g, op, typed, nargs);
    args = typed;
  }
  ir_value *v = ir_op(g, d, ir_fresh_name(g, prefix), op, args, nargs, &a, LOC_NONE);
  return v ? v->id : -1;
}

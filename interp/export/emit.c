/*
** emit.c: one carve op as stablehlo ops (see export.h).
**
** One spelling per op, the one interp/front/hlo.c reads back to the same
** op where one exists: einsum and matmul are dot_general (then a
** transpose when the result's dims are not batch, lhs, rhs), broadcast is
** broadcast_in_dim, embedding a generic gather of rows, reductions the
** compact "applies" form. Composite ops (softmax, layernorm, gelu, cross
** entropy, attention and the gradients autodiff makes) are written as
** their definitions over primitive ops, following the CPU kernels'
** formulas (runtime/kern_math.h) so that the numbers agree to float
** rounding. Elementwise operands are broadcast explicitly (StableHLO has
** no implicit broadcasting), literals become scalar constants.
*/
#include "interp/export/export_int.h"
#include "interp/ir/ops.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- text ---- */

const char *ex_type(ex_ctx *c, ir_dtype t, const ir_shape *s) {
  char buf[32 * IR_MAXRANK + 32];
  size_t k = 0;
  k += (size_t)snprintf(buf + k, sizeof buf - k, "tensor<");
  for (int i = 0; i < s->rank; i++) k += (size_t)snprintf(buf + k, sizeof buf - k, "%" PRId64 "x", s->d[i]);
  snprintf(buf + k, sizeof buf - k, "%s>", ir_dtype_name(t));
  return arena_strndup(c->a, buf, strlen(buf));
}

static int ssa_char(char ch, int first) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || ch == '.' || ch == '$' || ch == '-' ||
         (!first && ch >= '0' && ch <= '9');
}

const char *ex_ssa_name(ex_ctx *c, const char *name) {
  int ok = name && ssa_char(name[0], 1);
  for (const char *p = name; ok && *p; p++) ok = ssa_char(*p, 0);
  /* %argN is the arguments' spelling; a value so named takes a number */
  if (ok && !strncmp(name, "arg", 3) && name[3] && strspn(name + 3, "0123456789") == strlen(name + 3)) ok = 0;
  if (!ok) return NULL;
  return arena_printf(c->a, "%%%s", name);
}

static const char *fresh(ex_ctx *c) { return arena_printf(c->a, "%%%d", c->next++); }

static ex_val mk(const char *n, ir_dtype t, const ir_shape *s) { return (ex_val){n, t, *s}; }

/* a number as a literal of type t: floats keep every digit of the double
** carve holds; non-finite ones as their bits, as MLIR prints them */
void ex_put_lit(strbuf *b, double x, ir_dtype t) {
  if (t == IR_I1) { sb_puts(b, x != 0 ? "true" : "false"); return; }
  if (!ir_dtype_isfloat(t)) { sb_printf(b, "%lld", (long long)x); return; }
  if (isfinite(x)) { sb_printf(b, "%.17e", x); return; }
  int k = x != x ? (signbit(x) ? 3 : 2) : x > 0 ? 0 : 1;
  static const char *const bits[4][4] = {     /* +inf, -inf, nan, -nan; ORDER IR_DTYPE for the float types */
    {"0x7F800000", "0xFF800000", "0x7FC00000", "0xFFC00000"}, {"0x7F80", "0xFF80", "0x7FC0", "0xFFC0"},
    {"0x7C00", "0xFC00", "0x7E00", "0xFE00"}, {"0x7FF0000000000000", "0xFFF0000000000000", "0x7FF8000000000000", "0xFFF8000000000000"}};
  int row = t == IR_F32 ? 0 : t == IR_BF16 ? 1 : t == IR_F16 ? 2 : 3;
  sb_puts(b, bits[row][k]);
}

/* element k of a constant op: integers exactly (beyond 2^53) */
static void put_element(ex_ctx *c, const ir_value *v, int64_t k) {
  if (ir_dtype_isint(v->dtype)) sb_printf(c->out, "%lld", (long long)ir_value_at_int(v, k));
  else ex_put_lit(c->out, ir_value_at(v, k), v->dtype);
}

/* ---- primitive ops ---- */

static ex_val scalar(ex_ctx *c, double x, ir_dtype t) {
  ir_shape s0 = {0};
  for (int i = 0; i < c->nconsts; i++)
    if (c->consts[i].t == t && (c->consts[i].x == x || (x != x && c->consts[i].x != c->consts[i].x)) &&
        signbit(c->consts[i].x) == signbit(x))
      return mk(c->consts[i].n, t, &s0);
  const char *n = arena_printf(c->a, "%%c%d", c->nconsts);
  sb_printf(c->out, "    %s = stablehlo.constant dense<", n);
  ex_put_lit(c->out, x, t);
  sb_printf(c->out, "> : %s\n", ex_type(c, t, &s0));
  if (c->nconsts == c->constcap) {
    int cap = c->constcap ? 2 * c->constcap : 32;
    c->consts = arena_grow(c->a, c->consts, (size_t)c->constcap, (size_t)cap, sizeof *c->consts);
    c->constcap = cap;
  }
  c->consts[c->nconsts++] = (ex_const){x, t, n};
  return mk(n, t, &s0);
}

static void put_ints(strbuf *b, const int *v, int n) {
  sb_putc(b, '[');
  for (int i = 0; i < n; i++) sb_printf(b, "%s%d", i ? ", " : "", v[i]);
  sb_putc(b, ']');
}

/* broadcast_in_dim: operand dim i goes to result dim dims[i] */
static ex_val bcast_dims(ex_ctx *c, ex_val x, const ir_shape *s, const int *dims) {
  const char *n = fresh(c);
  sb_printf(c->out, "    %s = stablehlo.broadcast_in_dim %s, dims = ", n, x.n);
  put_ints(c->out, dims, x.s.rank);
  sb_printf(c->out, " : (%s) -> %s\n", ex_type(c, x.t, &x.s), ex_type(c, x.t, s));
  return mk(n, x.t, s);
}

/* NumPy broadcasting of x to s (right-aligned), nothing when the shapes agree */
static ex_val to_shape(ex_ctx *c, ex_val x, const ir_shape *s) {
  if (ir_shape_eq(&x.s, s)) return x;
  int dims[IR_MAXRANK];
  for (int i = 0; i < x.s.rank; i++) dims[i] = s->rank - x.s.rank + i;
  return bcast_dims(c, x, s, dims);
}

static ex_val splat(ex_ctx *c, double x, ir_dtype t, const ir_shape *s) { return to_shape(c, scalar(c, x, t), s); }

static ex_val unary(ex_ctx *c, const char *op, ex_val x) {
  const char *n = fresh(c);
  sb_printf(c->out, "    %s = stablehlo.%s %s : %s\n", n, op, x.n, ex_type(c, x.t, &x.s));
  return mk(n, x.t, &x.s);
}

/* a binary op over a and b broadcast to their common shape (b may be a scalar) */
/* NumPy's broadcast of shapes a and b (right-aligned, a 1 takes the other's size) */
static ir_shape bshape(const ir_shape *a, const ir_shape *b) {
  const ir_shape *l = a->rank >= b->rank ? a : b, *o = l == a ? b : a;
  ir_shape s = *l;
  for (int i = 0; i < o->rank; i++) {
    int64_t *d = &s.d[s.rank - o->rank + i];
    if (*d == 1) *d = o->d[i];
  }
  return s;
}

static ex_val binary(ex_ctx *c, const char *op, ex_val a, ex_val b) {
  ir_shape sh = bshape(&a.s, &b.s), *s = &sh;
  a = to_shape(c, a, s);
  b = to_shape(c, b, s);
  const char *n = fresh(c);
  sb_printf(c->out, "    %s = stablehlo.%s %s, %s : %s\n", n, op, a.n, b.n, ex_type(c, a.t, s));
  return mk(n, a.t, s);
}

static ex_val bin_k(ex_ctx *c, const char *op, ex_val a, double k) { return binary(c, op, a, scalar(c, k, a.t)); }

static const char *cmp_type(ir_dtype t, int total) {
  if (ir_dtype_isfloat(t)) return total ? "TOTALORDER" : "FLOAT";
  return ir_dtype_isunsigned(t) || t == IR_I1 ? "UNSIGNED" : "SIGNED";
}

static ex_val compare(ex_ctx *c, const char *dir, ex_val a, ex_val b, int total) {
  ir_shape sh = bshape(&a.s, &b.s), *s = &sh;
  a = to_shape(c, a, s);
  b = to_shape(c, b, s);
  const char *n = fresh(c);
  sb_printf(c->out, "    %s = stablehlo.compare  %s, %s, %s,  %s : (%s, %s) -> %s\n", n, dir, a.n, b.n, cmp_type(a.t, total),
            ex_type(c, a.t, s), ex_type(c, a.t, s), ex_type(c, IR_I1, s));
  return mk(n, IR_I1, s);
}

static ex_val select3(ex_ctx *c, ex_val p, ex_val a, ex_val b) {
  ir_shape ab = bshape(&a.s, &b.s), sh = bshape(&p.s, &ab), *s = &sh;
  if (p.s.rank) p = to_shape(c, p, s);      /* a scalar predicate picks whole tensors, as StableHLO allows */
  a = to_shape(c, a, s);
  b = to_shape(c, b, s);
  const char *n = fresh(c);
  sb_printf(c->out, "    %s = stablehlo.select %s, %s, %s : %s, %s\n", n, p.n, a.n, b.n, ex_type(c, IR_I1, &p.s), ex_type(c, a.t, s));
  return mk(n, a.t, s);
}

static ex_val convert(ex_ctx *c, ex_val x, ir_dtype t) {
  if (x.t == t) return x;
  const char *n = fresh(c);
  sb_printf(c->out, "    %s = stablehlo.convert %s : (%s) -> %s\n", n, x.n, ex_type(c, x.t, &x.s), ex_type(c, t, &x.s));
  return mk(n, t, &x.s);
}

static ex_val reshape(ex_ctx *c, ex_val x, const ir_shape *s) {
  if (ir_shape_eq(&x.s, s)) return x;
  const char *n = fresh(c);
  sb_printf(c->out, "    %s = stablehlo.reshape %s : (%s) -> %s\n", n, x.n, ex_type(c, x.t, &x.s), ex_type(c, x.t, s));
  return mk(n, x.t, s);
}

static ex_val transpose(ex_ctx *c, ex_val x, const int *perm) {
  ir_shape s = {.rank = x.s.rank};
  int id = 1;
  for (int i = 0; i < s.rank; i++) { s.d[i] = x.s.d[perm[i]]; id &= perm[i] == i; }
  if (id) return x;
  const char *n = fresh(c);
  sb_printf(c->out, "    %s = stablehlo.transpose %s, dims = ", n, x.n);
  put_ints(c->out, perm, s.rank);
  sb_printf(c->out, " : (%s) -> %s\n", ex_type(c, x.t, &x.s), ex_type(c, x.t, &s));
  return mk(n, x.t, &s);
}

static ex_val iota(ex_ctx *c, const ir_shape *s, int dim, ir_dtype t) {
  const char *n = fresh(c);
  sb_printf(c->out, "    %s = stablehlo.iota dim = %d : %s\n", n, dim, ex_type(c, t, s));
  return mk(n, t, s);
}

static ex_val slice(ex_ctx *c, ex_val x, int dim, int64_t lo, int64_t hi) {
  ir_shape s = x.s;
  s.d[dim] = hi - lo;
  const char *n = fresh(c);
  sb_printf(c->out, "    %s = stablehlo.slice %s [", n, x.n);
  for (int i = 0; i < s.rank; i++)
    sb_printf(c->out, "%s%" PRId64 ":%" PRId64, i ? ", " : "", i == dim ? lo : 0, i == dim ? hi : x.s.d[i]);
  sb_printf(c->out, "] : (%s) -> %s\n", ex_type(c, x.t, &x.s), ex_type(c, x.t, &s));
  return mk(n, x.t, &s);
}

static ex_val concat(ex_ctx *c, const ex_val *xs, int n, int dim) {
  if (n == 1) return xs[0];
  ir_shape s = xs[0].s;
  s.d[dim] = 0;
  for (int k = 0; k < n; k++) s.d[dim] += xs[k].s.d[dim];
  const char *r = fresh(c);
  sb_printf(c->out, "    %s = stablehlo.concatenate ", r);
  for (int k = 0; k < n; k++) sb_printf(c->out, "%s, ", xs[k].n);
  sb_printf(c->out, "dim = %d : (", dim);
  for (int k = 0; k < n; k++) sb_printf(c->out, "%s%s", k ? ", " : "", ex_type(c, xs[k].t, &xs[k].s));
  sb_printf(c->out, ") -> %s\n", ex_type(c, xs[0].t, &s));
  return mk(r, xs[0].t, &s);
}

typedef enum { R_ADD, R_MAX, R_MIN } redkind;

/* the identity of a reduction of type t, as literal text */
static void put_identity(strbuf *b, redkind k, ir_dtype t) {
  if (k == R_ADD) { ex_put_lit(b, 0, t); return; }
  int mx = k == R_MAX;
  if (t == IR_I1) { sb_puts(b, mx ? "false" : "true"); return; }
  if (ir_dtype_isfloat(t)) { ex_put_lit(b, mx ? -INFINITY : INFINITY, t); return; }
  switch (t) {
  case IR_I32: sb_puts(b, mx ? "-2147483648" : "2147483647"); break;
  case IR_I64: sb_puts(b, mx ? "-9223372036854775808" : "9223372036854775807"); break;
  case IR_I8: sb_puts(b, mx ? "-128" : "127"); break;
  case IR_I16: sb_puts(b, mx ? "-32768" : "32767"); break;
  case IR_UI16: sb_puts(b, mx ? "0" : "65535"); break;
  case IR_UI32: sb_puts(b, mx ? "0" : "4294967295"); break;
  default: sb_puts(b, mx ? "0" : "255"); break;
  }
}

/* reduce x over the dims marked in mark[] (compact form, identity init) */
static ex_val reduce(ex_ctx *c, redkind k, ex_val x, const int *mark) {
  ir_shape s = {0};
  int dims[IR_MAXRANK], nd = 0;
  for (int i = 0; i < x.s.rank; i++) {
    if (mark[i]) dims[nd++] = i;
    else s.d[s.rank++] = x.s.d[i];
  }
  if (!nd) return x;
  ir_shape s0 = {0};
  const char *init = arena_printf(c->a, "%%%d", c->next++);
  sb_printf(c->out, "    %s = stablehlo.constant dense<", init);
  put_identity(c->out, k, x.t);
  sb_printf(c->out, "> : %s\n", ex_type(c, x.t, &s0));
  static const char *const fn[] = {"add", "maximum", "minimum"};
  const char *f = fn[k];
  if (x.t == IR_I1 && k != R_ADD) f = k == R_MAX ? "or" : "and";
  const char *n = fresh(c);
  sb_printf(c->out, "    %s = stablehlo.reduce(%s init: %s) applies stablehlo.%s across dimensions = ", n, x.n, init, f);
  put_ints(c->out, dims, nd);
  sb_printf(c->out, " : (%s, %s) -> %s\n", ex_type(c, x.t, &x.s), ex_type(c, x.t, &s0), ex_type(c, x.t, &s));
  return mk(n, x.t, &s);
}

/* reduce over one dim, then broadcast back to x's shape */
static ex_val reduce_back(ex_ctx *c, redkind k, ex_val x, int dim) {
  int mark[IR_MAXRANK] = {0}, dims[IR_MAXRANK], nd = 0;
  mark[dim] = 1;
  ex_val r = reduce(c, k, x, mark);
  for (int i = 0; i < x.s.rank; i++) if (i != dim) dims[nd++] = i;
  return bcast_dims(c, r, &x.s, dims);
}

/* dot_general with batch, lhs-free, rhs-free result dims */
static ex_val dot(ex_ctx *c, ex_val a, ex_val b, const int *lb, const int *rb, int nb, const int *lc, const int *rc, int nc) {
  ir_shape s = {0};
  int used[2][IR_MAXRANK] = {{0}};
  for (int i = 0; i < nb; i++) { s.d[s.rank++] = a.s.d[lb[i]]; used[0][lb[i]] = used[1][rb[i]] = 1; }
  for (int i = 0; i < nc; i++) used[0][lc[i]] = used[1][rc[i]] = 1;
  for (int i = 0; i < a.s.rank; i++) if (!used[0][i]) s.d[s.rank++] = a.s.d[i];
  for (int i = 0; i < b.s.rank; i++) if (!used[1][i]) s.d[s.rank++] = b.s.d[i];
  const char *n = fresh(c);
  sb_printf(c->out, "    %s = stablehlo.dot_general %s, %s, ", n, a.n, b.n);
  if (nb) {
    sb_puts(c->out, "batching_dims = ");
    put_ints(c->out, lb, nb);
    sb_puts(c->out, " x ");
    put_ints(c->out, rb, nb);
    sb_puts(c->out, ", ");
  }
  sb_puts(c->out, "contracting_dims = ");
  put_ints(c->out, lc, nc);
  sb_puts(c->out, " x ");
  put_ints(c->out, rc, nc);
  sb_printf(c->out, " : (%s, %s) -> %s\n", ex_type(c, a.t, &a.s), ex_type(c, b.t, &b.s), ex_type(c, a.t, &s));
  return mk(n, a.t, &s);
}

/* ---- operands ---- */

/* IR value id as an operand of type t (literals are written in it) */
static ex_val operand(ex_ctx *c, int id, ir_dtype t) {
  const ir_value *v = c->g->vals[id];
  if (v->kind == IR_CONST) {
    ex_val r = scalar(c, v->attr.scalar, t);
    return r;
  }
  return c->val[id];
}

/* the type elementwise operands share: the first that is not a literal */
static ir_dtype common_type(ex_ctx *c, const ir_value *v) {
  for (int k = 0; k < v->nargs; k++) {
    const ir_value *a = c->g->vals[v->args[k]];
    if (a->kind != IR_CONST && !(v->op == IR_SELECT && k == 0)) return a->dtype;
  }
  return v->op == IR_COMPARE ? c->g->vals[v->args[0]]->dtype : v->dtype;
}

static ex_val arg(ex_ctx *c, const ir_value *v, int k) { return operand(c, v->args[k], common_type(c, v)); }

/* ---- composite ops ---- */

#define SQRT1_2 0.70710678118654752
#define INV_SQRT2PI 0.39894228040143268
#define GELU_C 0.79788456080286536
#define GELU_A 0.044715

static ex_val erfc_pos(ex_ctx *c, ex_val z);

/* the standard normal CDF as the CPU kernel computes it: in f64 from
** erfc to 1e-15 (erfc_pos), else by the f32 kernel's erfc fit */
static ex_val phi(ex_ctx *c, ex_val x) {
  static const double k[] = {0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806,
                             0.09678418, 0.37409196, 1.00002368, -1.26551223};
  ex_val a = bin_k(c, "multiply", unary(c, "abs", x), SQRT1_2), e;
  if (x.t == IR_F64) e = bin_k(c, "multiply", erfc_pos(c, a), 0.5);
  else {
    ex_val t = binary(c, "divide", scalar(c, 1, x.t), bin_k(c, "add", bin_k(c, "multiply", a, 0.5), 1));
    ex_val p = splat(c, k[0], x.t, &x.s);
    for (int i = 1; i < 10; i++) p = bin_k(c, "add", binary(c, "multiply", p, t), k[i]);
    ex_val y = binary(c, "subtract", p, binary(c, "multiply", a, a));
    e = binary(c, "multiply", bin_k(c, "multiply", t, 0.5), unary(c, "exponential", y));
  }
  ex_val neg = compare(c, "LT", x, scalar(c, 0, x.t), 0);
  ex_val one_e = binary(c, "subtract", scalar(c, 1, x.t), e);
  return select3(c, neg, e, one_e);
}

/* erfc(z) for z >= 0 to about 1e-15 relative: t exp(-z^2 + P(2t - 1))
** with t = 2 / (2 + z) and P, highest degree first, a Chebyshev fit of
** log(erfc(z) / t) + z^2 over all of t in (0, 1] (6e-18 off: fitted for
** carve by fit_erfc.py beside this file). */
static const double ERFC_FIT[28] = {
  -2.0464670329192375e-09, 4.089222480896167e-09, 1.2225710551260416e-08, -3.9356533447809914e-08,
  -1.711069646695314e-09, 1.5387606669285219e-07, -2.4404662375581676e-07, -1.6939237579995655e-07,
  1.2437191416721655e-06, -1.2713430670236549e-06, -2.9430926821341833e-06, 8.5619149049224807e-06,
  1.3509102932957954e-07, -3.0187528842243815e-05, 3.1746165643556791e-05, 7.1400891890992349e-05,
  -0.00017430319942974635, -9.3735003019989853e-05, 0.00067367883825060612, -0.00014624686754045134,
  -0.002345812504982584, 0.0017589335581654341, 0.008824938557327763, -0.0098726893664067266,
  -0.046895610231182674, 0.047343306841904728, 0.67264322397765675, -0.67179408405669228,
};

static ex_val erfc_pos(ex_ctx *c, ex_val z) {
  ex_val t = binary(c, "divide", scalar(c, 2, z.t), bin_k(c, "add", z, 2));
  ex_val u = bin_k(c, "subtract", bin_k(c, "multiply", t, 2), 1);
  ex_val p = splat(c, ERFC_FIT[0], z.t, &z.s);
  for (int i = 1; i < 28; i++) p = bin_k(c, "add", binary(c, "multiply", p, u), ERFC_FIT[i]);
  ex_val y = binary(c, "subtract", p, binary(c, "multiply", z, z));
  return binary(c, "multiply", t, unary(c, "exponential", y));
}

/* erf(x): its Taylor series to x^25 where |x| < 0.5 (where 1 - erfc would
** cancel), else sign(x) (1 - erfc(|x|)); within 4e-16 of erf in f64 */
/* erfc(x) = erfc_pos(x) for x >= 0, 2 - erfc_pos(-x) below */
static ex_val erfc_any(ex_ctx *c, ex_val x) {
  ex_val p = erfc_pos(c, unary(c, "abs", x));
  ex_val n = binary(c, "subtract", scalar(c, 2, x.t), p);
  return select3(c, compare(c, "LT", x, scalar(c, 0, x.t), 0), n, p);
}

static ex_val erf_exact(ex_ctx *c, ex_val x) {
  ex_val x2 = binary(c, "multiply", x, x), s = splat(c, 0, x.t, &x.s);
  double fact = 1;
  for (int n = 1; n <= 12; n++) fact *= n;
  for (int n = 12; n >= 0; n--) {      /* (-1)^n / (n! (2n + 1)), Horner in x^2 */
    s = bin_k(c, "add", binary(c, "multiply", s, x2), (n % 2 ? -1 : 1) / (fact * (2 * n + 1)));
    fact /= n ? n : 1;
  }
  ex_val small = bin_k(c, "multiply", binary(c, "multiply", x, s), 1.1283791670955126);   /* 2 / sqrt(pi) */
  ex_val a = unary(c, "abs", x), r = binary(c, "subtract", scalar(c, 1, x.t), erfc_pos(c, a));
  ex_val big = select3(c, compare(c, "LT", x, scalar(c, 0, x.t), 0), unary(c, "negate", r), r);
  return select3(c, compare(c, "LT", a, scalar(c, 0.5, x.t), 0), small, big);
}

/* sigmoid(2 c (x + a x^3)), gelu_tanh's gate */
static ex_val gelu_tanh_gate(ex_ctx *c, ex_val x) {
  ex_val x3 = binary(c, "multiply", binary(c, "multiply", x, x), x);
  ex_val u = binary(c, "add", x, bin_k(c, "multiply", x3, GELU_A));
  return unary(c, "logistic", bin_k(c, "multiply", u, 2 * GELU_C));
}

/* (x - mean) * rsqrt(var + eps) over dim */
/* x less its mean along dim (x itself for a root mean square), and
** 1 / sqrt(the mean square of that + eps) */
static ex_val centred(ex_ctx *c, ex_val x, int dim, int rms, double eps, ex_val *rs) {
  double n = (double)x.s.d[dim];
  ex_val xc = rms ? x : binary(c, "subtract", x, bin_k(c, "divide", reduce_back(c, R_ADD, x, dim), n));
  ex_val var = bin_k(c, "divide", reduce_back(c, R_ADD, binary(c, "multiply", xc, xc), dim), n);
  *rs = unary(c, "rsqrt", bin_k(c, "add", var, eps));
  return xc;
}

static ex_val normalize(ex_ctx *c, ex_val x, int dim, int rms, double eps) {
  ex_val rs, xc = centred(c, x, dim, rms, eps, &rs);
  return binary(c, "multiply", xc, rs);
}

/* a [n] vector along dim of shape s */
static ex_val along(ex_ctx *c, ex_val g, const ir_shape *s, int dim) {
  if (g.s.rank != 1) return to_shape(c, g, s);
  return bcast_dims(c, g, s, &dim);
}

static ex_val softmax(ex_ctx *c, ex_val x, int dim) {
  ex_val e = unary(c, "exponential", binary(c, "subtract", x, reduce_back(c, R_MAX, x, dim)));
  return binary(c, "divide", e, reduce_back(c, R_ADD, e, dim));
}

static ex_val log_softmax(ex_ctx *c, ex_val x, int dim) {
  ex_val z = binary(c, "subtract", x, reduce_back(c, R_MAX, x, dim));
  ex_val l = unary(c, "log", reduce_back(c, R_ADD, unary(c, "exponential", z), dim));
  return binary(c, "subtract", z, l);
}

/* true where the last index exceeds the second to last (the masked entries) */
static ex_val causal(ex_ctx *c, const ir_shape *s) {
  ex_val row = iota(c, s, s->rank - 2, IR_I32), col = iota(c, s, s->rank - 1, IR_I32);
  return compare(c, "GT", col, row, 0);
}

/* labels [...] against the class dim of shape s: true at each label */
static ex_val labels_at(ex_ctx *c, ex_val labels, const ir_shape *s) {
  int dims[IR_MAXRANK];
  for (int i = 0; i < labels.s.rank; i++) dims[i] = i;
  ir_shape si = *s;
  ex_val lb = bcast_dims(c, labels, &si, dims);
  ex_val io = iota(c, &si, s->rank - 1, IR_I32);
  return compare(c, "EQ", io, lb, 0);
}

/* scores = scale q k^T (masked), p = softmax over the keys: [b, h, s, s] */
static ex_val attn_probs(ex_ctx *c, ex_val q, ex_val k, double scale, int causal_) {
  static const int b2[] = {0, 1}, c3[] = {3};
  ex_val s = bin_k(c, "multiply", dot(c, q, k, b2, b2, 2, c3, c3, 1), scale);
  if (causal_) s = select3(c, causal(c, &s.s), splat(c, -INFINITY, s.t, &s.s), s);
  return softmax(c, s, 3);
}

/* ---- the ops ---- */

static int unsupported(ex_ctx *c, const ir_value *v, const char *why) {
  c->failed = 1;
  return diag_error(c->d, v->at, "export: %s '%s' %s", ir_opinfo_of(v->op)->name, v->name, why);
}

/* matmul and einsum: dot_general over the labels, then a transpose to the result's order */
static int contraction(ex_ctx *c, const ir_value *v, ex_val *out) {
  char l[3][IR_MAXRANK + 1];
  ir_contraction_labels(c->g, v, l);
  ex_val x[2] = {arg(c, v, 0), arg(c, v, 1)};
  int n[3] = {(int)strlen(l[0]), (int)strlen(l[1]), (int)strlen(l[2])};
  int lb[IR_MAXRANK], rb[IR_MAXRANK], lc[IR_MAXRANK], rc[IR_MAXRANK], nb = 0, nc = 0;
  char order[IR_MAXRANK + 1] = {0};
  int no = 0;
  /* a label only one operand has and the result lacks is summed away first */
  for (int k = 0; k < 2; k++) {
    int mark[IR_MAXRANK] = {0}, any = 0;
    char keep[IR_MAXRANK + 1] = {0};
    int nk = 0;
    for (int i = 0; i < n[k]; i++) {
      if (!strchr(l[1 - k], l[k][i]) && !strchr(l[2], l[k][i])) { mark[i] = 1; any = 1; }
      else keep[nk++] = l[k][i];
    }
    if (any) { x[k] = reduce(c, R_ADD, x[k], mark); memcpy(l[k], keep, sizeof keep); n[k] = nk; }
  }
  /* batch labels in the result's order; size-1 batch dims broadcast to the other side's */
  for (int i = 0; i < n[2]; i++) {
    const char *p = strchr(l[0], l[2][i]), *q = strchr(l[1], l[2][i]);
    if (!p || !q) continue;
    int ia = (int)(p - l[0]), ib = (int)(q - l[1]);
    for (int k = 0; k < 2; k++) {
      int me = k ? ib : ia, other = k ? ia : ib;
      if (x[k].s.d[me] == 1 && x[1 - k].s.d[other] != 1) {
        ir_shape s = x[k].s;
        s.d[me] = x[1 - k].s.d[other];
        int dims[IR_MAXRANK];
        for (int j = 0; j < s.rank; j++) dims[j] = j;
        x[k] = bcast_dims(c, x[k], &s, dims);
      }
    }
    lb[nb] = ia; rb[nb++] = ib;
    order[no++] = l[2][i];
  }
  for (int i = 0; i < n[0]; i++) {
    const char *q = strchr(l[1], l[0][i]);
    if (q && !strchr(l[2], l[0][i])) { lc[nc] = i; rc[nc++] = (int)(q - l[1]); }
  }
  for (int i = 0; i < n[0]; i++) if (!strchr(l[1], l[0][i])) order[no++] = l[0][i];
  for (int i = 0; i < n[1]; i++) if (!strchr(l[0], l[1][i])) order[no++] = l[1][i];
  int perm[IR_MAXRANK], ident = 1;
  for (int i = 0; i < n[2]; i++) {
    const char *p = strchr(order, l[2][i]);
    if (!p) return unsupported(c, v, "has a result label no operand has");
    perm[i] = (int)(p - order);
    ident &= perm[i] == i;
  }
  ex_val r = dot(c, x[0], x[1], lb, rb, nb, lc, rc, nc);
  *out = ident ? r : transpose(c, r, perm);
  return 0;
}

static int reduction(ex_ctx *c, const ir_value *v, ex_val *out) {
  ex_val x = arg(c, v, 0);
  int mark[IR_MAXRANK] = {0};
  for (int i = 0; i < v->attr.ndims; i++) mark[v->attr.dims[i]] = 1;
  redkind k = v->op == IR_MAX ? R_MAX : v->op == IR_MIN ? R_MIN : R_ADD;
  ex_val r = reduce(c, k, x, mark);
  if (v->op == IR_MEAN) {
    double n = 1;
    for (int i = 0; i < x.s.rank; i++) if (mark[i]) n *= (double)x.s.d[i];
    r = bin_k(c, "divide", r, n);
  }
  *out = v->attr.keepdims ? reshape(c, r, &v->shape) : r;
  return 0;
}

/* max_grad: dy shared among the ties of each max */
static ex_val max_grad(ex_ctx *c, const ir_value *v) {
  ex_val x = arg(c, v, 0), dy = arg(c, v, 1);
  int mark[IR_MAXRANK] = {0}, dims[IR_MAXRANK], nd = 0;
  for (int i = 0; i < v->attr.ndims; i++) mark[v->attr.dims[i]] = 1;
  for (int i = 0; i < x.s.rank; i++) if (!mark[i]) dims[nd++] = i;
  ex_val mx = bcast_dims(c, reduce(c, R_MAX, x, mark), &x.s, dims);
  ex_val eq = compare(c, "EQ", x, mx, 0);
  ex_val cnt = reduce(c, R_ADD, convert(c, eq, x.t), mark);
  ir_shape rs = cnt.s;
  dy = reshape(c, dy, &rs);
  ex_val zero = scalar(c, 0, x.t);
  ex_val share = select3(c, compare(c, "GT", cnt, zero, 0), binary(c, "divide", dy, cnt), zero);
  return select3(c, eq, bcast_dims(c, share, &x.s, dims), zero);
}

static ex_val layernorm_grad(ex_ctx *c, const ir_value *v) {
  ex_val x = arg(c, v, 0), gam = arg(c, v, 1), dy = arg(c, v, 2);
  int dim = v->attr.dim;
  double n = (double)x.s.d[dim];
  ex_val rs, xh = binary(c, "multiply", centred(c, x, dim, v->attr.rms, v->attr.eps, &rs), rs);
  ex_val g = binary(c, "multiply", dy, along(c, gam, &x.s, dim));
  ex_val mgx = bin_k(c, "divide", reduce_back(c, R_ADD, binary(c, "multiply", g, xh), dim), n);
  if (!v->attr.rms) g = binary(c, "subtract", g, bin_k(c, "divide", reduce_back(c, R_ADD, g, dim), n));
  return binary(c, "multiply", rs, binary(c, "subtract", g, binary(c, "multiply", xh, mgx)));
}

static ex_val cross_entropy(ex_ctx *c, const ir_value *v, int grad) {
  ex_val lg = arg(c, v, 0), lb = operand(c, v->args[1], IR_I32);
  if (!grad && lg.t != v->dtype) lg = convert(c, lg, v->dtype);     /* bf16 logits: the loss in f32 */
  int last = lg.s.rank - 1;
  double npos = (double)(ir_nelem(&lg.s) / (lg.s.d[last] ? lg.s.d[last] : 1));
  ex_val hot = labels_at(c, lb, &lg.s);
  ex_val zero = scalar(c, 0, lg.t);
  if (!grad) {
    ex_val pick = select3(c, hot, log_softmax(c, lg, last), zero);
    int mark[IR_MAXRANK];
    for (int i = 0; i <= last; i++) mark[i] = 1;
    return bin_k(c, "multiply", reduce(c, R_ADD, pick, mark), -1.0 / npos);
  }
  ex_val g = bin_k(c, "multiply", operand(c, v->args[2], lg.t), 1.0 / npos);
  ex_val gb = to_shape(c, g, &lg.s);
  ex_val sm = binary(c, "multiply", softmax(c, lg, last), gb);
  return binary(c, "subtract", sm, select3(c, hot, gb, zero));
}

static ex_val attention_grad(ex_ctx *c, const ir_value *v) {
  static const int b2[] = {0, 1}, c2[] = {2}, c3[] = {3};
  ex_val q = arg(c, v, 0), k = arg(c, v, 1), vv = arg(c, v, 2), dy = arg(c, v, 3);
  double scale = v->attr.scale;
  ex_val p = attn_probs(c, q, k, scale, v->attr.causal);
  ex_val dv = dot(c, p, dy, b2, b2, 2, c2, c2, 1);                 /* [b, h, t, dk] */
  ex_val dp = dot(c, dy, vv, b2, b2, 2, c3, c3, 1);                /* [b, h, s, t] */
  ex_val sum = reduce_back(c, R_ADD, binary(c, "multiply", dp, p), 3);
  ex_val ds = bin_k(c, "multiply", binary(c, "multiply", p, binary(c, "subtract", dp, sum)), scale);
  ex_val dq = dot(c, ds, k, b2, b2, 2, c3, c2, 1);                 /* [b, h, s, dk] */
  ex_val dk = dot(c, ds, q, b2, b2, 2, c2, c2, 1);                 /* [b, h, t, dk] */
  ex_val parts[3] = {dq, dk, dv};
  return concat(c, parts, 3, 3);
}

/* sum_to: the broadcast dims of x summed away, to the shape attr.to */
static ex_val sum_to(ex_ctx *c, const ir_value *v) {
  ex_val x = arg(c, v, 0);
  const ir_shape *to = &v->attr.to;
  int mark[IR_MAXRANK] = {0}, off = x.s.rank - to->rank;
  for (int i = 0; i < x.s.rank; i++) mark[i] = i < off || (to->d[i - off] == 1 && x.s.d[i] != 1);
  ex_val r = reduce(c, R_ADD, x, mark);
  return reshape(c, r, to);
}

/* pad: zeros on both sides of x along dim */
static ex_val pad(ex_ctx *c, const ir_value *v) {
  ex_val x = arg(c, v, 0);
  int dim = v->attr.dim;
  ex_val parts[3];
  int n = 0;
  if (v->attr.start > 0) {
    ir_shape s = x.s;
    s.d[dim] = v->attr.start;
    parts[n++] = splat(c, 0, x.t, &s);
  }
  parts[n++] = x;
  int64_t after = v->attr.end - v->attr.start - x.s.d[dim];
  if (after > 0) {
    ir_shape s = x.s;
    s.d[dim] = after;
    parts[n++] = splat(c, 0, x.t, &s);
  }
  return concat(c, parts, n, dim);
}

static ex_val gather_rows(ex_ctx *c, ex_val t, ex_val ids, const ir_shape *s) {
  int nb = ids.s.rank;
  const char *n = fresh(c);
  sb_printf(c->out, "    %s = \"stablehlo.gather\"(%s, %s) <{dimension_numbers = #stablehlo.gather<offset_dims = [%d], "
            "collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = %d>, slice_sizes = array<i64: 1, %" PRId64 ">}> "
            ": (%s, %s) -> %s\n", n, t.n, ids.n, nb, nb, t.s.d[1], ex_type(c, t.t, &t.s), ex_type(c, ids.t, &ids.s), ex_type(c, t.t, s));
  return mk(n, t.t, s);
}

/* scatter-add of the rows of dy into table t at ids [..., 1] */
static ex_val scatter_rows(ex_ctx *c, ex_val t, ex_val ids, ex_val dy) {
  int r = ids.s.rank;
  ir_shape s0 = {0};
  const char *n = fresh(c);
  const char *a = arena_printf(c->a, "%%%d", c->next++), *b = arena_printf(c->a, "%%%d", c->next++);
  const char *sum = arena_printf(c->a, "%%%d", c->next++), *st = ex_type(c, t.t, &s0);
  sb_printf(c->out, "    %s = \"stablehlo.scatter\"(%s, %s, %s) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [%d], "
            "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = %d>}> ({\n"
            "    ^bb0(%s: %s, %s: %s):\n      %s = stablehlo.add %s, %s : %s\n      stablehlo.return %s : %s\n"
            "    }) : (%s, %s, %s) -> %s\n",
            n, t.n, ids.n, dy.n, r - 1, r - 1, a, st, b, st, sum, a, b, st, sum, st,
            ex_type(c, t.t, &t.s), ex_type(c, ids.t, &ids.s), ex_type(c, dy.t, &dy.s), ex_type(c, t.t, &t.s));
  return mk(n, t.t, &t.s);
}

/* ---- gather and scatter ---- */

static void put_list64(strbuf *b, const char *key, const int64_t *v, int n, int *first) {
  if (!n) return;                    /* StableHLO's printer leaves empty lists out */
  sb_printf(b, "%s%s = [", *first ? "" : ", ", key);
  for (int i = 0; i < n; i++) sb_printf(b, "%s%lld", i ? ", " : "", (long long)v[i]);
  sb_putc(b, ']');
  *first = 0;
}

/* x with `by` zeros before and after along each of its dims where by > 0 */
static ex_val pad_zeros(ex_ctx *c, ex_val x, const int64_t *by) {
  ir_shape s = x.s;
  int any = 0;
  for (int d = 0; d < s.rank; d++) { s.d[d] += 2 * by[d]; any |= by[d] > 0; }
  if (!any) return x;
  const char *n = fresh(c);
  sb_printf(c->out, "    %s = stablehlo.pad %s, %s, low = [", n, x.n, scalar(c, 0, x.t).n);
  for (int d = 0; d < s.rank; d++) sb_printf(c->out, "%s%lld", d ? ", " : "", (long long)by[d]);
  sb_puts(c->out, "], high = [");
  for (int d = 0; d < s.rank; d++) sb_printf(c->out, "%s%lld", d ? ", " : "", (long long)by[d]);
  sb_puts(c->out, "], interior = [");
  for (int d = 0; d < s.rank; d++) sb_printf(c->out, "%s0", d ? ", " : "");
  sb_printf(c->out, "] : (%s, %s) -> %s\n", ex_type(c, x.t, &x.s), ex_type(c, x.t, &(ir_shape){0}), ex_type(c, x.t, &s));
  return mk(n, x.t, &s);
}

/* the indices with component k changed by add[k] (then, with clamp, kept in
** [0, hi[k]]): a tensor of the per-component numbers along the vector dim */
static ex_val shift_indices(ex_ctx *c, ex_val idx, const ir_index *ix, const int64_t *add, const int64_t *hi, int clamp) {
  int ncomp = ix->n[IX_START_MAP];
  ir_shape cs = {.rank = 1, .d = {ncomp}};
  ex_val per[2];
  for (int w = 0; w < 1 + clamp; w++) {
    const char *n = fresh(c);
    sb_printf(c->out, "    %s = stablehlo.constant dense<[", n);
    for (int k = 0; k < ncomp; k++) sb_printf(c->out, "%s%lld", k ? ", " : "", (long long)(w ? hi[k] : add[k]));
    sb_printf(c->out, "]> : %s\n", ex_type(c, idx.t, &cs));
    ex_val v = mk(n, idx.t, &cs);
    if (ix->ivd < idx.s.rank) { int dims[1] = {ix->ivd}; v = bcast_dims(c, v, &idx.s, dims); }
    else v = reshape(c, v, &(ir_shape){0});
    per[w] = to_shape(c, v, &idx.s);
  }
  ex_val r = binary(c, "add", idx, per[0]);
  if (!clamp) return r;
  ex_val lo = splat(c, 0, idx.t, &idx.s);
  const char *n = fresh(c);
  sb_printf(c->out, "    %s = stablehlo.clamp %s, %s, %s : %s\n", n, lo.n, r.n, per[1].n, ex_type(c, idx.t, &idx.s));
  return mk(n, idx.t, &idx.s);
}

/* gather and scatter with StableHLO's dimension numbers; the bounds that
** only carve's gradients use become StableHLO's: a gather that reads zero
** outside x reads a copy of x padded by its windows (its starts shifted
** by them), a scatter that clamps its starts clamps its indices first */
static ex_val index_op(ex_ctx *c, const ir_value *v) {
  const ir_index *ix = v->attr.index;
  int scatter = v->op == IR_SCATTER;
  ex_val x = operand(c, v->args[0], v->dtype), idx = operand(c, v->args[1], c->g->vals[v->args[1]]->dtype);
  int64_t by[IR_MAXRANK] = {0}, add[IR_MAXRANK] = {0}, hi[IR_MAXRANK] = {0};
  if (ix->other_bounds) {
    for (int k = 0; k < ix->n[IX_START_MAP]; k++) {
      int d = (int)ix->v[IX_START_MAP][k];
      by[d] = add[k] = scatter ? 0 : ix->v[IX_SLICE][d];
      hi[k] = x.s.d[d] - ix->v[IX_SLICE][d];
    }
    if (!scatter) x = pad_zeros(c, x, by);
    idx = shift_indices(c, idx, ix, add, hi, scatter);
  }
  const char *n = fresh(c);
  int first = 1;
  if (!scatter) {
    sb_printf(c->out, "    %s = \"stablehlo.gather\"(%s, %s) <{dimension_numbers = #stablehlo.gather<", n, x.n, idx.n);
    put_list64(c->out, "offset_dims", ix->v[IX_OFFSET], ix->n[IX_OFFSET], &first);
    put_list64(c->out, "collapsed_slice_dims", ix->v[IX_COLLAPSED], ix->n[IX_COLLAPSED], &first);
    put_list64(c->out, "operand_batching_dims", ix->v[IX_OPERAND_BATCH], ix->n[IX_OPERAND_BATCH], &first);
    put_list64(c->out, "start_indices_batching_dims", ix->v[IX_INDEX_BATCH], ix->n[IX_INDEX_BATCH], &first);
    put_list64(c->out, "start_index_map", ix->v[IX_START_MAP], ix->n[IX_START_MAP], &first);
    sb_printf(c->out, "%sindex_vector_dim = %d>, slice_sizes = array<i64", first ? "" : ", ", ix->ivd);
    for (int d = 0; d < ix->n[IX_SLICE]; d++) sb_printf(c->out, "%s%lld", d ? ", " : ": ", (long long)ix->v[IX_SLICE][d]);
    sb_printf(c->out, ">}> : (%s, %s) -> %s\n", ex_type(c, x.t, &x.s), ex_type(c, idx.t, &idx.s), ex_type(c, v->dtype, &v->shape));
    return mk(n, v->dtype, &v->shape);
  }
  ex_val u = operand(c, v->args[2], v->dtype);
  sb_printf(c->out, "    %s = \"stablehlo.scatter\"(%s, %s, %s) <{scatter_dimension_numbers = #stablehlo.scatter<", n, x.n, idx.n, u.n);
  put_list64(c->out, "update_window_dims", ix->v[IX_OFFSET], ix->n[IX_OFFSET], &first);
  put_list64(c->out, "inserted_window_dims", ix->v[IX_COLLAPSED], ix->n[IX_COLLAPSED], &first);
  put_list64(c->out, "input_batching_dims", ix->v[IX_OPERAND_BATCH], ix->n[IX_OPERAND_BATCH], &first);
  put_list64(c->out, "scatter_indices_batching_dims", ix->v[IX_INDEX_BATCH], ix->n[IX_INDEX_BATCH], &first);
  put_list64(c->out, "scatter_dims_to_operand_dims", ix->v[IX_START_MAP], ix->n[IX_START_MAP], &first);
  const char *a = arena_printf(c->a, "%%%d", c->next++), *b = arena_printf(c->a, "%%%d", c->next++);
  const char *r = arena_printf(c->a, "%%%d", c->next++), *st = ex_type(c, v->dtype, &(ir_shape){0});
  static const struct { int op; const char *name; } comb[] = {
    {IR_ADD, "add"}, {IR_MUL, "multiply"}, {IR_MAXIMUM, "maximum"}, {IR_MINIMUM, "minimum"}};
  const char *op = NULL;
  for (size_t k = 0; k < sizeof comb / sizeof comb[0]; k++) if (comb[k].op == ix->combine) op = comb[k].name;
  sb_printf(c->out, "%sindex_vector_dim = %d>}> ({\n    ^bb0(%s: %s, %s: %s):\n", first ? "" : ", ", ix->ivd, a, st, b, st);
  if (op) sb_printf(c->out, "      %s = stablehlo.%s %s, %s : %s\n      stablehlo.return %s : %s\n", r, op, a, b, st, r, st);
  else sb_printf(c->out, "      stablehlo.return %s : %s\n", b, st);
  sb_printf(c->out, "    }) : (%s, %s, %s) -> %s\n", ex_type(c, x.t, &x.s), ex_type(c, idx.t, &idx.s), ex_type(c, u.t, &u.s),
            ex_type(c, v->dtype, &v->shape));
  return mk(n, v->dtype, &v->shape);
}

/* embedding_grad(ids, dy) added into t: one scatter; ids [...] come as
** [..., 1] (the reshape that made them, when the importer wrote one) */
static ex_val scatter_into(ex_ctx *c, ex_val t, const ir_value *eg) {
  const ir_value *iv = c->g->vals[eg->args[0]];
  ex_val ids;
  if (c->skip[iv->id]) ids = c->val[iv->args[0]];
  else {
    ir_shape s = iv->shape;
    s.d[s.rank++] = 1;
    ids = reshape(c, c->val[iv->id], &s);
  }
  ex_val dy = c->val[eg->args[1]];
  return scatter_rows(c, t, ids, dy);
}

/* The users an op writes on behalf of: an embedding_grad read only by an
** add becomes a scatter into the add's other operand, and a reshape that
** only adds the trailing 1 the scatter's ids need is not written. */
void ex_plan_fusions(ex_ctx *c) {
  const ir_graph *g = c->g;
  for (int i = 0; i < g->nvals; i++) {
    const ir_value *v = g->vals[i];
    if (v->op != IR_EMBEDDING_GRAD) continue;
    const ir_value *u = v->nusers == 1 && !v->is_output ? g->vals[v->users[0]] : NULL;
    const ir_value *t = u && u->op == IR_ADD && u->nargs == 2 && u->args[0] != u->args[1] ? g->vals[u->args[u->args[0] == v->id]] : NULL;
    if (t && t->kind != IR_CONST && ir_shape_eq(&t->shape, &u->shape) && t->dtype == u->dtype) c->skip[i] = 1;
    const ir_value *iv = g->vals[v->args[0]];
    if (iv->op == IR_RESHAPE && iv->nusers == 1 && !iv->is_output && iv->shape.rank < IR_MAXRANK) {
      const ir_value *src = g->vals[iv->args[0]];
      ir_shape want = iv->shape;
      want.d[want.rank++] = 1;
      if (src->kind != IR_CONST && src->dtype == IR_I32 && ir_shape_eq(&src->shape, &want)) c->skip[iv->id] = 1;
    }
  }
}

static const struct { ir_opkind op; const char *name; } simple[] = {
  {IR_NEG, "negate"}, {IR_EXP, "exponential"}, {IR_LOG, "log"}, {IR_SQRT, "sqrt"}, {IR_RSQRT, "rsqrt"}, {IR_TANH, "tanh"},
  {IR_SIGMOID, "logistic"}, {IR_ABS, "abs"}, {IR_SIGN, "sign"}, {IR_NOT, "not"}, {IR_LOG1P, "log_plus_one"},
  {IR_EXPM1, "exponential_minus_one"}, {IR_SIN, "sine"}, {IR_COS, "cosine"}, {IR_FLOOR, "floor"}, {IR_CEIL, "ceil"},
  {IR_ROUND, "round_nearest_even"}, {IR_ROUND_AFZ, "round_nearest_afz"}, {IR_TAN, "tan"}, {IR_CBRT, "cbrt"},
  {IR_POPCNT, "popcnt"}, {IR_CLZ, "count_leading_zeros"}, {IR_REM, "remainder"}, {IR_ATAN2, "atan2"},
  {IR_SHL, "shift_left"}, {IR_SHRA, "shift_right_arithmetic"}, {IR_SHRL, "shift_right_logical"},
  {IR_ADD, "add"}, {IR_SUB, "subtract"}, {IR_MUL, "multiply"}, {IR_DIV, "divide"}, {IR_MAXIMUM, "maximum"},
  {IR_MINIMUM, "minimum"}, {IR_POWER, "power"}, {IR_AND, "and"}, {IR_OR, "or"}, {IR_XOR, "xor"},
};

static int emit_op(ex_ctx *c, const ir_value *v, ex_val *out) {
  const ir_attrs *at = &v->attr;
  for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++) {
    if (simple[i].op != v->op) continue;
    if (v->nargs == 1) { *out = unary(c, simple[i].name, arg(c, v, 0)); return 0; }
    if (v->op == IR_ADD) {
      for (int k = 0; k < 2; k++)
        if (c->skip[v->args[k]] && c->g->vals[v->args[k]]->op == IR_EMBEDDING_GRAD) {
          *out = scatter_into(c, arg(c, v, 1 - k), c->g->vals[v->args[k]]);
          return 0;
        }
    }
    *out = binary(c, simple[i].name, arg(c, v, 0), arg(c, v, 1));
    return 0;
  }
  switch (v->op) {
  case IR_RELU: *out = binary(c, "maximum", arg(c, v, 0), scalar(c, 0, v->dtype)); return 0;
  case IR_GELU: { ex_val x = arg(c, v, 0), p = phi(c, x); *out = binary(c, "multiply", x, p); return 0; }
  case IR_ERF: *out = erf_exact(c, arg(c, v, 0)); return 0;
  case IR_ERFC: *out = erfc_any(c, arg(c, v, 0)); return 0;
  case IR_GELU_TANH: { ex_val x = arg(c, v, 0), s = gelu_tanh_gate(c, x); *out = binary(c, "multiply", x, s); return 0; }
  case IR_SILU: { ex_val x = arg(c, v, 0), s = unary(c, "logistic", x); *out = binary(c, "multiply", x, s); return 0; }
  case IR_MATMUL: case IR_EINSUM: return contraction(c, v, out);
  case IR_SUM: case IR_MEAN: case IR_MAX: case IR_MIN: return reduction(c, v, out);
  case IR_SOFTMAX: *out = softmax(c, arg(c, v, 0), at->dim); return 0;
  case IR_LOG_SOFTMAX: *out = log_softmax(c, arg(c, v, 0), at->dim); return 0;
  case IR_NORMALIZE: *out = normalize(c, arg(c, v, 0), at->dim, at->rms, at->eps); return 0;
  case IR_LAYERNORM: case IR_RMSNORM: {
    ex_val x = arg(c, v, 0), gm = arg(c, v, 1);
    *out = binary(c, "multiply", normalize(c, x, at->dim, v->op == IR_RMSNORM, at->eps), along(c, gm, &x.s, at->dim));
    if (v->op == IR_LAYERNORM) *out = binary(c, "add", *out, along(c, arg(c, v, 2), &x.s, at->dim));
    return 0;
  }
  case IR_RESHAPE: *out = reshape(c, arg(c, v, 0), &v->shape); return 0;
  case IR_TRANSPOSE: *out = transpose(c, arg(c, v, 0), at->dims); return 0;
  case IR_BROADCAST: {
    const ir_value *x = c->g->vals[v->args[0]];
    if (x->kind != IR_CONST) { *out = to_shape(c, arg(c, v, 0), &v->shape); return 0; }
    /* a literal's broadcast is a splat constant, as the importer reads one */
    const char *n = fresh(c);
    sb_printf(c->out, "    %s = stablehlo.constant dense<", n);
    ex_put_lit(c->out, x->attr.scalar, v->dtype);
    sb_printf(c->out, "> : %s\n", ex_type(c, v->dtype, &v->shape));
    *out = mk(n, v->dtype, &v->shape);
    return 0;
  }
  case IR_CONCAT: {
    ex_val *xs = arena_alloc(c->a, sizeof(ex_val) * (size_t)v->nargs);
    for (int k = 0; k < v->nargs; k++) xs[k] = arg(c, v, k);
    *out = concat(c, xs, v->nargs, at->dim);
    return 0;
  }
  case IR_SLICE: *out = slice(c, arg(c, v, 0), at->dim, at->start, at->end); return 0;
  case IR_EMBEDDING: *out = gather_rows(c, c->val[v->args[0]], operand(c, v->args[1], IR_I32), &v->shape); return 0;
  case IR_GATHER: case IR_SCATTER: *out = index_op(c, v); return 0;
  case IR_EMBEDDING_GRAD: {
    ex_val z = splat(c, 0, v->dtype, &v->shape);
    *out = scatter_into(c, z, v);
    return 0;
  }
  case IR_CROSS_ENTROPY: *out = cross_entropy(c, v, 0); return 0;
  case IR_CROSS_ENTROPY_GRAD: *out = cross_entropy(c, v, 1); return 0;
  case IR_CAUSAL_MASK: {
    ex_val x = arg(c, v, 0), m = causal(c, &x.s);
    *out = select3(c, m, scalar(c, -INFINITY, x.t), x);
    return 0;
  }
  case IR_CAUSAL_MASK_GRAD: {
    ex_val x = arg(c, v, 0), m = causal(c, &x.s);
    *out = select3(c, m, scalar(c, 0, x.t), x);
    return 0;
  }
  case IR_CONVERT: *out = convert(c, operand(c, v->args[0], c->g->vals[v->args[0]]->dtype), at->dtype); return 0;
  case IR_BITCAST: {
    ex_val x = operand(c, v->args[0], c->g->vals[v->args[0]]->dtype);
    const char *n = fresh(c);
    sb_printf(c->out, "    %s = stablehlo.bitcast_convert %s : (%s) -> %s\n", n, x.n, ex_type(c, x.t, &x.s), ex_type(c, at->dtype, &x.s));
    *out = mk(n, at->dtype, &x.s);
    return 0;
  }
  case IR_COMPARE: {
    static const char *const dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};   /* ORDER ir_cmp */
    ex_val a = arg(c, v, 0), b = arg(c, v, 1);
    *out = compare(c, dirs[at->cmp], a, b, at->total);
    return 0;
  }
  case IR_GE: { ex_val a = arg(c, v, 0), b = arg(c, v, 1), m = compare(c, "GE", a, b, 0); *out = convert(c, m, v->dtype); return 0; }
  case IR_SELECT: {
    ex_val p = operand(c, v->args[0], IR_I1), a = arg(c, v, 1), b = arg(c, v, 2);
    *out = select3(c, p, a, b);
    return 0;
  }
  case IR_IOTA: *out = iota(c, &v->shape, at->dim, v->dtype); return 0;
  case IR_CONSTANT: {
    const char *n = fresh(c);
    int64_t total = ir_nelem(&v->shape);
    sb_printf(c->out, "    %s = stablehlo.constant dense<", n);
    if (v->shape.rank == 0) put_element(c, v, 0);
    for (int64_t k = 0; v->shape.rank && k < total; k++) {
      int open = 0, closed = 0;                        /* the dims that start and end at k */
      int64_t m = 1;
      for (int i = v->shape.rank - 1; i >= 0; i--) { m *= v->shape.d[i]; if (k % m == 0) open++; }
      if (k) sb_puts(c->out, ", ");
      for (int i = 0; i < open; i++) sb_putc(c->out, '[');
      put_element(c, v, k);
      m = 1;
      for (int i = v->shape.rank - 1; i >= 0; i--) { m *= v->shape.d[i]; if ((k + 1) % m == 0) closed++; }
      for (int i = 0; i < closed; i++) sb_putc(c->out, ']');
    }
    sb_printf(c->out, "> : %s\n", ex_type(c, v->dtype, &v->shape));
    *out = mk(n, v->dtype, &v->shape);
    return 0;
  }
  case IR_ATTENTION: {
    static const int b2[] = {0, 1}, c3[] = {3}, c2[] = {2};
    ex_val q = arg(c, v, 0), k = arg(c, v, 1), vv = arg(c, v, 2);
    ex_val p = attn_probs(c, q, k, at->scale, at->causal);
    *out = dot(c, p, vv, b2, b2, 2, c3, c2, 1);
    return 0;
  }
  case IR_RELU_GRAD: {
    ex_val x = arg(c, v, 0), dy = arg(c, v, 1), zero = scalar(c, 0, x.t);
    *out = select3(c, compare(c, "GT", x, zero, 0), dy, zero);
    return 0;
  }
  case IR_GELU_GRAD: {
    ex_val x = arg(c, v, 0), dy = arg(c, v, 1);
    ex_val pdf = bin_k(c, "multiply", unary(c, "exponential", bin_k(c, "multiply", binary(c, "multiply", x, x), -0.5)), INV_SQRT2PI);
    ex_val d = binary(c, "add", phi(c, x), binary(c, "multiply", x, pdf));
    *out = binary(c, "multiply", dy, d);
    return 0;
  }
  case IR_GELU_TANH_GRAD: {
    ex_val x = arg(c, v, 0), dy = arg(c, v, 1), s = gelu_tanh_gate(c, x);
    ex_val du = bin_k(c, "multiply", bin_k(c, "add", bin_k(c, "multiply", binary(c, "multiply", x, x), 3 * GELU_A), 1), GELU_C);
    ex_val s1 = binary(c, "subtract", scalar(c, 1, x.t), s);
    ex_val t = binary(c, "multiply", bin_k(c, "multiply", binary(c, "multiply", x, s), 2), binary(c, "multiply", s1, du));
    *out = binary(c, "multiply", dy, binary(c, "add", s, t));
    return 0;
  }
  case IR_SILU_GRAD: {
    ex_val x = arg(c, v, 0), dy = arg(c, v, 1), s = unary(c, "logistic", x);
    ex_val t = binary(c, "multiply", binary(c, "multiply", x, s), binary(c, "subtract", scalar(c, 1, x.t), s));
    *out = binary(c, "multiply", dy, binary(c, "add", s, t));
    return 0;
  }
  case IR_SOFTMAX_GRAD: {
    ex_val y = arg(c, v, 0), dy = arg(c, v, 1);
    ex_val s = reduce_back(c, R_ADD, binary(c, "multiply", dy, y), at->dim);
    *out = binary(c, "multiply", y, binary(c, "subtract", dy, s));
    return 0;
  }
  case IR_LOG_SOFTMAX_GRAD: {
    ex_val y = arg(c, v, 0), dy = arg(c, v, 1);
    ex_val s = reduce_back(c, R_ADD, dy, at->dim);
    *out = binary(c, "subtract", dy, binary(c, "multiply", unary(c, "exponential", y), s));
    return 0;
  }
  case IR_LAYERNORM_GRAD: *out = layernorm_grad(c, v); return 0;
  case IR_MAX_GRAD: *out = max_grad(c, v); return 0;
  case IR_SUM_TO: *out = sum_to(c, v); return 0;
  case IR_PAD: *out = pad(c, v); return 0;
  case IR_ATTENTION_GRAD: *out = attention_grad(c, v); return 0;
  default: return unsupported(c, v, "has no StableHLO spelling in this version");
  }
}

/* Give the op that made r, the last defined since text offset from, the
** IR value's own name (the importer names values after their SSA names). */
static void rename_last(ex_ctx *c, size_t from, ex_val *r, const char *name) {
  strbuf *b = c->out;
  if (!name || b->n <= from) return;
  size_t at = from, len = strlen(r->n);
  for (size_t i = from; i + 5 < b->n; i++)
    if ((i == from || b->p[i - 1] == '\n') && !strncmp(b->p + i, "    %", 5)) at = i;
  if (strncmp(b->p + at + 4, r->n, len) || strncmp(b->p + at + 4 + len, " = ", 3)) return;
  const char *tail = arena_strndup(c->a, b->p + at + 4 + len, b->n - (at + 4 + len));
  b->n = at;
  b->p[b->n] = 0;
  sb_printf(b, "    %s%s", name, tail);
  r->n = name;
}

/* ---- carve's composite ops as stablehlo.composite ----
** A composite keeps carve's op whole through export and import: its name
** (carve.softmax), its attributes, and a decomposition into primitive ops
** (the same spelling emit_op writes) for any other reader (JAX, XLA, the
** reference interpreter), in a private function. */


/* the op's attributes as its signature names them, as MLIR attributes */
static void put_composite_attrs(ex_ctx *c, const ir_value *v) {
  const ir_attrs *a = &v->attr;
  int n = 0;
  sb_puts(c->out, "composite_attributes = {");
  char name[IR_SIG_NAME], t;
  int opt;
  for (const char *p = ir_opinfo_of(v->op)->sig; ir_sig_next(&p, name, &t, &opt);) {
    if (t != 'i' && t != 'f' && t != 'b' && t != 'I') continue;
    sb_printf(c->out, "%s%s = ", n++ ? ", " : "", name);
    if (t == 'i') sb_printf(c->out, "%lld : i64", (long long)(!strcmp(name, "dim") ? a->dim : !strcmp(name, "rows") ? a->rows : a->start));
    else if (t == 'b') sb_puts(c->out, ir_attr_flag(a, name) ? "true" : "false");
    else if (t == 'f') { ex_put_lit(c->out, ir_attr_number(a, name), IR_F64); sb_puts(c->out, " : f64"); }
    else {
      sb_puts(c->out, "array<i64");
      for (int i = 0; i < a->ndims; i++) sb_printf(c->out, "%s%d", i ? ", " : ": ", a->dims[i]);
      sb_putc(c->out, '>');
    }
  }
  sb_putc(c->out, '}');
}

static int ex_composite(ex_ctx *c, const ir_value *v, ex_val *out) {
  /* the decomposition, written with its own names and constants */
  strbuf body, *keep_out = c->out;
  sb_init(&body);
  ex_const *keep_consts = c->consts;
  int keep_n = c->nconsts, keep_cap = c->constcap, keep_next = c->next;
  ex_val *keep_val = arena_alloc(c->a, sizeof(ex_val) * (size_t)(v->nargs + 1));
  for (int k = 0; k < v->nargs; k++) keep_val[k] = c->val[v->args[k]];
  c->out = &body;
  c->consts = NULL;
  c->nconsts = c->constcap = 0;
  c->next = 0;
  for (int k = 0; k < v->nargs; k++) {
    const ir_value *a = c->g->vals[v->args[k]];
    c->val[a->id] = (ex_val){arena_printf(c->a, "%%arg%d", k), a->dtype, a->shape};
  }
  ex_val r;
  int rc = emit_op(c, v, &r);
  for (int k = v->nargs - 1; k >= 0; k--) c->val[v->args[k]] = keep_val[k];
  c->out = keep_out;
  c->consts = keep_consts;
  c->nconsts = keep_n;
  c->constcap = keep_cap;
  c->next = keep_next;
  if (rc < 0) { sb_free(&body); return -1; }
  const char *fn = arena_printf(c->a, "carve.%s.%d", ir_opinfo_of(v->op)->name, c->nfuncs++);
  sb_printf(c->funcs, "  func.func private @%s(", fn);
  for (int k = 0; k < v->nargs; k++) {
    const ir_value *a = c->g->vals[v->args[k]];
    sb_printf(c->funcs, "%s%%arg%d: %s", k ? ", " : "", k, ex_type(c, a->dtype, &a->shape));
  }
  sb_printf(c->funcs, ") -> %s {\n%s    return %s : %s\n  }\n", ex_type(c, v->dtype, &v->shape), sb_str(&body), r.n,
            ex_type(c, v->dtype, &v->shape));
  sb_free(&body);
  /* the composite in @main (a literal operand as a scalar constant) */
  const char **ops = arena_alloc(c->a, sizeof(char *) * (size_t)(v->nargs + 1));
  for (int k = 0; k < v->nargs; k++) ops[k] = operand(c, v->args[k], c->g->vals[v->args[k]]->dtype).n;
  const char *n = fresh(c);
  sb_printf(c->out, "    %s = \"stablehlo.composite\"(", n);
  for (int k = 0; k < v->nargs; k++) sb_printf(c->out, "%s%s", k ? ", " : "", ops[k]);
  sb_puts(c->out, ") <{");
  put_composite_attrs(c, v);
  sb_printf(c->out, ", decomposition = @%s, name = \"carve.%s\"}> : (", fn, ir_opinfo_of(v->op)->name);
  for (int k = 0; k < v->nargs; k++) {
    const ir_value *a = c->g->vals[v->args[k]];
    sb_printf(c->out, "%s%s", k ? ", " : "", ex_type(c, a->dtype, &a->shape));
  }
  sb_printf(c->out, ") -> %s\n", ex_type(c, v->dtype, &v->shape));
  *out = mk(n, v->dtype, &v->shape);
  return 0;
}

int ex_value(ex_ctx *c, int id) {
  const ir_value *v = c->g->vals[id];
  if (c->skip[id]) return 0;
  size_t from = c->out->n;
  int first = c->next;
  ex_val r;
  int composite = c->composites && ir_op_is_composite(v->op);
  if ((composite ? ex_composite(c, v, &r) : emit_op(c, v, &r)) < 0) return -1;
  if (r.t != v->dtype || !ir_shape_eq(&r.s, &v->shape)) {
    c->failed = 1;
    return diag_error(c->d, v->at, "export: internal: '%s' was written as %s but is %s", v->name, ex_type(c, r.t, &r.s),
                      ex_type(c, v->dtype, &v->shape));
  }
  /* only a helper this op defined takes the name (not an operand passed through) */
  if (r.n[0] == '%' && r.n[1] >= '0' && r.n[1] <= '9' && atoi(r.n + 1) >= first) rename_last(c, from, &r, ex_ssa_name(c, v->name));
  c->val[id] = r;
  return 0;
}

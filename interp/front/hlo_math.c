/*
** hlo_math.c: CHLO's special functions (what jnp and jax.scipy lower to
** chlo.*), written with carve's elementwise ops so that they
** differentiate, partition and export as those do:
**
**   sinh, cosh, atan, asin, acos, asinh, acosh, atanh  closed forms;
**   erf_inv   an estimate refined by Newton steps to f64's precision;
**   lgamma, digamma   Lanczos's series (g = 7, 9 terms, as XLA's), with
**             the reflection formula below 1/2;
**   next_after   on the bits of its own type;
**   and stablehlo.reduce_precision, also on the bits.
**
** All but these two are computed in a wider type (f32 for bf16 and f16,
** as XLA upcasts them, f64 for f32 and f64) and rounded once. Each branch
** a select drops is fed a value inside its domain, so that no infinity of
** a branch not taken reaches a gradient (JAX's "double where").
*/
#include "interp/front/hlo_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* the builders, helper values named after the op's result n */
#define K(v) ir_const(b->g, v)
#define U(k, a) hlo_ew(b, n, k, a, HLO_UNARY)
#define B(k, a, c) hlo_ew(b, n, k, a, c)
#define CMP(dir, a, c) hlo_cmp(b, n, dir, a, c)
#define SEL(p, a, c) hlo_sel(b, n, p, a, c)

/* c[0] w^(nc-1) + ... + c[nc-1] */
static int horner(hctx *b, const char *n, int w, const double *c, int nc) {
  int p = K(c[0]);
  for (int i = 1; i < nc; i++) p = B(IR_ADD, B(IR_MUL, p, w), K(c[i]));
  return p;
}

/* ---- the closed forms ---- */

/* In the forms XLA expands them to, accurate near 0 (expm1, log1p) and
** at the ends of their domains: sinh = (expm1(x) - expm1(-x)) / 2, cosh =
** (e^x + e^-x) / 2, atan = atan2(x, 1), asin = 2 atan2(x, 1 + sqrt((1 -
** x)(1 + x))), acos = 2 atan2(sqrt((1 - x)(1 + x)), 1 + x) (pi at -1),
** asinh = sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), acosh =
** log1p((x - 1) + sqrt((x - 1)(x + 1))), atanh = log1p(2x / (1 - x)) / 2;
** -2 when sn is none of them */
static int closed_form(hctx *b, const char *n, const char *sn, int x, ir_dtype ct) {
  int one = K(1), two = K(2), half = K(0.5);
  int x2 = B(IR_MUL, x, x), omx2 = B(IR_MUL, B(IR_SUB, one, x), B(IR_ADD, one, x));   /* 1 - x^2 without cancellation */
  if (!strcmp(sn, "sinh")) return B(IR_MUL, B(IR_SUB, U(IR_EXPM1, x), U(IR_EXPM1, U(IR_NEG, x))), half);
  if (!strcmp(sn, "cosh")) return B(IR_MUL, B(IR_ADD, U(IR_EXP, x), U(IR_EXP, U(IR_NEG, x))), half);
  if (!strcmp(sn, "atan")) return B(IR_ATAN2, x, one);
  if (!strcmp(sn, "asin")) return B(IR_MUL, B(IR_ATAN2, x, B(IR_ADD, one, U(IR_SQRT, omx2))), two);
  if (!strcmp(sn, "acos")) {
    int a = B(IR_MUL, B(IR_ATAN2, U(IR_SQRT, omx2), B(IR_ADD, one, x)), two);
    return SEL(CMP("ne", x, K(-1)), a, ir_const_typed(b->g, M_PI, ct));
  }
  if (!strcmp(sn, "asinh")) {
    int t = B(IR_ADD, U(IR_ABS, x), B(IR_DIV, x2, B(IR_ADD, one, U(IR_SQRT, B(IR_ADD, one, x2)))));
    return B(IR_MUL, U(IR_SIGN, x), U(IR_LOG1P, t));
  }
  if (!strcmp(sn, "acosh")) {
    int xm = B(IR_SUB, x, one);
    return U(IR_LOG1P, B(IR_ADD, xm, U(IR_SQRT, B(IR_MUL, xm, B(IR_ADD, x, one)))));
  }
  if (!strcmp(sn, "atanh")) return B(IR_MUL, U(IR_LOG1P, B(IR_DIV, B(IR_MUL, x, two), B(IR_SUB, one, x))), half);
  return -2;
}

/* ---- erf_inv ---- */

/* Giles's single-precision approximation ("Approximating the erfinv
** function", GPU Computing Gems, 2011), for w = -log(1 - x^2) below 5
** (in w - 2.5) and from 5 (in sqrt(w) - 3) */
static const double giles_lo[] = {
  2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941};
static const double giles_hi[] = {
  -0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
  -0.0076224613, 0.00943887047, 1.00167406, 2.83297682};

/* erf_inv(x): Giles's estimate of z = erf_inv(|x|) (beyond f32's range
** of x, where w >= 16, the tail's asymptote erfc(z) ~ exp(-z^2) / (z
** sqrt(pi)) solved twice by substitution), then three Newton steps: on
** erf(z) = a up to a = 1/2, above on log(erfc(z)) = log(1 - a), whose
** 1 - a is exact there. Checked against mpmath: 3.3e-16 relative in f64 from
** 0 to 1 - 2^-53. +-1 give +-inf, beyond them and NaN give NaN. */
static int erf_inv(hctx *b, const char *n, int x, ir_dtype ct) {
  int a = U(IR_ABS, x);
  int ok = CMP("lt", a, K(1));                     /* false at 1, beyond, and for NaN */
  int as = SEL(ok, a, K(0.5));
  int w = U(IR_NEG, U(IR_LOG, B(IR_MUL, B(IR_SUB, K(1), as), B(IR_ADD, K(1), as))));
  int plo = horner(b, n, B(IR_SUB, w, K(2.5)), giles_lo, 9);
  int phi = horner(b, n, B(IR_SUB, U(IR_SQRT, B(IR_MAXIMUM, w, K(5))), K(3)), giles_hi, 9);
  int z = B(IR_MUL, SEL(CMP("lt", w, K(5)), plo, phi), as);
  int lq = U(IR_LOG1P, U(IR_NEG, as));             /* log(1 - a) */
  int l = B(IR_MAXIMUM, U(IR_NEG, lq), K(16));
  int z2 = B(IR_SUB, l, B(IR_MUL, K(0.5), U(IR_LOG, B(IR_MUL, K(M_PI), l))));
  int zt = U(IR_SQRT, B(IR_SUB, l, B(IR_MUL, K(0.5), U(IR_LOG, B(IR_MUL, K(M_PI), z2)))));
  z = SEL(CMP("lt", w, K(16)), z, zt);
  int low = CMP("le", as, K(0.5));
  for (int i = 0; i < 3; i++) {
    int d = B(IR_MUL, K(M_2_SQRTPI), U(IR_EXP, U(IR_NEG, B(IR_MUL, z, z))));   /* erf'(z) */
    int e = U(IR_ERFC, z);
    int s1 = B(IR_DIV, B(IR_SUB, U(IR_ERF, z), as), d);
    int s2 = B(IR_DIV, B(IR_MUL, B(IR_SUB, U(IR_LOG, e), lq), e), d);
    z = SEL(low, B(IR_SUB, z, s1), B(IR_ADD, z, s2));
  }
  int sg = U(IR_SIGN, x);
  int edge = SEL(CMP("eq", a, K(1)), B(IR_MUL, sg, ir_const_typed(b->g, INFINITY, ct)), ir_const_typed(b->g, NAN, ct));
  return SEL(ok, B(IR_MUL, sg, z), edge);
}

/* ---- lgamma and digamma ---- */

/* Lanczos's approximation with g = 7 and 9 terms (the coefficients
** XLA's and Numerical Recipes' users share): for x >= 1/2, with z = x - 1
** and t = z + g + 1/2, Gamma(x) = sqrt(2 pi) t^(z + 1/2) e^-t A(z), A(z) =
** c0 + sum c_i / (z + i). About 1e-15 relative. */
#define LANCZOS_G 7.0
static const double lanczos_c0 = 0.99999999999980993227684700473478;
static const double lanczos_c[] = {
  676.520368121885098567009190444019, -1259.13921672240287047156078755283, 771.3234287776530788486528258894,
  -176.61502916214059906584551354, 12.507343278686904814458936853, -0.13857109526572011689554707,
  9.984369578019570859563e-6, 1.50563273514931155834e-7};

typedef struct lanczos { int refl, xs, z, t, logt, a, da; } lanczos;

/* The series at u = x (x >= 1/2) or 1 - x (below, where refl is true and
** xs is x; elsewhere xs is 1/2, which keeps the reflection finite); a and
** da are A(z) and A'(z). */
static void lanczos_at(hctx *b, const char *n, int x, lanczos *s) {
  s->refl = CMP("lt", x, K(0.5));
  s->xs = SEL(s->refl, x, K(0.5));
  s->z = B(IR_SUB, SEL(s->refl, B(IR_SUB, K(1), x), x), K(1));
  s->a = K(lanczos_c0);
  s->da = K(0);
  for (int i = 0; i < 8; i++) {
    int d = B(IR_ADD, s->z, K(i + 1));
    s->a = B(IR_ADD, s->a, B(IR_DIV, K(lanczos_c[i]), d));
    s->da = B(IR_SUB, s->da, B(IR_DIV, K(lanczos_c[i]), B(IR_MUL, d, d)));
  }
  s->t = B(IR_ADD, s->z, K(LANCZOS_G + 0.5));
  s->logt = B(IR_ADD, K(log(LANCZOS_G + 0.5)), U(IR_LOG1P, B(IR_DIV, s->z, K(LANCZOS_G + 0.5))));
}

/* lgamma(x) = log|Gamma(x)|; below 1/2 log(pi) - log|sin(pi x)| -
** lgamma(1 - x), the sine taken of x's distance to the nearest integer
** (exact), so that it is 0 exactly at the poles: +inf there and at +-inf. */
static int lgamma_of(hctx *b, const char *n, int x, ir_dtype ct) {
  lanczos s;
  lanczos_at(b, n, x, &s);
  int lg = B(IR_ADD, B(IR_ADD, K(0.91893853320467274178032973640562), B(IR_SUB, B(IR_MUL, B(IR_ADD, s.z, K(0.5)), s.logt), s.t)),
             U(IR_LOG, s.a));
  int ax = U(IR_ABS, s.xs), fr = B(IR_SUB, ax, U(IR_FLOOR, ax));
  int r = SEL(CMP("gt", fr, K(0.5)), B(IR_SUB, K(1), fr), fr);
  int refl = B(IR_SUB, B(IR_SUB, K(1.14472988584940017414342735135305), U(IR_LOG, U(IR_SIN, B(IR_MUL, K(M_PI), r)))), lg);
  int y = SEL(s.refl, refl, lg);
  return SEL(CMP("eq", U(IR_ABS, x), ir_const_typed(b->g, INFINITY, ct)), ir_const_typed(b->g, INFINITY, ct), y);
}

/* digamma(x) = log(t) + A'(z) / A(z) - g / t, the derivative of the
** above; below 1/2 digamma(1 - x) - pi / tan(pi x), tan taken of x's
** distance to the nearest integer (exact, and small near a pole); NaN at
** 0 and the negative integers, as XLA's. */
static int digamma_of(hctx *b, const char *n, int x, ir_dtype ct) {
  lanczos s;
  lanczos_at(b, n, x, &s);
  int dg = B(IR_SUB, B(IR_ADD, s.logt, B(IR_DIV, s.da, s.a)), B(IR_DIV, K(LANCZOS_G), s.t));
  int fr = B(IR_SUB, s.xs, U(IR_FLOOR, B(IR_ADD, s.xs, K(0.5))));   /* to the nearest integer: pi fr keeps its digits */
  int refl = B(IR_SUB, dg, B(IR_DIV, K(M_PI), U(IR_TAN, B(IR_MUL, K(M_PI), fr))));
  int y = SEL(s.refl, refl, dg);
  int pole = CMP("eq", x, U(IR_FLOOR, x));
  return SEL(CMP("le", x, K(0)), SEL(pole, ir_const_typed(b->g, NAN, ct), y), y);
}

/* ---- next_after ---- */

/* next_after(x, y): the value of x's type next to x toward y; y where they
** are equal, NaN where either is; from 0 the smallest subnormal with y's
** sign; otherwise x's bits read as a signed integer, plus 1 away from 0,
** minus 1 toward it. */
static int next_after(hctx *b, const char *n, int x, int y) {
  ir_dtype t = b->g->vals[x]->dtype;
  ir_dtype it = t == IR_F64 ? IR_I64 : t == IR_F32 ? IR_I32 : IR_I16;
  int tiny = t == IR_F64 ? -1074 : t == IR_F32 ? -149 : t == IR_F16 ? -24 : -133;
  ir_attrs to = hlo_no_attrs(), back = hlo_no_attrs();
  to.dtype = it;
  back.dtype = t;
  int bits = hlo_emit(b, hlo_fresh(b, n), IR_BITCAST, &x, 1, &to);
  int zero = K(0);
  int away = B(IR_OR, B(IR_AND, CMP("gt", y, x), CMP("gt", x, zero)), B(IR_AND, CMP("lt", y, x), CMP("lt", x, zero)));
  int nb = SEL(away, B(IR_ADD, bits, ir_const_typed(b->g, 1, it)), B(IR_SUB, bits, ir_const_typed(b->g, 1, it)));
  int r = nb < 0 ? -1 : hlo_emit(b, hlo_fresh(b, n), IR_BITCAST, &nb, 1, &back);
  int sub = ir_const_typed(b->g, ldexp(1, tiny), t), nsub = ir_const_typed(b->g, -ldexp(1, tiny), t);
  r = SEL(CMP("eq", x, zero), SEL(CMP("gt", y, zero), sub, nsub), r);
  r = SEL(CMP("eq", x, y), y, r);
  return SEL(B(IR_OR, CMP("ne", x, x), CMP("ne", y, y)), B(IR_ADD, x, y), r);
}

/* ---- reduce_precision ---- */

/* reduce_precision(x, exponent_bits = e, mantissa_bits = m): x rounded to
** the nearest (ties to even) of a float with m mantissa bits, then, with
** e exponent bits, what passes the range becomes inf and what falls below
** its smallest normal a zero, signs kept; NaN stays NaN (with no mantissa
** bits, an infinity, as the reference interpreter). On x's bits, as
** the spec writes it. The gradient is the identity, as JAX's: the result
** is x + (r - x'), x' being x read back through its bits (no gradient),
** which is r exactly (r - x' is exact: they are within a factor of 2). */
static int reduce_precision(hctx *b, const mlir_op *op, const char *n) {
  if (op->noperands != 1) return hlo_error(b, op, "%s takes 1 operand, given %d", op->name, op->noperands);
  int x = hlo_operand(b, op, 0);
  if (x < 0) return -1;
  ir_dtype t = b->g->vals[x]->dtype;
  if (!ir_dtype_isfloat(t)) return hlo_error(b, op, "%s of %s values; it takes floats", op->name, ir_dtype_name(t));
  int64_t e = -1, m = -1;
  const mlir_attr *f = hlo_attr(op, "format", NULL);
  char tail;
  if (f && f->kind == MLIR_A_WORD) {
    long le, lm;
    if (sscanf(f->text, "e%ldm%ld%c", &le, &lm, &tail) != 2)
      return hlo_error(b, op, "%s: format '%s' is not eNmM (e5m10, e8m7)", op->name, f->text);
    e = le, m = lm;
  } else if (hlo_ints_of(hlo_attr(op, "exponent_bits", NULL), &e, 1) != 1 || hlo_ints_of(hlo_attr(op, "mantissa_bits", NULL), &m, 1) != 1)
    return hlo_error(b, op, "%s: the format (format = e5m10, or exponent_bits and mantissa_bits) is missing", op->name);
  if (e < 1 || m < 0) return hlo_error(b, op, "%s: %lld exponent and %lld mantissa bits; it needs at least 1 and 0", op->name, (long long)e, (long long)m);
  int W = 8 * (int)ir_dtype_size(t), M = t == IR_F64 ? 52 : t == IR_F32 ? 23 : t == IR_F16 ? 10 : 7, E = W - 1 - M;
  if (e >= E && m >= M) return x;
  ir_dtype it = W == 64 ? IR_I64 : W == 32 ? IR_I32 : IR_I16;
  #define I(v) ir_const_typed(b->g, (double)(v), it)
  ir_attrs to = hlo_no_attrs(), back = hlo_no_attrs();
  to.dtype = it;
  back.dtype = t;
  int bits = hlo_emit(b, hlo_fresh(b, n), IR_BITCAST, &x, 1, &to), bits0 = bits;
  int xr = hlo_emit(b, hlo_fresh(b, n), IR_BITCAST, &bits, 1, &back);   /* x without a gradient */
  if (m < M) {
    int sh = M - (int)m;
    int64_t last = (int64_t)1 << sh;
    int lastbit = B(IR_SHRL, B(IR_AND, bits, I(last)), I(sh));
    bits = B(IR_AND, B(IR_ADD, bits, B(IR_ADD, lastbit, I((last >> 1) - 1))), I(-last));
  }
  if (e < E) {
    int64_t emask = (((int64_t)1 << E) - 1) << M, bias = ((int64_t)1 << (E - 1)) - 1, rbias = ((int64_t)1 << (e - 1)) - 1;
    int xe = B(IR_AND, bits, I(emask)), sz = B(IR_AND, bits, I(-ldexp(1, W - 1))), sinf = B(IR_OR, sz, I(emask));
    int over = CMP("gt", xe, I((bias + rbias) << M)), under = CMP("le", xe, I((bias - rbias) << M));
    bits = SEL(over, sinf, SEL(under, sz, bits));
  }
  int r = bits < 0 ? -1 : hlo_emit(b, hlo_fresh(b, n), IR_BITCAST, &bits, 1, &back);
  /* NaN stays NaN where the format has a mantissa to hold one; with none it becomes inf, its sign kept */
  if (m > 0 && m < M) r = SEL(CMP("ne", x, x), xr, r);
  if (m == 0)
    r = SEL(CMP("ne", x, x), SEL(CMP("lt", bits0, I(0)), ir_const_typed(b->g, -INFINITY, t), ir_const_typed(b->g, INFINITY, t)), r);
  #undef I
  /* where r is a zero or an infinity, r itself: x + (0 - x) would lose a -0, inf + (inf - inf) is NaN */
  int edge = B(IR_OR, CMP("eq", r, K(0)), CMP("eq", U(IR_ABS, r), ir_const_typed(b->g, INFINITY, t)));
  return SEL(edge, r, B(IR_ADD, x, B(IR_SUB, r, xr)));
}

/* ---- the dispatch ---- */

static const char *const unary[] = {"sinh", "cosh", "atan", "asin", "acos", "asinh", "acosh", "atanh",
                                    "erf_inv", "lgamma", "digamma", NULL};

int hlo_math_op(hctx *b, const mlir_op *op, const char *sn, const char *name) {
  if (!strcmp(sn, "reduce_precision") && strchr(op->name, '.')) return reduce_precision(b, op, name);
  if (strncmp(op->name, "chlo.", 5)) return -2;
  int k = 0;
  while (unary[k] && strcmp(unary[k], sn)) k++;
  int arity = unary[k] ? 1 : !strcmp(sn, "next_after") ? 2 : 0;
  if (!arity) return -2;
  if (op->noperands != arity) return hlo_error(b, op, "%s takes %d operand%s, given %d", op->name, arity, arity > 1 ? "s" : "", op->noperands);
  int x = hlo_operand(b, op, 0), y = arity > 1 ? hlo_operand(b, op, 1) : 0;
  if (x < 0 || y < 0) return -1;
  ir_dtype ty = b->g->vals[x]->dtype;
  if (!ir_dtype_isfloat(ty)) return hlo_error(b, op, "%s of %s values; it takes floats", op->name, ir_dtype_name(ty));
  if (arity == 2) return next_after(b, name, x, y);
  ir_dtype ct = ty == IR_BF16 || ty == IR_F16 ? IR_F32 : IR_F64;
  if (ty != ct) {                  /* computed wider and rounded once */
    ir_attrs cv = hlo_no_attrs();
    cv.dtype = ct;
    if ((x = hlo_emit(b, hlo_fresh(b, name), IR_CONVERT, &x, 1, &cv)) < 0) return -1;
  }
  int r = !strcmp(sn, "erf_inv") ? erf_inv(b, name, x, ct)
        : !strcmp(sn, "lgamma") ? lgamma_of(b, name, x, ct)
        : !strcmp(sn, "digamma") ? digamma_of(b, name, x, ct)
        : closed_form(b, name, sn, x, ct);
  if (r >= 0 && ty != ct) {
    ir_attrs cv = hlo_no_attrs();
    cv.dtype = ty;
    return hlo_emit(b, name, IR_CONVERT, &r, 1, &cv);
  }
  return r < 0 ? -1 : hlo_reshape(b, name, r, &b->g->vals[x]->shape);
}

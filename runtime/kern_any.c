/*
** kern_any.c: CPU kernels for the element types other than f32, and for
** the functions of imported StableHLO programs (comparisons, select,
** convert, logic). Each element is read into a computing type and written
** back in the output's type (runtime/dtype.h): f32, bf16 and f16 compute
** in float (f32 arithmetic, the same scalar functions as the f32 loops),
** f64 in double, integers and i1 in int64 (results wrap to their width on
** the way out). Slower than the f32 loops, which never come here.
**
** Integer edges, where StableHLO leaves them to the implementation, follow
** XLA: x / 0 is -1 (all bits set), INT_MIN / -1 is INT_MIN; x ** -n is 0
** unless |x| = 1 (the reference interpreter's rule).
*/
#pragma GCC optimize("fp-contract=fast")

#include "runtime/kern_any.h"
#include "runtime/dtype.h"
#include "util/diag.h"

#include <cblas.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>

typedef int64_t i64;

#include "runtime/kern_math.h"

int rt_all_f32(const rt_instr *ins, int nin) {
  if (ins->odt != RT_F32) return 0;
  for (int k = 0; k < nin && k < RT_MAXIN; k++)
    if (ins->idt[k] != RT_F32) return 0;
  return 1;
}

/* ---- scalar functions ---- */

static float sign_f(float x) { return x > 0 ? 1.0f : x < 0 ? -1.0f : x; }   /* NaN and +-0 stay */
static double sign_d(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }

static double maxnan_d(double x, double y) {
  if (x != x) return x;
  if (y != y) return y;
  if (x == y) return signbit(x) ? y : x;
  return x > y ? x : y;
}

static double minnan_d(double x, double y) {
  if (x != x) return x;
  if (y != y) return y;
  if (x == y) return signbit(x) ? x : y;
  return x < y ? x : y;
}

static float ew_f(int fn, float x, float y, float al, float be) {
  switch (fn) {   /* ORDER RT_EWFN: kern_cpu.c's forms */
  case RT_NEG: return -x;
  case RT_EXP: return exp_v(x);
  case RT_LOG: return logf(x);
  case RT_SQRT: return sqrtf(x);
  case RT_RSQRT: return 1.0f / sqrtf(x);
  case RT_TANH: return tanh_v(x);
  case RT_RELU: return sel(x < 0, 0.0f, x);
  case RT_GELU: return gelu_f(x);
  case RT_GELU_TANH: return gelu_tanh_f(x);
  case RT_SIGMOID: return sigm(x);
  case RT_SILU: return x * sigm(x);
  case RT_AFFINE: return x * al + be;
  case RT_ADD: return x + y;
  case RT_SUB: return x - y;
  case RT_MUL: return x * y;
  case RT_DIV: return x / y;
  case RT_MAX: return maxnan(x, y);
  case RT_MIN: return minnan(x, y);
  case RT_GE: return x >= y ? 1.0f : 0.0f;
  case RT_RELU_GRAD: return sel(x > 0, y, 0.0f);
  case RT_GELU_GRAD: return gelu_grad_f(x, y);
  case RT_GELU_TANH_GRAD: return gelu_tanh_grad_f(x, y);
  case RT_SILU_GRAD: return silu_grad_f(x, y);
  case RT_AXPY: return x + al * y;
  case RT_AXPBY: return al * x + be * y;
  case RT_ADAM_DENOM: return sqrtf(x) * al + be;
  case RT_ABS: return fabsf(x);
  case RT_SIGN: return sign_f(x);
  case RT_ERF: return erff(x);
  case RT_ERFC: return erfcf(x);
  case RT_LOG1P: return log1pf(x);
  case RT_EXPM1: return expm1f(x);
  case RT_SIN: return sinf(x);
  case RT_COS: return cosf(x);
  case RT_FLOOR: return floorf(x);
  case RT_CEIL: return ceilf(x);
  case RT_ROUND: return nearbyintf(x);      /* the default rounding: half to even */
  case RT_ROUND_AFZ: return roundf(x);
  case RT_TAN: return tanf(x);
  case RT_CBRT: return cbrtf(x);
  case RT_REM: return fmodf(x, y);
  case RT_ATAN2: return atan2f(x, y);
  case RT_POW: return (float)pow(x, y);     /* in double, rounded once, as the reference does */
  default: return 0;
  }
}

static double gelu_d(double x) { return 0.5 * x * erfc(-x * 0.70710678118654752440); }
static double sigm_d(double x) { return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x)); }

static double ew_d(int fn, double x, double y, double al, double be) {
  switch (fn) {
  case RT_NEG: return -x;
  case RT_EXP: return exp(x);
  case RT_LOG: return log(x);
  case RT_SQRT: return sqrt(x);
  case RT_RSQRT: return 1.0 / sqrt(x);
  case RT_TANH: return tanh(x);
  case RT_RELU: return x < 0 ? 0.0 : x;
  case RT_GELU: return gelu_d(x);
  case RT_GELU_TANH: return 0.5 * x * (1 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
  case RT_SIGMOID: return sigm_d(x);
  case RT_SILU: return x * sigm_d(x);
  case RT_AFFINE: return x * al + be;
  case RT_ADD: return x + y;
  case RT_SUB: return x - y;
  case RT_MUL: return x * y;
  case RT_DIV: return x / y;
  case RT_MAX: return maxnan_d(x, y);
  case RT_MIN: return minnan_d(x, y);
  case RT_GE: return x >= y ? 1.0 : 0.0;
  case RT_RELU_GRAD: return x > 0 ? y : 0.0;
  case RT_GELU_GRAD: return y * (0.5 * erfc(-x * 0.70710678118654752440) + x * 0.39894228040143267794 * exp(-0.5 * x * x));
  case RT_GELU_TANH_GRAD: {
    double u = 0.79788456080286535588 * (x + 0.044715 * x * x * x), t = tanh(u);
    return y * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * 0.79788456080286535588 * (1 + 3 * 0.044715 * x * x));
  }
  case RT_SILU_GRAD: { double s = sigm_d(x); return y * (s + x * s * (1 - s)); }
  case RT_AXPY: return x + al * y;
  case RT_AXPBY: return al * x + be * y;
  case RT_ADAM_DENOM: return sqrt(x) * al + be;
  case RT_ABS: return fabs(x);
  case RT_SIGN: return sign_d(x);
  case RT_ERF: return erf(x);
  case RT_ERFC: return erfc(x);
  case RT_LOG1P: return log1p(x);
  case RT_EXPM1: return expm1(x);
  case RT_SIN: return sin(x);
  case RT_COS: return cos(x);
  case RT_FLOOR: return floor(x);
  case RT_CEIL: return ceil(x);
  case RT_ROUND: return nearbyint(x);
  case RT_ROUND_AFZ: return round(x);
  case RT_TAN: return tan(x);
  case RT_CBRT: return cbrt(x);
  case RT_REM: return fmod(x, y);
  case RT_ATAN2: return atan2(x, y);
  case RT_POW: return pow(x, y);
  default: return 0;
  }
}

static i64 wrap_add(i64 x, i64 y) { return (i64)((uint64_t)x + (uint64_t)y); }
static i64 wrap_mul(i64 x, i64 y) { return (i64)((uint64_t)x * (uint64_t)y); }

static i64 pow_i(i64 base, i64 e) {
  if (e < 0) {
    if (base == 1) return 1;
    if (base == -1) return (e & 1) ? -1 : 1;
    return 0;
  }
  i64 r = 1;
  while (e) {
    if (e & 1) r = wrap_mul(r, base);
    base = wrap_mul(base, base);
    e >>= 1;
  }
  return r;
}

/* an integer of type t as the bits of its width, unsigned, and sign-extended from that width */
static int bits_of(rt_dtype t) { return (int)rt_dtype_size(t) * 8; }
static uint64_t width_bits(i64 x, rt_dtype t) { int w = bits_of(t); return w >= 64 ? (uint64_t)x : (uint64_t)x & ((1ull << w) - 1); }
static i64 signed_bits(i64 x, rt_dtype t) { int w = bits_of(t); return w >= 64 ? x : (i64)(width_bits(x, t) << (64 - w)) >> (64 - w); }

static i64 ew_i(int fn, i64 x, i64 y, rt_dtype t, float al, float be) {
  switch (fn) {
  case RT_AFFINE: return wrap_add(wrap_mul(x, (i64)al), (i64)be);   /* a broadcast copies: 1, 0 */
  case RT_NEG: return wrap_mul(x, -1);
  case RT_RELU: return x < 0 ? 0 : x;
  case RT_ADD: return wrap_add(x, y);
  case RT_SUB: return (i64)((uint64_t)x - (uint64_t)y);
  case RT_MUL: return wrap_mul(x, y);
  case RT_DIV:
    if (y == 0) return -1;
    if (x == INT64_MIN && y == -1) return x;
    return x / y;
  case RT_MAX: return x > y ? x : y;
  case RT_MIN: return x < y ? x : y;
  case RT_GE: return x >= y;
  case RT_ABS: return x < 0 ? wrap_mul(x, -1) : x;
  case RT_SIGN: return (x > 0) - (x < 0);
  case RT_POW: return pow_i(x, y);
  case RT_NOT: return t == RT_I1 ? !x : ~x;
  case RT_AND: return x & y;
  case RT_OR: return x | y;
  case RT_XOR: return x ^ y;
  case RT_REM:
    if (y == 0) return x;
    if (y == -1) return 0;           /* INT_MIN % -1 = 0, no trap */
    return x % y;
  case RT_POPCNT: return __builtin_popcountll(width_bits(x, t));
  case RT_CLZ: { uint64_t u = width_bits(x, t); return u ? __builtin_clzll(u) - (64 - bits_of(t)) : bits_of(t); }
  case RT_SHL: return y < 0 || y >= bits_of(t) ? 0 : (i64)((uint64_t)x << y);
  case RT_SHRA: { i64 s = signed_bits(x, t); return y < 0 || y >= bits_of(t) ? (s < 0 ? -1 : 0) : s >> y; }
  case RT_SHRL: return y < 0 || y >= bits_of(t) ? 0 : (i64)(width_bits(x, t) >> y);
  default: return 0;
  }
}

/* ---- comparisons ---- */

/* IEEE-754 totalOrder as integer keys: -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN */
static i64 key_f(float x) { int32_t s = (int32_t)fbits(x); return s < 0 ? (i64)(s ^ 0x7FFFFFFF) : s; }
static i64 key_d(double x) { i64 s; memcpy(&s, &x, 8); return s < 0 ? s ^ INT64_MAX : s; }

static int cmp_i(int fn, i64 x, i64 y) {
  switch (fn) {
  case RT_CMP_EQ: return x == y;
  case RT_CMP_NE: return x != y;
  case RT_CMP_LT: return x < y;
  case RT_CMP_LE: return x <= y;
  case RT_CMP_GT: return x > y;
  default: return x >= y;
  }
}

static int cmp_d(int fn, double x, double y) {   /* quiet: false with a NaN, except NE */
  switch (fn) {
  case RT_CMP_EQ: return x == y;
  case RT_CMP_NE: return x != y;
  case RT_CMP_LT: return x < y;
  case RT_CMP_LE: return x <= y;
  case RT_CMP_GT: return x > y;
  default: return x >= y;
  }
}

/* ---- elementwise over strided inputs ---- */

enum { K_CONVERT, K_BITCAST, K_SELECT, K_CMP_F, K_CMP_D, K_CMP_I, K_F, K_D, K_I };

typedef struct ewrow {
  int kind, fn, total;
  rt_dtype od, id[3];
  float alf, bef;
  double ald;                /* alpha for f64: unrounded (rt_alpha) */
  size_t es;                 /* out's element size (select copies raw elements) */
} ewrow;

static void run_row(const ewrow *w, i64 L, void *o, i64 oo, const void *const *in, const i64 *off, const i64 *st) {
  const void *a = in[0], *b = in[1], *c = in[2];
  i64 ia = off[0], ib = off[1], ic = off[2];
  for (i64 j = 0; j < L; j++, oo++, ia += st[0], ib += st[1], ic += st[2]) {
    switch (w->kind) {
    case K_CONVERT:
      if (rt_dtype_isfloat(w->id[0])) rt_store_f(w->od, o, oo, rt_load_f(w->id[0], a, ia));
      else rt_store_i(w->od, o, oo, rt_load_i(w->id[0], a, ia));
      break;
    case K_BITCAST:
      memcpy((char *)o + (size_t)oo * w->es, (const char *)a + (size_t)ia * w->es, w->es);
      break;
    case K_SELECT: {
      int p = rt_load_i(w->id[0], a, ia) != 0;
      const void *src = p ? b : c;
      i64 is = p ? ib : ic;
      rt_dtype sd = p ? w->id[1] : w->id[2];
      if (sd == w->od) memcpy((char *)o + (size_t)oo * w->es, (const char *)src + (size_t)is * w->es, w->es);
      else if (rt_dtype_isfloat(sd)) rt_store_f(w->od, o, oo, rt_load_f(sd, src, is));
      else rt_store_i(w->od, o, oo, rt_load_i(sd, src, is));
      break;
    }
    case K_CMP_F: {
      float x = (float)rt_load_f(w->id[0], a, ia), y = (float)rt_load_f(w->id[1], b, ib);
      int r = w->total ? cmp_i(w->fn, key_f(x), key_f(y)) : cmp_d(w->fn, x, y);
      rt_store_i(w->od, o, oo, r);
      break;
    }
    case K_CMP_D: {
      double x = rt_load_f(w->id[0], a, ia), y = rt_load_f(w->id[1], b, ib);
      int r = w->total ? cmp_i(w->fn, key_d(x), key_d(y)) : cmp_d(w->fn, x, y);
      rt_store_i(w->od, o, oo, r);
      break;
    }
    case K_CMP_I:
      rt_store_i(w->od, o, oo, cmp_i(w->fn, rt_load_i(w->id[0], a, ia), rt_load_i(w->id[1], b, ib)));
      break;
    case K_F: {
      float x = (float)rt_load_f(w->id[0], a, ia), y = b ? (float)rt_load_f(w->id[1], b, ib) : 0.0f;
      rt_store_f(w->od, o, oo, ew_f(w->fn, x, y, w->alf, w->bef));
      break;
    }
    case K_D: {
      double x = rt_load_f(w->id[0], a, ia), y = b ? rt_load_f(w->id[1], b, ib) : 0.0;
      rt_store_f(w->od, o, oo, ew_d(w->fn, x, y, w->ald, w->bef));
      break;
    }
    default: {
      i64 x = rt_load_i(w->id[0], a, ia), y = b ? rt_load_i(w->id[1], b, ib) : 0;
      rt_store_i(w->od, o, oo, ew_i(w->fn, x, y, w->od, w->alf, w->bef));
      break;
    }
    }
  }
}

int rt_any_ew(const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  int fn = ins->fn, ar = rt_ewfn_arity((rt_ewfn)fn);
  if (ar < 1 || ar > 3) return diag_errbuf(err, errlen, "unknown elementwise function %d", fn);
  if (ins->rank > RT_MAXRANK) return diag_errbuf(err, errlen, "rank %d is over %d", ins->rank, RT_MAXRANK);
  ewrow w = {0};
  w.fn = fn;
  w.total = ins->mode == RT_CMP_TOTAL;
  w.od = (rt_dtype)ins->odt;
  w.es = rt_dtype_size(w.od);
  w.alf = ins->alpha;
  w.ald = rt_alpha(ins);
  w.bef = ins->beta;
  for (int k = 0; k < 3; k++) w.id[k] = (rt_dtype)ins->idt[k];
  rt_dtype ct = w.od;                      /* the type the function computes in */
  if (fn >= RT_CMP_EQ && fn <= RT_CMP_GE) ct = w.id[0];
  if (fn == RT_CONVERT) w.kind = K_CONVERT;
  else if (fn == RT_BITCAST) {
    if (rt_dtype_size(w.id[0]) != w.es) return diag_errbuf(err, errlen, "bitcast of %s to %s: the widths differ", rt_dtype_name(w.id[0]), rt_dtype_name(w.od));
    w.kind = K_BITCAST;
  }
  else if (fn == RT_SELECT) w.kind = K_SELECT;
  else if (fn >= RT_CMP_EQ && fn <= RT_CMP_GE)
    w.kind = !rt_dtype_isfloat(ct) ? K_CMP_I : ct == RT_F64 ? K_CMP_D : K_CMP_F;
  else if (fn == RT_NOT || fn == RT_AND || fn == RT_OR || fn == RT_XOR || fn == RT_POPCNT || fn == RT_CLZ ||
           (fn >= RT_SHL && fn <= RT_SHRL)) {
    if (rt_dtype_isfloat(ct)) return diag_errbuf(err, errlen, "%s of %s values", rt_ewfn_name((rt_ewfn)fn), rt_dtype_name(ct));
    w.kind = K_I;
  } else w.kind = !rt_dtype_isfloat(ct) ? K_I : ct == RT_F64 ? K_D : K_F;
  /* drop unit dims, merge dims every input walks contiguously (as kern_cpu.c's k_ew) */
  i64 shp[RT_MAXRANK], st[3][RT_MAXRANK];
  int r = 0;
  for (int d = 0; d < ins->rank; d++) {
    i64 s = ins->shape[d];
    if (s == 0) return 0;
    if (s == 1) continue;
    int merge = r > 0;
    for (int k = 0; k < ar && merge; k++)
      if (st[k][r - 1] != ins->stride[k][d] * s) merge = 0;
    if (merge) {
      shp[r - 1] *= s;
      for (int k = 0; k < 3; k++) st[k][r - 1] = k < ar ? ins->stride[k][d] : 0;
    } else {
      shp[r] = s;
      for (int k = 0; k < 3; k++) st[k][r] = k < ar ? ins->stride[k][d] : 0;
      r++;
    }
  }
  if (r == 0) { shp[0] = 1; st[0][0] = st[1][0] = st[2][0] = 0; r = 1; }
  const void *ptr[3] = {in[0], ar > 1 ? in[1] : NULL, ar > 2 ? in[2] : NULL};
  i64 L = shp[r - 1], rows = 1, idx[RT_MAXRANK] = {0}, off[3] = {0, 0, 0};
  i64 inner[3] = {st[0][r - 1], st[1][r - 1], st[2][r - 1]};
  for (int d = 0; d < r - 1; d++) rows *= shp[d];
  for (i64 row = 0; row < rows; row++) {
    run_row(&w, L, out, row * L, ptr, off, inner);
    for (int d = r - 2; d >= 0; d--) {
      idx[d]++;
      for (int k = 0; k < 3; k++) off[k] += st[k][d];
      if (idx[d] < shp[d]) break;
      for (int k = 0; k < 3; k++) off[k] -= st[k][d] * shp[d];
      idx[d] = 0;
    }
  }
  return 0;
}

/* ---- fill, iota ---- */

void rt_any_fill(const rt_instr *ins, void *out) {
  rt_dtype t = (rt_dtype)ins->odt;
  size_t es = rt_dtype_size(t);
  if (ins->nelem <= 0) return;
  rt_store_f(t, out, 0, ins->value);
  for (i64 k = 1; k < ins->nelem; k++) memcpy((char *)out + (size_t)k * es, out, es);
}

void rt_any_iota(const rt_instr *ins, void *out) {
  rt_dtype t = (rt_dtype)ins->odt;
  i64 k = 0;
  for (i64 o = 0; o < ins->outer; o++)
    for (i64 j = 0; j < ins->n; j++)
      for (i64 i = 0; i < ins->inner; i++) rt_store_i(t, out, k++, j);
}

/* ---- reductions ---- */

static double lowest_d(rt_dtype t, int max) { (void)t; return max ? -INFINITY : INFINITY; }

static i64 limit_i(rt_dtype t, int lowest) {
  switch (t) {
  case RT_I32: return lowest ? INT32_MIN : INT32_MAX;
  case RT_I8: return lowest ? -128 : 127;
  case RT_UI8: return lowest ? 0 : 255;
  case RT_I16: return lowest ? INT16_MIN : INT16_MAX;
  case RT_UI16: return lowest ? 0 : UINT16_MAX;
  case RT_UI32: return lowest ? 0 : UINT32_MAX;
  case RT_I1: return lowest ? 0 : 1;
  default: return lowest ? INT64_MIN : INT64_MAX;
  }
}

int rt_any_reduce(const rt_instr *ins, void *out, const void *in, char *err, size_t errlen) {
  rt_dtype t = (rt_dtype)ins->idt[0], ot = (rt_dtype)ins->odt;
  i64 NO = ins->outer, NN = ins->n, NI = ins->inner;
  int fn = ins->fn;
  if (fn != RT_RSUM && fn != RT_RMAX && fn != RT_RMIN) return diag_errbuf(err, errlen, "unknown reduction %d", fn);
  for (i64 o = 0; o < NO; o++)
    for (i64 i = 0; i < NI; i++) {
      i64 base = o * NN * NI + i;
      if (rt_dtype_isfloat(t)) {
        double acc = fn == RT_RSUM ? 0.0 : lowest_d(t, fn == RT_RMAX);
        for (i64 j = 0; j < NN; j++) {
          double x = rt_load_f(t, in, base + j * NI);
          if (rt_dtype_f32arith(t) && fn != RT_RSUM) x = (float)x;
          acc = fn == RT_RSUM ? acc + x : fn == RT_RMAX ? maxnan_d(x, acc) : minnan_d(x, acc);
        }
        if (fn == RT_RSUM) acc *= t == RT_F64 ? rt_alpha(ins) : (double)ins->alpha;   /* f64: a mean's 1/n unrounded */
        rt_store_f(ot, out, o * NI + i, acc);
      } else {
        i64 acc = fn == RT_RSUM ? 0 : limit_i(t, fn == RT_RMAX);
        for (i64 j = 0; j < NN; j++) {
          i64 x = rt_load_i(t, in, base + j * NI);
          acc = fn == RT_RSUM ? wrap_add(acc, x) : fn == RT_RMAX ? (x > acc ? x : acc) : (x < acc ? x : acc);
        }
        rt_store_i(ot, out, o * NI + i, acc);
      }
    }
  return 0;
}

/* ---- GEMM ---- */

/* C_b = alpha op(A_b) op(B_b) + beta C_b in the operands' type: f64 by BLAS,
   bf16 and f16 through f32 copies and BLAS, integers by loops (wrapping). */
int rt_any_gemm(const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  rt_dtype t = (rt_dtype)ins->odt;
  i64 m = ins->m, n = ins->n, kk = ins->k, batch = ins->batch < 1 ? 1 : ins->batch;
  i64 sa = ins->stride_a, sb = ins->stride_b, sc = ins->stride_c;
  if (ins->idt[0] != t || ins->idt[1] != t)
    return diag_errbuf(err, errlen, "GEMM of %s and %s into %s", rt_dtype_name((rt_dtype)ins->idt[0]),
                       rt_dtype_name((rt_dtype)ins->idt[1]), rt_dtype_name(t));
  if (m < 0 || n < 0 || kk < 0) return diag_errbuf(err, errlen, "negative GEMM size");
  if (m == 0 || n == 0) return 0;
  if (m > INT_MAX || n > INT_MAX || kk > INT_MAX)
    return diag_errbuf(err, errlen, "GEMM of %" PRId64 "x%" PRId64 "x%" PRId64 " is too large for BLAS", m, n, kk);
  int lda = (int)(ins->transa ? m : kk), ldb = (int)(ins->transb ? kk : n);
  if (t == RT_F64) {
    for (i64 bt = 0; bt < batch; bt++)
      cblas_dgemm(CblasRowMajor, ins->transa ? CblasTrans : CblasNoTrans, ins->transb ? CblasTrans : CblasNoTrans,
                  (int)m, (int)n, (int)kk, ins->alpha, (const double *)in[0] + bt * sa, lda,
                  (const double *)in[1] + bt * sb, ldb, ins->beta, (double *)out + bt * sc, (int)n);
    return 0;
  }
  if (t == RT_BF16 || t == RT_F16) {
    float *a = malloc(sizeof(float) * (size_t)(m * kk + 1)), *b = malloc(sizeof(float) * (size_t)(kk * n + 1)),
          *c = malloc(sizeof(float) * (size_t)(m * n + 1));
    if (!a || !b || !c) { free(a); free(b); free(c); return diag_errbuf(err, errlen, "out of memory"); }
    for (i64 bt = 0; bt < batch; bt++) {
      for (i64 x = 0; x < m * kk; x++) a[x] = (float)rt_load_f(t, in[0], bt * sa + x);
      for (i64 x = 0; x < kk * n; x++) b[x] = (float)rt_load_f(t, in[1], bt * sb + x);
      for (i64 x = 0; x < m * n; x++) c[x] = ins->beta != 0 ? (float)rt_load_f(t, out, bt * sc + x) : 0.0f;
      if (kk > 0)
        cblas_sgemm(CblasRowMajor, ins->transa ? CblasTrans : CblasNoTrans, ins->transb ? CblasTrans : CblasNoTrans,
                    (int)m, (int)n, (int)kk, ins->alpha, a, lda, b, ldb, ins->beta, c, (int)n);
      for (i64 x = 0; x < m * n; x++) rt_store_f(t, out, bt * sc + x, c[x]);
    }
    free(a); free(b); free(c);
    return 0;
  }
  if (rt_dtype_isfloat(t)) return diag_errbuf(err, errlen, "GEMM of %s", rt_dtype_name(t));
  for (i64 bt = 0; bt < batch; bt++)
    for (i64 i = 0; i < m; i++)
      for (i64 j = 0; j < n; j++) {
        i64 acc = ins->beta != 0 ? rt_load_i(t, out, bt * sc + i * n + j) : 0;
        for (i64 q = 0; q < kk; q++) {
          i64 x = rt_load_i(t, in[0], bt * sa + (ins->transa ? q * m + i : i * kk + q));
          i64 y = rt_load_i(t, in[1], bt * sb + (ins->transb ? j * kk + q : q * n + j));
          acc = wrap_add(acc, wrap_mul(x, y));
        }
        rt_store_i(t, out, bt * sc + i * n + j, acc);
      }
  return 0;
}

/*
** test_kernels.c: every CPU kernel against a naive double-precision
** reference written here (random inputs from a fixed seed), gradients
** against finite differences, error messages, and the PyTorch golden
** values in ops.safetensors.
*/
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/backend.h"
#include "runtime/dtype.h"
#include "runtime/safet.h"

/* ---- helpers ---- */

static uint64_t rng_state = 0x1234567;

static double urand(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(rng_state >> 11) / 9007199254740992.0;
}

static float frand(double lo, double hi) { return (float)(lo + (hi - lo) * urand()); }

static float *rvec(int64_t n, double lo, double hi) {
  float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
  for (int64_t i = 0; i < n; i++) v[i] = frand(lo, hi);
  return v;
}

static rt_instr mk(rt_op op) {
  rt_instr ins;
  memset(&ins, 0, sizeof ins);
  ins.op = (uint8_t)op;
  for (int k = 0; k < RT_MAXIN; k++) ins.in[k] = -1;
  ins.group = -1;
  ins.src = -1;
  return ins;
}

static char err[512];

static int run(const rt_instr *ins, void *out, void *in0, void *in1, void *in2) {
  void *in[RT_MAXIN] = {in0, in1, in2, NULL};
  err[0] = 0;
  rt_kernel k = rt_backend_cpu()->kernels[ins->op];
  cr_assert_not_null(k, "no kernel for %s", rt_op_name((rt_op)ins->op));
  return k(rt_backend_cpu()->ctx, ins, out, in, err, sizeof err);
}

static void run_ok(const rt_instr *ins, void *out, void *in0, void *in1, void *in2) {
  int rc = run(ins, out, in0, in1, in2);
  cr_assert_eq(rc, 0, "%s failed: %s", rt_op_name((rt_op)ins->op), err);
}

static int close_to(double got, double want, double rtol, double atol) {
  if (isnan(want)) return isnan(got);
  if (isinf(want)) return got == want;
  return fabs(got - want) <= atol + rtol * fabs(want);
}

static void expect_close(const char *what, const float *got, const double *want, int64_t n, double rtol, double atol) {
  for (int64_t i = 0; i < n; i++)
    cr_assert(close_to(got[i], want[i], rtol, atol), "%s[%lld]: got %.9g, want %.9g", what, (long long)i,
              (double)got[i], want[i]);
}

static void expect_closef(const char *what, const float *got, const float *want, int64_t n, double rtol, double atol) {
  for (int64_t i = 0; i < n; i++)
    cr_assert(close_to(got[i], want[i], rtol, atol), "%s[%lld]: got %.9g, want %.9g", what, (long long)i,
              (double)got[i], (double)want[i]);
}

static void contig_strides(int rank, const int64_t *shape, int64_t *st) {
  int64_t acc = 1;
  for (int d = rank - 1; d >= 0; d--) { st[d] = acc; acc *= shape[d]; }
}

/* ---- elementwise ---- */

static double ref_ew(int fn, double x, double y, double al, double be) {
  double s = 1 / (1 + exp(-x)), c = sqrt(2 / M_PI), u = c * (x + 0.044715 * x * x * x), t = tanh(u);
  switch (fn) {
  case RT_NEG: return -x;
  case RT_EXP: return exp(x);
  case RT_LOG: return log(x);
  case RT_SQRT: return sqrt(x);
  case RT_RSQRT: return 1 / sqrt(x);
  case RT_TANH: return tanh(x);
  case RT_RELU: return x > 0 ? x : 0;
  case RT_GELU: return 0.5 * x * (1 + erf(x / sqrt(2)));
  case RT_GELU_TANH: return 0.5 * x * (1 + t);
  case RT_SIGMOID: return s;
  case RT_SILU: return x * s;
  case RT_AFFINE: return x * al + be;
  case RT_ADD: return x + y;
  case RT_SUB: return x - y;
  case RT_MUL: return x * y;
  case RT_DIV: return x / y;
  case RT_MAX: return x > y ? x : y;
  case RT_MIN: return x < y ? x : y;
  case RT_GE: return x >= y ? 1 : 0;
  case RT_RELU_GRAD: return x > 0 ? y : 0;
  case RT_GELU_GRAD: return y * (0.5 * (1 + erf(x / sqrt(2))) + x * exp(-x * x / 2) / sqrt(2 * M_PI));
  case RT_GELU_TANH_GRAD:
    return y * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x));
  case RT_SILU_GRAD: return y * (s + x * s * (1 - s));
  case RT_AXPY: return x + al * y;
  case RT_AXPBY: return al * x + be * y;
  case RT_ADAM_DENOM: return sqrt(x) * al + be;
  }
  return NAN;
}

static int positive_only(int fn) { return fn == RT_LOG || fn == RT_SQRT || fn == RT_RSQRT || fn == RT_ADAM_DENOM; }

Test(ew, every_function_contiguous) {
  for (int fn = 0; fn <= RT_ADAM_DENOM; fn++) {     /* the f32 functions; the others: dtype tests */
    int64_t n = 1003;   /* not a multiple of 8: the tail runs too */
    double lo = positive_only(fn) ? 0.05 : -4, hi = 4;
    float *a = rvec(n, lo, hi), *b = rvec(n, fn == RT_DIV ? 0.5 : -4, 4), *o = rvec(n, 0, 0);
    double *want = malloc(n * sizeof *want);
    rt_instr ins = mk(RT_EW);
    ins.fn = (uint8_t)fn;
    ins.rank = 1;
    ins.shape[0] = n;
    ins.stride[0][0] = ins.stride[1][0] = 1;
    ins.alpha = 0.5f;
    ins.beta = 0.25f;
    run_ok(&ins, o, a, rt_ewfn_arity(fn) > 1 ? b : NULL, NULL);
    for (int64_t i = 0; i < n; i++) want[i] = ref_ew(fn, a[i], b[i], 0.5, 0.25);
    expect_close(rt_ewfn_name(fn), o, want, n, 2e-6, 2e-6);
    free(a); free(b); free(o); free(want);
  }
}

/* the vectorised exp, tanh, erf and sigmoid over their whole ranges */
Test(ew, transcendentals_over_wide_ranges) {
  struct { int fn; double lo, hi, rtol, atol; } cases[] = {
    {RT_EXP, -103, 88.7, 3e-7, 1e-44},
    {RT_EXP, -1e-3, 1e-3, 2e-7, 0},
    {RT_TANH, -12, 12, 3e-7, 0},
    {RT_TANH, -0.5, 0.5, 3e-7, 0},
    {RT_TANH, -1e-6, 1e-6, 2e-7, 0},
    {RT_SIGMOID, -100, 100, 3e-7, 1e-44},
    {RT_GELU, -6, 6, 3e-6, 1e-12},      /* x^2/2 rounds in float: ~2e-6 relative at x = -6 */
    {RT_GELU, -3, 6, 2e-6, 1e-12},
    {RT_GELU_TANH, -6, 8, 4e-6, 1e-12},   /* the same: 4e-6 where gelu_tanh is 1e-7 */
    {RT_GELU_TANH, -2, 8, 1e-6, 1e-12},
    {RT_SILU, -80, 80, 1e-6, 1e-30},
  };
  int64_t n = 100001;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  double *want = malloc(n * sizeof *want);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    for (int64_t i = 0; i < n; i++) {
      x[i] = (float)(cases[c].lo + (cases[c].hi - cases[c].lo) * i / (n - 1));
      want[i] = ref_ew(cases[c].fn, x[i], 0, 1, 0);
    }
    rt_instr ins = mk(RT_EW);
    ins.fn = (uint8_t)cases[c].fn;
    ins.rank = 1;
    ins.shape[0] = n;
    ins.stride[0][0] = 1;
    run_ok(&ins, y, x, NULL, NULL);
    expect_close(rt_ewfn_name(cases[c].fn), y, want, n, cases[c].rtol, cases[c].atol);
  }
  float sp[6] = {-INFINITY, INFINITY, NAN, 89, -110, -0.0f};
  rt_instr ins = mk(RT_EW);
  ins.fn = RT_EXP; ins.rank = 1; ins.shape[0] = 6; ins.stride[0][0] = 1;
  run_ok(&ins, y, sp, NULL, NULL);
  cr_assert(y[0] == 0 && isinf(y[1]) && isnan(y[2]) && isinf(y[3]) && y[4] == 0 && y[5] == 1);
  ins.fn = RT_TANH;
  run_ok(&ins, y, sp, NULL, NULL);
  cr_assert(y[0] == -1 && y[1] == 1 && isnan(y[2]) && y[3] == 1 && y[4] == -1 && y[5] == 0 && signbit(y[5]));
  free(x); free(y); free(want);
}

Test(ew, arity_and_names) {
  cr_assert_eq(rt_ewfn_arity(RT_NEG), 1);
  cr_assert_eq(rt_ewfn_arity(RT_AFFINE), 1);
  cr_assert_eq(rt_ewfn_arity(RT_ADAM_DENOM), 1);
  cr_assert_eq(rt_ewfn_arity(RT_ADD), 2);
  cr_assert_eq(rt_ewfn_arity(RT_SILU_GRAD), 2);
  cr_assert_str_eq(rt_ewfn_name(RT_GELU_TANH_GRAD), "gelu_tanh_grad");
  cr_assert_str_eq(rt_ewfn_name(RT_ADAM_DENOM), "adam_denom");
  cr_assert_str_eq(rt_op_name(RT_GEMM), "gemm");
  cr_assert_str_eq(rt_op_name(RT_ALL_TO_ALL), "all_to_all");
}

/* out[idx] = fn(in0, in1) over shape with the given strides, reference */
static void ew_case(int fn, int rank, const int64_t *shape, const int64_t *sa, const int64_t *sb, int64_t na,
                    int64_t nb) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= shape[d];
  float *a = rvec(na, -3, 3), *b = rvec(nb, 0.5, 3), *o = rvec(n, 0, 0);
  double *want = malloc(n * sizeof *want);
  rt_instr ins = mk(RT_EW);
  ins.fn = (uint8_t)fn;
  ins.rank = (uint8_t)rank;
  for (int d = 0; d < rank; d++) {
    ins.shape[d] = shape[d];
    ins.stride[0][d] = sa[d];
    ins.stride[1][d] = sb[d];
  }
  run_ok(&ins, o, a, b, NULL);
  int64_t idx[RT_MAXRANK] = {0};
  for (int64_t i = 0; i < n; i++) {
    int64_t oa = 0, ob = 0;
    for (int d = 0; d < rank; d++) { oa += idx[d] * sa[d]; ob += idx[d] * sb[d]; }
    want[i] = ref_ew(fn, a[oa], b[ob], 1, 0);
    for (int d = rank - 1; d >= 0; d--) { if (++idx[d] < shape[d]) break; idx[d] = 0; }
  }
  expect_close(rt_ewfn_name(fn), o, want, n, 1e-6, 1e-7);
  free(a); free(b); free(o); free(want);
}

Test(ew, broadcasting_patterns) {
  int fns[] = {RT_ADD, RT_SUB, RT_MUL, RT_DIV, RT_MAX, RT_GELU_GRAD};
  for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
    int fn = fns[f];
    /* bias add: [2,5,33] + [33] */
    ew_case(fn, 3, (int64_t[]){2, 5, 33}, (int64_t[]){165, 33, 1}, (int64_t[]){0, 0, 1}, 330, 33);
    /* bias as in0 */
    ew_case(fn, 3, (int64_t[]){2, 5, 33}, (int64_t[]){0, 0, 1}, (int64_t[]){165, 33, 1}, 33, 330);
    /* [4,8] - [4,1]: a column broadcast */
    ew_case(fn, 2, (int64_t[]){4, 8}, (int64_t[]){8, 1}, (int64_t[]){1, 0}, 32, 4);
    /* scalar in1, scalar in0, both scalar */
    ew_case(fn, 2, (int64_t[]){7, 9}, (int64_t[]){9, 1}, (int64_t[]){0, 0}, 63, 1);
    ew_case(fn, 2, (int64_t[]){7, 9}, (int64_t[]){0, 0}, (int64_t[]){9, 1}, 1, 63);
    ew_case(fn, 2, (int64_t[]){7, 9}, (int64_t[]){0, 0}, (int64_t[]){0, 0}, 1, 1);
    /* [3,4,5] * [4,5] */
    ew_case(fn, 3, (int64_t[]){3, 4, 5}, (int64_t[]){20, 5, 1}, (int64_t[]){0, 5, 1}, 60, 20);
    /* in1 read transposed (general path) */
    ew_case(fn, 2, (int64_t[]){6, 11}, (int64_t[]){11, 1}, (int64_t[]){1, 6}, 66, 66);
    /* middle-dim broadcast with unit dims around: [2,1,3,1,4] */
    ew_case(fn, 5, (int64_t[]){2, 1, 3, 1, 4}, (int64_t[]){12, 12, 4, 4, 1}, (int64_t[]){4, 0, 0, 0, 1}, 24, 8);
    /* rank 0 (a scalar op) */
    ew_case(fn, 0, (int64_t[]){1}, (int64_t[]){0}, (int64_t[]){0}, 1, 1);
  }
}

Test(ew, nan_inf_and_extremes) {
  float a[] = {NAN, 1, -INFINITY, 2, 3, NAN, -0.0f, 1e30f, -100, 100, -1000, 1000};
  float b[] = {1, NAN, 0, 2, NAN, NAN, 0.0f, 1, 1, 1, 1, 1};
  int n = 12;
  float o[12];
  rt_instr ins = mk(RT_EW);
  ins.rank = 1;
  ins.shape[0] = n;
  ins.stride[0][0] = ins.stride[1][0] = 1;
  ins.fn = RT_MAX;
  run_ok(&ins, o, a, b, NULL);
  cr_assert(isnan(o[0]) && isnan(o[1]) && isnan(o[4]) && isnan(o[5]));
  cr_assert_eq(o[2], 0);
  cr_assert_eq(o[3], 2);
  ins.fn = RT_MIN;
  run_ok(&ins, o, a, b, NULL);
  cr_assert(isnan(o[0]) && isnan(o[1]) && isnan(o[4]));
  cr_assert(isinf(o[2]) && o[2] < 0);
  ins.fn = RT_SIGMOID;
  run_ok(&ins, o, a, NULL, NULL);
  for (int i = 8; i < 12; i++) cr_assert(!isnan(o[i]) && o[i] >= 0 && o[i] <= 1, "sigmoid(%g) = %g", a[i], o[i]);
  cr_assert_eq(o[11], 1.0f);
  cr_assert_float_eq(o[8], (float)exp(-100.0), 1e-50);
  ins.fn = RT_SILU;
  run_ok(&ins, o, a, NULL, NULL);
  for (int i = 8; i < 12; i++) cr_assert(!isnan(o[i]));
  cr_assert_eq(o[11], 1000.0f);
  ins.fn = RT_SILU_GRAD;
  run_ok(&ins, o, a, b, NULL);
  for (int i = 8; i < 12; i++) cr_assert(!isnan(o[i]), "silu_grad(%g) = %g", a[i], o[i]);
  ins.fn = RT_RELU;
  run_ok(&ins, o, a, NULL, NULL);
  cr_assert(isnan(o[0]));
  cr_assert_eq(o[2], 0);
  ins.fn = RT_GE;
  run_ok(&ins, o, a, b, NULL);
  cr_assert_eq(o[3], 1.0f);
  cr_assert_eq(o[2], 0.0f);
  cr_assert_eq(o[6], 1.0f);
}

/* ---- GEMM ---- */

static void gemm_ref(int ta, int tb, int64_t m, int64_t n, int64_t k, double al, const float *A, const float *B,
                     double be, const float *C0, double *C) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t p = 0; p < k; p++) {
        double a = ta ? A[p * m + i] : A[i * k + p];
        double b = tb ? B[j * k + p] : B[p * n + j];
        s += a * b;
      }
      C[i * n + j] = al * s + (be != 0 ? be * C0[i * n + j] : 0);
    }
}

static void gemm_case(int ta, int tb, int64_t batch, int64_t m, int64_t n, int64_t k, int shareA, int shareB,
                      float al, float be) {
  int64_t sa = shareA ? 0 : m * k, sb = shareB ? 0 : k * n, sc = m * n;
  float *A = rvec(shareA ? m * k : batch * m * k, -1, 1), *B = rvec(shareB ? k * n : batch * k * n, -1, 1);
  float *C = rvec(batch * m * n, -1, 1), *C0 = malloc(batch * m * n * sizeof *C0);
  memcpy(C0, C, batch * m * n * sizeof *C0);
  double *want = malloc(batch * m * n * sizeof *want);
  rt_instr ins = mk(RT_GEMM);
  ins.batch = batch; ins.m = m; ins.n = n; ins.k = k;
  ins.transa = (int8_t)ta; ins.transb = (int8_t)tb;
  ins.stride_a = sa; ins.stride_b = sb; ins.stride_c = sc;
  ins.alpha = al; ins.beta = be;
  run_ok(&ins, C, A, B, NULL);
  for (int64_t b = 0; b < batch; b++)
    gemm_ref(ta, tb, m, n, k, al, A + b * sa, B + b * sb, be, C0 + b * sc, want + b * sc);
  char what[64];
  snprintf(what, sizeof what, "gemm %c%c b%lld", ta ? 't' : 'n', tb ? 't' : 'n', (long long)batch);
  expect_close(what, C, want, batch * m * n, 1e-5, 1e-5);
  free(A); free(B); free(C); free(C0); free(want);
}

Test(gemm, transposes_batches_and_accumulation) {
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) {
      gemm_case(ta, tb, 1, 7, 5, 9, 0, 0, 1, 0);
      gemm_case(ta, tb, 3, 4, 6, 5, 0, 0, 1, 0);
      gemm_case(ta, tb, 3, 4, 6, 5, 1, 0, 1, 0);    /* shared A */
      gemm_case(ta, tb, 3, 4, 6, 5, 0, 1, 1, 0);    /* shared B (folds into one GEMM when A is plain) */
      gemm_case(ta, tb, 2, 3, 4, 5, 0, 0, 0.5f, 1); /* C += 0.5 A B */
    }
  gemm_case(0, 0, 1, 33, 65, 17, 0, 0, 2, 0.25f);
}

Test(gemm, zero_k_scales_c) {
  float C[6] = {1, 2, 3, 4, 5, 6};
  rt_instr ins = mk(RT_GEMM);
  ins.batch = 1; ins.m = 2; ins.n = 3; ins.k = 0; ins.stride_c = 6;
  ins.alpha = 1; ins.beta = 0;
  float dummy = 0;
  run_ok(&ins, C, &dummy, &dummy, NULL);
  for (int i = 0; i < 6; i++) cr_assert_eq(C[i], 0);
}

/* ---- reductions ---- */

static void reduce_case(int fn, int64_t O, int64_t N, int64_t I, float alpha, double lo, double hi) {
  float *x = rvec(O * N * I, lo, hi), *y = rvec(O * I, 0, 0);
  double *want = malloc(O * I * sizeof *want);
  for (int64_t o = 0; o < O; o++)
    for (int64_t j = 0; j < I; j++) {
      double s = 0, m = -INFINITY;
      for (int64_t r = 0; r < N; r++) {
        double v = x[(o * N + r) * I + j];
        s += v;
        if (v > m) m = v;
      }
      want[o * I + j] = fn == RT_RSUM ? s * alpha : m;
    }
  rt_instr ins = mk(RT_REDUCE);
  ins.fn = (uint8_t)fn;
  ins.outer = O; ins.n = N; ins.inner = I;
  ins.alpha = alpha;
  run_ok(&ins, y, x, NULL, NULL);
  expect_close(fn == RT_RSUM ? "sum" : "max", y, want, O * I, 1e-6, 1e-6);
  free(x); free(y); free(want);
}

Test(reduce, shapes) {
  for (int fn = RT_RSUM; fn <= RT_RMAX; fn++) {
    reduce_case(fn, 3, 4, 5, 1, -1, 1);
    reduce_case(fn, 7, 13, 1, 1, -1, 1);
    reduce_case(fn, 1, 37, 1029, 1, -1, 1);     /* column sums, more than one column block */
    reduce_case(fn, 2, 9, 3, 0.25f, -1, 1);
    reduce_case(fn, 1, 1, 1, 1, -1, 1);
  }
  reduce_case(RT_RSUM, 4, 5, 6, 1.0f / 20, -1, 1);  /* a mean */
}

Test(reduce, accurate_long_sums) {
  reduce_case(RT_RSUM, 1, 1000000, 1, 1, 0, 1);
  reduce_case(RT_RSUM, 1, 1000000, 1, 1e-6f, 0.5, 1);
  reduce_case(RT_RSUM, 1, 100000, 3, 1, 0, 1);
}

Test(reduce, max_propagates_nan) {
  float x[6] = {1, NAN, 3, 4, 5, 6}, y[2];
  rt_instr ins = mk(RT_REDUCE);
  ins.fn = RT_RMAX; ins.outer = 2; ins.n = 3; ins.inner = 1;
  run_ok(&ins, y, x, NULL, NULL);
  cr_assert(isnan(y[0]));
  cr_assert_eq(y[1], 6);
}

Test(reduce, max_grad_shares_ties) {
  /* [outer 2, n 4, inner 2] */
  float x[16] = {1, 5, 3, 5, 3, 2, 0, 5,    /* o=0: col 0 max 3 twice, col 1 max 5 three times */
                 9, 1, 2, 1, 3, 1, 4, 1};   /* o=1: col 0 max 9 once, col 1 all equal */
  float dy[4] = {6, 3, 8, 4}, dx[16];
  float want[16] = {0, 1, 3, 1, 3, 0, 0, 1,
                    8, 1, 0, 1, 0, 1, 0, 1};
  rt_instr ins = mk(RT_REDUCE_MAX_GRAD);
  ins.outer = 2; ins.n = 4; ins.inner = 2;
  run_ok(&ins, dx, x, dy, NULL);
  expect_closef("max_grad", dx, want, 16, 0, 0);
  /* inner == 1 */
  float x1[5] = {2, 7, 7, 1, 7}, dy1[1] = {3}, dx1[5], w1[5] = {0, 1, 1, 0, 1};
  ins.outer = 1; ins.n = 5; ins.inner = 1;
  run_ok(&ins, dx1, x1, dy1, NULL);
  expect_closef("max_grad", dx1, w1, 5, 1e-7, 0);
  /* inner == 1 over many rows (threads take them), ties every few rows */
  int64_t R = 4096, N = 64;
  float *xr = rvec(R * N, -3, 3), *dyr = rvec(R, -1, 1), *dxr = rvec(R * N, 0, 0), *wr = rvec(R * N, 0, 0);
  for (int64_t r = 0; r < R; r += 5) xr[r * N + 7] = xr[r * N + 40] = 4;
  for (int64_t r = 0; r < R; r++) {
    float m = -INFINITY;
    int ties = 0;
    for (int64_t c = 0; c < N; c++) if (xr[r * N + c] > m) m = xr[r * N + c];
    for (int64_t c = 0; c < N; c++) ties += xr[r * N + c] == m;
    for (int64_t c = 0; c < N; c++) wr[r * N + c] = xr[r * N + c] == m ? dyr[r] / ties : 0;
  }
  ins.outer = R; ins.n = N; ins.inner = 1;
  run_ok(&ins, dxr, xr, dyr, NULL);
  expect_closef("max_grad rows", dxr, wr, R * N, 1e-7, 0);
  free(xr); free(dyr); free(dxr); free(wr);
}

/* ---- softmax family ---- */

static void softmax_ref(const float *x, int64_t n, double *y, double *logy) {
  double m = -INFINITY, s = 0;
  for (int64_t i = 0; i < n; i++) if (x[i] > m) m = x[i];
  for (int64_t i = 0; i < n; i++) s += exp(x[i] - m);
  for (int64_t i = 0; i < n; i++) {
    if (y) y[i] = exp(x[i] - m) / s;
    if (logy) logy[i] = (x[i] - m) - log(s);
  }
}

Test(softmax, matches_reference_and_is_stable) {
  int64_t O = 5, n = 37;
  float *x = rvec(O * n, -5, 5), *y = rvec(O * n, 0, 0), *ly = rvec(O * n, 0, 0);
  for (int64_t i = 0; i < n; i++) x[n + i] += 1e4f;           /* row 1: huge values */
  for (int64_t i = 0; i < n; i++) if (i % 3) x[2 * n + i] = -INFINITY;   /* row 2: masked entries */
  for (int64_t i = 1; i < n; i++) x[3 * n + i] = -INFINITY;   /* row 3: one entry left */
  double *want = malloc(O * n * sizeof *want), *lwant = malloc(O * n * sizeof *lwant);
  for (int64_t r = 0; r < O; r++) softmax_ref(x + r * n, n, want + r * n, lwant + r * n);
  rt_instr ins = mk(RT_SOFTMAX);
  ins.outer = O; ins.n = n;
  run_ok(&ins, y, x, NULL, NULL);
  expect_close("softmax", y, want, O * n, 1e-5, 1e-7);
  ins.op = RT_LOG_SOFTMAX;
  run_ok(&ins, ly, x, NULL, NULL);
  expect_close("log_softmax", ly, lwant, O * n, 1e-5, 1e-5);
  cr_assert_eq(y[3 * n], 1.0f);
  cr_assert_eq(ly[3 * n], 0.0f);
  cr_assert(isinf(ly[2 * n + 1]) && ly[2 * n + 1] < 0);
  free(x); free(y); free(ly); free(want); free(lwant);
}

Test(softmax, gradients) {
  int64_t O = 4, n = 19;
  float *x = rvec(O * n, -3, 3), *y = rvec(O * n, 0, 0), *ly = rvec(O * n, 0, 0), *dy = rvec(O * n, -1, 1);
  float *dx = rvec(O * n, 0, 0);
  double *want = malloc(O * n * sizeof *want);
  rt_instr ins = mk(RT_SOFTMAX);
  ins.outer = O; ins.n = n;
  run_ok(&ins, y, x, NULL, NULL);
  ins.op = RT_LOG_SOFTMAX;
  run_ok(&ins, ly, x, NULL, NULL);
  /* d/dx sum(dy * softmax(x)), by central differences in double */
  for (int64_t r = 0; r < O; r++)
    for (int64_t i = 0; i < n; i++) {
      double h = 1e-3, sp = 0, sm = 0, lp = 0, lm = 0;
      float xr[64];
      double p[64], lq[64];
      memcpy(xr, x + r * n, n * sizeof *xr);
      xr[i] = (float)(x[r * n + i] + h);
      double hp = (double)xr[i] - x[r * n + i];
      softmax_ref(xr, n, p, lq);
      for (int64_t j = 0; j < n; j++) { sp += dy[r * n + j] * p[j]; lp += dy[r * n + j] * lq[j]; }
      xr[i] = (float)(x[r * n + i] - h);
      double hm = x[r * n + i] - (double)xr[i];
      softmax_ref(xr, n, p, lq);
      for (int64_t j = 0; j < n; j++) { sm += dy[r * n + j] * p[j]; lm += dy[r * n + j] * lq[j]; }
      want[r * n + i] = (sp - sm) / (hp + hm);
      (void)lp; (void)lm;
    }
  ins.op = RT_SOFTMAX_GRAD;
  run_ok(&ins, dx, y, dy, NULL);
  expect_close("softmax_grad", dx, want, O * n, 1e-3, 1e-5);
  /* log-softmax: dy - softmax * sum(dy), exactly */
  for (int64_t r = 0; r < O; r++) {
    double s = 0, p[64];
    for (int64_t j = 0; j < n; j++) s += dy[r * n + j];
    softmax_ref(x + r * n, n, p, NULL);
    for (int64_t j = 0; j < n; j++) want[r * n + j] = dy[r * n + j] - p[j] * s;
  }
  ins.op = RT_LOG_SOFTMAX_GRAD;
  run_ok(&ins, dx, ly, dy, NULL);
  expect_close("log_softmax_grad", dx, want, O * n, 1e-5, 1e-6);
  free(x); free(y); free(ly); free(dy); free(dx); free(want);
}

/* ---- layer norm ---- */

static void ln_ref(const float *x, const float *g, const float *b, int64_t n, double eps, double *y) {
  double mu = 0, var = 0;
  for (int64_t i = 0; i < n; i++) mu += x[i];
  mu /= n;
  for (int64_t i = 0; i < n; i++) var += (x[i] - mu) * (x[i] - mu);
  var /= n;
  for (int64_t i = 0; i < n; i++) y[i] = (x[i] - mu) / sqrt(var + eps) * (g ? g[i] : 1) + (b ? b[i] : 0);
}

/* the same in double throughout, for finite differences */
static double ln_loss(const double *x, const float *g, const float *cot, int64_t n, double eps) {
  double mu = 0, var = 0, s = 0;
  for (int64_t i = 0; i < n; i++) mu += x[i];
  mu /= n;
  for (int64_t i = 0; i < n; i++) var += (x[i] - mu) * (x[i] - mu);
  var /= n;
  for (int64_t i = 0; i < n; i++) s += cot[i] * (x[i] - mu) / sqrt(var + eps) * (g ? g[i] : 1);
  return s;
}

Test(layernorm, forward) {
  int64_t O = 6, n = 43;
  float *x = rvec(O * n, -2, 3), *g = rvec(n, 0.5, 1.5), *b = rvec(n, -1, 1), *y = rvec(O * n, 0, 0);
  for (int64_t i = 0; i < n; i++) x[i] += 1000;     /* a large mean */
  double *want = malloc(O * n * sizeof *want);
  rt_instr ins = mk(RT_LAYERNORM);
  ins.outer = O; ins.n = n; ins.alpha = 1e-5f;
  for (int var = 0; var < 4; var++) {
    const float *gg = var & 1 ? g : NULL, *bb = var & 2 ? b : NULL;
    for (int64_t r = 0; r < O; r++) ln_ref(x + r * n, gg, bb, n, 1e-5, want + r * n);
    run_ok(&ins, y, x, (void *)gg, (void *)bb);
    expect_close("layernorm", y, want, O * n, 2e-4, 2e-5);
  }
  free(x); free(g); free(b); free(y); free(want);
}

Test(layernorm, grad_vs_finite_differences) {
  int64_t O = 3, n = 16;
  float *x = rvec(O * n, -2, 2), *g = rvec(n, 0.5, 1.5), *dy = rvec(O * n, -1, 1), *dx = rvec(O * n, 0, 0);
  double *want = malloc(O * n * sizeof *want);
  rt_instr ins = mk(RT_LAYERNORM_GRAD);
  ins.outer = O; ins.n = n; ins.alpha = 1e-5f;
  for (int withg = 0; withg < 2; withg++) {
    const float *gg = withg ? g : NULL;
    for (int64_t r = 0; r < O; r++)
      for (int64_t i = 0; i < n; i++) {
        double xd[16], h = 1e-5;
        for (int64_t j = 0; j < n; j++) xd[j] = x[r * n + j];
        xd[i] += h;
        double lp = ln_loss(xd, gg, dy + r * n, n, 1e-5);
        xd[i] -= 2 * h;
        double lm = ln_loss(xd, gg, dy + r * n, n, 1e-5);
        want[r * n + i] = (lp - lm) / (2 * h);
      }
    run_ok(&ins, dx, x, (void *)gg, dy);
    expect_close("layernorm_grad", dx, want, O * n, 1e-4, 1e-5);
  }
  free(x); free(g); free(dy); free(dx); free(want);
}

/* ---- embeddings ---- */

Test(embed, gather_and_scatter_with_repeats) {
  int64_t V = 6, D = 5, T = 7;
  float *tab = rvec(V * D, -1, 1), *y = rvec(T * D, 0, 0), *dy = rvec(T * D, -1, 1), *dt = rvec(V * D, 9, 9);
  int32_t ids[7] = {1, 3, 3, 5, 0, 3, 1};
  rt_instr ins = mk(RT_GATHER_ROWS);
  ins.outer = T; ins.n = V; ins.inner = D; ins.n2 = V; ins.off = 0;
  run_ok(&ins, y, tab, ids, NULL);
  for (int64_t t = 0; t < T; t++)
    expect_closef("gather", y + t * D, tab + ids[t] * D, D, 0, 0);
  ins.op = RT_SCATTER_ROWS;
  run_ok(&ins, dt, ids, dy, NULL);
  double *want = calloc(V * D, sizeof *want);
  for (int64_t t = 0; t < T; t++)
    for (int64_t j = 0; j < D; j++) want[ids[t] * D + j] += dy[t * D + j];
  expect_close("scatter", dt, want, V * D, 1e-6, 1e-7);
  free(tab); free(y); free(dy); free(dt); free(want);
}

Test(embed, vocabulary_shard) {
  /* this device holds rows 4..7 of a 10-row table */
  int64_t D = 3;
  float tab[12], y[5 * 3], dy[5 * 3], dt[12];
  for (int i = 0; i < 12; i++) tab[i] = (float)(100 + i);
  for (int i = 0; i < 15; i++) dy[i] = (float)(i + 1);
  int32_t ids[5] = {4, 9, 7, 0, 5};
  rt_instr ins = mk(RT_GATHER_ROWS);
  ins.outer = 5; ins.n = 4; ins.inner = D; ins.n2 = 10; ins.off = 4;
  run_ok(&ins, y, tab, ids, NULL);
  float want[15] = {100, 101, 102, 0, 0, 0, 109, 110, 111, 0, 0, 0, 103, 104, 105};
  expect_closef("gather shard", y, want, 15, 0, 0);
  ins.op = RT_SCATTER_ROWS;
  run_ok(&ins, dt, ids, dy, NULL);
  float wdt[12] = {1, 2, 3, 13, 14, 15, 0, 0, 0, 7, 8, 9};
  expect_closef("scatter shard", dt, wdt, 12, 0, 0);
}

Test(embed, id_out_of_range) {
  float tab[4] = {0}, y[4];
  int32_t ids[2] = {3, 50300};
  rt_instr ins = mk(RT_GATHER_ROWS);
  ins.outer = 2; ins.n = 2; ins.inner = 2; ins.n2 = 50257; ins.off = 0;
  cr_assert_eq(run(&ins, y, tab, ids, NULL), -1);
  cr_assert_str_eq(err, "embedding: id 50300 out of range [0, 50257)");
  ins.op = RT_SCATTER_ROWS;
  int32_t neg[2] = {-1, 0};
  cr_assert_eq(run(&ins, tab, neg, y, NULL), -1);
  cr_assert_str_eq(err, "embedding: id -1 out of range [0, 50257)");
}

/* ---- cross-entropy ---- */

static double xent_ref(const float *x, const int32_t *lab, int64_t O, int64_t n, double alpha, const double *xd) {
  double tot = 0;
  for (int64_t r = 0; r < O; r++) {
    double m = -INFINITY, s = 0;
    for (int64_t i = 0; i < n; i++) { double v = xd ? xd[r * n + i] : x[r * n + i]; if (v > m) m = v; }
    for (int64_t i = 0; i < n; i++) s += exp((xd ? xd[r * n + i] : x[r * n + i]) - m);
    tot += m + log(s) - (xd ? xd[r * n + lab[r]] : x[r * n + lab[r]]);
  }
  return tot * alpha;
}

Test(xent, loss_and_grad) {
  int64_t O = 6, n = 11;
  float *x = rvec(O * n, -3, 3), *dx = rvec(O * n, 0, 0), loss;
  for (int64_t i = 0; i < n; i++) x[i] += 5000;       /* large logits stay finite */
  int32_t lab[6] = {0, 10, 3, 3, 7, 1};
  float alpha = 1.0f / 6, dl = 0.7f;
  rt_instr ins = mk(RT_XENT);
  ins.outer = O; ins.n = n; ins.alpha = alpha;
  run_ok(&ins, &loss, x, lab, NULL);
  double want = xent_ref(x, lab, O, n, alpha, NULL);
  cr_assert(close_to(loss, want, 1e-6, 0), "xent %.9g vs %.9g", loss, want);
  ins.op = RT_XENT_GRAD;
  run_ok(&ins, dx, x, lab, &dl);
  double *xd = malloc(O * n * sizeof *xd), *g = malloc(O * n * sizeof *g);
  for (int64_t i = 0; i < O * n; i++) xd[i] = x[i];
  for (int64_t i = 0; i < O * n; i++) {
    double h = 1e-4, keep = xd[i];
    xd[i] = keep + h;
    double lp = xent_ref(NULL, lab, O, n, alpha, xd);
    xd[i] = keep - h;
    double lm = xent_ref(NULL, lab, O, n, alpha, xd);
    xd[i] = keep;
    g[i] = (lp - lm) / (2 * h) * dl;
  }
  expect_close("xent_grad", dx, g, O * n, 1e-3, 1e-6);
  free(x); free(dx); free(xd); free(g);
}

Test(xent, label_out_of_range) {
  float x[4] = {0}, loss;
  int32_t lab[2] = {1, 12};
  rt_instr ins = mk(RT_XENT);
  ins.outer = 2; ins.n = 2; ins.alpha = 1;
  cr_assert_eq(run(&ins, &loss, x, lab, NULL), -1);
  cr_assert_str_eq(err, "cross_entropy: label 12 out of range [0, 2)");
  float dl = 1, dx[4];
  ins.op = RT_XENT_GRAD;
  lab[1] = -3;
  cr_assert_eq(run(&ins, dx, x, lab, &dl), -1);
  cr_assert_str_eq(err, "cross_entropy: label -3 out of range [0, 2)");
}

/* ---- cross-entropy over split classes (the vocabulary-parallel loss) ---- */

static rt_instr mk_dt(rt_op op, rt_dtype dt, int64_t outer, int64_t n) {
  rt_instr x = mk(op);
  x.outer = outer; x.n = n; x.inner = 1;
  x.odt = (uint8_t)dt;
  for (int k = 0; k < RT_MAXIN; k++) x.idt[k] = (uint8_t)dt;
  x.idt[1] = op == RT_XENT_SUMEXP || op == RT_REDUCE ? (uint8_t)dt : RT_I32;
  return x;
}

/* x's kernel on in0..2 and, over split classes, in4 = the max and in5 = the sums */
static void split_run(const rt_instr *x, void *out, void *in0, void *in1, void *in2, void *in4, void *in5) {
  void *v[RT_MAXIN] = {in0, in1, in2, NULL, in4, in5};
  int rc = rt_backend_cpu()->kernels[x->op](NULL, x, out, v, err, sizeof err);
  cr_assert_eq(rc, 0, "%s: %s", rt_op_name((rt_op)x->op), err);
}

/* The classes of [O, N] logits cut into P pieces: each piece's max, the
** pieces' sums of exp(x - max) against the largest (the two all-reduces,
** done here), each piece's part of the loss and its piece of the gradient
** (device q at off q N / P; the gradient also written over its logits):
** the parts add up to the whole-class kernel's loss and the pieces are its
** gradient's columns, f32 to 1e-6 and f64 to 1e-13 */
static void split_classes(rt_dtype dt, int P) {
  enum { O = 5, N = 12 };
  int64_t n = N / P;
  size_t es = rt_dtype_size(dt);
  double tol = dt == RT_F64 ? 1e-13 : 1e-6;
  int32_t lab[O] = {0, 11, 5, 6, 3};          /* every piece holds some label */
  char *x = calloc(O * N, es), *dx = calloc(O * N, es), *xq = calloc(O * n, es), *dq = calloc(O * n, es);
  char *mq = calloc(O, es), *m = calloc(O, es), *sq = calloc(O, es), *sum = calloc(O, es);
  char loss[8], part[8], dl[8];
  for (int64_t i = 0; i < O * N; i++) rt_store_f(dt, x, i, frand(-4, 4) + (i < N ? 300 : 0));   /* a large row stays finite */
  rt_store_f(dt, dl, 0, 0.7);
  rt_instr w = mk_dt(RT_XENT, dt, O, N);
  w.value = 1.0 / O; w.alpha = (float)w.value;
  split_run(&w, loss, x, lab, NULL, NULL, NULL);
  w.op = RT_XENT_GRAD;
  split_run(&w, dx, x, lab, dl, NULL, NULL);
  for (int64_t r = 0; r < O; r++) rt_store_f(dt, m, r, -INFINITY);
  for (int q = 0; q < P; q++) {               /* the max over every piece */
    for (int64_t i = 0; i < O * n; i++) rt_store_f(dt, xq, i, rt_load_f(dt, x, i / n * N + q * n + i % n));
    rt_instr r = mk_dt(RT_REDUCE, dt, O, n);
    r.fn = RT_RMAX; r.alpha = 1; r.value = 1; r.nelem = O;
    split_run(&r, mq, xq, NULL, NULL, NULL, NULL);
    for (int64_t i = 0; i < O; i++) rt_store_f(dt, m, i, fmax(rt_load_f(dt, m, i), rt_load_f(dt, mq, i)));
  }
  double total = 0;
  for (int pass = 0; pass < 3; pass++)       /* the sums; the loss's parts; the gradient's pieces */
    for (int q = 0; q < P; q++) {
      for (int64_t i = 0; i < O * n; i++) rt_store_f(dt, xq, i, rt_load_f(dt, x, i / n * N + q * n + i % n));
      if (pass == 0) {
        rt_instr e = mk_dt(RT_XENT_SUMEXP, dt, O, n);
        split_run(&e, sq, xq, m, NULL, NULL, NULL);
        for (int64_t i = 0; i < O; i++) rt_store_f(dt, sum, i, (q ? rt_load_f(dt, sum, i) : 0) + rt_load_f(dt, sq, i));
        continue;
      }
      rt_instr k = mk_dt(pass == 1 ? RT_XENT : RT_XENT_GRAD, dt, O, n);
      k.value = 1.0 / O; k.alpha = (float)k.value;
      k.in[4] = 4; k.in[5] = 5; k.group = 0; k.n2 = N; k.off = q * n;    /* as the executor sets off */
      if (pass == 1) {
        split_run(&k, part, xq, lab, NULL, m, sum);
        total += rt_load_f(dt, part, 0);
        continue;
      }
      split_run(&k, dq, xq, lab, dl, m, sum);
      split_run(&k, xq, xq, lab, dl, m, sum);   /* over its logits */
      for (int64_t i = 0; i < O * n; i++) {
        double want = rt_load_f(dt, dx, i / n * N + q * n + i % n);
        cr_assert(close_to(rt_load_f(dt, dq, i), want, tol, tol * 1e-2), "%s, %d pieces: dx piece %d [%lld] %.17g, want %.17g",
                  rt_dtype_name(dt), P, q, (long long)i, rt_load_f(dt, dq, i), want);
        cr_assert_eq(rt_load_f(dt, xq, i), rt_load_f(dt, dq, i), "written over its logits: the same bits");
      }
    }
  double want = rt_load_f(dt, loss, 0);
  cr_assert(close_to(total, want, tol, 0), "%s, %d pieces: loss parts add to %.17g, want %.17g", rt_dtype_name(dt), P, total, want);
  /* a label outside every piece is an error on each, named against all N classes */
  lab[2] = N;
  rt_instr k = mk_dt(RT_XENT, dt, O, n);
  k.in[4] = 4; k.in[5] = 5; k.group = 0; k.n2 = N; k.alpha = 1;
  void *in[RT_MAXIN] = {xq, lab, NULL, NULL, m, sum};
  cr_assert_eq(rt_backend_cpu()->kernels[RT_XENT](NULL, &k, part, in, err, sizeof err), -1);
  cr_assert_str_eq(err, "cross_entropy: label 12 out of range [0, 12)");
  free(x); free(dx); free(xq); free(dq); free(mq); free(m); free(sq); free(sum);
}

Test(xent, split_classes_equal_whole) {
  for (int P = 2; P <= 4; P++) {
    split_classes(RT_F32, P);
    split_classes(RT_F64, P);
  }
}

/* ---- elementwise with the sum of its rows ---- */

/* an ew of [rows, w] with in3: out is the plain ew's bits, in3 the bits
** reduce_sum gives over the plain result; also in place (out over in0) */
Test(ew, sum_of_rows_is_reduce_sums_bits) {
  int64_t rows = 37, w = 2100;        /* more columns than one block, a tail of 4 */
  int fns[3] = {RT_GELU_TANH_GRAD, RT_ADD, RT_NEG};
  for (int f = 0; f < 3; f++) {
    int ar = rt_ewfn_arity((rt_ewfn)fns[f]);
    float *a = rvec(rows * w, -3, 3), *b = rvec(rows * w, -1, 1);
    float *plain = malloc(sizeof(float) * rows * w), *fused = malloc(sizeof(float) * rows * w);
    float *want = malloc(sizeof(float) * w), *sum = malloc(sizeof(float) * w), *sum2 = malloc(sizeof(float) * w);
    rt_instr e = mk(RT_EW);
    e.fn = (uint8_t)fns[f]; e.nin = (uint8_t)ar; e.rank = 2; e.shape[0] = rows; e.shape[1] = w;
    for (int k = 0; k < ar; k++) { e.in[k] = k; e.stride[k][0] = w; e.stride[k][1] = 1; }
    run_ok(&e, plain, a, ar > 1 ? b : NULL, NULL);
    rt_instr r = mk(RT_REDUCE);
    r.fn = RT_RSUM; r.outer = 1; r.n = rows; r.inner = w; r.alpha = 1; r.nelem = w;
    run_ok(&r, want, plain, NULL, NULL);
    e.in[3] = 3; e.nin = 4;
    void *in[RT_MAXIN] = {a, ar > 1 ? b : NULL, NULL, sum};
    rt_kernel k = rt_backend_cpu()->kernels[RT_EW];
    cr_assert_eq(k(rt_backend_cpu()->ctx, &e, fused, in, err, sizeof err), 0, "%s", err);
    cr_expect(!memcmp(fused, plain, sizeof(float) * rows * w), "%s: the result differs with its row sums", rt_ewfn_name((rt_ewfn)fns[f]));
    cr_expect(!memcmp(sum, want, sizeof(float) * w), "%s: the row sums are not reduce_sum's bits", rt_ewfn_name((rt_ewfn)fns[f]));
    in[3] = sum2;                      /* in place: out over in0 */
    cr_assert_eq(k(rt_backend_cpu()->ctx, &e, a, in, err, sizeof err), 0, "%s", err);
    cr_expect(!memcmp(a, plain, sizeof(float) * rows * w) && !memcmp(sum2, want, sizeof(float) * w),
              "%s in place: not the same bits", rt_ewfn_name((rt_ewfn)fns[f]));
    free(a); free(b); free(plain); free(fused); free(want); free(sum); free(sum2);
  }
}

/* ---- optimizer updates ---- */

/* one Adam step on n elements: in place (out is p), into another buffer,
** and with g sharing m's buffer (only a hand-edited program does that) */
static void adam_kernel(float *out, float *p, const float *g, float *m, float *v, int64_t n, float lr_t, float eps_t,
                        double wd) {
  rt_instr ins = mk(RT_ADAM);
  ins.nelem = n;
  ins.hyper[0] = 0.9; ins.hyper[1] = 0.999; ins.hyper[2] = 1e-8; ins.hyper[3] = wd; ins.hyper[4] = 1 - 0.9; ins.hyper[5] = 1 - 0.999;
  void *in[RT_MAXIN] = {p, (void *)g, m, v, &lr_t, &eps_t};
  rt_kernel k = rt_backend_cpu()->kernels[RT_ADAM];
  cr_assert_eq(k(rt_backend_cpu()->ctx, &ins, out, in, err, sizeof err), 0, "%s", err);
}

static double adam_ref(double p, double g, double *m, double *v, double lr_t, double eps_t, double wd) {
  g += wd * p;
  *m = 0.9 * *m + 0.1 * g;
  *v = 0.999 * *v + 0.001 * g * g;
  return p - *m * lr_t / (sqrt(*v) + eps_t);
}

Test(optim, adam_in_place_out_of_place_and_shared_buffers) {
  int64_t n = 1003;                   /* blocks of 8 and a tail */
  float lr_t = 1e-2f, eps_t = 1e-8f;
  for (int wd = 0; wd < 2; wd++) {
    float *p = rvec(n, -1, 1), *g = rvec(n, -1, 1), *m = rvec(n, -0.1, 0.1), *v = rvec(n, 0, 0.1);
    float *p2 = malloc(n * sizeof *p2), *out = malloc(n * sizeof *out), *m2 = malloc(n * sizeof *m2),
          *v2 = malloc(n * sizeof *v2), *m3 = malloc(n * sizeof *m3), *v3 = malloc(n * sizeof *v3),
          *p3 = malloc(n * sizeof *p3);
    memcpy(p2, p, n * sizeof *p); memcpy(p3, p, n * sizeof *p);
    memcpy(m2, m, n * sizeof *m); memcpy(v2, v, n * sizeof *v);
    memcpy(m3, m, n * sizeof *m); memcpy(v3, v, n * sizeof *v);
    double *want = malloc(n * sizeof *want), *mw = malloc(n * sizeof *mw), *vw = malloc(n * sizeof *vw);
    for (int64_t i = 0; i < n; i++) {
      mw[i] = m[i]; vw[i] = v[i];
      want[i] = adam_ref(p[i], g[i], &mw[i], &vw[i], lr_t, eps_t, wd * 0.01);
    }
    adam_kernel(p, p, g, m, v, n, lr_t, eps_t, wd * 0.01);
    expect_close("adam p", p, want, n, 1e-5, 1e-7);
    expect_close("adam m", m, mw, n, 1e-5, 1e-7);
    expect_close("adam v", v, vw, n, 1e-5, 1e-7);
    adam_kernel(out, p2, g, m2, v2, n, lr_t, eps_t, wd * 0.01);
    cr_expect(memcmp(out, p, n * sizeof *p) == 0, "adam into another buffer: not the in-place bits");
    cr_expect(memcmp(m2, m, n * sizeof *m) == 0 && memcmp(v2, v, n * sizeof *v) == 0, "adam's state differs out of place");
    cr_expect(memcmp(p2, p3, n * sizeof *p) == 0, "adam wrote its p operand when out is another buffer");
    for (int64_t i = 0; i < n; i++) {   /* g is m's old value */
      mw[i] = m3[i]; vw[i] = v3[i];
      want[i] = adam_ref(p3[i], m3[i], &mw[i], &vw[i], lr_t, eps_t, wd * 0.01);
    }
    adam_kernel(p3, p3, m3, m3, v3, n, lr_t, eps_t, wd * 0.01);
    expect_close("adam with g in m's buffer", p3, want, n, 1e-5, 1e-7);
    expect_close("adam m with g in m's buffer", m3, mw, n, 1e-5, 1e-7);
    free(p); free(g); free(m); free(v); free(p2); free(out); free(m2); free(v2); free(m3); free(v3); free(p3);
    free(want); free(mw); free(vw);
  }
}

Test(optim, sgd_momentum_in_place_and_out_of_place) {
  int64_t n = 1001;
  float *p = rvec(n, -1, 1), *g = rvec(n, -1, 1), *m = rvec(n, -0.1, 0.1);
  float *p2 = malloc(n * sizeof *p2), *out = malloc(n * sizeof *out), *m2 = malloc(n * sizeof *m2);
  double *want = malloc(n * sizeof *want), *mw = malloc(n * sizeof *mw);
  memcpy(p2, p, n * sizeof *p); memcpy(m2, m, n * sizeof *m);
  for (int64_t i = 0; i < n; i++) {
    double gr = g[i] + 0.01 * p[i];
    mw[i] = m[i] * 0.9 + gr;
    want[i] = p[i] - 0.1 * mw[i];
  }
  rt_instr ins = mk(RT_SGD);
  ins.nelem = n; ins.alpha = 0.1f; ins.hyper[0] = 0.9; ins.hyper[1] = 0.01;
  run_ok(&ins, p, p, g, m);
  expect_close("sgd p", p, want, n, 1e-5, 1e-7);
  expect_close("sgd momentum", m, mw, n, 1e-5, 1e-7);
  run_ok(&ins, out, p2, g, m2);
  cr_expect(memcmp(out, p, n * sizeof *p) == 0 && memcmp(m2, m, n * sizeof *m) == 0, "sgd out of place: not the in-place bits");
  free(p); free(g); free(m); free(p2); free(out); free(m2); free(want); free(mw);
}

/* ---- masks and data movement ---- */

Test(move, causal_mask_with_offset) {
  int64_t O = 2, m = 4, n = 6;
  float *x = rvec(O * m * n, -1, 1), *y = rvec(O * m * n, 0, 0);
  for (int off = -2; off <= 3; off++) {
    rt_instr ins = mk(RT_CAUSAL_MASK);
    ins.outer = O; ins.m = m; ins.n = n; ins.off = off; ins.alpha = -INFINITY;
    run_ok(&ins, y, x, NULL, NULL);
    for (int64_t o = 0; o < O; o++)
      for (int64_t r = 0; r < m; r++)
        for (int64_t c = 0; c < n; c++) {
          float v = y[(o * m + r) * n + c];
          if (c > r + off) cr_assert(isinf(v) && v < 0, "off %d (%lld,%lld)", off, (long long)r, (long long)c);
          else cr_assert_eq(v, x[(o * m + r) * n + c]);
        }
  }
  free(x); free(y);
}

static void transpose_case(int rank, const int64_t *shape, const int8_t *perm) {
  int64_t n = 1, ist[RT_MAXRANK], os[RT_MAXRANK], ost[RT_MAXRANK];
  for (int d = 0; d < rank; d++) n *= shape[d];
  contig_strides(rank, shape, ist);
  for (int d = 0; d < rank; d++) os[d] = shape[perm[d]];
  contig_strides(rank, os, ost);
  float *x = rvec(n, -1, 1), *y = rvec(n, 0, 0);
  rt_instr ins = mk(RT_TRANSPOSE);
  ins.rank = (uint8_t)rank;
  for (int d = 0; d < rank; d++) { ins.shape[d] = shape[d]; ins.perm[d] = perm[d]; }
  run_ok(&ins, y, x, NULL, NULL);
  int64_t idx[RT_MAXRANK] = {0};
  for (int64_t i = 0; i < n; i++) {      /* i walks the output */
    int64_t src = 0;
    for (int d = 0; d < rank; d++) src += idx[d] * ist[perm[d]];
    cr_assert_eq(y[i], x[src], "transpose rank %d: out %lld", rank, (long long)i);
    for (int d = rank - 1; d >= 0; d--) { if (++idx[d] < os[d]) break; idx[d] = 0; }
  }
  free(x); free(y);
}

Test(move, transpose) {
  transpose_case(2, (int64_t[]){37, 70}, (int8_t[]){1, 0});
  transpose_case(3, (int64_t[]){2, 3, 4}, (int8_t[]){2, 0, 1});
  transpose_case(3, (int64_t[]){5, 33, 40}, (int8_t[]){0, 2, 1});
  transpose_case(4, (int64_t[]){2, 5, 3, 4}, (int8_t[]){0, 2, 1, 3});   /* innermost stays */
  transpose_case(4, (int64_t[]){3, 1, 4, 5}, (int8_t[]){3, 1, 0, 2});
  transpose_case(5, (int64_t[]){2, 3, 2, 3, 2}, (int8_t[]){4, 2, 0, 3, 1});
  transpose_case(3, (int64_t[]){1, 1, 7}, (int8_t[]){2, 1, 0});
  transpose_case(1, (int64_t[]){9}, (int8_t[]){0});
  /* random permutations of rank 6 */
  for (int t = 0; t < 20; t++) {
    int8_t p[6] = {0, 1, 2, 3, 4, 5};
    for (int i = 5; i > 0; i--) { int j = (int)(urand() * (i + 1)); int8_t s = p[i]; p[i] = p[j]; p[j] = s; }
    transpose_case(6, (int64_t[]){2, 3, 1, 4, 2, 3}, p);
  }
}

Test(move, block_copy_fill_copy) {
  float a[2 * 2 * 3], b[2 * 1 * 3], y[2 * 3 * 3];
  for (int i = 0; i < 12; i++) a[i] = (float)(i + 1);
  for (int i = 0; i < 6; i++) b[i] = (float)(-i - 1);
  rt_instr ins = mk(RT_FILL);
  ins.alpha = 7;
  ins.nelem = 18;
  run_ok(&ins, y, NULL, NULL, NULL);
  for (int i = 0; i < 18; i++) cr_assert_eq(y[i], 7);
  ins = mk(RT_BLOCK_COPY);
  ins.outer = 2; ins.n = 2; ins.inner = 3; ins.n2 = 3; ins.off = 0;
  run_ok(&ins, y, a, NULL, NULL);
  ins.n = 1; ins.off = 2;
  run_ok(&ins, y, b, NULL, NULL);
  float want[18] = {1, 2, 3, 4, 5, 6, -1, -2, -3, 7, 8, 9, 10, 11, 12, -4, -5, -6};
  expect_closef("concat", y, want, 18, 0, 0);
  ins.off = 3;
  cr_assert_eq(run(&ins, y, b, NULL, NULL), -1);
  cr_assert_str_eq(err, "block [3, 4) outside [0, 3)");
  /* a slice: rows 1..2 of a [2, 4, 3] into a [2, 2, 3] */
  float x[24], s[12];
  for (int i = 0; i < 24; i++) x[i] = (float)i;
  ins = mk(RT_BLOCK_COPY);
  ins.outer = 2; ins.m = 4; ins.k = 1; ins.n = 2; ins.inner = 3; ins.n2 = 2; ins.off = 0;
  run_ok(&ins, s, x, NULL, NULL);
  float ws[12] = {3, 4, 5, 6, 7, 8, 15, 16, 17, 18, 19, 20};
  expect_closef("slice", s, ws, 12, 0, 0);
  ins.k = 3;
  cr_assert_eq(run(&ins, s, x, NULL, NULL), -1);
  cr_assert_str_eq(err, "rows [3, 5) outside [0, 4)");
  ins = mk(RT_COPY);
  ins.nelem = 12;
  float c[12];
  run_ok(&ins, c, a, NULL, NULL);
  expect_closef("copy", c, a, 12, 0, 0);
}

/* ---- PyTorch golden values ---- */

static st_file *golden(void) {
  st_file *f = st_open(SRCDIR "/tests/data/golden_ops.safetensors", err, sizeof err);
  cr_assert_not_null(f, "%s", err);
  return f;
}

static float *gload(st_file *f, const char *name, int64_t *n) {
  const st_tensor *t = st_find(f, name);
  cr_assert_not_null(t, "golden has no %s", name);
  int64_t cnt = 1, off[RT_MAXRANK] = {0};
  for (int d = 0; d < t->rank; d++) cnt *= t->shape[d];
  float *v = malloc((size_t)cnt * 4);
  int rc = st_read_block(f, name, t->dtype == ST_I32 ? RT_I32 : RT_F32, t->rank, t->shape, off, t->shape, v, err,
                         sizeof err);
  cr_assert_eq(rc, 0, "%s", err);
  if (n) *n = cnt;
  return v;
}

static const st_tensor *gt(st_file *f, const char *name) { return st_find(f, name); }

static void gcheck(st_file *f, const char *name, const float *got, double rtol) {
  int64_t n;
  float *w = gload(f, name, &n);
  expect_closef(name, got, w, n, rtol, rtol);
  free(w);
}

static void golden_unary(st_file *f, const char *op, int fn, int gradfn) {
  char nm[64];
  int64_t n;
  snprintf(nm, sizeof nm, "%s.in0", op);
  float *x = gload(f, nm, &n), *y = malloc(n * 4), *cot, *dx = malloc(n * 4);
  rt_instr ins = mk(RT_EW);
  ins.fn = (uint8_t)fn;
  ins.rank = 1; ins.shape[0] = n; ins.stride[0][0] = ins.stride[1][0] = 1;
  run_ok(&ins, y, x, NULL, NULL);
  snprintf(nm, sizeof nm, "%s.out", op);
  gcheck(f, nm, y, 1e-5);
  if (gradfn >= 0) {
    snprintf(nm, sizeof nm, "%s.cot", op);
    cot = gload(f, nm, NULL);
    ins.fn = (uint8_t)gradfn;
    run_ok(&ins, dx, x, cot, NULL);
    snprintf(nm, sizeof nm, "%s.grad0", op);
    gcheck(f, nm, dx, 1e-5);
    free(cot);
  }
  free(x); free(y); free(dx);
}

/* convert rounds once: through a double (i64) or through f32 (bf16, f16) a
   value just above a tie lands on the tie and rounds to even, the wrong way */
Test(dtype, one_rounding_to_narrower_floats) {
  float f;
  rt_store_i(RT_F32, &f, 0, ((int64_t)1 << 60) + ((int64_t)1 << 36) + 1);
  cr_expect_eq(f, 0x1p60f + 0x1p37f);
  rt_store_i(RT_F32, &f, 0, INT64_MAX);
  cr_expect_eq(f, 0x1p63f);
  uint16_t h[4];
  rt_store_i(RT_BF16, h, 0, (1 << 24) + (1 << 16) + 1);       /* above the tie: up */
  rt_store_i(RT_BF16, h, 1, (1 << 24) + (1 << 16));           /* the tie: to even */
  rt_store_f(RT_BF16, h, 2, 1.0 + 0x1p-8 + 0x1p-40);
  rt_store_f(RT_F16, h, 3, 1.0 + 0x1p-11 + 0x1p-40);
  cr_expect_eq(rt_bf16_to_f32(h[0]), 0x1p24f + 0x1p17f);
  cr_expect_eq(rt_bf16_to_f32(h[1]), 0x1p24f);
  cr_expect_eq(rt_bf16_to_f32(h[2]), 1.0f + 0x1p-7f);
  cr_expect_eq(rt_f16_to_f32(h[3]), 1.0f + 0x1p-10f);
  rt_store_f(RT_BF16, h, 0, 1e39);                             /* beyond f32: inf, not the largest bf16 */
  rt_store_f(RT_BF16, h, 1, -1e-50);                           /* below every subnormal: -0 */
  cr_expect_eq(h[0], 0x7F80);
  cr_expect_eq(h[1], 0x8000);
}

Test(golden, pytorch_values) {
  st_file *f = golden();
  golden_unary(f, "neg", RT_NEG, -1);
  golden_unary(f, "exp", RT_EXP, -1);
  golden_unary(f, "log", RT_LOG, -1);
  golden_unary(f, "sqrt", RT_SQRT, -1);
  golden_unary(f, "rsqrt", RT_RSQRT, -1);
  golden_unary(f, "tanh", RT_TANH, -1);
  golden_unary(f, "relu", RT_RELU, RT_RELU_GRAD);
  golden_unary(f, "sigmoid", RT_SIGMOID, -1);
  golden_unary(f, "silu", RT_SILU, RT_SILU_GRAD);
  golden_unary(f, "gelu", RT_GELU, RT_GELU_GRAD);
  golden_unary(f, "gelu_tanh", RT_GELU_TANH, RT_GELU_TANH_GRAD);

  int64_t n;
  /* add [4,8] + [8] */
  {
    float *a = gload(f, "add.in0", &n), *b = gload(f, "add.in1", NULL), *y = malloc(n * 4);
    rt_instr ins = mk(RT_EW);
    ins.fn = RT_ADD; ins.rank = 2; ins.shape[0] = 4; ins.shape[1] = 8;
    ins.stride[0][0] = 8; ins.stride[0][1] = 1; ins.stride[1][0] = 0; ins.stride[1][1] = 1;
    run_ok(&ins, y, a, b, NULL);
    gcheck(f, "add.out", y, 1e-6);
    /* grad1 = column sums of cot */
    float *cot = gload(f, "add.cot", NULL), g1[8];
    rt_instr r = mk(RT_REDUCE);
    r.fn = RT_RSUM; r.outer = 1; r.n = 4; r.inner = 8; r.alpha = 1;
    run_ok(&r, g1, cot, NULL, NULL);
    gcheck(f, "add.grad1", g1, 1e-5);
    free(a); free(b); free(y); free(cot);
  }
  /* matmul [2,3,4] @ [4,5] */
  {
    float *a = gload(f, "matmul.in0", NULL), *b = gload(f, "matmul.in1", NULL), y[30];
    rt_instr ins = mk(RT_GEMM);
    ins.batch = 2; ins.m = 3; ins.n = 5; ins.k = 4; ins.stride_a = 12; ins.stride_b = 0; ins.stride_c = 15;
    ins.alpha = 1;
    run_ok(&ins, y, a, b, NULL);
    gcheck(f, "matmul.out", y, 1e-5);
    free(a); free(b);
  }
  /* softmax, log_softmax and their gradients, [3,7] */
  {
    float *x = gload(f, "softmax.in0", NULL), *cot = gload(f, "softmax.cot", NULL), y[21], dx[21];
    rt_instr ins = mk(RT_SOFTMAX);
    ins.outer = 3; ins.n = 7;
    run_ok(&ins, y, x, NULL, NULL);
    gcheck(f, "softmax.out", y, 1e-5);
    ins.op = RT_SOFTMAX_GRAD;
    run_ok(&ins, dx, y, cot, NULL);
    gcheck(f, "softmax.grad0", dx, 1e-4);
    free(x); free(cot);
    x = gload(f, "log_softmax.in0", NULL);
    cot = gload(f, "log_softmax.cot", NULL);
    ins.op = RT_LOG_SOFTMAX;
    run_ok(&ins, y, x, NULL, NULL);
    gcheck(f, "log_softmax.out", y, 1e-5);
    ins.op = RT_LOG_SOFTMAX_GRAD;
    run_ok(&ins, dx, y, cot, NULL);
    gcheck(f, "log_softmax.grad0", dx, 1e-4);
    free(x); free(cot);
  }
  /* causal mask then softmax, [2,5,5] */
  {
    float *x = gload(f, "causal_mask_softmax.in0", NULL), m[50], y[50];
    rt_instr ins = mk(RT_CAUSAL_MASK);
    ins.outer = 2; ins.m = 5; ins.n = 5; ins.off = 0; ins.alpha = -INFINITY;
    run_ok(&ins, m, x, NULL, NULL);
    ins = mk(RT_SOFTMAX);
    ins.outer = 10; ins.n = 5;
    run_ok(&ins, y, m, NULL, NULL);
    gcheck(f, "causal_mask_softmax.out", y, 1e-5);
    free(x);
  }
  /* layernorm [3,8] with gamma and beta */
  {
    float *x = gload(f, "layernorm.in0", NULL), *g = gload(f, "layernorm.in1", NULL);
    float *b = gload(f, "layernorm.in2", NULL), *cot = gload(f, "layernorm.cot", NULL), y[24], dx[24];
    rt_instr ins = mk(RT_LAYERNORM);
    ins.outer = 3; ins.n = 8; ins.alpha = 1e-5f;
    run_ok(&ins, y, x, g, b);
    gcheck(f, "layernorm.out", y, 1e-5);
    ins.op = RT_LAYERNORM_GRAD;
    run_ok(&ins, dx, x, g, cot);
    gcheck(f, "layernorm.grad0", dx, 1e-4);
    free(x); free(g); free(b); free(cot);
  }
  /* sums, means and max over dims */
  {
    float *x = gload(f, "sum_dims1.in0", NULL), y[15];
    rt_instr ins = mk(RT_REDUCE);
    ins.fn = RT_RSUM; ins.outer = 3; ins.n = 4; ins.inner = 5; ins.alpha = 1;
    run_ok(&ins, y, x, NULL, NULL);
    gcheck(f, "sum_dims1.out", y, 1e-5);
    free(x);
    x = gload(f, "max_dims1.in0", NULL);
    float *cot = gload(f, "max_dims1.cot", NULL), m[3], dx[21];
    ins.fn = RT_RMAX; ins.outer = 3; ins.n = 7; ins.inner = 1;
    run_ok(&ins, m, x, NULL, NULL);
    gcheck(f, "max_dims1.out", m, 0);
    ins.op = RT_REDUCE_MAX_GRAD;
    run_ok(&ins, dx, x, cot, NULL);
    gcheck(f, "max_dims1.grad0", dx, 1e-6);
    free(x); free(cot);
  }
  /* transpose_201 */
  {
    float *x = gload(f, "transpose_201.in0", NULL), y[24];
    rt_instr ins = mk(RT_TRANSPOSE);
    ins.rank = 3; ins.shape[0] = 2; ins.shape[1] = 3; ins.shape[2] = 4;
    ins.perm[0] = 2; ins.perm[1] = 0; ins.perm[2] = 1;
    run_ok(&ins, y, x, NULL, NULL);
    gcheck(f, "transpose_201.out", y, 0);
    free(x);
  }
  /* embedding with repeated ids, and its gradient */
  {
    float *tab = gload(f, "embedding.in0", NULL), *cot = gload(f, "embedding.cot", NULL), y[24], dt[40];
    int32_t *ids = (int32_t *)gload(f, "embedding.in1", NULL);
    cr_assert_eq(gt(f, "embedding.in1")->dtype, ST_I32);
    rt_instr ins = mk(RT_GATHER_ROWS);
    ins.outer = 6; ins.n = 10; ins.inner = 4; ins.n2 = 10;
    run_ok(&ins, y, tab, ids, NULL);
    gcheck(f, "embedding.out", y, 0);
    ins.op = RT_SCATTER_ROWS;
    run_ok(&ins, dt, ids, cot, NULL);
    gcheck(f, "embedding.grad0", dt, 1e-6);
    free(tab); free(cot); free(ids);
  }
  /* cross-entropy, mean over 6 positions */
  {
    float *x = gload(f, "cross_entropy.in0", NULL), *cot = gload(f, "cross_entropy.cot", NULL), loss, dx[60];
    int32_t *lab = (int32_t *)gload(f, "cross_entropy.in1", NULL);
    rt_instr ins = mk(RT_XENT);
    ins.outer = 6; ins.n = 10; ins.alpha = 1.0f / 6;
    run_ok(&ins, &loss, x, lab, NULL);
    gcheck(f, "cross_entropy.out", &loss, 1e-5);
    ins.op = RT_XENT_GRAD;
    run_ok(&ins, dx, x, lab, cot);
    gcheck(f, "cross_entropy.grad0", dx, 1e-5);
    free(x); free(cot); free(lab);
  }
  st_close(f);
}

/*
** test_cuda.c: the CUDA backend against the CPU backend. Every kernel on
** random inputs of several shapes (odd sizes, broadcasting, batches,
** transposed GEMMs, extreme logits, ties, repeated ids, a vocabulary
** shard; gathers and scatters with batching dims, starts out of range and
** each combiner), a whole program through rt_exec on both backends (with a carry
** and a collective staged through host memory), device-side errors
** surfacing from rt_exec_run as the CPU's messages, and the kernel cache.
** Where no GPU (or no driver) is found every such test is skipped with the
** reason; the NVRTC compile check runs wherever NVRTC can be loaded.
*/
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/backend.h"
#include "runtime/cuda.h"
#include "runtime/exec.h"

static rt_backend *gpu;
static char why[512];
static char err[512];

static void gpu_up(void) {
  why[0] = err[0] = 0;
  gpu = rt_backend_cuda_new(NULL, why, sizeof why);
}

static void gpu_down(void) {
  rt_backend_free(gpu);
  gpu = NULL;
}

TestSuite(cuda, .init = gpu_up, .fini = gpu_down, .timeout = 300);

#define NEED_GPU() do { if (!gpu) cr_skip_test("no CUDA device: %s", why); } while (0)

/* ---- helpers ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double urand(void) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(rng >> 11) / 9007199254740992.0;
}

static float *rvec(int64_t n, double lo, double hi) {
  float *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  for (int64_t i = 0; i < n; i++) v[i] = (float)(lo + (hi - lo) * urand());
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

/* one operand of a kernel: host data and its element count (4-byte elements) */
typedef struct opnd { const void *h; int64_t n; } opnd;

/* Runs ins on the CPU and on the GPU with the same inputs and the same
   starting out (init, or zeros); cpu and gpu get the two results. */
static void run_both(const rt_instr *ins, const opnd *in, int nin, int64_t nout, const float *init, float *cpu, float *gpu_out) {
  const rt_backend *be = rt_backend_cpu();
  void *hin[RT_MAXIN] = {0}, *din[RT_MAXIN] = {0};
  for (int k = 0; k < nin; k++) {
    if (!in[k].h) continue;
    size_t by = (size_t)(in[k].n > 0 ? in[k].n : 1) * 4;
    hin[k] = malloc(by);
    memcpy(hin[k], in[k].h, (size_t)in[k].n * 4);
    din[k] = gpu->alloc(gpu->ctx, by);
    cr_assert_not_null(din[k], "device alloc of %zu bytes", by);
    cr_assert_eq(gpu->upload(gpu->ctx, din[k], in[k].h, (size_t)in[k].n * 4, err, sizeof err), 0, "%s", err);
  }
  size_t ob = (size_t)(nout > 0 ? nout : 1) * 4;
  if (init) memcpy(cpu, init, (size_t)nout * 4);
  else memset(cpu, 0, ob);
  void *dout = gpu->alloc(gpu->ctx, ob);
  cr_assert_not_null(dout);
  cr_assert_eq(gpu->upload(gpu->ctx, dout, cpu, ob, err, sizeof err), 0, "%s", err);
  err[0] = 0;
  cr_assert_eq(be->kernels[ins->op](be->ctx, ins, cpu, hin, err, sizeof err), 0, "cpu %s: %s", rt_op_name(ins->op), err);
  cr_assert_eq(gpu->kernels[ins->op](gpu->ctx, ins, dout, din, err, sizeof err), 0, "cuda %s: %s", rt_op_name(ins->op), err);
  int where = -1;
  cr_assert_eq(gpu->sync(gpu->ctx, &where, err, sizeof err), 0, "cuda %s: %s", rt_op_name(ins->op), err);
  cr_assert_eq(gpu->download(gpu->ctx, gpu_out, dout, ob, err, sizeof err), 0, "%s", err);
  for (int k = 0; k < nin; k++) {
    free(hin[k]);
    if (din[k]) gpu->free(gpu->ctx, din[k]);
  }
  gpu->free(gpu->ctx, dout);
}

/* relative tolerance, with a floor of rtol/10 of the largest magnitude for values near zero */
static void expect_same(const char *what, const float *cpu, const float *g, int64_t n, double rtol) {
  double big = 0;
  for (int64_t i = 0; i < n; i++) if (isfinite(cpu[i]) && fabs(cpu[i]) > big) big = fabs(cpu[i]);
  double atol = rtol * 0.1 * (big > 1 ? big : 1);
  for (int64_t i = 0; i < n; i++) {
    double c = cpu[i], x = g[i];
    if (isnan(c)) cr_assert(isnan(x), "%s[%lld]: cpu NaN, cuda %.9g", what, (long long)i, x);
    else if (isinf(c)) cr_assert(x == c, "%s[%lld]: cpu %g, cuda %.9g", what, (long long)i, c, x);
    else
      cr_assert(fabs(x - c) <= atol + rtol * fabs(c), "%s[%lld]: cpu %.9g, cuda %.9g (rtol %g)", what, (long long)i, c,
                x, rtol);
  }
}

/* run, compare, free */
static void check(const char *what, const rt_instr *ins, const opnd *in, int nin, int64_t nout, const float *init,
                  double rtol) {
  float *c = malloc((size_t)(nout > 0 ? nout : 1) * 4), *g = malloc((size_t)(nout > 0 ? nout : 1) * 4);
  run_both(ins, in, nin, nout, init, c, g);
  expect_same(what, c, g, nout, rtol);
  free(c);
  free(g);
}

#define RTOL 1e-5
#define RTOL_GEMM 1e-4

/* ---- without a GPU ---- */

Test(cuda_nvrtc, every_kernel_compiles_for_sm80_and_sm90) {
  const char *arch[] = {"sm_80", "sm_90"};
  for (int i = 0; i < 2; i++) {
    char msg[8192];
    int rc = rt_cuda_compile_check(NULL, arch[i], msg, sizeof msg);
    if (rc == -2) cr_skip_test("NVRTC cannot be loaded: %s", msg);
    cr_assert_eq(rc, 0, "%s: %s", arch[i], msg);
  }
}

/* Every instruction the CPU runs, and which of them the CUDA backend has no
** kernel for yet: this list is what stands between the two backends running
** one lowering. A kernel added (or lost) changes it. */
Test(cuda_nvrtc, every_instruction_has_a_cuda_kernel_but_these) {
  static const rt_op missing[] = {
    RT_XENT_PROJ, RT_XENT_SUMEXP, RT_ATTENTION, RT_ATTENTION_GRAD,
    RT_ATTN_BLOCK, RT_ATTN_FINISH, RT_ATTN_BLOCK_GRAD,
  };
  unsigned char has[RT_NOPS];
  int newfn = rt_cuda_kernel_ops(has);
  const rt_backend *cpu = rt_backend_cpu();
  for (int op = 0; op < RT_NOPS; op++) {
    if (rt_is_collective((rt_op)op)) continue;        /* an rt_comm's (NCCL on the GPU) */
    int gap = 0;
    for (size_t k = 0; k < sizeof missing / sizeof *missing; k++) gap |= missing[k] == op;
    cr_assert(cpu->kernels[op], "the cpu has no kernel for %s", rt_op_name((rt_op)op));
    cr_assert(has[op] == !gap, "%s: the cuda backend %s; update the list", rt_op_name((rt_op)op),
              has[op] ? "now has a kernel" : "has no kernel");
  }
  /* the elementwise functions of imported programs (abs, erf, comparisons, select, ...) */
  cr_assert_eq(newfn, RT_ABS, "the cuda backend runs the functions below %s", rt_ewfn_name((rt_ewfn)newfn));
}

Test(cuda_nvrtc, a_missing_device_is_a_clear_error) {
  char msg[512] = "";
  rt_backend *be = rt_backend_cuda_new(&(rt_cuda_opts){.device = 4096}, msg, sizeof msg);
  cr_assert_null(be, "no machine has 4097 GPUs");
  cr_assert(strlen(msg) > 10, "a reason: '%s'", msg);
  cr_log_info("rt_backend_cuda_new: %s", msg);
  int n = rt_cuda_device_count(NULL, msg, sizeof msg);
  cr_assert(n >= -1);
}

/* ---- data movement ---- */

Test(cuda, fill_and_copy) {
  NEED_GPU();
  int64_t sizes[] = {1, 3, 257, 1025, 100003};
  for (int s = 0; s < 5; s++) {
    int64_t n = sizes[s];
    rt_instr f = mk(RT_FILL);
    f.nelem = n;
    f.alpha = -2.5f;
    check("fill", &f, NULL, 0, n, NULL, 0);
    float *x = rvec(n, -3, 3);
    rt_instr c = mk(RT_COPY);
    c.nelem = n;
    check("copy", &c, (opnd[]){{x, n}}, 1, n, NULL, 0);
    free(x);
  }
}

Test(cuda, block_copy_and_shard_slice) {
  NEED_GPU();
  /* rows 1..3 of [2, 5, 3] to rows 2..4 of [2, 6, 3]; the rest of out stays */
  float *x = rvec(30, -1, 1), *init = rvec(36, 5, 6);
  rt_instr b = mk(RT_BLOCK_COPY);
  b.outer = 2; b.m = 5; b.k = 1; b.n = 3; b.inner = 3; b.n2 = 6; b.off = 2;
  check("block_copy", &b, (opnd[]){{x, 30}}, 1, 36, init, 0);
  /* piece 2 of 4 along n of [3, 8, 257] */
  float *y = rvec(3 * 8 * 257, -1, 1);
  rt_instr s = mk(RT_SHARD_SLICE);
  s.outer = 3; s.n = 8; s.inner = 257; s.n2 = 2; s.off = 4;
  check("shard_slice", &s, (opnd[]){{y, 3 * 8 * 257}}, 1, 3 * 2 * 257, NULL, 0);
  free(x); free(init); free(y);
}

Test(cuda, transpose) {
  NEED_GPU();
  struct { int rank; int64_t shape[4]; int8_t perm[4]; } cs[] = {
    {2, {3, 257}, {1, 0}}, {2, {1025, 33}, {1, 0}}, {2, {1, 7}, {1, 0}},
    {4, {2, 3, 4, 5}, {0, 2, 1, 3}}, {4, {2, 3, 4, 5}, {3, 1, 0, 2}}, {4, {4, 1, 64, 33}, {2, 0, 3, 1}},
    {3, {8, 128, 64}, {1, 0, 2}}, {3, {5, 70, 40}, {2, 1, 0}},
  };
  for (size_t t = 0; t < sizeof cs / sizeof *cs; t++) {
    rt_instr ins = mk(RT_TRANSPOSE);
    ins.rank = (uint8_t)cs[t].rank;
    int64_t n = 1;
    for (int d = 0; d < cs[t].rank; d++) { ins.shape[d] = cs[t].shape[d]; ins.perm[d] = cs[t].perm[d]; n *= cs[t].shape[d]; }
    float *x = rvec(n, -5, 5);
    char what[32];
    snprintf(what, sizeof what, "transpose case %zu", t);
    check(what, &ins, (opnd[]){{x, n}}, 1, n, NULL, 0);
    free(x);
  }
}

/* ---- elementwise ---- */

static int positive_only(int fn) { return fn == RT_LOG || fn == RT_SQRT || fn == RT_RSQRT || fn == RT_ADAM_DENOM; }

Test(cuda, every_elementwise_function_contiguous) {
  NEED_GPU();
  int64_t sizes[] = {1, 3, 1025, 65537};
  for (int fn = 0; fn < gpu->newfn; fn++)   /* the functions the backend says it has */
    for (int s = 0; s < 4; s++) {
      int64_t n = sizes[s];
      float *a = rvec(n, positive_only(fn) ? 0.05 : -8, 8), *b = rvec(n, fn == RT_DIV ? 0.5 : -8, 8);
      rt_instr ins = mk(RT_EW);
      ins.fn = (uint8_t)fn;
      ins.rank = 1;
      ins.shape[0] = n;
      ins.stride[0][0] = ins.stride[1][0] = 1;
      ins.alpha = 0.75f;
      ins.beta = -0.25f;
      int ar = rt_ewfn_arity(fn);
      char what[64];
      snprintf(what, sizeof what, "%s n=%lld", rt_ewfn_name(fn), (long long)n);
      check(what, &ins, (opnd[]){{a, n}, {ar > 1 ? b : NULL, n}}, ar, n, NULL, RTOL);
      free(a); free(b);
    }
}

Test(cuda, elementwise_tails_and_specials) {
  NEED_GPU();
  /* gelu's far tails, sigmoid and tanh near 0 and far out, exp near overflow, NaN and inf */
  float v[] = {-30, -12, -9, -6, -3, -1e-3f, -1e-7f, 0, 1e-7f, 1e-3f, 0.39f, 0.41f, 3, 6, 9, 12, 30, 88, 89,
               -88, -104, -110, NAN, INFINITY, -INFINITY};
  int64_t n = sizeof v / sizeof *v;
  int fns[] = {RT_NEG, RT_EXP, RT_TANH, RT_RELU, RT_GELU, RT_GELU_TANH, RT_SIGMOID, RT_SILU, RT_GELU_GRAD,
               RT_GELU_TANH_GRAD, RT_SILU_GRAD, RT_RELU_GRAD, RT_MAX, RT_MIN, RT_GE};
  float *ones = rvec(n, 1, 1);
  for (size_t f = 0; f < sizeof fns / sizeof *fns; f++) {
    rt_instr ins = mk(RT_EW);
    ins.fn = (uint8_t)fns[f];
    ins.rank = 1;
    ins.shape[0] = n;
    ins.stride[0][0] = ins.stride[1][0] = 1;
    check(rt_ewfn_name(fns[f]), &ins, (opnd[]){{v, n}, {ones, n}}, rt_ewfn_arity(fns[f]), n, NULL, RTOL);
  }
  free(ones);
}

Test(cuda, elementwise_broadcasting_strides) {
  NEED_GPU();
  /* [3, 257] + row [257] / column [3] / scalar; [2, 3, 5] with in0 read transposed; rank 4 mixed */
  struct { int rank; int64_t shape[4]; int64_t sa[4], sb[4]; int64_t na, nb; } cs[] = {
    {2, {3, 257}, {257, 1}, {0, 1}, 3 * 257, 257},
    {2, {3, 257}, {257, 1}, {1, 0}, 3 * 257, 3},
    {2, {3, 257}, {0, 0}, {257, 1}, 1, 3 * 257},
    {3, {2, 3, 5}, {1, 2, 6}, {15, 5, 1}, 30, 30},
    {4, {2, 1, 3, 1025}, {3075, 0, 1025, 1}, {0, 0, 1, 0}, 6150, 3},
    {4, {4, 3, 2, 33}, {1, 4, 12, 24}, {0, 33, 0, 1}, 792, 99},
    {1, {1}, {0}, {0}, 1, 1},
  };
  int fns[] = {RT_ADD, RT_SUB, RT_MUL, RT_DIV, RT_AXPBY, RT_GELU_GRAD, RT_EXP, RT_AFFINE};
  for (size_t t = 0; t < sizeof cs / sizeof *cs; t++)
    for (size_t f = 0; f < sizeof fns / sizeof *fns; f++) {
      rt_instr ins = mk(RT_EW);
      int fn = fns[f], ar = rt_ewfn_arity(fn);
      ins.fn = (uint8_t)fn;
      ins.rank = (uint8_t)cs[t].rank;
      int64_t n = 1;
      for (int d = 0; d < cs[t].rank; d++) {
        ins.shape[d] = cs[t].shape[d];
        ins.stride[0][d] = cs[t].sa[d];
        ins.stride[1][d] = cs[t].sb[d];
        n *= cs[t].shape[d];
      }
      ins.alpha = 1.5f;
      ins.beta = 0.5f;
      float *a = rvec(cs[t].na, -3, 3), *b = rvec(cs[t].nb, 0.5, 3);
      char what[64];
      snprintf(what, sizeof what, "%s case %zu", rt_ewfn_name(fn), t);
      check(what, &ins, (opnd[]){{a, cs[t].na}, {ar > 1 ? b : NULL, cs[t].nb}}, ar, n, NULL, RTOL);
      free(a); free(b);
    }
}

Test(cuda, elementwise_in_place) {
  NEED_GPU();
  /* an update in place: out is in0 (AXPY, AXPBY, ADAM_DENOM) */
  int fns[] = {RT_AXPY, RT_AXPBY, RT_ADAM_DENOM};
  int64_t n = 100003;
  for (int f = 0; f < 3; f++) {
    int fn = fns[f], ar = rt_ewfn_arity(fn);
    float *a = rvec(n, 0.1, 2), *b = rvec(n, -1, 1), *c = malloc(n * 4), *g = malloc(n * 4);
    rt_instr ins = mk(RT_EW);
    ins.fn = (uint8_t)fn;
    ins.rank = 1;
    ins.shape[0] = n;
    ins.stride[0][0] = ins.stride[1][0] = 1;
    ins.alpha = 0.9f;
    ins.beta = 0.1f;
    memcpy(c, a, n * 4);
    void *hin[RT_MAXIN] = {c, b};
    cr_assert_eq(rt_backend_cpu()->kernels[RT_EW](NULL, &ins, c, hin, err, sizeof err), 0);
    void *da = gpu->alloc(gpu->ctx, n * 4), *db = gpu->alloc(gpu->ctx, n * 4);
    cr_assert_eq(gpu->upload(gpu->ctx, da, a, n * 4, err, sizeof err), 0, "%s", err);
    cr_assert_eq(gpu->upload(gpu->ctx, db, b, n * 4, err, sizeof err), 0, "%s", err);
    void *din[RT_MAXIN] = {da, ar > 1 ? db : NULL};
    cr_assert_eq(gpu->kernels[RT_EW](gpu->ctx, &ins, da, din, err, sizeof err), 0, "%s", err);
    cr_assert_eq(gpu->download(gpu->ctx, g, da, n * 4, err, sizeof err), 0, "%s", err);
    expect_same(rt_ewfn_name(fn), c, g, n, RTOL);
    gpu->free(gpu->ctx, da);
    gpu->free(gpu->ctx, db);
    free(a); free(b); free(c); free(g);
  }
}

/* the inputs a kernel writes (an update's state, the sums of rows) after
   the run on both backends, beside out: run_both's, keeping each input's
   data in host[k] (cpu) and gdev[k] (downloaded from the gpu) */
static void run_both_state(const rt_instr *ins, const opnd *in, int nin, int64_t nout, float *cpu, float *gout,
                           float **host, float **gdev) {
  void *hin[RT_MAXIN] = {0}, *din[RT_MAXIN] = {0};
  for (int k = 0; k < nin; k++) {
    if (!in[k].h) continue;
    size_t by = (size_t)(in[k].n > 0 ? in[k].n : 1) * 4;
    hin[k] = host[k] = malloc(by);
    memcpy(hin[k], in[k].h, (size_t)in[k].n * 4);
    din[k] = gpu->alloc(gpu->ctx, by);
    cr_assert_eq(gpu->upload(gpu->ctx, din[k], in[k].h, (size_t)in[k].n * 4, err, sizeof err), 0, "%s", err);
  }
  size_t ob = (size_t)nout * 4;
  memset(cpu, 0, ob);
  void *dout = gpu->alloc(gpu->ctx, ob);
  cr_assert_eq(gpu->upload(gpu->ctx, dout, cpu, ob, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_backend_cpu()->kernels[ins->op](NULL, ins, cpu, hin, err, sizeof err), 0, "cpu %s: %s", rt_op_name(ins->op), err);
  cr_assert_eq(gpu->kernels[ins->op](gpu->ctx, ins, dout, din, err, sizeof err), 0, "cuda %s: %s", rt_op_name(ins->op), err);
  int where = -1;
  cr_assert_eq(gpu->sync(gpu->ctx, &where, err, sizeof err), 0, "%s", err);
  cr_assert_eq(gpu->download(gpu->ctx, gout, dout, ob, err, sizeof err), 0, "%s", err);
  for (int k = 0; k < nin; k++) {
    if (!din[k]) continue;
    gdev[k] = malloc((size_t)(in[k].n > 0 ? in[k].n : 1) * 4);
    cr_assert_eq(gpu->download(gpu->ctx, gdev[k], din[k], (size_t)in[k].n * 4, err, sizeof err), 0, "%s", err);
    gpu->free(gpu->ctx, din[k]);
  }
  gpu->free(gpu->ctx, dout);
}

/* fused elementwise steps: a broadcast, a transposed read, every kind of step (f32 inputs: the
   CUDA backend holds no i1 buffers) */
Test(cuda, fused_steps) {
  NEED_GPU();
  int64_t R = 333;
  float *a = rvec(R * R, -3, 3), *b = rvec(R, -1, 1);
  rt_fused fu;
  memset(&fu, 0, sizeof fu);
  rt_instr ins = mk(RT_FUSED);
  ins.nin = 3; ins.in[0] = 0; ins.in[1] = 1; ins.in[2] = 2;
  ins.rank = 2; ins.shape[0] = ins.shape[1] = R;
  ins.idt[0] = ins.idt[1] = ins.idt[2] = RT_F32;
  fu.stride[0][0] = R; fu.stride[0][1] = 1;
  fu.stride[1][0] = 0; fu.stride[1][1] = 1;
  fu.stride[2][0] = 1; fu.stride[2][1] = R;
  const rt_fstep st[] = {
    {RT_AFFINE, {-1, -1, -1}, 0.5f, 0}, {RT_SUB, {0, -2, 0}, 0, 0}, {RT_EXP, {1, 1, 1}, 0, 0},
    {RT_CMP_GT, {-1, -2, 0}, 0, 0}, {RT_SELECT, {3, 2, -3}, 0, 0}, {RT_GELU_TANH_GRAD, {4, -3, 0}, 0, 0},
    {RT_AXPBY, {5, -1, 0}, 0.25f, -2}, {RT_MAX, {6, -2, 0}, 0, 0},
  };
  fu.nsteps = (int)(sizeof st / sizeof st[0]);
  memcpy(fu.step, st, sizeof st);
  ins.data = &fu;
  ins.nelem = R * R;
  check("fused", &ins, (opnd[]){{a, R * R}, {b, R}, {a, R * R}}, 3, R * R, NULL, RTOL);
  free(a); free(b);
}

/* iota in f32 and i32, and a constant's elements */
Test(cuda, iota_and_constants) {
  NEED_GPU();
  for (int t = 0; t < 2; t++) {
    rt_instr ins = mk(RT_IOTA);
    ins.outer = 3; ins.n = 1001; ins.inner = 7;
    ins.nelem = 3 * 1001 * 7;
    ins.odt = t ? RT_I32 : RT_F32;
    check(t ? "iota i32" : "iota f32", &ins, NULL, 0, ins.nelem, NULL, 0);
  }
  float *v = rvec(4099, -5, 5);
  rt_instr ins = mk(RT_CONST);
  ins.nelem = 4099;
  ins.data = v;
  check("const", &ins, NULL, 0, 4099, NULL, 0);
  free(v);
}

/* an elementwise op writing the sums of its rows (a bias gradient folded in) */
Test(cuda, elementwise_with_row_sums) {
  NEED_GPU();
  int64_t rows = 517, w = 300;
  float *a = rvec(rows * w, -2, 2), *b = rvec(rows * w, -1, 1), *c = malloc(rows * w * 4), *g = malloc(rows * w * 4);
  rt_instr ins = mk(RT_EW);
  ins.fn = RT_GELU_GRAD;
  ins.rank = 2; ins.shape[0] = rows; ins.shape[1] = w;
  ins.stride[0][0] = ins.stride[1][0] = w; ins.stride[0][1] = ins.stride[1][1] = 1;
  ins.in[0] = 0; ins.in[1] = 1; ins.in[3] = 3;
  float *host[RT_MAXIN] = {0}, *dev[RT_MAXIN] = {0};
  float *zeros = calloc((size_t)w, 4);
  run_both_state(&ins, (opnd[]){{a, rows * w}, {b, rows * w}, {NULL, 0}, {zeros, w}}, 4, rows * w, c, g, host, dev);
  expect_same("gelu_grad", c, g, rows * w, RTOL);
  expect_same("its row sums", host[3], dev[3], w, RTOL);
  for (int k = 0; k < RT_MAXIN; k++) { free(host[k]); free(dev[k]); }
  free(a); free(b); free(c); free(g); free(zeros);
}

/* Adam (plain, L2, AdamW) and SGD (with and without momentum and decay): the new parameter and state */
Test(cuda, optimizer_updates) {
  NEED_GPU();
  int64_t n = 100003;
  float *p = rvec(n, -1, 1), *gr = rvec(n, -0.1, 0.1), *m = rvec(n, -0.01, 0.01), *v = rvec(n, 0, 0.001);
  float lr_t[1] = {1e-3f}, eps_t[1] = {1e-8f}, *c = malloc(n * 4), *g = malloc(n * 4);
  for (int kind = 0; kind < 6; kind++) {
    rt_instr ins = mk(kind < 3 ? RT_ADAM : RT_SGD);
    float *host[RT_MAXIN] = {0}, *dev[RT_MAXIN] = {0};
    ins.nelem = n;
    if (kind < 3) {
      ins.hyper[0] = 0.9; ins.hyper[1] = 0.999; ins.hyper[2] = 1e-8; ins.hyper[4] = 0.1; ins.hyper[5] = 0.001;
      ins.hyper[3] = kind == 1 ? 0.01 : kind == 2 ? 1 - 1e-3 * 0.01 : 0;
      ins.mode = kind == 2 ? RT_ADAM_DECOUPLED : 0;
      for (int k = 0; k < 6; k++) ins.in[k] = k;
      run_both_state(&ins, (opnd[]){{p, n}, {gr, n}, {m, n}, {v, n}, {lr_t, 1}, {eps_t, 1}}, 6, n, c, g, host, dev);
      expect_same("adam m", host[2], dev[2], n, RTOL);
      expect_same("adam v", host[3], dev[3], n, RTOL);
    } else {
      ins.alpha = 0.05f;
      ins.hyper[0] = kind == 3 ? 0 : 0.9;
      ins.hyper[1] = kind == 5 ? 1e-4 : 0;
      ins.in[0] = 0; ins.in[1] = 1;
      if (kind > 3) ins.in[2] = 2;
      run_both_state(&ins, (opnd[]){{p, n}, {gr, n}, {kind > 3 ? m : NULL, n}}, 3, n, c, g, host, dev);
      if (kind > 3) expect_same("sgd momentum", host[2], dev[2], n, RTOL);
    }
    expect_same(kind < 3 ? "adam p" : "sgd p", c, g, n, RTOL);
    for (int k = 0; k < RT_MAXIN; k++) { free(host[k]); free(dev[k]); }
  }
  free(p); free(gr); free(m); free(v); free(c); free(g);
}

/* ---- GEMM ---- */

static void gemm_case(int64_t batch, int64_t m, int64_t n, int64_t k, int ta, int tb, float alpha, float beta,
                      int64_t sa, int64_t sb, int64_t sc) {
  rt_instr ins = mk(RT_GEMM);
  ins.batch = batch; ins.m = m; ins.n = n; ins.k = k; ins.transa = (int8_t)ta; ins.transb = (int8_t)tb;
  ins.alpha = alpha; ins.beta = beta; ins.stride_a = sa; ins.stride_b = sb; ins.stride_c = sc;
  int64_t bt = batch < 1 ? 1 : batch;
  int64_t na = (bt - 1) * sa + m * k, nb = (bt - 1) * sb + k * n, nc = (bt - 1) * sc + m * n;
  float *A = rvec(na, -1, 1), *B = rvec(nb, -1, 1), *C = rvec(nc, -1, 1);
  char what[128];
  snprintf(what, sizeof what, "gemm b%lld %lldx%lldx%lld ta%d tb%d beta %g", (long long)batch, (long long)m,
           (long long)n, (long long)k, ta, tb, beta);
  check(what, &ins, (opnd[]){{A, na}, {B, nb}}, 2, nc, C, RTOL_GEMM);
  free(A); free(B); free(C);
}

Test(cuda, gemm_shapes_and_transposes) {
  NEED_GPU();
  int64_t sh[][3] = {{1, 1, 1}, {3, 5, 7}, {64, 257, 33}, {128, 1025, 96}, {257, 3, 1025}};
  for (int s = 0; s < 5; s++)
    for (int ta = 0; ta < 2; ta++)
      for (int tb = 0; tb < 2; tb++) {
        int64_t m = sh[s][0], n = sh[s][1], k = sh[s][2];
        gemm_case(1, m, n, k, ta, tb, 1.0f, 0.0f, 0, 0, 0);
        gemm_case(1, m, n, k, ta, tb, 0.5f, 1.0f, 0, 0, 0);
      }
}

Test(cuda, gemm_batches) {
  NEED_GPU();
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) {
      gemm_case(3, 17, 33, 9, ta, tb, 1.0f, 0.0f, 17 * 9, 9 * 33, 17 * 33);           /* strided */
      gemm_case(4, 16, 24, 8, ta, tb, 0.125f, 0.0f, 16 * 8, 0, 16 * 24);             /* shared B */
      gemm_case(2, 5, 7, 3, ta, tb, 1.0f, 1.0f, 5 * 3, 3 * 7, 0);                     /* accumulating into one C */
      gemm_case(3, 8, 8, 8, ta, tb, 1.0f, 0.5f, 100, 64, 64);                         /* gaps between batches */
    }
  gemm_case(2, 4, 5, 0, 0, 0, 1.0f, 0.5f, 0, 0, 20);                                  /* k = 0: C = beta C */
  gemm_case(2, 4, 5, 0, 0, 0, 1.0f, 0.0f, 0, 0, 20);
}

Test(cuda, gemm_with_tf32_allowed_stays_close) {
  NEED_GPU();
  rt_backend *t = rt_backend_cuda_new(&(rt_cuda_opts){.allow_tf32 = 1}, err, sizeof err);
  cr_assert_not_null(t, "%s", err);
  rt_backend *keep = gpu;
  gpu = t;
  rt_instr ins = mk(RT_GEMM);
  ins.batch = 1; ins.m = 256; ins.n = 256; ins.k = 256; ins.alpha = 1;
  float *A = rvec(65536, -1, 1), *B = rvec(65536, -1, 1), *c = malloc(65536 * 4), *g = malloc(65536 * 4);
  run_both(&ins, (opnd[]){{A, 65536}, {B, 65536}}, 2, 65536, NULL, c, g);
  for (int i = 0; i < 65536; i++) cr_assert(fabsf(c[i] - g[i]) < 0.05f, "[%d] %g vs %g", i, c[i], g[i]);
  gpu = keep;
  rt_backend_free(t);
  free(A); free(B); free(c); free(g);
}

/* ---- reductions ---- */

Test(cuda, reduce_sum_and_max) {
  NEED_GPU();
  int64_t sh[][3] = {{1, 1025, 1}, {3, 257, 1}, {2, 33, 257}, {4, 1, 3}, {1, 5000, 768}, {7, 3, 1}, {1, 100003, 1}};
  for (int s = 0; s < 7; s++)
    for (int fn = RT_RSUM; fn <= RT_RMAX; fn++) {
      int64_t o = sh[s][0], n = sh[s][1], in = sh[s][2];
      float *x = rvec(o * n * in, -2, 2);
      rt_instr ins = mk(RT_REDUCE);
      ins.fn = (uint8_t)fn;
      ins.outer = o; ins.n = n; ins.inner = in; ins.alpha = 0.25f;
      char what[64];
      snprintf(what, sizeof what, "reduce %s [%lld, %lld, %lld]", fn == RT_RSUM ? "sum" : "max", (long long)o,
               (long long)n, (long long)in);
      check(what, &ins, (opnd[]){{x, o * n * in}}, 1, o * in, NULL, RTOL);
      free(x);
    }
}

Test(cuda, reduce_max_grad_shares_among_ties) {
  NEED_GPU();
  int64_t sh[][3] = {{2, 7, 5}, {1, 257, 1}, {3, 1025, 2}, {1, 1, 4}};
  for (int s = 0; s < 4; s++) {
    int64_t o = sh[s][0], n = sh[s][1], in = sh[s][2];
    float *x = rvec(o * n * in, 0, 3), *dy = rvec(o * in, -1, 1);
    for (int64_t i = 0; i < o * n * in; i++) x[i] = floorf(x[i]);      /* values 0, 1, 2: many ties */
    rt_instr ins = mk(RT_REDUCE_MAX_GRAD);
    ins.outer = o; ins.n = n; ins.inner = in;
    check("reduce_max_grad", &ins, (opnd[]){{x, o * n * in}, {dy, o * in}}, 2, o * n * in, NULL, RTOL);
    free(x); free(dy);
  }
}

/* ---- row-wise ops ---- */

static float *logits(int64_t o, int64_t n) {
  float *x = rvec(o * n, -4, 4);
  if (o >= 3) {                       /* a row of huge values, a row with -inf and -1e30 */
    for (int64_t j = 0; j < n; j++) x[n + j] *= 1e3f;
    x[2 * n] = -INFINITY;
    if (n > 1) x[2 * n + 1] = -1e30f;
  }
  return x;
}

Test(cuda, softmax_family) {
  NEED_GPU();
  int64_t sh[][2] = {{1, 1}, {3, 257}, {5, 1025}, {2, 50257}, {64, 3}};
  rt_op ops[] = {RT_SOFTMAX, RT_LOG_SOFTMAX};
  for (int s = 0; s < 5; s++)
    for (int k = 0; k < 2; k++) {
      int64_t o = sh[s][0], n = sh[s][1];
      float *x = logits(o, n);
      rt_instr ins = mk(ops[k]);
      ins.outer = o; ins.n = n;
      char what[64];
      snprintf(what, sizeof what, "%s [%lld, %lld]", rt_op_name(ops[k]), (long long)o, (long long)n);
      check(what, &ins, (opnd[]){{x, o * n}}, 1, o * n, NULL, RTOL);
      free(x);
    }
}

Test(cuda, softmax_gradients) {
  NEED_GPU();
  int64_t sh[][2] = {{1, 1}, {3, 257}, {5, 1025}, {64, 3}};
  for (int s = 0; s < 4; s++) {
    int64_t o = sh[s][0], n = sh[s][1];
    float *x = rvec(o * n, -4, 4), *dy = rvec(o * n, -1, 1), *y = malloc(o * n * 4), *ly = malloc(o * n * 4);
    rt_instr f = mk(RT_SOFTMAX);
    f.outer = o; f.n = n;
    void *hin[RT_MAXIN] = {x};
    rt_backend_cpu()->kernels[RT_SOFTMAX](NULL, &f, y, hin, err, sizeof err);
    f.op = RT_LOG_SOFTMAX;
    rt_backend_cpu()->kernels[RT_LOG_SOFTMAX](NULL, &f, ly, hin, err, sizeof err);
    rt_instr g = mk(RT_SOFTMAX_GRAD);
    g.outer = o; g.n = n;
    check("softmax_grad", &g, (opnd[]){{y, o * n}, {dy, o * n}}, 2, o * n, NULL, RTOL);
    g.op = RT_LOG_SOFTMAX_GRAD;
    check("log_softmax_grad", &g, (opnd[]){{ly, o * n}, {dy, o * n}}, 2, o * n, NULL, RTOL);
    free(x); free(dy); free(y); free(ly);
  }
}

Test(cuda, layernorm_and_gradient) {
  NEED_GPU();
  int64_t sh[][2] = {{1, 1}, {3, 257}, {4, 1025}, {2, 3}, {512, 768}};
  for (int s = 0; s < 5; s++)
    for (int affine = 0; affine < 4; affine++) {
      int64_t o = sh[s][0], n = sh[s][1];
      float *x = rvec(o * n, -3, 5), *gm = rvec(n, 0.5, 1.5), *bt = rvec(n, -1, 1), *dy = rvec(o * n, -1, 1);
      int hg = affine & 1, hb = affine >> 1;
      rt_instr ins = mk(RT_LAYERNORM);
      ins.outer = o; ins.n = n; ins.alpha = 1e-5f;
      char what[64];
      snprintf(what, sizeof what, "layernorm [%lld, %lld] gamma %d beta %d", (long long)o, (long long)n, hg, hb);
      check(what, &ins, (opnd[]){{x, o * n}, {hg ? gm : NULL, n}, {hb ? bt : NULL, n}}, 3, o * n, NULL, RTOL);
      if (!hb) {
        rt_instr gi = mk(RT_LAYERNORM_GRAD);
        gi.outer = o; gi.n = n; gi.alpha = 1e-5f;
        snprintf(what, sizeof what, "layernorm_grad [%lld, %lld] gamma %d", (long long)o, (long long)n, hg);
        check(what, &gi, (opnd[]){{x, o * n}, {hg ? gm : NULL, n}, {dy, o * n}}, 3, o * n, NULL, RTOL);
      }
      free(x); free(gm); free(bt); free(dy);
    }
}

/* ---- embeddings and cross-entropy ---- */

Test(cuda, gather_and_scatter_rows_with_repeats_and_a_shard) {
  NEED_GPU();
  int64_t inners[] = {1, 3, 257};
  for (int s = 0; s < 3; s++) {
    int64_t inner = inners[s], outer = 37;
    int32_t ids[37];
    for (int r = 0; r < 37; r++) ids[r] = (int32_t)((r * 7) % 10);      /* repeats */
    /* the whole table of 10 rows, then this device's shard: rows 5..9 */
    for (int shard = 0; shard < 2; shard++) {
      int64_t n = shard ? 5 : 10, off = shard ? 5 : 0;
      float *tab = rvec(n * inner, -1, 1), *dy = rvec(outer * inner, -1, 1);
      rt_instr g = mk(RT_GATHER_ROWS);
      g.outer = outer; g.n = n; g.inner = inner; g.n2 = 10; g.off = off;
      check("gather_rows", &g, (opnd[]){{tab, n * inner}, {ids, outer}}, 2, outer * inner, NULL, 0);
      rt_instr sc = mk(RT_SCATTER_ROWS);
      sc.outer = outer; sc.n = n; sc.inner = inner; sc.n2 = 10; sc.off = off;
      float *init = rvec(n * inner, 3, 4);     /* scatter starts from zeros whatever out held */
      check("scatter_rows", &sc, (opnd[]){{ids, outer}, {dy, outer * inner}}, 2, n * inner, init, RTOL);
      free(tab); free(dy); free(init);
    }
  }
}

Test(cuda, cross_entropy_and_gradient) {
  NEED_GPU();
  int64_t sh[][2] = {{1, 1}, {3, 257}, {5, 1025}, {2, 50257}, {300, 7}};
  for (int s = 0; s < 5; s++) {
    int64_t o = sh[s][0], n = sh[s][1];
    float *x = logits(o, n);
    if (o >= 3) x[2 * n] = -3;        /* a label's own logit at -inf would make the loss inf */
    int32_t *lab = malloc(o * 4);
    for (int64_t r = 0; r < o; r++) lab[r] = (int32_t)((r * 31 + 5) % n);
    float dl = 1.7f;
    rt_instr ins = mk(RT_XENT);
    ins.outer = o; ins.n = n; ins.alpha = 1.0f / (float)o;
    char what[64];
    snprintf(what, sizeof what, "cross_entropy [%lld, %lld]", (long long)o, (long long)n);
    check(what, &ins, (opnd[]){{x, o * n}, {lab, o}}, 2, 1, NULL, RTOL);
    rt_instr gi = mk(RT_XENT_GRAD);
    gi.outer = o; gi.n = n; gi.alpha = 1.0f / (float)o;
    snprintf(what, sizeof what, "cross_entropy_grad [%lld, %lld]", (long long)o, (long long)n);
    check(what, &gi, (opnd[]){{x, o * n}, {lab, o}, {&dl, 1}}, 3, o * n, NULL, RTOL);
    free(x); free(lab);
  }
}

Test(cuda, causal_mask) {
  NEED_GPU();
  int64_t offs[] = {0, 2, -1, -9};
  float vals[] = {-INFINITY, 0.0f};
  for (int t = 0; t < 4; t++)
    for (int v = 0; v < 2; v++) {
      float *x = rvec(2 * 5 * 7, -1, 1);
      rt_instr ins = mk(RT_CAUSAL_MASK);
      ins.outer = 2; ins.m = 5; ins.n = 7; ins.off = offs[t]; ins.alpha = vals[v];
      check("causal_mask", &ins, (opnd[]){{x, 70}}, 1, 70, NULL, 0);
      free(x);
    }
}

/* ---- StableHLO's gather and scatter ---- */

/* a dimension map: u's dims each walk an index dim (>= 0) or x's dim -1 - w */
typedef struct ixcase {
  const char *what;
  int rx, ri, ru, ivd, ncomp;
  int64_t xs[4], is[4], window[4];
  int8_t comp[4], uwalk[4], xbatch[4];     /* xbatch: the index dim a dim of x is batched with, or -1 */
} ixcase;

static const ixcase ixcases[] = {
  {"rows", 2, 2, 2, 1, 1, {7, 5}, {6, 1}, {1, 5}, {0}, {0, -2}, {-1, -1}},
  {"rows, no index vector dim", 2, 1, 2, 1, 1, {7, 5}, {6}, {1, 5}, {0}, {0, -2}, {-1, -1}},
  {"2-d starts, windows overlapping, u's dims interleaved", 2, 2, 3, 1, 2, {6, 9}, {5, 2}, {3, 4}, {1, 0},
   {-1, 0, -2}, {-1, -1}},
  {"a batching dim (take_along_axis)", 3, 3, 3, 2, 1, {3, 6, 4}, {3, 5, 1}, {1, 1, 4}, {1}, {0, 1, -3}, {0, -1, -1}},
  {"a batching dim, the index vector dim first", 3, 3, 4, 0, 1, {4, 2, 5}, {1, 2, 3}, {4, 1, 2}, {2},
   {2, -1, 1, -3}, {-1, 1, -1}},
  {"a dynamic slice (rank-0 indices)", 1, 0, 1, 0, 1, {10}, {0}, {3}, {0}, {-1}, {-1}},
};

static rt_index ix_of(const ixcase *k, int other_bounds, int combine, int64_t *nx, int64_t *ni, int64_t *nu) {
  rt_index ix;
  memset(&ix, 0, sizeof ix);
  ix.rx = (int8_t)k->rx; ix.ri = (int8_t)k->ri; ix.ru = (int8_t)k->ru;
  ix.ivd = (int8_t)k->ivd; ix.ncomp = (int8_t)k->ncomp;
  ix.other_bounds = (uint8_t)other_bounds;
  ix.combine = (uint8_t)combine;
  *nx = *ni = *nu = 1;
  for (int d = 0; d < k->rx; d++) {
    ix.xs[d] = k->xs[d]; ix.window[d] = k->window[d]; ix.x_idim[d] = k->xbatch[d];
    *nx *= k->xs[d];
  }
  for (int j = 0; j < k->ri; j++) { ix.is[j] = k->is[j]; *ni *= k->is[j]; }
  for (int c = 0; c < k->ncomp; c++) ix.comp_dim[c] = k->comp[c];
  for (int a = 0; a < k->ru; a++) {
    int w = k->uwalk[a];
    ix.u_idim[a] = (int8_t)(w >= 0 ? w : -1);
    ix.u_xdim[a] = (int8_t)(w >= 0 ? -1 : -1 - w);
    ix.us[a] = w >= 0 ? k->is[w] : k->window[-1 - w];
    *nu *= ix.us[a];
  }
  return ix;
}

/* starts from 3 before x to 3 past its end: clamped, partly and wholly outside */
static int64_t *ix_starts(int64_t n, int64_t hi) {
  int64_t *v = malloc((size_t)(n > 0 ? n : 1) * 8);
  for (int64_t i = 0; i < n; i++) v[i] = (int64_t)(urand() * (double)(hi + 7)) - 3;
  return v;
}

static int32_t *narrow(const int64_t *v, int64_t n) {
  int32_t *w = malloc((size_t)(n > 0 ? n : 1) * 4);
  for (int64_t i = 0; i < n; i++) w[i] = (int32_t)v[i];
  return w;
}

/* f32 values; for max, min and replace half of them from a few, so that
   places often meet +0 and -0 (+0 is the larger), NaN (it wins) and infinities */
static float *ix_values(int64_t n, int how) {
  static const float sp[] = {0.0f, -0.0f, 0.0f, -0.0f, 0.25f, -0.25f, INFINITY, -INFINITY, NAN};
  float *v = how == RT_IX_MUL ? rvec(n, 0.5, 1.5) : rvec(n, -1, 1);
  if (how != RT_IX_ADD && how != RT_IX_MUL)
    for (int64_t i = 0; i < n; i += 2) v[i] = sp[(int)(urand() * 9)];
  return v;
}

static int32_t *ix_ints(int64_t n) {
  int32_t *v = malloc((size_t)(n > 0 ? n : 1) * 4);
  for (int64_t i = 0; i < n; i++) v[i] = (int32_t)(uint32_t)(urand() * 4294967296.0);   /* adds and products wrap */
  return v;
}

static void expect_words(const char *what, const void *cpu, const void *g, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t a = ((const uint32_t *)cpu)[i], b = ((const uint32_t *)g)[i];
    cr_assert_eq(a, b, "%s[%lld]: cpu %08x, cuda %08x", what, (long long)i, a, b);
  }
}

/* ins (its data ix) on both backends with x, the indices (i64 or i32) and u (a scatter's updates; a
   gather's result has nu elements) */
static void ix_check(const char *what, rt_instr *ins, rt_dtype dt, int wide, const void *x, int64_t nx,
                     const int64_t *idx, int64_t ni, const void *u, int64_t nu, double rtol) {
  int scatter = ins->op == RT_SCATTER;
  int32_t *idx32 = narrow(idx, ni);
  ins->odt = ins->idt[0] = ins->idt[2] = (uint8_t)dt;
  ins->idt[1] = (uint8_t)(wide ? RT_I64 : RT_I32);
  opnd in[3] = {{x, nx}, {wide ? (const void *)idx : idx32, wide ? 2 * ni : ni}, {scatter ? u : NULL, nu}};
  int64_t no = scatter ? nx : nu;
  float *init = rvec(no, 7, 8), *c = malloc((size_t)(no > 0 ? no : 1) * 4), *g = malloc((size_t)(no > 0 ? no : 1) * 4);
  run_both(ins, in, scatter ? 3 : 2, no, init, c, g);
  if (dt == RT_F32 && rtol > 0) expect_same(what, c, g, no, rtol);
  else expect_words(what, c, g, no);      /* bit for bit: NaN's bits and the sign of zero too */
  free(idx32); free(init); free(c); free(g);
}

static const char *const ix_comb[] = {"replace", "add", "mul", "max", "min"};   /* ORDER RT_IX_ */

Test(cuda, gather_with_batching_dims_and_starts_out_of_range) {
  NEED_GPU();
  for (size_t k = 0; k < sizeof ixcases / sizeof *ixcases; k++)
    for (int ob = 0; ob < 2; ob++)
      for (int wide = 0; wide < 2; wide++)
        for (int dti = 0; dti < 2; dti++) {
          int64_t nx, ni, nu;
          rt_index ix = ix_of(&ixcases[k], ob, 0, &nx, &ni, &nu);
          int64_t *idx = ix_starts(ni, 10);
          void *x = dti ? (void *)ix_ints(nx) : (void *)rvec(nx, -1, 1);
          rt_instr ins = mk(RT_GATHER);
          ins.data = &ix;
          char what[160];
          snprintf(what, sizeof what, "gather, %s, %s, %s indices, %s", ixcases[k].what,
                   ob ? "outside gives zeros" : "starts clamped", wide ? "i64" : "i32", dti ? "i32" : "f32");
          ix_check(what, &ins, dti ? RT_I32 : RT_F32, wide, x, nx, idx, ni, NULL, nu, 0);
          free(idx); free(x);
        }
}

Test(cuda, scatter_every_combiner_with_repeats_and_places_outside) {
  NEED_GPU();
  for (size_t k = 0; k < sizeof ixcases / sizeof *ixcases; k++)
    for (int how = RT_IX_REPLACE; how <= RT_IX_MIN; how++)
      for (int ob = 0; ob < 2; ob++)
        for (int dti = 0; dti < 2; dti++) {
          int64_t nx, ni, nu;
          rt_index ix = ix_of(&ixcases[k], ob, how, &nx, &ni, &nu);
          int64_t *idx = ix_starts(ni, 10);
          void *x = dti ? (void *)ix_ints(nx) : (void *)ix_values(nx, how);
          void *u = dti ? (void *)ix_ints(nu) : (void *)ix_values(nu, how);
          rt_instr ins = mk(RT_SCATTER);
          ins.data = &ix;
          char what[160];
          snprintf(what, sizeof what, "scatter %s, %s, %s, %s", ix_comb[how], ixcases[k].what,
                   ob ? "starts clamped" : "outside skipped", dti ? "i32" : "f32");
          /* f32 adds and products of repeated places happen in another order than the CPU's */
          double rtol = how == RT_IX_ADD || how == RT_IX_MUL ? RTOL : 0;
          ix_check(what, &ins, dti ? RT_I32 : RT_F32, k & 1, x, nx, idx, ni, u, nu, rtol);
          free(idx); free(x); free(u);
        }
}

Test(cuda, scatter_of_many_updates_onto_few_rows) {
  NEED_GPU();
  /* 4096 rows of 257 onto 3: the adds contend; replace keeps the last row of each */
  ixcase k = {"rows", 2, 2, 2, 1, 1, {3, 257}, {4096, 1}, {1, 257}, {0}, {0, -2}, {-1, -1}};
  for (int how = RT_IX_REPLACE; how <= RT_IX_MAX; how++) {
    int64_t nx, ni, nu;
    rt_index ix = ix_of(&k, 0, how, &nx, &ni, &nu);
    int64_t *idx = malloc((size_t)ni * 8);
    for (int64_t i = 0; i < ni; i++) idx[i] = (i * 7) % 3;
    float *x = rvec(nx, -1, 1), *u = how == RT_IX_MUL ? rvec(nu, 0.999, 1.001) : rvec(nu, -1, 1);
    rt_instr ins = mk(RT_SCATTER);
    ins.data = &ix;
    char what[64];
    snprintf(what, sizeof what, "scatter %s, 4096 rows onto 3", ix_comb[how]);
    ix_check(what, &ins, RT_F32, 0, x, nx, idx, ni, u, nu, how == RT_IX_ADD || how == RT_IX_MUL ? RTOL_GEMM : 0);
    free(idx); free(x); free(u);
  }
}

/* ---- whole programs through rt_exec ---- */

static rt_prog P;

static int buf(const char *name, rt_dtype t, rt_bufkind k, int rank, int64_t d0, int64_t d1) {
  int64_t sh[2] = {d0, d1};
  return rt_prog_buf(&P, name, t, rank, sh, k);
}

static rt_instr *emit(rt_op op, int out, int a, int b, int c) {
  rt_instr *i = rt_prog_emit(&P, op, out);
  i->in[0] = a; i->in[1] = b; i->in[2] = c;
  i->nin = (uint8_t)((a >= 0) + (b >= 0) + (c >= 0));
  return i;
}

static rt_instr *ew1(int fn, int out, int a, int b, int64_t n) {
  rt_instr *i = emit(RT_EW, out, a, b, -1);
  i->fn = (uint8_t)fn;
  i->rank = 1;
  i->shape[0] = n;
  i->stride[0][0] = i->stride[1][0] = 1;
  return i;
}

enum { T = 6, V = 10, D = 16, H = 12 };

typedef struct mlp { int ids, tab, w, gam, lab, loss, w2, tab2, rs, sm; } mlp;

/* an embedding, a GEMM, layer norm, gelu, cross-entropy and the backward pass with SGD updates */
static mlp build_mlp(void) {
  mlp q;
  q.ids = buf("ids", RT_I32, RT_BUF_INPUT, 1, T, 0);
  q.tab = buf("wte", RT_F32, RT_BUF_INPUT, 2, V, D);
  q.w = buf("w", RT_F32, RT_BUF_INPUT, 2, D, H);
  q.gam = buf("gamma", RT_F32, RT_BUF_INPUT, 1, H, 0);
  q.lab = buf("labels", RT_I32, RT_BUF_INPUT, 1, T, 0);
  int h = buf("h", RT_F32, RT_BUF_TEMP, 2, T, D), z = buf("z", RT_F32, RT_BUF_TEMP, 2, T, H);
  int ln = buf("ln", RT_F32, RT_BUF_TEMP, 2, T, H), g = buf("g", RT_F32, RT_BUF_TEMP, 2, T, H);
  q.loss = buf("loss", RT_F32, RT_BUF_OUTPUT, 0, 0, 0);
  int one = buf("one", RT_F32, RT_BUF_TEMP, 0, 0, 0), dg = buf("dg", RT_F32, RT_BUF_TEMP, 2, T, H);
  int dln = buf("dln", RT_F32, RT_BUF_TEMP, 2, T, H), dz = buf("dz", RT_F32, RT_BUF_TEMP, 2, T, H);
  int dw = buf("dw", RT_F32, RT_BUF_TEMP, 2, D, H), dh = buf("dh", RT_F32, RT_BUF_TEMP, 2, T, D);
  int dt = buf("dwte", RT_F32, RT_BUF_TEMP, 2, V, D), gt = buf("gT", RT_F32, RT_BUF_TEMP, 2, H, T);
  q.w2 = buf("w.new", RT_F32, RT_BUF_OUTPUT, 2, D, H);
  q.tab2 = buf("wte.new", RT_F32, RT_BUF_OUTPUT, 2, V, D);
  q.rs = buf("colsum", RT_F32, RT_BUF_OUTPUT, 1, H, 0);
  q.sm = buf("probs", RT_F32, RT_BUF_OUTPUT, 2, T + 2, H);
  rt_instr *i = emit(RT_GATHER_ROWS, h, q.tab, q.ids, -1);
  i->outer = T; i->n = V; i->inner = D; i->n2 = V;
  i = emit(RT_GEMM, z, h, q.w, -1);
  i->batch = 1; i->m = T; i->k = D; i->n = H; i->alpha = 1;
  i = emit(RT_LAYERNORM, ln, z, q.gam, -1);
  i->outer = T; i->n = H; i->alpha = 1e-5f;
  ew1(RT_GELU, g, ln, -1, T * H);
  i = emit(RT_XENT, q.loss, g, q.lab, -1);
  i->outer = T; i->n = H; i->alpha = 1.0f / T;
  i = emit(RT_FILL, one, -1, -1, -1);
  i->alpha = 1;
  i = emit(RT_XENT_GRAD, dg, g, q.lab, one);
  i->outer = T; i->n = H; i->alpha = 1.0f / T;
  ew1(RT_GELU_GRAD, dln, ln, dg, T * H);
  i = emit(RT_LAYERNORM_GRAD, dz, z, q.gam, dln);
  i->outer = T; i->n = H; i->alpha = 1e-5f;
  i = emit(RT_GEMM, dw, h, dz, -1);
  i->batch = 1; i->m = D; i->k = T; i->n = H; i->transa = 1; i->alpha = 1;
  i = emit(RT_GEMM, dh, dz, q.w, -1);
  i->batch = 1; i->m = T; i->k = H; i->n = D; i->transb = 1; i->alpha = 1;
  i = emit(RT_SCATTER_ROWS, dt, q.ids, dh, -1);
  i->outer = T; i->n = V; i->inner = D; i->n2 = V;
  ew1(RT_AXPY, q.w2, q.w, dw, D * H)->alpha = -0.5f;
  ew1(RT_AXPY, q.tab2, q.tab, dt, V * D)->alpha = -0.5f;
  i = emit(RT_TRANSPOSE, gt, g, -1, -1);
  i->rank = 2; i->shape[0] = T; i->shape[1] = H; i->perm[0] = 1; i->perm[1] = 0;
  i = emit(RT_REDUCE, q.rs, gt, -1, -1);
  i->fn = RT_RSUM; i->outer = H; i->n = T; i->inner = 1; i->alpha = 1;
  /* probabilities padded with two zero rows: a block copy that writes part of its output */
  int sm = buf("sm", RT_F32, RT_BUF_TEMP, 2, T, H);
  i = emit(RT_SOFTMAX, sm, g, -1, -1);
  i->outer = T; i->n = H;
  i = emit(RT_BLOCK_COPY, q.sm, sm, -1, -1);
  i->outer = 1; i->m = T; i->n = T; i->inner = H; i->n2 = T + 2; i->off = 1;
  P.bufs[q.w].carry_from = q.w2;
  P.bufs[q.tab].carry_from = q.tab2;
  rt_prog_finish(&P);
  return q;
}

static void set_all(rt_exec *e, const mlp *q, const int32_t *ids, const int32_t *lab) {
  uint64_t keep = rng;
  rng = 42;
  float *tab = rvec(V * D, -1, 1), *w = rvec(D * H, -0.5, 0.5), *gam = rvec(H, 0.5, 1.5);
  rng = keep;
  cr_assert_eq(rt_exec_set(e, q->ids, ids, T * 4, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_exec_set(e, q->lab, lab, T * 4, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_exec_set(e, q->tab, tab, V * D * 4, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_exec_set(e, q->w, w, D * H * 4, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_exec_set(e, q->gam, gam, H * 4, err, sizeof err), 0, "%s", err);
  free(tab); free(w); free(gam);
}

static void get(rt_exec *e, int b, float *dst, size_t n) {
  cr_assert_eq(rt_exec_get(e, b, dst, n * 4, err, sizeof err), 0, "%s", err);
}

Test(cuda, a_program_trains_the_same_on_both_backends) {
  NEED_GPU();
  rt_prog_init(&P);
  mlp q = build_mlp();
  int32_t ids[T] = {3, 7, 3, 0, 9, 3}, lab[T] = {1, 11, 0, 5, 5, 2};
  rt_exec *ec = rt_exec_new(&P, rt_backend_cpu(), NULL), *eg = rt_exec_new(&P, gpu, NULL);
  set_all(ec, &q, ids, lab);
  set_all(eg, &q, ids, lab);
  cr_assert_null(rt_exec_data(eg, q.w), "device memory is not handed out as host pointers");
  for (int step = 0; step < 3; step++) {
    cr_assert_eq(rt_exec_run(ec, err, sizeof err), 0, "cpu: %s", err);
    cr_assert_eq(rt_exec_run(eg, err, sizeof err), 0, "cuda: %s", err);
    struct { int b; size_t n; const char *name; } outs[] = {
      {q.loss, 1, "loss"}, {q.w2, D * H, "w.new"}, {q.tab2, V * D, "wte.new"}, {q.rs, H, "colsum"},
      {q.sm, (T + 2) * H, "probs"}};
    for (size_t k = 0; k < sizeof outs / sizeof *outs; k++) {
      float c[256], g[256];
      get(ec, outs[k].b, c, outs[k].n);
      get(eg, outs[k].b, g, outs[k].n);
      char what[64];
      snprintf(what, sizeof what, "step %d %s", step, outs[k].name);
      expect_same(what, c, g, (int64_t)outs[k].n, RTOL_GEMM);
    }
    rt_exec_carry(ec);
    rt_exec_carry(eg);
  }
  cr_assert(rt_exec_peak(eg) > 0);
  rt_exec_profile(eg);
  cr_assert_eq(rt_exec_run(eg, err, sizeof err), 0, "cuda, profiled: %s", err);
  const double *sec = rt_exec_seconds(eg);
  cr_assert_not_null(sec);
  for (int i = 0; i < P.ninstrs; i++) cr_assert(sec[i] >= 0);
  rt_exec_free(ec);
  rt_exec_free(eg);
  rt_prog_free(&P);
}

Test(cuda, bad_ids_and_labels_fail_the_run_with_the_cpu_message) {
  NEED_GPU();
  rt_prog_init(&P);
  mlp q = build_mlp();
  int32_t ids[T] = {3, 7, 3, 0, 9, 3}, lab[T] = {1, 11, 0, 5, 5, 2};
  int32_t bad_ids[T] = {3, 7, 3, 12, 9, 3}, bad_lab[T] = {1, 11, 0, 5, -2, 2};
  for (int k = 0; k < 2; k++) {
    rt_exec *ec = rt_exec_new(&P, rt_backend_cpu(), NULL), *eg = rt_exec_new(&P, gpu, NULL);
    set_all(ec, &q, k ? ids : bad_ids, k ? bad_lab : lab);
    set_all(eg, &q, k ? ids : bad_ids, k ? bad_lab : lab);
    char ce[512], ge[512];
    cr_assert_eq(rt_exec_run(ec, ce, sizeof ce), -1);
    cr_assert_eq(rt_exec_run(eg, ge, sizeof ge), -1, "the device must report the bad %s", k ? "label" : "id");
    cr_assert_str_eq(ge, ce);
    /* fixed inputs run again: the error does not stick */
    cr_assert_eq(rt_exec_set(eg, q.ids, ids, sizeof ids, err, sizeof err), 0, "%s", err);
    cr_assert_eq(rt_exec_set(eg, q.lab, lab, sizeof lab, err, sizeof err), 0, "%s", err);
    cr_assert_eq(rt_exec_run(eg, err, sizeof err), 0, "%s", err);
    rt_exec_free(ec);
    rt_exec_free(eg);
  }
  rt_prog_free(&P);
}

/* a host communicator: this device is index 1 of 2; all_reduce doubles */
static int fake_size(void *impl, int g) { (void)impl; (void)g; return 2; }
static int fake_index(void *impl, int g) { (void)impl; (void)g; return 1; }
static int fake_run(void *impl, const rt_instr *ins, void *out, const void *in, char *e, size_t n) {
  (*(int *)impl)++;
  if (ins->op != RT_ALL_REDUCE) { snprintf(e, n, "unsupported"); return -1; }
  for (int64_t k = 0; k < ins->nelem; k++) ((float *)out)[k] = 2 * ((const float *)in)[k];
  return 0;
}

Test(cuda, collectives_are_staged_through_host_memory) {
  NEED_GPU();
  rt_prog_init(&P);
  int x = buf("x", RT_F32, RT_BUF_INPUT, 2, 2, 6);
  int s = buf("s", RT_F32, RT_BUF_TEMP, 2, 2, 3);
  int r = buf("r", RT_F32, RT_BUF_OUTPUT, 2, 2, 3);
  P.mesh_rank = 1; P.mesh[0] = 2; P.axis_names[0] = "model";
  int g = rt_prog_group(&P, 1, (int[]){0});
  rt_instr *i = rt_prog_emit(&P, RT_SHARD_SLICE, s);
  i->in[0] = x; i->group = g; i->outer = 2; i->n = 6; i->inner = 1;
  i = rt_prog_emit(&P, RT_ALL_REDUCE, r);
  i->in[0] = s; i->group = g;
  rt_prog_finish(&P);
  int calls = 0;
  rt_comm comm = {&calls, fake_size, fake_index, fake_run, 0};
  rt_exec *e = rt_exec_new(&P, gpu, &comm);
  float X[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, R[6], want[6] = {6, 8, 10, 18, 20, 22};
  cr_assert_eq(rt_exec_set(e, x, X, sizeof X, err, sizeof err), 0, "%s", err);
  for (int step = 0; step < 2; step++) {
    cr_assert_eq(rt_exec_run(e, err, sizeof err), 0, "%s", err);
    get(e, r, R, 6);
    for (int k = 0; k < 6; k++) cr_assert_eq(R[k], want[k], "r[%d] = %g", k, R[k]);
  }
  cr_assert_eq(calls, 2);
  rt_exec_free(e);
  rt_prog_free(&P);
}

/* ---- the kernel cache ---- */

Test(cuda, kernels_are_compiled_once_then_loaded) {
  NEED_GPU();
  char dir[] = "/tmp/carve-cuda-cache-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  rt_cuda_opts o = {.cache_dir = dir};
  rt_backend *a = rt_backend_cuda_new(&o, err, sizeof err);
  cr_assert_not_null(a, "%s", err);
  cr_assert(strstr(rt_cuda_describe(a), "compiled by NVRTC"), "%s", rt_cuda_describe(a));
  rt_backend *b = rt_backend_cuda_new(&o, err, sizeof err);
  cr_assert_not_null(b, "%s", err);
  cr_assert(strstr(rt_cuda_describe(b), "loaded from"), "%s", rt_cuda_describe(b));
  cr_log_info("%s", rt_cuda_describe(b));
  rt_backend_free(a);
  rt_backend_free(b);
  cr_assert_eq(rt_cuda_describe(rt_backend_cpu())[0], 0);
  cr_assert(rt_cuda_device_count(NULL, err, sizeof err) >= 1, "%s", err);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
}

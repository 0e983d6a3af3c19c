/*
** test_threads.c: the CPU kernels that split their work over threads (as
** many as BLAS has) give the same bits as one thread: rows are independent
** and each keeps its arithmetic, reductions split by rows or by columns,
** cross-entropy sums its rows in row order, transposes split rows or slabs,
** an elementwise op with the sum of its rows splits the columns, and the
** fused optimizer updates split the elements.
*/
#include <criterion/criterion.h>
#include <cblas.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/backend.h"

static uint64_t seed = 0x9e3779b97f4a7c15ull;

static float frand(void) {
  seed = seed * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(seed >> 11) / 9007199254740992.0 * 4 - 2);
}

static float *rvec(int64_t n) {
  float *v = malloc((size_t)n * sizeof *v);
  for (int64_t i = 0; i < n; i++) v[i] = frand();
  return v;
}

static rt_instr mk(rt_op op, int64_t outer, int64_t n, int64_t inner, int64_t nelem) {
  rt_instr x;
  memset(&x, 0, sizeof x);
  x.op = (uint8_t)op;
  for (int k = 0; k < RT_MAXIN; k++) x.in[k] = -1;
  x.group = x.src = -1;
  x.outer = outer; x.n = n; x.inner = inner; x.nelem = nelem;
  x.odt = RT_F32;
  return x;
}

/* out (nout floats) from in[] with t threads; the inputs are copied first, so an
** update in place starts from the same values each time */
static float *run_with(int t, const rt_instr *x, int64_t nout, float *const *in, const int64_t *nin, int nbuf) {
  openblas_set_num_threads(t);
  void *args[RT_MAXIN] = {0};
  for (int k = 0; k < nbuf; k++) {
    args[k] = malloc((size_t)nin[k] * sizeof(float));
    memcpy(args[k], in[k], (size_t)nin[k] * sizeof(float));
  }
  float *out = calloc((size_t)nout + 1, sizeof *out);
  char err[256];
  rt_kernel k = rt_backend_cpu()->kernels[x->op];
  cr_assert(k && k(NULL, x, out, args, err, sizeof err) == 0, "%s: %s", rt_op_name((rt_op)x->op), err);
  for (int j = 0; j < nbuf; j++) {     /* state written in place counts as output */
    out = realloc(out, (size_t)(nout + nin[j]) * sizeof *out);
    memcpy(out + nout, args[j], (size_t)nin[j] * sizeof(float));
    nout += nin[j];
    free(args[j]);
  }
  return out;
}

static void same_bits(const rt_instr *x, int64_t nout, float *const *in, const int64_t *nin, int nbuf) {
  int64_t total = nout;
  for (int k = 0; k < nbuf; k++) total += nin[k];
  float *a = run_with(1, x, nout, in, nin, nbuf), *b = run_with(3, x, nout, in, nin, nbuf);
  cr_assert(memcmp(a, b, (size_t)total * sizeof *a) == 0, "%s (fn %d): 3 threads differ from one", rt_op_name((rt_op)x->op), x->fn);
  free(a);
  free(b);
}

#define ROWS 300
#define COLS 1000

Test(threads, row_kernels) {
  int64_t e = (int64_t)ROWS * COLS;
  float *xs = rvec(e), *dy = rvec(e), *g = rvec(COLS), *b = rvec(COLS);
  int32_t *lab = malloc(ROWS * sizeof *lab);
  for (int r = 0; r < ROWS; r++) lab[r] = (r * 7919) % COLS;
  float dl = 0.5f;
  rt_op ops[] = {RT_SOFTMAX, RT_LOG_SOFTMAX, RT_SOFTMAX_GRAD, RT_LOG_SOFTMAX_GRAD, RT_LAYERNORM, RT_LAYERNORM_GRAD};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    rt_instr x = mk(ops[i], ROWS, COLS, 1, e);
    x.alpha = 1e-5f;
    float *in[3] = {xs, dy, b};
    int64_t nin[3] = {e, e, COLS};
    if (ops[i] == RT_LAYERNORM) { in[1] = g; nin[1] = COLS; }
    if (ops[i] == RT_LAYERNORM_GRAD) { in[1] = g; nin[1] = COLS; in[2] = dy; nin[2] = e; }
    same_bits(&x, e, in, nin, ops[i] == RT_LAYERNORM || ops[i] == RT_LAYERNORM_GRAD ? 3 : 2);
  }
  rt_instr x = mk(RT_LAYERNORM_GRAD, ROWS, COLS, 1, COLS);   /* gamma's gradient: the columns split */
  x.alpha = 1e-5f;
  x.mode = RT_LN_GAMMA;
  float *gin[3] = {xs, g, dy};
  int64_t gn[3] = {e, COLS, e};
  same_bits(&x, COLS, gin, gn, 3);
  x = mk(RT_XENT, ROWS, COLS, 1, 1);
  x.alpha = 1.0f / ROWS;
  float *in[3] = {xs, (float *)lab, &dl};
  int64_t nin[3] = {e, ROWS, 1};
  same_bits(&x, 1, in, nin, 2);
  x = mk(RT_XENT_GRAD, ROWS, COLS, 1, e);
  x.alpha = 1.0f / ROWS;
  same_bits(&x, e, in, nin, 3);
  free(xs); free(dy); free(g); free(b); free(lab);
}

Test(threads, reductions) {
  int64_t e = (int64_t)ROWS * COLS;
  float *xs = rvec(e);
  int64_t shapes[][3] = {{ROWS, COLS, 1}, {1, ROWS, COLS}, {2, ROWS / 2, COLS}, {ROWS / 3, 3, COLS}};
  for (int fn = RT_RSUM; fn <= RT_RMIN; fn++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      rt_instr x = mk(RT_REDUCE, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][0] * shapes[s][2]);
      x.fn = (uint8_t)fn;
      x.alpha = 0.5f;
      float *in[1] = {xs};
      int64_t nin[1] = {e};
      same_bits(&x, x.nelem, in, nin, 1);
    }
  free(xs);
}

/* gelu_tanh_grad (heavy: threads take the columns) and add (one thread)
** with the sums of their rows in in3 */
Test(threads, elementwise_with_row_sums) {
  int64_t e = (int64_t)ROWS * COLS;
  float *a = rvec(e), *b = rvec(e), *sum = calloc(COLS, sizeof *sum);
  int fns[2] = {RT_GELU_TANH_GRAD, RT_ADD};
  for (int f = 0; f < 2; f++) {
    rt_instr x = mk(RT_EW, 0, 0, 0, e);
    x.fn = (uint8_t)fns[f];
    x.nin = 4;
    x.rank = 2; x.shape[0] = ROWS; x.shape[1] = COLS;
    for (int k = 0; k < 2; k++) { x.stride[k][0] = COLS; x.stride[k][1] = 1; }
    x.in[0] = 0; x.in[1] = 1; x.in[3] = 3;
    float *in[4] = {a, b, sum, sum};
    int64_t nin[4] = {e, e, 1, COLS};
    same_bits(&x, e, in, nin, 4);
  }
  free(a); free(b); free(sum);
}

Test(threads, transposes_and_broadcasts) {
  int64_t d[4] = {6, 50, 40, 30}, e = d[0] * d[1] * d[2] * d[3];
  float *xs = rvec(e), *row = rvec(d[3]);
  int8_t perms[][4] = {{0, 2, 1, 3}, {0, 1, 3, 2}, {3, 2, 1, 0}, {1, 0, 3, 2}};
  for (size_t p = 0; p < sizeof perms / sizeof perms[0]; p++) {
    rt_instr x = mk(RT_TRANSPOSE, 0, 0, 0, e);
    x.rank = 4;
    for (int i = 0; i < 4; i++) { x.shape[i] = d[i]; x.perm[i] = perms[p][i]; }
    float *in[1] = {xs};
    int64_t nin[1] = {e};
    same_bits(&x, e, in, nin, 1);
  }
  rt_instr x = mk(RT_TRANSPOSE, 0, 0, 0, e);      /* one large slab */
  x.rank = 2; x.shape[0] = 400; x.shape[1] = 900; x.perm[0] = 1; x.perm[1] = 0;
  float *in1[1] = {xs};
  int64_t n1[1] = {e};
  same_bits(&x, e, in1, n1, 1);
  /* a bias add over rows, and a strided (transposed) operand */
  x = mk(RT_EW, 0, 0, 0, e);
  x.fn = RT_ADD; x.nin = 2; x.rank = 2;
  x.shape[0] = e / d[3]; x.shape[1] = d[3];
  x.stride[0][0] = d[3]; x.stride[0][1] = 1; x.stride[1][0] = 0; x.stride[1][1] = 1;
  float *in2[2] = {xs, row};
  int64_t n2[2] = {e, d[3]};
  same_bits(&x, e, in2, n2, 2);
  x.fn = RT_GELU;
  x.nin = 1;
  x.shape[0] = 900; x.shape[1] = 400;        /* a transposed read: rows gathered */
  x.stride[0][0] = 1; x.stride[0][1] = 900;
  same_bits(&x, e, in1, n1, 1);
  free(xs); free(row);
}

Test(threads, optimizer_updates) {
  int64_t e = 300001;
  float *p = rvec(e), *g = rvec(e), *m = rvec(e), *v = rvec(e), lr_t = 0.003f, eps_t = 3e-10f;
  for (int64_t i = 0; i < e; i++) v[i] = v[i] * v[i];
  rt_instr x = mk(RT_ADAM, 0, 0, 0, e);
  x.alpha = 1e-3f;
  x.hyper[0] = 0.9; x.hyper[1] = 0.999; x.hyper[2] = 1e-8; x.hyper[3] = 0.01;
  float *in[6] = {p, g, m, v, &lr_t, &eps_t};
  int64_t nin[6] = {e, e, e, e, 1, 1};
  same_bits(&x, e, in, nin, 6);
  x = mk(RT_SGD, 0, 0, 0, e);
  x.alpha = 0.1f;
  x.hyper[0] = 0.9; x.hyper[1] = 0.01;
  same_bits(&x, e, in, nin, 3);
  free(p); free(g); free(m); free(v);
}

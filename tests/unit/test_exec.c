/*
** test_exec.c: program building and listing, the executor (repeat runs,
** liveness and peak memory, carries, errors naming the instruction,
** collectives routed to the communicator), and deterministic init.
*/
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/backend.h"
#include "runtime/comm_local.h"
#include "runtime/exec.h"
#include "runtime/init.h"
#include "runtime/plan.h"

static char err[512];
static rt_prog P;

static void setup(void) { rt_prog_init(&P); err[0] = 0; }
static void teardown(void) { rt_prog_free(&P); }

TestSuite(prog, .init = setup, .fini = teardown);
TestSuite(exec, .init = setup, .fini = teardown);

static int buf(const char *name, rt_dtype t, rt_bufkind k, int rank, int64_t d0, int64_t d1) {
  int64_t sh[2] = {d0, d1};
  return rt_prog_buf(&P, name, t, rank, sh, k);
}

static rt_instr *ew(int fn, int out, int a, int b, int64_t n) {
  rt_instr *i = rt_prog_emit(&P, RT_EW, out);
  i->fn = (uint8_t)fn;
  i->nin = b >= 0 ? 2 : 1;
  i->in[0] = a;
  i->in[1] = b;
  i->rank = 1;
  i->shape[0] = n;
  i->stride[0][0] = i->stride[1][0] = 1;
  return i;
}

/* ---- building ---- */

Test(prog, builders_fill_defaults) {
  int x = buf("x", RT_F32, RT_BUF_INPUT, 2, 3, 4);
  const rt_buf *b = &P.bufs[x];
  cr_assert_eq(x, 0);
  cr_assert_eq(b->nelem, 12);
  cr_assert_str_eq(b->name, "x");
  cr_assert_eq(b->global_shape[0], 3);
  cr_assert_eq(b->global_shape[1], 4);
  for (int d = 0; d < RT_MAXRANK; d++) cr_assert_eq(b->dim_group[d], -1);
  cr_assert_eq(b->carry_from, -1);
  cr_assert_eq(b->last_use, -1);
  int s = rt_prog_buf(&P, "s", RT_F32, 0, NULL, RT_BUF_OUTPUT);
  cr_assert_eq(P.bufs[s].nelem, 1);
  rt_instr *i = rt_prog_emit(&P, RT_FILL, s);
  cr_assert_eq(i->out, s);
  cr_assert_eq(i->group, -1);
  for (int k = 0; k < RT_MAXIN; k++) cr_assert_eq(i->in[k], -1);
  cr_assert_eq(i->alpha, 0);
  int g1 = rt_prog_group(&P, 1, (int[]){0}), g2 = rt_prog_group(&P, 2, (int[]){0, 1});
  cr_assert_neq(g1, g2);
  cr_assert_eq(rt_prog_group(&P, 1, (int[]){0}), g1);
  cr_assert_eq(P.groups[g2].naxes, 2);
  cr_assert_eq(P.groups[g2].axes[1], 1);
}

Test(prog, many_buffers_and_instructions) {
  for (int k = 0; k < 1000; k++) {
    char nm[16];
    snprintf(nm, sizeof nm, "v%d", k);
    cr_assert_eq(buf(nm, RT_F32, RT_BUF_TEMP, 1, k + 1, 0), k);
  }
  for (int k = 1; k < 1000; k++) ew(RT_NEG, k, k - 1, -1, 1);
  cr_assert_eq(P.ninstrs, 999);
  rt_prog_finish(&P);
  for (int k = 0; k < 999; k++) cr_assert_eq(P.bufs[k].last_use, k, "b%d", k);
  cr_assert_eq(P.bufs[999].last_use, -1);
  cr_assert_str_eq(P.bufs[537].name, "v537");
  cr_assert_eq(P.instrs[5].nelem, 7);
}

Test(prog, dump_is_readable) {
  int x = buf("x", RT_F32, RT_BUF_INPUT, 2, 2048, 768);
  int w = buf("w", RT_F32, RT_BUF_INPUT, 2, 3072, 768);
  int h = buf("h", RT_F32, RT_BUF_TEMP, 2, 2048, 3072);
  int s = buf("s", RT_F32, RT_BUF_OUTPUT, 2, 2048, 3072);
  P.mesh_rank = 1;
  P.mesh[0] = 4;
  P.axis_names[0] = "model";
  P.bufs[w].global_shape[0] = 12288;
  P.bufs[w].dim_group[0] = 0;
  rt_instr *g = rt_prog_emit(&P, RT_GEMM, h);
  g->in[0] = x; g->in[1] = w;
  g->batch = 1; g->m = 2048; g->n = 3072; g->k = 768; g->transb = 1; g->alpha = 1;
  rt_instr *c = rt_prog_emit(&P, RT_ALL_REDUCE, s);
  c->in[0] = h;
  c->group = rt_prog_group(&P, 1, (int[]){0});
  rt_prog_finish(&P);
  arena a;
  arena_init(&a);
  char *d = rt_prog_dump(&P, &a);
  cr_assert(strstr(d, "b0 x f32[2048,768] input\n"), "%s", d);
  cr_assert(strstr(d, "b1 w f32[3072,768] input of [12288,768]"), "%s", d);
  cr_assert(strstr(d, "   0  b2 = gemm b0, b1   [batch 1, 2048x3072x768, nt]"), "%s", d);
  cr_assert(strstr(d, "   1  all_reduce b3 <- b2 over {model} (24.0 MiB)"), "%s", d);
  cr_assert(strstr(d, "# h <- x, w"), "%s", d);
  arena_free(&a);
}

/* ---- executor ---- */

static double gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2))); }

Test(exec, gemm_gelu_reduce_twice) {
  int64_t M = 8, K = 5, N = 6;
  int a = buf("a", RT_F32, RT_BUF_INPUT, 2, M, K);
  int b = buf("b", RT_F32, RT_BUF_INPUT, 2, K, N);
  int h = buf("h", RT_F32, RT_BUF_TEMP, 2, M, N);
  int g = buf("g", RT_F32, RT_BUF_TEMP, 2, M, N);
  int s = buf("s", RT_F32, RT_BUF_OUTPUT, 1, N, 0);
  rt_instr *i = rt_prog_emit(&P, RT_GEMM, h);
  i->in[0] = a; i->in[1] = b; i->batch = 1; i->m = M; i->n = N; i->k = K; i->alpha = 1;
  ew(RT_GELU, g, h, -1, M * N);
  i = rt_prog_emit(&P, RT_REDUCE, s);
  i->in[0] = g; i->fn = RT_RSUM; i->outer = 1; i->n = M; i->inner = N; i->alpha = 1.0f / M;
  rt_prog_finish(&P);
  float A[40], B[30];
  for (int k = 0; k < 40; k++) A[k] = (float)sin(k * 0.7);
  for (int k = 0; k < 30; k++) B[k] = (float)cos(k * 0.3);
  double want[6] = {0};
  for (int r = 0; r < M; r++)
    for (int c = 0; c < N; c++) {
      double acc = 0;
      for (int k = 0; k < K; k++) acc += (double)A[r * K + k] * B[k * N + c];
      want[c] += gelu(acc) / M;
    }
  rt_exec *e = rt_exec_new(&P, rt_backend_cpu(), NULL);
  cr_assert_eq(rt_exec_set(e, a, A, sizeof A, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_exec_set(e, b, B, sizeof B, err, sizeof err), 0, "%s", err);
  float first[6];
  for (int run = 0; run < 2; run++) {
    cr_assert_eq(rt_exec_run(e, err, sizeof err), 0, "%s", err);
    float *out = rt_exec_data(e, s);
    cr_assert_not_null(out);
    for (int c = 0; c < N; c++) cr_assert(fabs(out[c] - want[c]) < 1e-5, "col %d: %g vs %g", c, out[c], want[c]);
    if (run == 0) memcpy(first, out, sizeof first);
    else cr_assert_eq(memcmp(first, out, sizeof first), 0);
  }
  cr_assert_null(rt_exec_data(e, h), "temporaries are gone after the run");
  cr_assert_null(rt_exec_data(e, 99));
  rt_exec_free(e);
}

Test(exec, liveness_keeps_peak_near_live_set) {
  int64_t n = 262144;          /* 1 MiB of f32 */
  int prev = buf("x", RT_F32, RT_BUF_INPUT, 1, n, 0);
  for (int k = 0; k < 10; k++) {
    char nm[8];
    snprintf(nm, sizeof nm, "t%d", k);
    int t = buf(nm, RT_F32, RT_BUF_TEMP, 1, n, 0);
    ew(RT_AFFINE, t, prev, -1, n)->beta = 1;
    prev = t;
  }
  int s = buf("s", RT_F32, RT_BUF_OUTPUT, 0, 0, 0);
  rt_instr *r = rt_prog_emit(&P, RT_REDUCE, s);
  r->in[0] = prev; r->fn = RT_RSUM; r->outer = 1; r->n = n; r->inner = 1; r->alpha = 1;
  for (int k = 1; k < P.ninstrs - 1; k++) P.instrs[k].alpha = 1;
  P.instrs[0].alpha = 1;
  rt_prog_finish(&P);
  rt_exec *e = rt_exec_new(&P, rt_backend_cpu(), NULL);
  float *x = calloc(n, sizeof *x);
  cr_assert_eq(rt_exec_set(e, 0, x, n * sizeof *x, err, sizeof err), 0, "%s", err);
  for (int run = 0; run < 3; run++) {
    cr_assert_eq(rt_exec_run(e, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(*(float *)rt_exec_data(e, s), 10.0f * n, 1);
  }
  size_t peak = rt_exec_peak(e), MiB = 1 << 20;
  cr_assert(peak <= 3 * MiB + MiB, "peak %zu", peak);
  cr_assert(peak >= 2 * MiB, "peak %zu: input and a live temp", peak);
  /* each affine writes over the temp before it, which dies there: one place for all */
  rt_memplan m;
  rt_memplan_make(&P, &m);
  for (int k = 2; k <= 10; k++) {
    cr_expect_eq(m.offset[k], m.offset[1], "t%d shares t0's place", k - 1);
    cr_expect_eq(m.share[k], 1);
  }
  cr_expect_eq(m.peak_live, (size_t)n * 4, "one temporary's bytes at the peak");
  rt_memplan_free(&m);
  free(x);
  rt_exec_free(e);
}

/* An input filled in place: the run reads what was written there; a
   wrong size or a buffer that is no input is refused with a message; a
   backend whose memory is not the host's gives no pointer and no error. */
Test(exec, inputs_filled_in_place) {
  int x = buf("x", RT_F32, RT_BUF_INPUT, 1, 4, 0);
  int s = buf("s", RT_F32, RT_BUF_OUTPUT, 0, 0, 0);
  rt_instr *r = rt_prog_emit(&P, RT_REDUCE, s);
  r->in[0] = x; r->fn = RT_RSUM; r->outer = 1; r->n = 4; r->inner = 1; r->alpha = 1;
  rt_prog_finish(&P);
  rt_exec *e = rt_exec_new(&P, rt_backend_cpu(), NULL);
  cr_assert_null(rt_exec_input(e, x, 12, err, sizeof err));
  cr_assert(strstr(err, "takes 16 bytes, got 12"), "%s", err);
  cr_assert_null(rt_exec_input(e, s, 4, err, sizeof err));
  cr_assert(strstr(err, "is not an input"), "%s", err);
  float *in = rt_exec_input(e, x, 16, err, sizeof err);
  cr_assert_not_null(in, "%s", err);
  for (int k = 0; k < 4; k++) in[k] = (float)(k + 1);
  cr_assert_eq(rt_exec_input(e, x, 16, err, sizeof err), in, "the same memory on a second call");
  cr_assert_eq(rt_exec_run(e, err, sizeof err), 0, "%s", err);
  cr_assert_float_eq(*(float *)rt_exec_data(e, s), 10.0f, 0);
  rt_exec_free(e);
  rt_backend dev = *rt_backend_cpu();
  dev.device_memory = 1;
  e = rt_exec_new(&P, &dev, NULL);
  strcpy(err, "stale");
  cr_assert_null(rt_exec_input(e, x, 16, err, sizeof err));
  cr_assert_eq(err[0], 0, "no error, only no pointer: '%s'", err);
  rt_exec_free(e);
}

/* Written in place only where the kernel reads the input element for
   element: not over a broadcast input, not over an input read later. */
Test(exec, in_place_only_where_safe) {
  int64_t n = 4096;
  int x = buf("x", RT_F32, RT_BUF_INPUT, 1, n, 0);
  int a = buf("a", RT_F32, RT_BUF_TEMP, 1, n, 0);
  int b = buf("b", RT_F32, RT_BUF_TEMP, 1, n, 0);     /* over a: a dies here */
  int c = buf("c", RT_F32, RT_BUF_TEMP, 1, n, 0);     /* not over b: b is read again */
  int d = buf("d", RT_F32, RT_BUF_TEMP, 2, 64, 64);   /* not over the [64] e: broadcast */
  int s = buf("s", RT_F32, RT_BUF_OUTPUT, 0, 0, 0);
  int e1 = buf("e", RT_F32, RT_BUF_TEMP, 1, 64, 0);
  ew(RT_EXP, a, x, -1, n);
  ew(RT_NEG, b, a, -1, n);
  ew(RT_ADD, c, b, x, n);
  rt_instr *r = rt_prog_emit(&P, RT_REDUCE, e1);
  r->in[0] = c; r->fn = RT_RSUM; r->outer = 64; r->n = 64; r->inner = 1; r->alpha = 1;
  rt_instr *w = rt_prog_emit(&P, RT_EW, d);
  w->fn = RT_MUL; w->nin = 2; w->in[0] = e1; w->in[1] = b; w->rank = 2; w->shape[0] = 64; w->shape[1] = 64;
  w->stride[0][0] = 1; w->stride[0][1] = 0; w->stride[1][0] = 64; w->stride[1][1] = 1;
  r = rt_prog_emit(&P, RT_REDUCE, s);
  r->in[0] = d; r->fn = RT_RSUM; r->outer = 1; r->n = n; r->inner = 1; r->alpha = 1;
  rt_prog_finish(&P);
  rt_memplan m;
  rt_memplan_make(&P, &m);
  cr_expect_eq(m.share[b], a, "b is written over a");
  cr_expect_eq(m.share[c], c, "b is read after c is written");
  cr_expect_eq(m.share[d], a, "d is written over b, itself over a (read element for element, dies there)");
  cr_expect_neq(m.offset[c], m.offset[b]);
  rt_memplan_free(&m);
  /* and the numbers: sum(-exp(x)[i] * e[i / 64]) with e the row sums of -exp(x) + x */
  float *xv = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++) xv[i] = (float)((i % 13) - 6) * 0.1f;
  rt_exec *ex = rt_exec_new(&P, rt_backend_cpu(), NULL);
  cr_assert_eq(rt_exec_set(ex, x, xv, (size_t)n * 4, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_exec_run(ex, err, sizeof err), 0, "%s", err);
  double want = 0;
  for (int64_t row = 0; row < 64; row++) {
    double es = 0;
    for (int64_t k = 0; k < 64; k++) es += -exp(xv[row * 64 + k]) + xv[row * 64 + k];
    for (int64_t k = 0; k < 64; k++) want += es * -exp(xv[row * 64 + k]);
  }
  cr_expect(fabs(*(float *)rt_exec_data(ex, s) - want) <= 1e-4 * fabs(want), "%g vs %g", *(float *)rt_exec_data(ex, s), want);
  rt_exec_free(ex);
  free(xv);
}

/* Temporaries share memory only when their lifetimes do not meet: a random
   program of adds over temps of mixed sizes equals a plain evaluation. */
Test(exec, memory_plan_keeps_live_values_apart) {
  enum { NT = 80, MAXN = 1000 };
  static float ref[NT + 1][MAXN];
  static const int64_t sizes[] = {16, 64, 256, 1000};
  int64_t size[NT + 1];
  int id[NT + 1];
  uint64_t r = 12345;
  id[0] = buf("x", RT_F32, RT_BUF_INPUT, 1, MAXN, 0);
  size[0] = MAXN;
  for (int k = 0; k < MAXN; k++) ref[0][k] = (float)(k % 7) - 3;
  for (int t = 1; t <= NT; t++) {
    int pick[2];
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    size[t] = sizes[(r >> 33) % 4];
    for (int j = 0; j < 2; j++) {         /* an earlier value at least as long, or x */
      pick[j] = 0;
      for (int tries = 0; tries < 8; tries++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        int c = (int)((r >> 33) % t);
        if (size[c] >= size[t]) { pick[j] = c; break; }
      }
    }
    char nm[8];
    snprintf(nm, sizeof nm, "t%d", t);
    id[t] = buf(nm, RT_F32, t == NT ? RT_BUF_OUTPUT : RT_BUF_TEMP, 1, size[t], 0);
    ew(RT_ADD, id[t], id[pick[0]], id[pick[1]], size[t]);
    for (int k = 0; k < size[t]; k++) ref[t][k] = ref[pick[0]][k] + ref[pick[1]][k];
  }
  rt_prog_finish(&P);
  rt_exec *e = rt_exec_new(&P, rt_backend_cpu(), NULL);
  cr_assert_eq(rt_exec_set(e, id[0], ref[0], MAXN * sizeof(float), err, sizeof err), 0, "%s", err);
  for (int run = 0; run < 2; run++) {
    cr_assert_eq(rt_exec_run(e, err, sizeof err), 0, "%s", err);
    float *o = rt_exec_data(e, id[NT]);
    for (int k = 0; k < size[NT]; k++) cr_assert_eq(o[k], ref[NT][k], "element %d", k);
  }
  /* the largest set of values alive at one instruction bounds the plan from below */
  size_t all = MAXN * 4, live_max = 0;
  for (int t = 1; t <= NT; t++) all += (size_t)size[t] * 4;
  rt_memplan m;                 /* a temp written over an input that dies there counts once */
  rt_memplan_make(&P, &m);
  for (int i = 0; i < NT; i++) {
    size_t live = MAXN * 4 + (size_t)size[NT] * 4;
    for (int t = 1; t < NT; t++)
      if (t - 1 <= i && i <= P.bufs[id[t]].last_use && !(t - 1 == i && m.share[id[t]] != id[t])) live += (size_t)size[t] * 4;
    if (live > live_max) live_max = live;
  }
  rt_memplan_free(&m);
  size_t peak = rt_exec_peak(e);
  cr_assert(peak >= live_max && peak <= live_max + live_max / 4, "peak %zu, live set %zu, all %zu", peak, live_max, all);
  rt_exec_free(e);
}

Test(exec, carry_makes_a_training_loop) {
  int p = buf("p", RT_F32, RT_BUF_INPUT, 1, 4, 0);
  int q = buf("new.p", RT_F32, RT_BUF_OUTPUT, 1, 4, 0);
  int l = buf("loss", RT_F32, RT_BUF_OUTPUT, 0, 0, 0);
  rt_instr *i = ew(RT_AFFINE, q, p, -1, 4);
  i->alpha = 1; i->beta = 1;
  i = rt_prog_emit(&P, RT_REDUCE, l);
  i->in[0] = p; i->fn = RT_RSUM; i->outer = 1; i->n = 4; i->inner = 1; i->alpha = 1;
  P.bufs[p].carry_from = q;
  rt_prog_finish(&P);
  rt_exec *e = rt_exec_new(&P, rt_backend_cpu(), NULL);
  float init[4] = {0, 1, 2, 3};
  cr_assert_eq(rt_exec_set(e, p, init, sizeof init, err, sizeof err), 0, "%s", err);
  for (int step = 0; step < 5; step++) {
    cr_assert_eq(rt_exec_run(e, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(*(float *)rt_exec_data(e, l), 6.0f + 4 * step, 1e-5);
    float *np = rt_exec_data(e, q);
    for (int k = 0; k < 4; k++) cr_assert_float_eq(np[k], k + step + 1.0f, 1e-6);
    void *before_in = rt_exec_data(e, p), *before_out = rt_exec_data(e, q);
    rt_exec_carry(e);
    cr_assert_eq(rt_exec_data(e, p), before_out, "the input takes the output's memory");
    cr_assert_eq(rt_exec_data(e, q), before_in);
    float *cp = rt_exec_data(e, p);
    for (int k = 0; k < 4; k++) cr_assert_float_eq(cp[k], k + step + 1.0f, 1e-6);
  }
  cr_assert(rt_exec_peak(e) <= 3 * 16 + 4);
  rt_exec_free(e);
}

Test(exec, errors_name_the_instruction) {
  int t = buf("wte", RT_F32, RT_BUF_INPUT, 2, 4, 2);
  int ids = buf("ids", RT_I32, RT_BUF_INPUT, 1, 3, 0);
  int z = buf("z", RT_F32, RT_BUF_TEMP, 1, 6, 0);
  int h = buf("h", RT_F32, RT_BUF_OUTPUT, 2, 3, 2);
  rt_instr *i = rt_prog_emit(&P, RT_FILL, z);
  i->alpha = 0;
  i = rt_prog_emit(&P, RT_GATHER_ROWS, h);
  i->in[0] = t; i->in[1] = ids; i->outer = 3; i->n = 4; i->inner = 2; i->n2 = 4;
  rt_prog_finish(&P);
  rt_exec *e = rt_exec_new(&P, rt_backend_cpu(), NULL);
  float tab[8] = {0};
  int32_t bad[3] = {0, 9, 1};
  cr_assert_eq(rt_exec_set(e, t, tab, sizeof tab, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_exec_run(e, err, sizeof err), -1);
  cr_assert_str_eq(err, "instruction 1 (gather_rows -> b3 'h'): input b1 'ids' has no value yet (not set)");
  cr_assert_eq(rt_exec_set(e, ids, bad, 8, err, sizeof err), -1);
  cr_assert_str_eq(err, "input 'ids' (i32[3]) takes 12 bytes, got 8");
  cr_assert_eq(rt_exec_set(e, h, bad, 24, err, sizeof err), -1);
  cr_assert_str_eq(err, "buffer b3 'h' is not an input");
  cr_assert_eq(rt_exec_set(e, ids, bad, sizeof bad, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_exec_run(e, err, sizeof err), -1);
  cr_assert_str_eq(err, "instruction 1 (gather_rows -> b3 'h'): embedding: id 9 out of range [0, 4)");
  bad[1] = 3;
  cr_assert_eq(rt_exec_set(e, ids, bad, sizeof bad, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_exec_run(e, err, sizeof err), 0, "%s", err);
  rt_exec_free(e);
}

/* A backend runs only what it has kernels for: a dtype or an elementwise
** function beyond its set is refused before anything runs (the CUDA
** backend's f32/i32 and its function list, modelled on the CPU's kernels). */
Test(exec, a_backend_refuses_what_it_has_no_kernel_for) {
  rt_backend narrow = *rt_backend_cpu();
  narrow.name = "narrow";
  narrow.dtypes = 1u << RT_F32 | 1u << RT_I32;
  narrow.newfn = RT_ABS;
  int x = buf("x", RT_F32, RT_BUF_INPUT, 1, 4, 0);
  int y = buf("y", RT_F32, RT_BUF_OUTPUT, 1, 4, 0);
  ew(RT_ABS, y, x, -1, 4);
  rt_prog_finish(&P);
  float v[4] = {-1, 2, -3, 4};
  rt_exec *e = rt_exec_new(&P, &narrow, NULL);
  cr_assert_eq(rt_exec_set(e, x, v, sizeof v, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_exec_run(e, err, sizeof err), -1);
  cr_assert(strstr(err, "the narrow backend has no kernel for abs; run the program with --device-kind cpu"), "%s", err);
  rt_exec_free(e);
  e = rt_exec_new(&P, rt_backend_cpu(), NULL);   /* the CPU has it */
  cr_assert_eq(rt_exec_set(e, x, v, sizeof v, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_exec_run(e, err, sizeof err), 0, "%s", err);
  rt_exec_free(e);
  int d = buf("d", RT_F64, RT_BUF_OUTPUT, 1, 4, 0);
  rt_instr *f = rt_prog_emit(&P, RT_FILL, d);
  f->value = 1;
  rt_prog_finish(&P);
  e = rt_exec_new(&P, &narrow, NULL);
  cr_assert_eq(rt_exec_run(e, err, sizeof err), -1);
  cr_assert_str_eq(err, "the narrow backend has no f64 kernels, and 'd' is f64; run the program with --device-kind cpu");
  rt_exec_free(e);
}

Test(exec, size_mismatch_is_caught_before_running) {
  int a = buf("a", RT_F32, RT_BUF_INPUT, 2, 4, 5);
  int b = buf("b", RT_F32, RT_BUF_INPUT, 2, 4, 6);
  int c = buf("c", RT_F32, RT_BUF_OUTPUT, 2, 4, 6);
  rt_instr *i = rt_prog_emit(&P, RT_GEMM, c);
  i->in[0] = a; i->in[1] = b; i->batch = 1; i->m = 4; i->k = 5; i->n = 6; i->alpha = 1;
  rt_prog_finish(&P);
  rt_exec *e = rt_exec_new(&P, rt_backend_cpu(), NULL);
  cr_assert_eq(rt_exec_run(e, err, sizeof err), -1);
  cr_assert_str_eq(err, "instruction 0 (gemm -> b2 'c'): in1 b1 'b' has 24 elements, the op reads 30");
  rt_exec_free(e);
}

/* An elementwise op's row sums (in3) are checked like its result: a
** buffer of its own, one element a column, over dense f32 inputs. */
Test(exec, row_sums_are_checked_before_running) {
  int a = buf("a", RT_F32, RT_BUF_INPUT, 2, 4, 6);
  int c = buf("c", RT_F32, RT_BUF_OUTPUT, 2, 4, 6);
  int s = buf("s", RT_F32, RT_BUF_OUTPUT, 1, 5, 0);
  rt_instr *x = ew(RT_NEG, c, a, -1, 24);
  x->rank = 2; x->shape[0] = 4; x->shape[1] = 6; x->stride[0][0] = 6; x->stride[0][1] = 1;
  x->in[3] = s; x->nin = 4;
  rt_prog_finish(&P);
  rt_exec *e = rt_exec_new(&P, rt_backend_cpu(), NULL);
  cr_assert_eq(rt_exec_run(e, err, sizeof err), -1);
  cr_expect_str_eq(err, "instruction 0 (neg -> b1 'c'): in3 b2 's' has 5 elements, the op writes 6");
  rt_exec_free(e);
  P.instrs[0].in[3] = c;
  e = rt_exec_new(&P, rt_backend_cpu(), NULL);
  cr_assert_eq(rt_exec_run(e, err, sizeof err), -1);
  cr_expect_str_eq(err, "instruction 0 (neg -> b1 'c'): in3 (the sum of rows) is also out");
  rt_exec_free(e);
  P.instrs[0].in[3] = s;
  P.instrs[0].stride[0][0] = 0;   /* a broadcast input */
  e = rt_exec_new(&P, rt_backend_cpu(), NULL);
  cr_assert_eq(rt_exec_run(e, err, sizeof err), -1);
  cr_expect_str_eq(err, "instruction 0 (neg -> b1 'c'): a sum of rows needs dense f32 inputs; in0 is not");
  rt_exec_free(e);
}

/* An update writes p's buffer or one of its own: an out that is g's
** (a hand-edited program) would have p copied over the gradient first. */
Test(exec, an_update_may_not_write_over_its_gradient) {
  int p = buf("p", RT_F32, RT_BUF_INPUT, 1, 8, 0), g = buf("g", RT_F32, RT_BUF_INPUT, 1, 8, 0);
  int m = buf("m", RT_F32, RT_BUF_INPUT, 1, 8, 0), v = buf("v", RT_F32, RT_BUF_INPUT, 1, 8, 0);
  int lr = buf("lr", RT_F32, RT_BUF_INPUT, 0, 0, 0), eps = buf("eps", RT_F32, RT_BUF_INPUT, 0, 0, 0);
  rt_instr *x = rt_prog_emit(&P, RT_ADAM, g);
  x->nin = 6; x->in[0] = p; x->in[1] = g; x->in[2] = m; x->in[3] = v; x->in[4] = lr; x->in[5] = eps;
  x->nelem = 8; x->hyper[0] = 0.9; x->hyper[1] = 0.999;
  rt_prog_finish(&P);
  rt_exec *e = rt_exec_new(&P, rt_backend_cpu(), NULL);
  cr_assert_eq(rt_exec_run(e, err, sizeof err), -1);
  cr_expect_str_eq(err, "instruction 0 (adam -> b1 'g'): out is also in1; an update writes p's buffer (in0) or one of its own");
  rt_exec_free(e);
}

Test(exec, collectives_need_a_communicator) {
  int a = buf("a", RT_F32, RT_BUF_INPUT, 1, 4, 0);
  int b = buf("b", RT_F32, RT_BUF_OUTPUT, 1, 4, 0);
  P.mesh_rank = 1; P.mesh[0] = 2; P.axis_names[0] = "batch";
  rt_instr *i = rt_prog_emit(&P, RT_ALL_REDUCE, b);
  i->in[0] = a;
  i->group = rt_prog_group(&P, 1, (int[]){0});
  rt_prog_finish(&P);
  rt_exec *e = rt_exec_new(&P, rt_backend_cpu(), NULL);
  cr_assert_eq(rt_exec_run(e, err, sizeof err), -1);
  cr_assert_str_eq(err, "program needs collectives but runs on one device");
  rt_exec_free(e);
}

/* a pretend communicator: this device is index 1 of 2; all_reduce doubles */
static int fake_size(void *impl, int g) { (void)impl; (void)g; return 2; }
static int fake_index(void *impl, int g) { (void)impl; (void)g; return 1; }
static int fake_run(void *impl, const rt_instr *ins, void *out, const void *in, char *e, size_t n) {
  (*(int *)impl)++;
  if (ins->op != RT_ALL_REDUCE) { snprintf(e, n, "unsupported"); return -1; }
  for (int64_t k = 0; k < ins->nelem; k++) ((float *)out)[k] = 2 * ((const float *)in)[k];
  return 0;
}

Test(exec, shard_slice_and_collectives_use_the_communicator) {
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
  rt_comm comm = {&calls, fake_size, fake_index, fake_run};
  rt_exec *e = rt_exec_new(&P, rt_backend_cpu(), &comm);
  float X[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  cr_assert_eq(rt_exec_set(e, x, X, sizeof X, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_exec_run(e, err, sizeof err), 0, "%s", err);
  float *R = rt_exec_data(e, r), want[6] = {6, 8, 10, 18, 20, 22};
  for (int k = 0; k < 6; k++) cr_assert_eq(R[k], want[k]);
  cr_assert_eq(calls, 1);
  rt_exec_free(e);
}

Test(exec, row_split_tables_take_the_device_offset) {
  /* a 4-row table split over 2 devices; this device (index 1) holds rows 2..3 */
  int t = buf("wte", RT_F32, RT_BUF_INPUT, 2, 2, 2);
  int ids = buf("ids", RT_I32, RT_BUF_INPUT, 1, 4, 0);
  int h = buf("h", RT_F32, RT_BUF_OUTPUT, 2, 4, 2);
  int dy = buf("dy", RT_F32, RT_BUF_INPUT, 2, 4, 2);
  int dt = buf("dt", RT_F32, RT_BUF_OUTPUT, 2, 2, 2);
  P.mesh_rank = 1; P.mesh[0] = 2; P.axis_names[0] = "model";
  int g = rt_prog_group(&P, 1, (int[]){0});
  rt_instr *i = rt_prog_emit(&P, RT_GATHER_ROWS, h);
  i->in[0] = t; i->in[1] = ids; i->outer = 4; i->n = 2; i->inner = 2; i->n2 = 4; i->group = g;
  i = rt_prog_emit(&P, RT_SCATTER_ROWS, dt);
  i->in[0] = ids; i->in[1] = dy; i->outer = 4; i->n = 2; i->inner = 2; i->n2 = 4; i->group = g;
  rt_prog_finish(&P);
  int calls = 0;
  rt_comm comm = {&calls, fake_size, fake_index, fake_run};
  rt_exec *e = rt_exec_new(&P, rt_backend_cpu(), &comm);
  float T[4] = {20, 21, 30, 31}, DY[8] = {1, 1, 2, 2, 3, 3, 4, 4};
  int32_t I[4] = {3, 0, 2, 3};
  cr_assert_eq(rt_exec_set(e, t, T, sizeof T, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_exec_set(e, ids, I, sizeof I, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_exec_set(e, dy, DY, sizeof DY, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_exec_run(e, err, sizeof err), 0, "%s", err);
  float *H = rt_exec_data(e, h), wh[8] = {30, 31, 0, 0, 20, 21, 30, 31};
  float *D = rt_exec_data(e, dt), wd[4] = {3, 3, 5, 5};
  for (int k = 0; k < 8; k++) cr_assert_eq(H[k], wh[k], "h[%d]", k);
  for (int k = 0; k < 4; k++) cr_assert_eq(D[k], wd[k], "dt[%d]", k);
  rt_exec_free(e);
  /* a group whose size does not match the pieces is refused */
  P.mesh[0] = 4;
  e = rt_exec_new(&P, rt_backend_cpu(), NULL);
  cr_assert_eq(rt_exec_set(e, t, T, sizeof T, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_exec_set(e, ids, I, sizeof I, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_exec_run(e, err, sizeof err), -1);
  cr_assert_str_eq(err, "instruction 0 (gather_rows -> b2 'h'): a table of 4 rows in pieces of 2 does not split "
                        "over the 4 devices of its group");
  rt_exec_free(e);
}

Test(exec, block_copy_output_starts_from_zero) {
  int a = buf("a", RT_F32, RT_BUF_INPUT, 1, 2, 0);
  int o = buf("pad", RT_F32, RT_BUF_OUTPUT, 1, 5, 0);
  rt_instr *i = rt_prog_emit(&P, RT_BLOCK_COPY, o);
  i->in[0] = a; i->outer = 1; i->m = 2; i->n = 2; i->inner = 1; i->n2 = 5; i->off = 1;
  rt_prog_finish(&P);
  rt_exec *e = rt_exec_new(&P, rt_backend_cpu(), NULL);
  float A[2] = {7, 8};
  cr_assert_eq(rt_exec_set(e, a, A, sizeof A, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rt_exec_run(e, err, sizeof err), 0, "%s", err);
  float *O = rt_exec_data(e, o), want[5] = {0, 7, 8, 0, 0};
  for (int k = 0; k < 5; k++) cr_assert_eq(O[k], want[k]);
  rt_exec_free(e);
}

/* ---- deterministic init ---- */

Test(init, block_equals_positions_of_the_full_tensor) {
  int64_t gs[3] = {6, 10, 7}, off[3] = {2, 3, 1}, loc[3] = {3, 5, 4}, zero[3] = {0};
  float *full = malloc(420 * sizeof *full), *blk = malloc(60 * sizeof *blk);
  rt_initkind kinds[] = {RT_INIT_NORMAL, RT_INIT_UNIFORM, RT_INIT_ONES, RT_INIT_ZEROS};
  for (size_t k = 0; k < 4; k++) {
    rt_init in = {kinds[k], 0.5, 2.0, rt_init_seed("l0.w1")};
    rt_init_block(&in, RT_F32, 3, gs, zero, gs, full, 1);
    rt_init_block(&in, RT_F32, 3, gs, off, loc, blk, 1);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 5; j++)
        for (int l = 0; l < 4; l++)
          cr_assert_eq(blk[(i * 5 + j) * 4 + l], full[((off[0] + i) * 10 + off[1] + j) * 7 + off[2] + l]);
  }
  free(full);
  free(blk);
}

/* Large blocks are filled by rows on several threads: the same numbers
   as one thread, for a block at an offset of a 3-d tensor whose rows do
   not split evenly, in f32, i32 and bf16. */
Test(init, threads_give_the_same_numbers) {
  int64_t gs[3] = {9, 301, 1200}, off[3] = {2, 7, 100}, loc[3] = {5, 293, 1100};
  size_t n = 5 * 293 * 1100;
  rt_dtype dts[] = {RT_F32, RT_I32, RT_BF16};
  rt_init ins[] = {{RT_INIT_NORMAL, 0.02, 0, rt_init_seed("wte")}, {RT_INIT_INTS, 0, 50257, 3},
                   {RT_INIT_UNIFORM, -1, 1, 5}};
  unsigned char *one = malloc(n * 4), *many = malloc(n * 4);
  cr_assert(one && many);
  for (int k = 0; k < 3; k++) {
    size_t bytes = n * rt_dtype_size(dts[k]);
    rt_init_block(&ins[k], dts[k], 3, gs, off, loc, one, 1);
    for (int t = 2; t <= 5; t += 3) {
      memset(many, 0xAB, bytes);
      rt_init_block(&ins[k], dts[k], 3, gs, off, loc, many, t);
      cr_assert_eq(memcmp(one, many, bytes), 0, "dtype %d on %d threads", (int)dts[k], t);
    }
  }
  free(one);
  free(many);
}

Test(init, distributions) {
  int64_t n = 100000, gs[1] = {n}, off[1] = {0};
  float *v = malloc(n * sizeof *v);
  rt_init in = {RT_INIT_NORMAL, 0.02, 0, rt_init_seed("wte")};
  rt_init_block(&in, RT_F32, 1, gs, off, gs, v, 1);
  double s = 0, s2 = 0;
  for (int64_t i = 0; i < n; i++) { s += v[i]; s2 += (double)v[i] * v[i]; }
  double mean = s / n, sd = sqrt(s2 / n - mean * mean);
  cr_assert(fabs(mean) < 3 * 0.02 / sqrt(n) * 1.5, "mean %g", mean);
  cr_assert(fabs(sd - 0.02) < 0.0003, "std %g", sd);
  /* another name gives other numbers */
  float *w = malloc(n * sizeof *w);
  in.seed = rt_init_seed("wpe");
  rt_init_block(&in, RT_F32, 1, gs, off, gs, w, 1);
  int same = 0;
  for (int64_t i = 0; i < n; i++) same += v[i] == w[i];
  cr_assert(same < 10);
  cr_assert_neq(rt_init_seed("a"), rt_init_seed("b"));
  cr_assert_eq(rt_init_seed("l0.w1"), rt_init_seed("l0.w1"));
  /* uniform in [lo, hi) */
  rt_init u = {RT_INIT_UNIFORM, -0.5, 1.5, 7};
  rt_init_block(&u, RT_F32, 1, gs, off, gs, v, 1);
  s = 0;
  for (int64_t i = 0; i < n; i++) { cr_assert(v[i] >= -0.5f && v[i] <= 1.5f); s += v[i]; }
  cr_assert(fabs(s / n - 0.5) < 0.01);
  /* ids in [0, b) */
  int32_t *ids = (int32_t *)w;
  rt_init ii = {RT_INIT_INTS, 0, 50257, 9};
  rt_init_block(&ii, RT_I32, 1, gs, off, gs, ids, 1);
  int32_t mx = 0, mn = 1 << 30;
  for (int64_t i = 0; i < n; i++) { if (ids[i] > mx) mx = ids[i]; if (ids[i] < mn) mn = ids[i]; }
  cr_assert(mn >= 0 && mx < 50257 && mx > 50000 && mn < 100, "ids in [%d, %d]", mn, mx);
  rt_init one = {RT_INIT_ONES, 0, 0, 0};
  rt_init_block(&one, RT_I32, 1, gs, off, gs, ids, 1);
  cr_assert_eq(ids[5], 1);
  free(v);
  free(w);
}

/* ---- a device that fails on an in-process mesh ---- */

typedef struct lonely { rt_local *l; rt_prog *p; int x; char err[2][256]; int rc[2]; } lonely;

static int lonely_device(int dev, void *arg) {
  lonely *m = arg;
  rt_exec *e = rt_exec_new(m->p, rt_backend_cpu(), rt_local_comm(m->l, dev));
  float v[4] = {1, 2, 3, 4};
  if (dev == 0) rt_exec_set(e, m->x, v, sizeof v, m->err[dev], sizeof m->err[dev]);   /* device 1's input is never set */
  m->rc[dev] = rt_exec_run(e, m->err[dev], sizeof m->err[dev]);
  rt_exec_free(e);
  return 0;
}

/* Device 1 fails at its first instruction (an input not set) while device
   0 goes on to wait for what device 1 would send, and then for a sum both
   would make: device 0 stops with an error saying so, rather than hang. */
Test(exec, a_failing_device_does_not_hang_the_mesh, .timeout = 60) {
  for (int wait_sum = 0; wait_sum < 2; wait_sum++) {
    rt_prog p;
    rt_prog_init(&p);
    p.mesh_rank = 1;
    p.mesh[0] = 2;
    p.axis_names[0] = "a";
    int axes[1] = {0}, g = rt_prog_group(&p, 1, axes);
    int64_t n[1] = {4};
    int x = rt_prog_buf(&p, "x", RT_F32, 1, n, RT_BUF_INPUT), y = rt_prog_buf(&p, "y", RT_F32, 1, n, RT_BUF_TEMP);
    int z = rt_prog_buf(&p, "z", RT_F32, 1, n, RT_BUF_OUTPUT);
    rt_instr *in = rt_prog_emit(&p, RT_COPY, y);
    in->nin = 1; in->in[0] = x;
    if (wait_sum) {
      in = rt_prog_emit(&p, RT_ALL_REDUCE, z);
      in->nin = 1; in->in[0] = y; in->group = g; in->fn = RT_RSUM; in->outer = 1; in->n = 4; in->inner = 1;
    } else {
      in = rt_prog_emit(&p, RT_RECV, z);
      in->group = g; in->mode = RT_P2P_RING; in->n2 = 1; in->off = 7;
    }
    rt_prog_finish(&p);
    lonely m = {rt_local_new(&p), &p, x, {"", ""}, {0, 0}};
    cr_assert(m.l);
    rt_local_run(m.l, lonely_device, &m);
    cr_expect(m.rc[1] < 0 && strstr(m.err[1], "not set"), "device 1: %s", m.err[1]);
    cr_expect(m.rc[0] < 0 && strstr(m.err[0], "another device of the mesh failed first"), "device 0 (%s): %s",
              wait_sum ? "all_reduce" : "recv", m.err[0]);
    rt_local_free(m.l);
    rt_prog_free(&p);
  }
}

/* A two-stage program of transfers given as (stage, send?, peer, tag). */
typedef struct xf { int stage, send, peer, tag; } xf;

static int check_transfers(const xf *t, int n, char *msg, size_t msglen) {
  rt_prog p;
  rt_prog_init(&p);
  p.mesh_rank = 1;
  p.mesh[0] = 2;
  p.axis_names[0] = "stage";
  p.stage_axis = 0;
  int axes[1] = {0}, g = rt_prog_group(&p, 1, axes);
  int64_t shape[1] = {4};
  int x = rt_prog_buf(&p, "x", RT_F32, 1, shape, RT_BUF_TEMP);
  for (int i = 0; i < n; i++) {
    rt_instr *in = rt_prog_emit(&p, t[i].send ? RT_SEND : RT_RECV, x);
    if (t[i].send) { in->nin = 1; in->in[0] = x; }
    in->group = g; in->n2 = t[i].peer; in->off = t[i].tag;
    in->stages = (uint64_t)1 << t[i].stage;
  }
  rt_prog_finish(&p);
  int at;
  int rc = rt_prog_check_transfers(&p, &at, msg, msglen);
  if (rc < 0) cr_expect(at >= 0 && at < n, "the instruction it is about: %d of %d", at, n);
  rt_prog_free(&p);
  return rc;
}

/* Before a pipelined program runs, its transfers are played against each
   other: a schedule whose stages would wait for each other for ever, a
   receive no stage sends, a copy never received and a peer outside the
   stages are refused with the instruction, not run into a hang. */
Test(exec, stage_transfers_that_never_arrive_are_refused) {
  char msg[512];
  static const xf ok[] = {{0, 1, 1, 1}, {1, 0, 0, 1}, {1, 1, 0, 2}, {0, 0, 1, 2}};
  cr_expect_eq(check_transfers(ok, 4, msg, sizeof msg), 0, "%s", msg);
  /* stage 0's receive comes first in the list, stage 1's send after its own receive: fine, sends do not wait */
  static const xf late[] = {{0, 0, 1, 2}, {1, 1, 0, 2}};
  cr_expect_eq(check_transfers(late, 2, msg, sizeof msg), 0, "%s", msg);
  static const xf crossed[] = {{0, 0, 1, 2}, {0, 1, 1, 1}, {1, 0, 0, 1}, {1, 1, 0, 2}};
  cr_expect(check_transfers(crossed, 4, msg, sizeof msg) < 0 && strstr(msg, "would wait for ever: stage 0 at instruction 0"), "%s", msg);
  static const xf unsent[] = {{0, 1, 1, 1}, {1, 0, 0, 1}, {1, 0, 0, 5}};
  cr_expect(check_transfers(unsent, 3, msg, sizeof msg) < 0 && strstr(msg, "instruction 2: stage 1 waits for 'x' from stage 0 (tag 5)"),
            "%s", msg);
  static const xf lost[] = {{0, 1, 1, 1}, {1, 0, 0, 1}, {0, 1, 1, 3}};
  cr_expect(check_transfers(lost, 3, msg, sizeof msg) < 0 && strstr(msg, "stage 0 sends a copy to stage 1 (tag 3) that stage 1 never receives"),
            "%s", msg);
  static const xf far[] = {{0, 1, 7, 1}};
  cr_expect(check_transfers(far, 1, msg, sizeof msg) < 0 && strstr(msg, "not another of the 2 stages"), "%s", msg);
  static const xf self[] = {{1, 1, 1, 1}};
  cr_expect(check_transfers(self, 1, msg, sizeof msg) < 0 && strstr(msg, "not another of the 2 stages"), "%s", msg);
}

/* Devices that are threads of one process each call BLAS: while they run,
   BLAS stays on one thread (an attention kernel's hold and release must
   not change BLAS's thread count under another device's GEMM, which
   corrupted it: a NaN about one run in four of test_drive), and the count
   comes back after. */
static int blas_threads_seen(int dev, void *arg) {
  int *seen = arg;
  rt_blas_hold();                         /* what an attention kernel does, */
  rt_blas_release();                      /* the count unchanged by its release */
  seen[dev] = rt_host_threads();
  return 0;
}

Test(exec, devices_as_threads_hold_blas_to_one_thread) {
  extern void openblas_set_num_threads(int);
  openblas_set_num_threads(2);
  rt_prog p;
  rt_prog_init(&p);
  p.mesh_rank = 1;
  p.mesh[0] = 2;
  p.axis_names[0] = "a";
  rt_prog_finish(&p);
  rt_local *l = rt_local_new(&p);
  cr_assert(l);
  int seen[2] = {0, 0};
  cr_assert_eq(rt_local_run(l, blas_threads_seen, seen), 0);
  cr_expect(seen[0] == 1 && seen[1] == 1, "BLAS threads inside the devices: %d and %d", seen[0], seen[1]);
  cr_expect_eq(rt_host_threads(), 2, "BLAS threads after the run: %d", rt_host_threads());
  rt_local_free(l);
  rt_prog_free(&p);
}

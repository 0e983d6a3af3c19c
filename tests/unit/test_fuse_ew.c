/*
** test_fuse_ew.c: chains of elementwise instructions in one pass
** (interp/lower/fuse.c, RT_FUSED in runtime/kern_cpu.c).
**
** The fused kernel is checked against values computed here in plain C
** (broadcasts, strided reads, an i1 predicate, comparisons, a result
** written over its input, sizes that take threads); the pass against the
** unfused program, bit for bit, on random programs spelled in primitive
** ops (random models exported to StableHLO and read back as written, so
** that softmax, layer norm and attention are chains of elementwise ops),
** with no more temporary memory; and the pass's refusals (a value read
** twice, a result read through a broadcast).
*/
#include "harness.h"
#include "randmodel.h"
#include "interp/export/export.h"
#include "interp/front/hlo.h"
#include "interp/lower/lower_int.h"
#include "lang/mlir.h"
#include "interp/train/train.h"
#include "runtime/plan.h"

#include <math.h>

/* ---- the kernel, against plain C ---- */

static int buf(rt_prog *p, rt_dtype t, int rank, const int64_t *shape, rt_bufkind kind) {
  return rt_prog_buf(p, NULL, t, rank, shape, kind);
}

/* out[i, j] = select(m[j] (i1), exp(a[i, j] * 0.5 - b[j]), a[j, i] (read transposed)) max 0.25,
** then * 2 where a > b else + 1: every kind of read and step */
static void kernel_case(int64_t R, int with_alias) {
  int64_t shp[2] = {R, R}, row[1] = {R};
  rt_prog p;
  rt_prog_init(&p);
  int a = buf(&p, RT_F32, 2, shp, RT_BUF_INPUT), b = buf(&p, RT_F32, 1, row, RT_BUF_INPUT);
  int m = buf(&p, RT_I1, 1, row, RT_BUF_INPUT);
  int o = with_alias ? a : buf(&p, RT_F32, 2, shp, RT_BUF_OUTPUT);
  rt_instr *x = rt_prog_emit(&p, RT_FUSED, o);
  rt_fused *fu = arena_alloc(&p.mem, sizeof *fu);
  memset(fu, 0, sizeof *fu);
  x->nin = 4;
  x->in[0] = a; x->in[1] = b; x->in[2] = m; x->in[3] = a;
  x->rank = 2;
  x->shape[0] = x->shape[1] = R;
  fu->stride[0][0] = R; fu->stride[0][1] = 1;      /* a */
  fu->stride[1][0] = 0; fu->stride[1][1] = 1;      /* b broadcast over rows */
  fu->stride[2][0] = 0; fu->stride[2][1] = 1;      /* m likewise */
  fu->stride[3][0] = 1; fu->stride[3][1] = R;      /* a transposed */
  if (with_alias) { x->nin = 3; x->in[3] = -1; }   /* written over a: a read in step only */
  const rt_fstep steps[] = {
    {RT_AFFINE, {-1, -1, -1}, 0.5f, 0},          /* s0 = a * 0.5 */
    {RT_SUB, {0, -2, 0}, 0, 0},                   /* s1 = s0 - b */
    {RT_EXP, {1, 1, 1}, 0, 0},                    /* s2 = exp(s1) */
    {RT_SELECT, {-3, 2, with_alias ? -1 : -4}, 0, 0}, /* s3 = m ? s2 : a^T (or a) */
    {RT_MAX, {3, -2, 0}, 0, 0},                   /* s4 = max(s3, b) */
    {RT_CMP_GT, {-1, -2, 0}, 0, 0},               /* s5 = a > b */
    {RT_AFFINE, {4, 4, 4}, 2, 0},                 /* s6 = s4 * 2 */
    {RT_AFFINE, {4, 4, 4}, 1, 1},                 /* s7 = s4 + 1 */
    {RT_SELECT, {5, 6, 7}, 0, 0},                 /* out = s5 ? s6 : s7 */
  };
  fu->nsteps = (int)(sizeof steps / sizeof steps[0]);
  memcpy(fu->step, steps, sizeof steps);
  x->data = fu;
  rt_prog_finish(&p);
  rt_exec *e = rt_exec_new(&p, rt_backend_cpu(), NULL);
  cr_assert(e);
  float *av = malloc(sizeof(float) * (size_t)(R * R)), *bv = malloc(sizeof(float) * (size_t)R);
  unsigned char *mv = malloc((size_t)R);
  for (int64_t i = 0; i < R * R; i++) av[i] = (float)sin((double)i * 0.37) * 3;
  for (int64_t j = 0; j < R; j++) { bv[j] = (float)cos((double)j * 0.11); mv[j] = (unsigned char)(j % 3 != 0); }
  char err[256];
  cr_assert(rt_exec_set(e, a, av, sizeof(float) * (size_t)(R * R), err, sizeof err) == 0, "%s", err);
  cr_assert(rt_exec_set(e, b, bv, sizeof(float) * (size_t)R, err, sizeof err) == 0, "%s", err);
  cr_assert(rt_exec_set(e, m, mv, (size_t)R, err, sizeof err) == 0, "%s", err);
  cr_assert(rt_exec_run(e, err, sizeof err) == 0, "%s", err);
  const float *out = rt_exec_data(e, o);
  double worst = 0;
  for (int64_t i = 0; i < R; i++)
    for (int64_t j = 0; j < R; j++) {
      double av_ij = av[i * R + j], other = with_alias ? av_ij : av[j * R + i];
      double s3 = mv[j] ? exp(av_ij * 0.5 - bv[j]) : other, s4 = s3 > bv[j] ? s3 : bv[j];
      double want = av_ij > bv[j] ? s4 * 2 : s4 + 1;
      double err_ij = fabs(out[i * R + j] - want) / (fabs(want) + 1e-6);
      if (err_ij > worst) worst = err_ij;
    }
  cr_assert(worst < 1e-6, "R = %lld%s: relative error %g", (long long)R, with_alias ? ", in place" : "", worst);
  free(av);
  free(bv);
  free(mv);
  rt_exec_free(e);
  rt_prog_free(&p);
}

Test(fused_kernel, every_kind_of_read_and_step) {
  kernel_case(7, 0);         /* less than a block */
  kernel_case(300, 0);       /* rows longer than a block */
  kernel_case(300, 1);       /* written over its input */
  kernel_case(700, 0);       /* 490,000 elements: threads take the blocks */
}

/* a step reading a later step, or an input it has not, is refused before anything runs */
Test(fused_kernel, bad_steps_refused) {
  int64_t n[1] = {8};
  for (int bad = 0; bad < 4; bad++) {
    rt_prog p;
    rt_prog_init(&p);
    int a = buf(&p, RT_F32, 1, n, RT_BUF_INPUT), o = buf(&p, RT_F32, 1, n, RT_BUF_OUTPUT);
    rt_instr *x = rt_prog_emit(&p, RT_FUSED, o);
    rt_fused *fu = arena_alloc(&p.mem, sizeof *fu);
    memset(fu, 0, sizeof *fu);
    x->nin = 1; x->in[0] = a; x->rank = 1; x->shape[0] = 8;
    fu->stride[0][0] = 1;
    fu->nsteps = 2;
    fu->step[0] = (rt_fstep){RT_EXP, {-1, -1, -1}, 0, 0};
    fu->step[1] = (rt_fstep){RT_ADD, {0, -1, 0}, 0, 0};
    const char *want = NULL;
    if (bad == 0) { fu->step[0].arg[0] = 1; want = "step 0 reads step 1"; }
    if (bad == 1) { fu->step[1].arg[1] = -2; want = "step 1 reads input 1"; }
    if (bad == 2) { fu->step[1].fn = RT_CMP_LT; want = "not a fused function to end with"; }
    if (bad == 3) { fu->step[0].fn = RT_ERF; want = "erf is not a fused function"; }
    x->data = fu;
    rt_prog_finish(&p);
    char err[256] = "";
    rt_exec *e = rt_exec_new(&p, rt_backend_cpu(), NULL);
    int rc = e ? rt_exec_run(e, err, sizeof err) : -1;
    cr_assert(rc < 0 && strstr(err, want), "case %d: wanted '%s', got rc %d: %s", bad, want, rc, err);
    rt_exec_free(e);
    rt_prog_free(&p);
  }
}

/* ---- the pass ---- */

static int count_op(const rt_prog *p, rt_op op) {
  int n = 0;
  for (int i = 0; i < p->ninstrs; i++) n += p->instrs[i].op == op;
  return n;
}

static size_t peak_temps(const rt_prog *p) {
  rt_memplan m;
  rt_memplan_make(p, &m);
  size_t b = m.block;
  rt_memplan_free(&m);
  return b;
}

/* g lowered and run (deterministic leaves), with or without fusion */
static void lower_run(hx *h, ir_graph *g, int fuse) {
  memset(h, 0, sizeof *h);
  arena_init(&h->mem);
  diag_init(&h->d);
  h->g = g;
  lower_opts o = {0};
  o.no_fuse_elementwise = !fuse;
  cr_assert(lower_program_opts(g, NULL, &o, &h->p, &h->lr, &h->d) == 0, "%s", diag_text(&h->d));
  h->lowered = 1;
  h->e = rt_exec_new(&h->p, rt_backend_cpu(), NULL);
  cr_assert(h->e);
  hx_init_rest(h, 2);
  hx_run(h);
}

static ir_graph *as_written(arena *a, diag *d, const char *text) {
  const diag_src *src = diag_src_string(a, "e.mlir", text, strlen(text));
  mlir_file *f = mlir_parse(a, d, src);
  hlo_opts o = {0};
  o.as_written = 1;
  return f ? hlo_build(f, &o, NULL, d) : NULL;
}

Test(fuse, random_programs_as_unfused_bit_for_bit) {
  int nmodels = rm_start(60, 2, 0x243f6a8885a308d3ull), fused = 0, dropped = 0;
  for (int k = 0; k < nmodels; k++) {
    char *text = random_model();
    hx m;
    cr_assert_eq(hx_build(&m, text), 0, "model %d: %s", k, diag_text(&m.d));
    if (k % 2) {
      train_spec t;
      cr_assert(train_parse(&m.mem, k % 4 == 1 ? "adam(lr = 1e-3)" : "sgd(lr = 0.05, momentum = 0.9)", &t, &m.d) == 0);
      cr_assert(train_build(m.g, &t, &m.d) == 0, "model %d: %s\n%s", k, diag_text(&m.d), text);
    }
    char *mlir = export_program(m.g, NULL, &m.mem, &m.d);
    cr_assert(mlir, "model %d: %s", k, diag_text(&m.d));
    for (int spelled = 0; spelled < 2; spelled++) {      /* the model, then its primitive spelling */
      arena a1, a2;
      diag d1, d2;
      arena_init(&a1); arena_init(&a2);
      diag_init(&d1); diag_init(&d2);
      ir_graph *g1 = spelled ? as_written(&a1, &d1, mlir) : NULL, *g2 = spelled ? as_written(&a2, &d2, mlir) : NULL;
      hx src1, src2;
      if (!spelled) {
        cr_assert_eq(hx_build(&src1, text), 0);
        cr_assert_eq(hx_build(&src2, text), 0);
        g1 = src1.g;
        g2 = src2.g;
        if (k % 2) {
          train_spec t;
          cr_assert(train_parse(&src1.mem, k % 4 == 1 ? "adam(lr = 1e-3)" : "sgd(lr = 0.05, momentum = 0.9)", &t, &src1.d) == 0);
          cr_assert(train_build(g1, &t, &src1.d) == 0 && train_build(g2, &t, &src1.d) == 0);
        }
      }
      cr_assert(g1 && g2, "model %d: %s%s", k, diag_text(&d1), diag_text(&d2));
      hx f, u;
      lower_run(&f, g1, 1);
      lower_run(&u, g2, 0);
      cr_assert_eq(f.p.nbufs, u.p.nbufs);
      int here = count_op(&f.p, RT_FUSED);
      fused += here;
      dropped += u.p.ninstrs - f.p.ninstrs;
      cr_assert(count_op(&u.p, RT_FUSED) == 0);
      for (int i = 0; i < g1->nouts; i++) {
        int b = f.lr.buf_of[g1->outputs[i]], c = u.lr.buf_of[g2->outputs[i]];
        cr_assert(b >= 0 && c >= 0);
        size_t n = (size_t)f.p.bufs[b].nelem * rt_dtype_size(f.p.bufs[b].dtype);
        cr_assert(!memcmp(rt_exec_data(f.e, b), rt_exec_data(u.e, c), n), "model %d%s: output '%s' differs fused (%d passes)\n%s", k,
                  spelled ? " as exported" : "", g1->vals[g1->outputs[i]]->name, here, text);
      }
      size_t pf = peak_temps(&f.p), pu = peak_temps(&u.p);
      cr_assert(pf <= pu + pu / 20, "model %d%s: temporaries %zu bytes fused, %zu apart", k, spelled ? " as exported" : "", pf, pu);
      if (!spelled) src1.g = src2.g = NULL;   /* hx_free(&f), hx_free(&u) free the graphs */
      hx_free(&f);
      hx_free(&u);
      if (!spelled) { hx_free(&src1); hx_free(&src2); }
      arena_free(&a1); arena_free(&a2);
      diag_free(&d1); diag_free(&d2);
    }
    hx_free(&m);
    free(text);
  }
  /* the spelled-out softmaxes, norms and updates give chains to fuse */
  cr_assert(fused > nmodels && dropped > 2 * nmodels, "%d fused passes, %d instructions taken in, over %d models", fused, dropped, nmodels);
}

/* a value read twice stays a buffer; a chain through it fuses on each side */
Test(fuse, shared_values_stay_apart) {
  static const char *const text =
      "model t {\n"
      "  input x : f32[4, 8]\n  input b : f32[8]\n"
      "  h = mul(add(x, b), 0.5)\n"          /* h is read twice */
      "  y = tanh(exp(h))\n  z = sigmoid(neg(h))\n"
      "  return add(y, z)\n}\n";
  hx h;
  cr_assert_eq(hx_build(&h, text), 0, "%s", diag_text(&h.d));
  lower_opts o = {0};
  hx_lower_opts(&h, &o);
  int steps[8], n = 0;
  for (int i = 0; i < h.p.ninstrs; i++) {
    const rt_instr *x = &h.p.instrs[i];
    cr_assert(x->op == RT_FUSED || x->op == RT_COPY || x->op == RT_EW, "%s", rt_op_name((rt_op)x->op));
    if (x->op == RT_FUSED && n < 8) steps[n++] = ((const rt_fused *)x->data)->nsteps;
  }
  /* h: add then affine; the result: exp, tanh, neg, sigmoid and the add, reading h */
  cr_assert(n == 2 && steps[0] == 2 && steps[1] == 5, "%d passes (%d, %d steps)\n%s", n, steps[0], n > 1 ? steps[1] : 0,
            rt_prog_dump(&h.p, &h.mem));
  hx_free(&h);
}

/* t = exp(a); a written; out = t + 1: taking exp into the add would read
** the new a, so the two stay apart (and the program gives exp(a) + 1) */
Test(fuse, operand_written_between_stays_apart) {
  int64_t n[1] = {64};
  for (int between = 0; between < 2; between++) {
    rt_prog p;
    rt_prog_init(&p);
    int a = buf(&p, RT_F32, 1, n, RT_BUF_TEMP), t = buf(&p, RT_F32, 1, n, RT_BUF_TEMP);
    int o = buf(&p, RT_F32, 1, n, RT_BUF_OUTPUT), z = buf(&p, RT_F32, 1, n, RT_BUF_OUTPUT);
    rt_instr *x = rt_prog_emit(&p, RT_IOTA, a);
    x->outer = x->inner = 1; x->n = 64;
    x = rt_prog_emit(&p, RT_EW, t);
    x->fn = RT_EXP; x->nin = 1; x->in[0] = a; x->rank = 1; x->shape[0] = 64; x->stride[0][0] = 1;
    x = rt_prog_emit(&p, RT_FILL, between ? a : z);
    x->alpha = 100;
    x = rt_prog_emit(&p, RT_EW, o);
    x->fn = RT_AFFINE; x->nin = 1; x->in[0] = t; x->rank = 1; x->shape[0] = 64; x->stride[0][0] = 1; x->alpha = 1; x->beta = 1;
    x = rt_prog_emit(&p, RT_COPY, z);           /* a read again, so that it lives on either way */
    x->nin = 1; x->in[0] = a;
    rt_prog_finish(&p);
    int taken = lw_fuse_elementwise(&p);
    cr_assert_eq(taken, between ? 0 : 1, "a written between: %d; %d taken in", between, taken);
    cr_assert_eq(count_op(&p, RT_FUSED), between ? 0 : 1);
    rt_exec *e = rt_exec_new(&p, rt_backend_cpu(), NULL);
    char err[256];
    cr_assert(e && rt_exec_run(e, err, sizeof err) == 0, "%s", err);
    const float *out = rt_exec_data(e, o);
    for (int i = 0; i < 64; i++) cr_assert(fabsf(out[i] - (expf((float)i) + 1)) <= 1e-6f * (expf((float)i) + 1), "out[%d] = %g", i, out[i]);
    rt_exec_free(e);
    rt_prog_free(&p);
  }
}

/* y = reduce(exp(x * 0.5) - b) over n, by hand: the same bits as the
** reduction of the unfused chain's stored result (sums in eight lanes and
** a tail, column sums, maxima, minima), in one pass, on one thread and on
** several */
static void reduction_case(int64_t O, int64_t N, int64_t I, int fn, float alpha) {
  int64_t xs[3] = {O, N, I}, bs[1] = {I}, ys[2] = {O, I};
  rt_prog p[2];
  float *y[2];
  int64_t tot = O * N * I;
  float *xv = malloc(sizeof(float) * (size_t)tot), *bv = malloc(sizeof(float) * (size_t)I);
  for (int64_t i = 0; i < tot; i++) xv[i] = (float)sin((double)i * 0.013) * 4;
  for (int64_t i = 0; i < I; i++) bv[i] = (float)i * 0.25f;
  rt_exec *e[2];
  for (int v = 0; v < 2; v++) {
    rt_prog *q = &p[v];
    rt_prog_init(q);
    int x = buf(q, RT_F32, 3, xs, RT_BUF_INPUT), b = buf(q, RT_F32, 1, bs, RT_BUF_INPUT);
    int t0 = buf(q, RT_F32, 3, xs, RT_BUF_TEMP), t1 = buf(q, RT_F32, 3, xs, RT_BUF_TEMP), o = buf(q, RT_F32, 2, ys, RT_BUF_OUTPUT);
    rt_instr *in = rt_prog_emit(q, RT_EW, t0);
    in->fn = RT_AFFINE; in->rank = 3; memcpy(in->shape, xs, sizeof xs); in->alpha = 0.5f; in->in[0] = x; in->nin = 1;
    in->stride[0][0] = N * I; in->stride[0][1] = I; in->stride[0][2] = 1;
    in = rt_prog_emit(q, RT_EW, t1);
    in->fn = RT_EXP; in->rank = 3; memcpy(in->shape, xs, sizeof xs); in->in[0] = t0; in->nin = 1;
    in->stride[0][0] = N * I; in->stride[0][1] = I; in->stride[0][2] = 1;
    int t2 = buf(q, RT_F32, 3, xs, RT_BUF_TEMP);
    in = rt_prog_emit(q, RT_EW, t2);
    in->fn = RT_SUB; in->rank = 3; memcpy(in->shape, xs, sizeof xs); in->in[0] = t1; in->in[1] = b; in->nin = 2;
    in->stride[0][0] = N * I; in->stride[0][1] = I; in->stride[0][2] = 1; in->stride[1][2] = 1;
    (void)t2;
    in = rt_prog_emit(q, RT_REDUCE, o);
    in->fn = (uint8_t)fn; in->in[0] = t2; in->nin = 1; in->outer = O; in->n = N; in->inner = I; in->alpha = alpha;
    rt_prog_finish(q);
    if (v) {
      int taken = lw_fuse_elementwise(q);
      cr_assert(taken == 3 && q->ninstrs == 1 && q->instrs[0].op == RT_FUSED && (q->instrs[0].mode & RT_FUSED_REDUCE),
                "%lldx%lldx%lld: %d taken in\n%s", (long long)O, (long long)N, (long long)I, taken, rt_prog_dump(q, &q->mem));
    }
    e[v] = rt_exec_new(q, rt_backend_cpu(), NULL);
    char err[256];
    cr_assert(e[v]);
    cr_assert(rt_exec_set(e[v], x, xv, sizeof(float) * (size_t)tot, err, sizeof err) == 0, "%s", err);
    cr_assert(rt_exec_set(e[v], b, bv, sizeof(float) * (size_t)I, err, sizeof err) == 0, "%s", err);
    cr_assert(rt_exec_run(e[v], err, sizeof err) == 0, "%s", err);
    y[v] = rt_exec_data(e[v], o);
  }
  cr_assert(!memcmp(y[0], y[1], sizeof(float) * (size_t)(O * I)), "%lldx%lldx%lld, reduction %d: fused %.9g, apart %.9g",
            (long long)O, (long long)N, (long long)I, fn, y[1][0], y[0][0]);
  double want = 0;                       /* and the first one against a sum here */
  for (int64_t j = 0; j < N; j++) {
    double v = (double)expf(xv[j * I] * 0.5f) - bv[0];
    want = fn == RT_RSUM ? want + v : j == 0 ? v : fn == RT_RMAX ? fmax(want, v) : fmin(want, v);
  }
  if (fn == RT_RSUM) want *= alpha;
  cr_assert(fabs(y[1][0] - want) <= 1e-5 * (fabs(want) + 1), "%lldx%lldx%lld: %.9g against %.9g", (long long)O, (long long)N, (long long)I,
            y[1][0], want);
  for (int v = 0; v < 2; v++) { rt_exec_free(e[v]); rt_prog_free(&p[v]); }
  free(xv);
  free(bv);
}

Test(fuse, reductions_as_unfused_bit_for_bit) {
  const int64_t shapes[][3] = {{5, 37, 1}, {3, 1000, 1}, {4, 13, 7}, {2, 300, 40}, {1, 7, 1}, {512, 1024, 1}, {64, 64, 64}};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
    for (int fn = RT_RSUM; fn <= RT_RMIN; fn++)
      reduction_case(shapes[s][0], shapes[s][1], shapes[s][2], fn, fn == RT_RSUM && s % 2 ? 1.0f / (float)shapes[s][1] : 1.0f);
}

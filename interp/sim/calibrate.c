/*
** calibrate.c: one-instruction programs, timed through the executor as a
** run times them (its overhead included), on every device at once.
*/
#include "interp/sim/calibrate.h"
#include "interp/sim/sim.h"
#include "runtime/kern_attn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds one run of p takes on the slowest device. Every device runs it
** the same number of times (collectives must meet). */
static int timed(const cal_opts *o, const rt_prog *p, const rt_comm *comm, double *sec, char *err, size_t errlen) {
  rt_exec *e = rt_exec_new(p, rt_backend_cpu(), comm);
  int rc = 0;
  for (int b = 0; b < p->nbufs && rc == 0; b++) {
    const rt_buf *rb = &p->bufs[b];
    if (rb->kind != RT_BUF_INPUT) continue;
    size_t n = (size_t)rb->nelem;
    void *data = mem_calloc(n + 1, 4);
    if (rb->dtype == RT_F32) for (size_t k = 0; k < n; k++) ((float *)data)[k] = 0.5f + 0.25f * (float)(k % 7);
    rc = rt_exec_set(e, b, data, n * rt_dtype_size(rb->dtype), err, errlen);
    free(data);
  }
  double t0 = now();
  if (rc == 0) rc = rt_exec_run(e, err, errlen);       /* warm: memory, pages, caches */
  double once[1] = {now() - t0};
  o->w->max(o->w->impl, once, 1);
  double want = o->seconds > 0 ? o->seconds : 0.03;
  long reps = once[0] > 0 ? (long)ceil(want / once[0]) : 1000;
  if (reps < 2) reps = 2;
  if (reps > 20000) reps = 20000;
  /* the best of three batches: a burst of other work spoils one, not all */
  double t[1] = {INFINITY};
  for (int batch = 0; batch < 3 && rc == 0; batch++) {
    t0 = now();
    for (long r = 0; r < reps && rc == 0; r++) rc = rt_exec_run(e, err, errlen);
    double per = (now() - t0) / (double)reps;
    if (per < t[0]) t[0] = per;
  }
  o->w->max(o->w->impl, t, 1);
  *sec = t[0];
  rt_exec_free(e);
  char msg[512];
  snprintf(msg, sizeof msg, "%s", rc ? err : "");
  return o->w->agree(o->w->impl, rc, msg, err, errlen);
}

/* ---- one-instruction programs ---- */

static int in_buf(rt_prog *p, rt_dtype t, int rank, const int64_t *shape) { return rt_prog_buf(p, NULL, t, rank, shape, RT_BUF_INPUT); }
static int out_buf(rt_prog *p, int rank, const int64_t *shape) { return rt_prog_buf(p, NULL, RT_F32, rank, shape, RT_BUF_OUTPUT); }

static void gemm_prog(rt_prog *p, int64_t m, int64_t n, int64_t k) {
  rt_prog_init(p);
  int a = in_buf(p, RT_F32, 2, (int64_t[]){m, k}), b = in_buf(p, RT_F32, 2, (int64_t[]){k, n}), c = out_buf(p, 2, (int64_t[]){m, n});
  rt_instr *x = rt_prog_emit(p, RT_GEMM, c);
  x->nin = 2; x->in[0] = a; x->in[1] = b;
  x->m = m; x->n = n; x->k = k; x->batch = 1; x->alpha = 1;
  rt_prog_finish(p);
}

static void ew_prog(rt_prog *p, rt_ewfn fn, int64_t n) {
  rt_prog_init(p);
  int ar = rt_ewfn_arity(fn), out = out_buf(p, 1, &n);
  int ins[3];
  for (int k = 0; k < ar; k++) ins[k] = in_buf(p, RT_F32, 1, &n);
  rt_instr *x = rt_prog_emit(p, RT_EW, out);
  x->fn = (uint8_t)fn; x->nin = (uint8_t)ar; x->rank = 1; x->shape[0] = n;
  for (int k = 0; k < ar; k++) { x->in[k] = ins[k]; x->stride[k][0] = 1; }
  x->alpha = 0.5f; x->beta = 0.25f;
  rt_prog_finish(p);
}

/* The other kernels on about n elements (rows of 1024). 0 if op has no
** stand-alone form here. */
static int op_prog(rt_prog *p, rt_op op, int64_t n, int64_t cols) {
  int64_t rows = n / cols < 1 ? 1 : n / cols;
  int64_t all = rows * cols, sq = (int64_t)sqrt((double)all);
  rt_prog_init(p);
  int x2[2] = {0}, o;
  rt_instr *x;
  switch (op) {
  case RT_FILL: case RT_COPY:
    o = out_buf(p, 1, &all);
    x = rt_prog_emit(p, op, o);
    if (op == RT_COPY) { x->nin = 1; x->in[0] = in_buf(p, RT_F32, 1, &all); }
    break;
  case RT_TRANSPOSE:
    o = out_buf(p, 2, (int64_t[]){sq, sq});
    x = rt_prog_emit(p, op, o);
    x->nin = 1; x->in[0] = in_buf(p, RT_F32, 2, (int64_t[]){sq, sq});
    x->rank = 2; x->shape[0] = x->shape[1] = sq; x->perm[0] = 1; x->perm[1] = 0;
    break;
  case RT_REDUCE:
    o = out_buf(p, 1, &rows);
    x = rt_prog_emit(p, op, o);
    x->nin = 1; x->in[0] = in_buf(p, RT_F32, 1, &all);
    x->outer = rows; x->n = cols; x->inner = 1; x->fn = RT_RSUM; x->alpha = 1;
    break;
  case RT_SOFTMAX: case RT_LOG_SOFTMAX: case RT_CAUSAL_MASK:
    o = out_buf(p, 1, &all);
    x = rt_prog_emit(p, op, o);
    x->nin = 1; x->in[0] = in_buf(p, RT_F32, 1, &all);
    x->outer = rows; x->n = cols; x->inner = 1;
    if (op == RT_CAUSAL_MASK) { x->outer = 1; x->m = rows; x->alpha = -INFINITY; }
    break;
  case RT_SOFTMAX_GRAD: case RT_LOG_SOFTMAX_GRAD: case RT_REDUCE_MAX_GRAD:
    o = out_buf(p, 1, &all);
    x2[0] = in_buf(p, RT_F32, 1, &all);
    x2[1] = op == RT_REDUCE_MAX_GRAD ? in_buf(p, RT_F32, 1, &rows) : in_buf(p, RT_F32, 1, &all);
    x = rt_prog_emit(p, op, o);
    x->nin = 2; x->in[0] = x2[0]; x->in[1] = x2[1];
    x->outer = rows; x->n = cols; x->inner = 1;
    break;
  case RT_XENT_SUMEXP:         /* each row's sum of exp(x - m) */
    o = out_buf(p, 1, &rows);
    x2[0] = in_buf(p, RT_F32, 1, &all);
    x2[1] = in_buf(p, RT_F32, 1, &rows);
    x = rt_prog_emit(p, op, o);
    x->nin = 2; x->in[0] = x2[0]; x->in[1] = x2[1];
    x->outer = rows; x->n = cols; x->inner = 1;
    break;
  case RT_LAYERNORM: case RT_LAYERNORM_GRAD:
    o = out_buf(p, 1, &all);
    x2[0] = in_buf(p, RT_F32, 1, &all);
    x2[1] = in_buf(p, RT_F32, 1, &cols);
    {
      int third = op == RT_LAYERNORM ? in_buf(p, RT_F32, 1, &cols) : in_buf(p, RT_F32, 1, &all);
      x = rt_prog_emit(p, op, o);
      x->nin = 3; x->in[0] = x2[0]; x->in[1] = x2[1]; x->in[2] = third;
    }
    x->outer = rows; x->n = cols; x->inner = 1; x->alpha = 1e-5f;
    break;
  case RT_XENT: case RT_XENT_GRAD:
    o = op == RT_XENT ? out_buf(p, 0, NULL) : out_buf(p, 1, &all);
    x2[0] = in_buf(p, RT_F32, 1, &all);
    x2[1] = in_buf(p, RT_I32, 1, &rows);
    {
      int dl = op == RT_XENT_GRAD ? in_buf(p, RT_F32, 0, NULL) : -1;
      x = rt_prog_emit(p, op, o);
      x->nin = op == RT_XENT ? 2 : 3; x->in[0] = x2[0]; x->in[1] = x2[1]; x->in[2] = dl;
    }
    x->outer = rows; x->n = cols; x->inner = 1; x->alpha = 1.0f / (float)rows;
    break;
  case RT_GATHER_ROWS: case RT_SCATTER_ROWS: {
    int64_t table = 1024;
    int tab = op == RT_GATHER_ROWS ? in_buf(p, RT_F32, 2, (int64_t[]){table, cols}) : in_buf(p, RT_F32, 2, (int64_t[]){rows, cols});
    int ids = in_buf(p, RT_I32, 1, &rows);
    o = op == RT_GATHER_ROWS ? out_buf(p, 2, (int64_t[]){rows, cols}) : out_buf(p, 2, (int64_t[]){table, cols});
    x = rt_prog_emit(p, op, o);
    x->nin = 2;
    if (op == RT_GATHER_ROWS) { x->in[0] = tab; x->in[1] = ids; } else { x->in[0] = ids; x->in[1] = tab; }
    x->outer = rows; x->n = table; x->n2 = table; x->inner = cols;
    break;
  }
  case RT_BLOCK_COPY:
    o = out_buf(p, 1, &all);
    x = rt_prog_emit(p, op, o);
    x->nin = 1; x->in[0] = in_buf(p, RT_F32, 1, &all);
    x->outer = rows; x->m = cols; x->k = 0; x->n = cols; x->n2 = cols; x->off = 0; x->inner = 1;
    break;
  case RT_ADAM: case RT_SGD: {   /* an update of `all` parameters: p, g and the state, read and written back */
    int adam = op == RT_ADAM, in[6] = {-1, -1, -1, -1, -1, -1};
    for (int k = 0; k < (adam ? 4 : 3); k++) in[k] = in_buf(p, RT_F32, 1, &all);
    if (adam) { in[4] = in_buf(p, RT_F32, 0, NULL); in[5] = in_buf(p, RT_F32, 0, NULL); }
    o = out_buf(p, 1, &all);
    x = rt_prog_emit(p, op, o);
    x->nin = adam ? 6 : 3;
    memcpy(x->in, in, sizeof in);
    x->alpha = 1e-3f;
    if (adam) { x->hyper[0] = 0.9; x->hyper[1] = 0.999; x->hyper[2] = 1e-8; x->hyper[4] = 0.1; x->hyper[5] = 0.001; }
    else x->hyper[0] = 0.9;
    break;
  }
  default:
    rt_prog_free(p);
    return 0;
  }
  rt_prog_finish(p);
  return 1;
}

/* fused causal attention over outer slices of s positions of width dk */
static void attention_prog(rt_prog *p, int grad, int64_t outer, int64_t s, int64_t dk) {
  rt_prog_init(p);
  int64_t e = outer * s * dk, o3 = 3 * e;
  int in[4];
  for (int k = 0; k < 3 + grad; k++) in[k] = in_buf(p, RT_F32, 1, &e);
  rt_instr *x = rt_prog_emit(p, grad ? RT_ATTENTION_GRAD : RT_ATTENTION, out_buf(p, 1, grad ? &o3 : &e));
  x->nin = (uint8_t)(3 + grad);
  for (int k = 0; k < 3 + grad; k++) x->in[k] = in[k];
  x->outer = outer; x->m = s; x->k = dk; x->fn = 1; x->alpha = 1.0f / sqrtf((float)dk);
  rt_prog_finish(p);
}

/* Attention's cost beyond its block GEMMs (the profile's GEMM table costs
** those): per score element (the softmax passes) and per block GEMM call
** (BLAS's fixed cost, which tiny heads feel), fitted over shapes from
** tiny to GPT-2's, each weighted by its own time. */
static int calibrate_attention(const cal_opts *o, sim_profile *prof, char *err, size_t errlen) {
  static const int64_t shapes[][3] = {{64, 32, 16}, {32, 64, 32}, {16, 128, 64}, {8, 256, 64}, {2, 1024, 64}};
  int ns = (int)(sizeof shapes / sizeof shapes[0]);
  sim_opts so = {prof, 0, 0, {0}};
  for (int grad = 0; grad < 2; grad++) {
    double xx = 0, xy = 0, yy = 0, xr = 0, yr = 0;   /* normal equations of r = a scores + b calls, rows over t */
    for (int i = 0; i < ns; i++) {
      rt_prog p;
      double t, scores, calls;
      const int64_t *sh = shapes[i];
      attention_prog(&p, grad, sh[0], sh[1], sh[2]);
      int rc = timed(o, &p, NULL, &t, err, errlen);
      rt_prog_free(&p);
      if (rc < 0) return -1;
      rt_attention_blocks(sh[1], 1, grad, &scores, &calls);
      double x = (double)sh[0] * scores / t, y = (double)sh[0] * calls / t;
      double r = (t - sim_attention_gemm_seconds(&so, (double)sh[0], (double)sh[1], (double)sh[2], 1, grad, SIM_F32)) / t;
      xx += x * x; xy += x * y; yy += y * y; xr += x * r; yr += y * r;
    }
    double det = xx * yy - xy * xy, a = det > 0 ? (xr * yy - yr * xy) / det : 0, b = det > 0 ? (yr * xx - xr * xy) / det : 0;
    if (b < 0) { b = 0; a = xr / xx; }
    if (a < 0) { a = 0; b = yy > 0 ? fmax(yr / yy, 0) : 0; }
    double *cost = prof->op_cost[grad ? RT_ATTENTION_GRAD : RT_ATTENTION];
    cost[0] = 0;
    cost[1] = cost[2] = fmax(a, 1e-13);       /* positive, as a kernel line must be */
    cost[3] = b;
  }
  return 0;
}

/* ---- collectives ---- */

static int coll_prog(rt_prog *p, rt_op op, int P, int64_t elems) {
  rt_prog_init(p);
  p->mesh_rank = 1;
  p->mesh[0] = P;
  p->axis_names[0] = "x";
  int g = rt_prog_group(p, 1, (int[]){0});
  int64_t piece = elems / P < 1 ? 1 : elems / P, full = piece * P;
  int in, out;
  rt_instr *x;
  switch (op) {
  case RT_ALL_REDUCE:
    in = in_buf(p, RT_F32, 1, &full); out = out_buf(p, 1, &full);
    x = rt_prog_emit(p, op, out);
    x->outer = 1; x->n = full; x->inner = 1;
    break;
  case RT_ALL_GATHER:
    in = in_buf(p, RT_F32, 1, &piece); out = out_buf(p, 1, &full);
    x = rt_prog_emit(p, op, out);
    x->outer = 1; x->n = piece; x->inner = 1;
    break;
  case RT_REDUCE_SCATTER:
    in = in_buf(p, RT_F32, 1, &full); out = out_buf(p, 1, &piece);
    x = rt_prog_emit(p, op, out);
    x->outer = 1; x->n = full; x->inner = 1;
    break;
  default: {   /* all_to_all: [P * r, c] -> [r, c * P] */
    int64_t r = 1, c = piece;
    in = in_buf(p, RT_F32, 2, (int64_t[]){P * r, c}); out = out_buf(p, 2, (int64_t[]){r, c * P});
    x = rt_prog_emit(p, op, out);
    x->rank = 2; x->shape[0] = P * r; x->shape[1] = c; x->split_dim = 0; x->concat_dim = 1;
    x->outer = 1; x->n = P * r; x->inner = c;
    break;
  }
  }
  x->nin = 1; x->in[0] = in; x->group = g;
  rt_prog_finish(p);
  return 0;
}

/* t = c0 + c1 * x by least squares, c0 and c1 at least 0 */
static void fit(const double *x, const double *t, int n, double *c0, double *c1) {
  double sx = 0, st = 0, sxx = 0, sxt = 0;
  for (int i = 0; i < n; i++) { sx += x[i]; st += t[i]; sxx += x[i] * x[i]; sxt += x[i] * t[i]; }
  double den = n * sxx - sx * sx;
  *c1 = den > 0 ? (n * sxt - sx * st) / den : 0;
  if (*c1 < 0) *c1 = 0;
  *c0 = (st - *c1 * sx) / n;
  if (*c0 < 0) *c0 = 0;
}

static void say(const cal_opts *o, const char *step) { if (o->progress) o->progress(o->ctx, step); }

int sim_calibrate(const cal_opts *o, sim_profile *prof, char *err, size_t errlen) {
  rt_prog p;
  double t;
  /* the fixed cost of an instruction: many one-element adds, each on buffers of its own */
  say(o, "instruction overhead");
  rt_prog_init(&p);
  for (int i = 0; i < 256; i++) {
    int64_t one = 1;
    int a = in_buf(&p, RT_F32, 1, &one), b = in_buf(&p, RT_F32, 1, &one), y = out_buf(&p, 1, &one);
    rt_instr *x = rt_prog_emit(&p, RT_EW, y);
    x->fn = RT_ADD; x->nin = 2; x->rank = 1; x->shape[0] = 1;
    x->in[0] = a; x->in[1] = b; x->stride[0][0] = x->stride[1][0] = 1;
  }
  rt_prog_finish(&p);
  int rc = timed(o, &p, NULL, &t, err, errlen);
  rt_prog_free(&p);
  if (rc < 0) return -1;
  prof->launch = t / 256;
  /* memory bandwidth: a copy of 64 MiB, read and written */
  say(o, "memory bandwidth");
  int64_t big = (int64_t)1 << 24;
  op_prog(&p, RT_COPY, big, 1024);
  rc = timed(o, &p, NULL, &t, err, errlen);
  rt_prog_free(&p);
  if (rc < 0) return -1;
  prof->bandwidth = 2.0 * 4.0 * (double)big / (t - prof->launch > 0 ? t - prof->launch : t);
  /* GEMMs of a transformer's shapes, (t, t, t), (t, 4t, t), (4t, t, t) and
  ** (t, t, 4t) for t from 16 to 1024: their geometric means at each t make
  ** the table; the fastest is the peak */
  say(o, "GEMMs");
  static const int64_t sizes[] = {16, 32, 64, 128, 256, 512, 1024};
  int ng = (int)(sizeof sizes / sizeof sizes[0]);
  double rate[8], peak = 0;
  for (int i = 0; i < ng; i++) {
    int64_t s = sizes[i];
    int64_t shape[4][3] = {{s, s, s}, {s, 4 * s, s}, {4 * s, s, s}, {s, s, 4 * s}};
    double lf = 0, lr = 0;
    for (int q = 0; q < 4; q++) {
      gemm_prog(&p, shape[q][0], shape[q][1], shape[q][2]);
      rc = timed(o, &p, NULL, &t, err, errlen);
      rt_prog_free(&p);
      if (rc < 0) return -1;
      double flops = 2.0 * (double)shape[q][0] * (double)shape[q][1] * (double)shape[q][2];
      double r = flops / (t - prof->launch > 0 ? t - prof->launch : t);
      if (r > peak) peak = r;
      lf += log(flops) / 4;
      lr += log(r) / 4;
    }
    char six[32];                        /* 6 digits: a geometric mean needs no more, and reads short */
    snprintf(six, sizeof six, "%.6g", exp(lf));
    prof->gemm_flops[i] = strtod(six, NULL);
    rate[i] = exp(lr);
  }
  prof->flops[SIM_F32] = peak;
  prof->ngemm = ng;
  for (int i = 0; i < ng; i++) prof->gemm_eff[i] = rate[i] / peak;
  /* every other kernel at three sizes: a fixed cost and a cost per element
  ** from the two small ones, the cost per element of a large one */
  say(o, "kernels");
  prof->kernel_small = 65536;
  prof->kernel_large = 4194304;
  double at[3] = {4096, prof->kernel_small, prof->kernel_large};
  for (int k = 0; k < RT_NEWFN + RT_NOPS; k++) {
    int ew = k < RT_NEWFN, op = ew ? RT_EW : k - RT_NEWFN;
    if (!ew && (op == RT_EW || op == RT_GEMM || rt_is_collective((rt_op)op))) continue;
    if (ew && k > RT_ADAM_DENOM) continue;     /* the functions of other dtypes: costed as the f32 ones */
    double tk[3], ek[3];
    int made = 1;
    for (int s = 0; s < 3 && made; s++) {
      if (ew) ew_prog(&p, (rt_ewfn)k, (int64_t)at[s]);
      else made = op_prog(&p, (rt_op)op, (int64_t)at[s], 1024);
      if (!made) break;
      rc = timed(o, &p, NULL, &t, err, errlen);
      ek[s] = rt_instr_elems(&p, &p.instrs[0]);
      rt_prog_free(&p);
      if (rc < 0) return -1;
      tk[s] = fmax(t - prof->launch, 1e-12);
    }
    if (!made) continue;
    double *cost = ew ? prof->ew_cost[k] : prof->op_cost[op];
    double small = (tk[1] - tk[0]) / (ek[1] - ek[0]);
    if (!(small > 0)) small = tk[1] / ek[1];
    cost[0] = fmax(tk[0] - small * ek[0], 0);
    cost[1] = small;
    cost[2] = fmax((tk[2] - cost[0]) / ek[2], 1e-13);
    /* row-wise kernels: the same elements in rows of 32 tell the cost of a row */
    rt_instr probe = {0};
    probe.op = (uint8_t)op;
    probe.outer = 1;
    if (!ew && rt_instr_rows(&probe) > 0 && op_prog(&p, (rt_op)op, (int64_t)at[1], 32)) {
      double rows_short = (double)p.instrs[0].outer;
      rc = timed(o, &p, NULL, &t, err, errlen);
      rt_prog_free(&p);
      if (rc < 0) return -1;
      double rows_long = at[1] / 1024;
      cost[3] = fmax((fmax(t - prof->launch, 0) - tk[1]) / (rows_short - rows_long), 0);
    }
  }
  say(o, "attention");
  if (calibrate_attention(o, prof, err, errlen) < 0) return -1;
  /* collectives over the world: latency and bandwidth fitted per kind */
  int P = o->w->size;
  if (P > 1 && o->comm_for) {
    say(o, "collectives");
    sim_link *l = &prof->links[0];
    memset(l, 0, sizeof *l);
    l->name = "intra";
    static const int64_t bytes[] = {4096, 65536, 1 << 20, 16 << 20};
    int nb = (int)(sizeof bytes / sizeof bytes[0]);
    for (int q = 0; q < SIM_NCOLL; q++) {
      double x[4], tt[4];
      rt_op op = (rt_op)(RT_ALL_REDUCE + q);
      for (int i = 0; i < nb; i++) {
        coll_prog(&p, op, P, bytes[i] / 4);
        const rt_comm *comm = o->comm_for(o->ctx, &p, err, errlen);
        char msg[512];
        snprintf(msg, sizeof msg, "%s", comm ? "" : err);
        rc = o->w->agree(o->w->impl, comm ? 0 : -1, msg, err, errlen);
        if (rc == 0) rc = timed(o, &p, comm, &t, err, errlen);
        const rt_instr *ins = &p.instrs[0];
        double full = (double)(op == RT_ALL_GATHER ? p.bufs[ins->out].nelem : p.bufs[ins->in[0]].nelem) * 4;
        rt_prog_free(&p);
        if (rc < 0) return -1;
        x[i] = full;
        tt[i] = fmax(t - prof->launch, 0);
      }
      double c0, c1, steps = P - 1, share = (double)(P - 1) / P;
      if (op == RT_ALL_REDUCE) { steps *= 2; share *= 2; }
      fit(x, tt, nb, &c0, &c1);
      l->kind_latency[q] = c0 / steps;
      l->kind_bandwidth[q] = c1 > 0 ? share / c1 : 1e12;
    }
    l->bandwidth = l->kind_bandwidth[0];
    l->latency = l->kind_latency[0];
    prof->nlinks = 1;
    prof->node = P;
  }
  return 0;
}

/*
** test_collectives.c: every collective of runtime/comm_mpi.c over every
** group of a few meshes, against values each rank works out on its own.
** A plain MPI program (MPI stays out of the Criterion processes), run by
** tests/e2e/mpi_collectives.sh under mpirun -n 2, 4 and 8. Each rank fills
** its inputs with integers that depend on its rank, so every sum is exact
** whatever the order of additions. Everything runs twice: with the
** shared-memory algorithms and with CARVE_MPI_SHM=0 (the MPI calls and the
** ring). Prints "N passed, M failed" (summed over ranks). With --fail,
** the last rank calls rt_mpi_fail while the others wait in a barrier.
*/
#include <mpi.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/backend.h"
#include "runtime/comm_mpi.h"
#include "runtime/exec.h"
#include "runtime/prog.h"

static int world, me;            /* world size and this rank */
static int npass, nfail;
static const char *phase = "";   /* "shm" or "mpi", for failure lines */

static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...) {
  if (ok) {
    npass++;
    return;
  }
  if (nfail++ < 30) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rank %d [%s]: FAIL: ", me, phase);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
  }
}

/* ---- what each rank can work out alone ---- */

typedef struct mesh_def {
  int rank;
  int64_t size[3];
  const char *names[3];
} mesh_def;

static int coord(const mesh_def *md, int r, int ax) {
  int64_t below = 1;
  for (int i = ax + 1; i < md->rank; i++) below *= md->size[i];
  return (int)((r / below) % md->size[ax]);
}

static int group_size(const mesh_def *md, const rt_group *g) {
  int P = 1;
  for (int i = 0; i < g->naxes; i++) P *= (int)md->size[g->axes[i]];
  return P;
}

static int group_index(const mesh_def *md, const rt_group *g, int r) {
  int idx = 0;
  for (int i = 0; i < g->naxes; i++) idx = idx * (int)md->size[g->axes[i]] + coord(md, r, g->axes[i]);
  return idx;
}

/* The world rank of the member with index idx in my group. */
static int member(const mesh_def *md, const rt_group *g, int idx) {
  int c[3];
  for (int ax = 0; ax < md->rank; ax++) c[ax] = coord(md, me, ax);
  for (int i = g->naxes - 1; i >= 0; i--) {
    int ax = g->axes[i];
    c[ax] = idx % (int)md->size[ax];
    idx /= (int)md->size[ax];
  }
  int r = 0;
  for (int ax = 0; ax < md->rank; ax++) r = r * (int)md->size[ax] + c[ax];
  return r;
}

/* members[q] = member(q) for the whole group */
static int *members(const mesh_def *md, const rt_group *g, int P) {
  int *mem = malloc((size_t)P * sizeof *mem);
  for (int q = 0; q < P; q++) mem[q] = member(md, g, q);
  return mem;
}

static float val(int r, size_t i) { return (float)((r + 1) * 1000 + (int)(i % 997)); }

/* ---- one collective call ---- */

typedef struct tcase {
  rt_prog *p;
  const rt_comm *comm;
  const mesh_def *md;
  int g;
} tcase;

/* Runs ins over buffers of nin and nout elements; in holds val(me, i). */
static int run(tcase *t, rt_instr *ins, rt_dtype dt, size_t nin, size_t nout, void **outp, char *err, size_t errlen) {
  int64_t si = (int64_t)nin, so = (int64_t)nout;
  ins->in[0] = rt_prog_buf(t->p, "x", dt, 1, &si, RT_BUF_INPUT);
  ins->out = rt_prog_buf(t->p, "y", dt, 1, &so, RT_BUF_OUTPUT);
  ins->group = t->g;
  void *in = malloc(nin * 4 + 4), *out = malloc(nout * 4 + 4);
  for (size_t i = 0; i < nin; i++) {
    if (dt == RT_F32) ((float *)in)[i] = val(me, i);
    else ((int32_t *)in)[i] = (int32_t)val(me, i);
  }
  memset(out, 0xff, nout * 4);
  err[0] = 0;
  int rc = t->comm->run(t->comm->impl, ins, out, in, err, errlen);
  free(in);
  *outp = out;
  return rc;
}

static rt_instr instr(rt_op op) {
  rt_instr ins;
  memset(&ins, 0, sizeof ins);
  ins.op = (uint8_t)op;
  for (int k = 0; k < RT_MAXIN; k++) ins.in[k] = -1;
  ins.nin = 1;
  ins.src = -1;
  return ins;
}

static void test_all_reduce(tcase *t, size_t n, const char *gname) {
  const rt_group *g = &t->p->groups[t->g];
  int P = group_size(t->md, g);
  int *mem = members(t->md, g, P);
  rt_instr ins = instr(RT_ALL_REDUCE);
  char err[512];
  float *out;
  int rc = run(t, &ins, RT_F32, n, n, (void **)&out, err, sizeof err);
  check(rc == 0, "all_reduce over %s of %zu: %s", gname, n, err);
  size_t bad = 0, first = 0;
  for (size_t i = 0; rc == 0 && i < n; i++) {
    float want = 0;
    for (int q = 0; q < P; q++) want += val(mem[q], i);
    if (out[i] != want && !bad++) first = i;
  }
  check(bad == 0, "all_reduce over %s of %zu: %zu wrong, first at %zu", gname, n, bad, first);
  free(out);
  free(mem);
}

/* all_reduce reading and writing the same memory */
static void test_all_reduce_inplace(tcase *t, size_t n, const char *gname) {
  const rt_group *g = &t->p->groups[t->g];
  int P = group_size(t->md, g);
  int *mem = members(t->md, g, P);
  rt_instr ins = instr(RT_ALL_REDUCE);
  int64_t sn = (int64_t)n;
  ins.in[0] = ins.out = rt_prog_buf(t->p, "xy", RT_F32, 1, &sn, RT_BUF_INPUT);
  ins.group = t->g;
  float *x = malloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++) x[i] = val(me, i);
  char err[512] = "";
  int rc = t->comm->run(t->comm->impl, &ins, x, x, err, sizeof err);
  check(rc == 0, "in-place all_reduce over %s of %zu: %s", gname, n, err);
  size_t bad = 0;
  for (size_t i = 0; rc == 0 && i < n; i++) {
    float want = 0;
    for (int q = 0; q < P; q++) want += val(mem[q], i);
    bad += x[i] != want;
  }
  check(bad == 0, "in-place all_reduce over %s of %zu: %zu wrong", gname, n, bad);
  free(x);
  free(mem);
}

static void test_all_gather(tcase *t, rt_dtype dt, int64_t outer, int64_t n, int64_t inner, const char *gname) {
  const rt_group *g = &t->p->groups[t->g];
  int P = group_size(t->md, g);
  int *mem = members(t->md, g, P);
  rt_instr ins = instr(RT_ALL_GATHER);
  ins.outer = outer, ins.n = n, ins.inner = inner;
  char err[512];
  void *out;
  size_t e = (size_t)(outer * n * inner);
  int rc = run(t, &ins, dt, e, e * P, &out, err, sizeof err);
  check(rc == 0, "all_gather over %s of [%" PRId64 ", %" PRId64 ", %" PRId64 "]: %s", gname, outer, n, inner, err);
  size_t bad = 0, at = 0;
  for (int64_t o = 0; rc == 0 && o < outer; o++)
    for (int q = 0; q < P; q++)
      for (int64_t j = 0; j < n; j++)
        for (int64_t k = 0; k < inner; k++) {
          size_t oi = (size_t)(((o * P + q) * n + j) * inner + k), ii = (size_t)((o * n + j) * inner + k);
          float w = val(mem[q], ii);
          int ok = dt == RT_F32 ? ((float *)out)[oi] == w : ((int32_t *)out)[oi] == (int32_t)w;
          if (!ok && !bad++) at = oi;
        }
  check(bad == 0, "all_gather over %s of [%" PRId64 ", %" PRId64 ", %" PRId64 "] %s: %zu wrong, first at %zu", gname,
        outer, n, inner, dt == RT_F32 ? "f32" : "i32", bad, at);
  free(out);
  free(mem);
}

static void test_reduce_scatter(tcase *t, int64_t outer, int64_t n, int64_t inner, const char *gname) {
  const rt_group *g = &t->p->groups[t->g];
  int P = group_size(t->md, g), idx = group_index(t->md, g, me);
  int *mem = members(t->md, g, P);
  rt_instr ins = instr(RT_REDUCE_SCATTER);
  ins.outer = outer, ins.n = n, ins.inner = inner;
  char err[512];
  float *out;
  size_t e = (size_t)(outer * n * inner);
  int rc = run(t, &ins, RT_F32, e, e / P, (void **)&out, err, sizeof err);
  check(rc == 0, "reduce_scatter over %s of [%" PRId64 ", %" PRId64 ", %" PRId64 "]: %s", gname, outer, n, inner, err);
  int64_t m = n / P;
  size_t bad = 0, at = 0;
  for (int64_t o = 0; rc == 0 && o < outer; o++)
    for (int64_t j = 0; j < m; j++)
      for (int64_t k = 0; k < inner; k++) {
        size_t ii = (size_t)((o * n + idx * m + j) * inner + k), oi = (size_t)((o * m + j) * inner + k);
        float w = 0;
        for (int q = 0; q < P; q++) w += val(mem[q], ii);
        if (out[oi] != w && !bad++) at = oi;
      }
  check(bad == 0, "reduce_scatter over %s of [%" PRId64 ", %" PRId64 ", %" PRId64 "]: %zu wrong, first at %zu", gname,
        outer, n, inner, bad, at);
  free(out);
  free(mem);
}

static void test_all_to_all(tcase *t, int rank, const int64_t *shape, int split, int concat, const char *gname) {
  const rt_group *g = &t->p->groups[t->g];
  int P = group_size(t->md, g), idx = group_index(t->md, g, me);
  int *mem = members(t->md, g, P);
  rt_instr ins = instr(RT_ALL_TO_ALL);
  ins.rank = (uint8_t)rank;
  ins.split_dim = (int8_t)split, ins.concat_dim = (int8_t)concat;
  size_t tot = 1;
  int64_t piece[RT_MAXRANK], oshape[RT_MAXRANK];
  for (int i = 0; i < rank; i++) {
    ins.shape[i] = shape[i];
    tot *= (size_t)shape[i];
    piece[i] = i == split ? shape[i] / P : shape[i];
  }
  for (int i = 0; i < rank; i++) oshape[i] = i == concat ? piece[i] * P : piece[i];
  char err[512];
  float *out;
  int rc = run(t, &ins, RT_F32, tot, tot, (void **)&out, err, sizeof err);
  char sh[64];
  size_t k = 0;
  for (int i = 0; i < rank; i++) k += (size_t)snprintf(sh + k, sizeof sh - k, "%s%" PRId64, i ? "," : "", shape[i]);
  check(rc == 0, "all_to_all over %s of [%s] split %d concat %d: %s", gname, sh, split, concat, err);
  size_t bad = 0, at = 0;
  for (size_t f = 0; rc == 0 && f < tot; f++) {
    int64_t u[RT_MAXRANK];
    size_t rest = f;
    for (int i = rank - 1; i >= 0; i--) {
      u[i] = (int64_t)(rest % (size_t)oshape[i]);
      rest /= (size_t)oshape[i];
    }
    int q = (int)(u[concat] / piece[concat]);   /* the piece came from member q */
    u[concat] %= piece[concat];
    u[split] += (int64_t)idx * piece[split];    /* and was my slot of its split dim */
    size_t src = 0;
    for (int i = 0; i < rank; i++) src = src * (size_t)shape[i] + (size_t)u[i];
    if (out[f] != val(mem[q], src) && !bad++) at = f;
  }
  check(bad == 0, "all_to_all over %s of [%s] split %d concat %d: %zu wrong, first at %zu", gname, sh, split, concat,
        bad, at);
  free(out);
  free(mem);
}

/* Bad instructions fail alike on every rank, with a message and no hang. */
/* all_reduce taking the max or min (a vocabulary-parallel cross-entropy's
** row maxima): each element the largest or smallest over the members, in
** f32, f64 (also in place) and i32; other collectives take sums only */
static double mixed(int r, size_t i) { return (double)((r * 7 + (int)i * 3) % 11) - 5.5 - 0.25 * r; }

static void test_all_reduce_extreme(tcase *t, int fn, rt_dtype dt, size_t n, int inplace, const char *gname) {
  const rt_group *g = &t->p->groups[t->g];
  int P = group_size(t->md, g);
  int *mem = members(t->md, g, P);
  size_t es = rt_dtype_size(dt);
  int64_t sn = (int64_t)n;
  rt_instr ins = instr(RT_ALL_REDUCE);
  ins.fn = (uint8_t)fn;
  ins.outer = 1, ins.n = sn, ins.inner = 1;
  ins.in[0] = rt_prog_buf(t->p, "x", dt, 1, &sn, RT_BUF_INPUT);
  ins.out = inplace ? ins.in[0] : rt_prog_buf(t->p, "y", dt, 1, &sn, RT_BUF_OUTPUT);
  ins.group = t->g;
  char *x = malloc(n * es + 8), *y = inplace ? x : malloc(n * es + 8), err[512] = "";
  for (size_t i = 0; i < n; i++) {
    if (dt == RT_F32) ((float *)x)[i] = (float)mixed(me, i);
    else if (dt == RT_F64) ((double *)x)[i] = mixed(me, i);
    else ((int32_t *)x)[i] = (int32_t)(4 * mixed(me, i));
  }
  int rc = t->comm->run(t->comm->impl, &ins, y, x, err, sizeof err);
  const char *what = fn == RT_RMAX ? "max" : "min";
  check(rc == 0, "all_reduce(%s) over %s of %zu %s: %s", what, gname, n, rt_dtype_name(dt), err);
  size_t bad = 0;
  for (size_t i = 0; rc == 0 && i < n; i++) {
    double want = 0, got = dt == RT_F32 ? ((float *)y)[i] : dt == RT_F64 ? ((double *)y)[i] : ((int32_t *)y)[i];
    for (int q = 0; q < P; q++) {
      double v = dt == RT_I32 ? (double)(int32_t)(4 * mixed(mem[q], i)) : dt == RT_F32 ? (double)(float)mixed(mem[q], i) : mixed(mem[q], i);
      if (q == 0 || (fn == RT_RMAX ? v > want : v < want)) want = v;
    }
    bad += got != want;
  }
  check(bad == 0, "all_reduce(%s) over %s of %zu %s%s: %zu wrong", what, gname, n, rt_dtype_name(dt), inplace ? " in place" : "", bad);
  if (y != x) free(y);
  free(x);
  free(mem);
}

static void test_refusals(tcase *t, const char *gname) {
  const rt_group *g = &t->p->groups[t->g];
  int P = group_size(t->md, g);
  char err[512];
  void *out;
  if (P > 1) {
    rt_instr ins = instr(RT_REDUCE_SCATTER);
    ins.outer = 1, ins.n = P + 1, ins.inner = 2;
    int rc = run(t, &ins, RT_F32, (size_t)(2 * (P + 1)), 2, &out, err, sizeof err);
    check(rc != 0 && strstr(err, "do not split into") && strstr(err, gname), "indivisible reduce_scatter: rc %d: %s",
          rc, err);
    free(out);
  }
  /* i32 sums are exact (imported programs reduce integers too); the wrong
     output size below is the refusal */
  int *mem = members(t->md, g, P);
  rt_instr ins = instr(RT_ALL_REDUCE);
  int rc = run(t, &ins, RT_I32, 8, 8, &out, err, sizeof err);
  check(rc == 0, "i32 all_reduce: rc %d: %s", rc, err);
  for (size_t i = 0; rc == 0 && i < 8; i++) {
    int32_t want = 0;
    for (int q = 0; q < P; q++) want += (int32_t)val(mem[q], i);
    check(((int32_t *)out)[i] == want, "i32 all_reduce [%zu]: %d, want %d", i, (int)((int32_t *)out)[i], (int)want);
  }
  free(out);
  free(mem);
  ins = instr(RT_ALL_GATHER);
  ins.outer = 2, ins.n = 3, ins.inner = 1;
  rc = run(t, &ins, RT_F32, 6, 6 * P + 1, &out, err, sizeof err);
  check(rc != 0 && strstr(err, "elements"), "all_gather with a wrong out size: rc %d: %s", rc, err);
  free(out);
  ins = instr(RT_REDUCE_SCATTER);     /* a max is an all_reduce's alone */
  ins.fn = RT_RMAX;
  ins.outer = 1, ins.n = P, ins.inner = 1;
  rc = run(t, &ins, RT_F32, (size_t)P, 1, &out, err, sizeof err);
  check(rc != 0 && strstr(err, "no reduction 1"), "reduce_scatter taking the max: rc %d: %s", rc, err);
  free(out);
}

/* ---- one mesh ---- */

static void test_mesh(const mesh_def *md) {
  rt_prog p;
  rt_prog_init(&p);
  p.mesh_rank = md->rank;
  for (int i = 0; i < md->rank; i++) {
    p.mesh[i] = md->size[i];
    p.axis_names[i] = md->names[i];
  }
  /* every ordering of every subset of the axes, and the empty group */
  rt_prog_group(&p, 0, NULL);
  int na = md->rank;
  for (int a = 0; a < na; a++) rt_prog_group(&p, 1, (int[]){a});
  for (int a = 0; a < na; a++)
    for (int b = 0; b < na; b++)
      if (a != b) rt_prog_group(&p, 2, (int[]){a, b});
  if (na == 3)
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++)
        if (a != b) rt_prog_group(&p, 3, (int[]){a, b, 3 - a - b});
  int ngroups = p.ngroups;

  char err[512];
  rt_mpi *m = rt_mpi_new(&p, err, sizeof err);
  check(m != NULL, "rt_mpi_new: %s", err);
  if (!m) {
    rt_prog_free(&p);
    return;
  }
  for (int ax = 0; ax < md->rank; ax++)
    check(rt_mpi_coord(m, ax) == coord(md, me, ax), "coord %d: %d, want %d", ax, rt_mpi_coord(m, ax), coord(md, me, ax));
  check(rt_mpi_coord(m, md->rank) == -1, "coord of a missing axis");
  const rt_comm *comm = rt_mpi_comm(m);
  for (int gi = 0; gi < ngroups; gi++) {
    rt_group g = p.groups[gi];     /* a copy: rt_prog_buf may move the arrays */
    char gname[64];
    size_t k = (size_t)snprintf(gname, sizeof gname, "{");
    for (int i = 0; i < g.naxes; i++) k += (size_t)snprintf(gname + k, sizeof gname - k, "%s%s", i ? ", " : "", md->names[g.axes[i]]);
    snprintf(gname + k, sizeof gname - k, "}");
    int P = group_size(md, &g);
    check(comm->size(comm->impl, gi) == P, "size of %s: %d, want %d", gname, comm->size(comm->impl, gi), P);
    check(comm->index(comm->impl, gi) == group_index(md, &g, me), "index in %s: %d, want %d", gname,
          comm->index(comm->impl, gi), group_index(md, &g, me));
    tcase t = {&p, comm, md, gi};
    static const size_t ar_sizes[] = {1, 37, 1000, 5000, 300001, 524288};
    for (size_t i = 0; i < sizeof ar_sizes / sizeof *ar_sizes; i++) test_all_reduce(&t, ar_sizes[i], gname);
    test_all_reduce_inplace(&t, 777, gname);
    test_all_reduce_inplace(&t, 200000, gname);
    for (int fn = RT_RMAX; fn <= RT_RMIN; fn++) {
      test_all_reduce_extreme(&t, fn, RT_F32, 37, 0, gname);
      test_all_reduce_extreme(&t, fn, RT_F32, 5000, 1, gname);
      test_all_reduce_extreme(&t, fn, RT_F64, 300, 1, gname);
      test_all_reduce_extreme(&t, fn, RT_I32, 64, 0, gname);
    }
    test_all_gather(&t, RT_F32, 1, 1, 1, gname);
    test_all_gather(&t, RT_F32, 1, 3, 5, gname);
    test_all_gather(&t, RT_F32, 3, 2, 5, gname);
    test_all_gather(&t, RT_I32, 3, 2, 5, gname);
    test_all_gather(&t, RT_F32, 4, 3, 2000, gname);
    test_all_gather(&t, RT_F32, 2, 5, 40000, gname);
    test_all_gather(&t, RT_I32, 1, 7, 30000, gname);
    test_reduce_scatter(&t, 1, P, 1, gname);
    test_reduce_scatter(&t, 1, 2 * P, 3, gname);
    test_reduce_scatter(&t, 3, 2 * P, 5, gname);
    test_reduce_scatter(&t, 1, P, 70000, gname);
    test_reduce_scatter(&t, 2, P, 30000, gname);
    test_reduce_scatter(&t, 5, 4 * P, 7000, gname);
    test_all_to_all(&t, 2, (int64_t[]){2 * P, 3}, 0, 1, gname);
    test_all_to_all(&t, 2, (int64_t[]){3, 2 * P}, 1, 0, gname);
    test_all_to_all(&t, 3, (int64_t[]){2, 3 * P, 4}, 1, 2, gname);
    test_all_to_all(&t, 3, (int64_t[]){P, 2, 5}, 0, 0, gname);
    test_all_to_all(&t, 3, (int64_t[]){4, 2 * P, 3}, 1, 1, gname);
    test_all_to_all(&t, 4, (int64_t[]){4, 3, 2 * P, 500}, 2, 1, gname);
    test_all_to_all(&t, 4, (int64_t[]){4, 3, 2 * P, 500}, 2, 3, gname);
    test_refusals(&t, gname);
  }
  rt_mpi_free(m);
  rt_prog_free(&p);
}

/* ---- through the executor: shard, gather back; reduce_scatter + all_gather = all_reduce ---- */

static void test_exec(const mesh_def *md) {
  rt_prog p;
  rt_prog_init(&p);
  p.mesh_rank = md->rank;
  for (int i = 0; i < md->rank; i++) {
    p.mesh[i] = md->size[i];
    p.axis_names[i] = md->names[i];
  }
  int axes[3] = {0, 1, 2}, P = world;
  int g = rt_prog_group(&p, md->rank, axes);
  int64_t full[3] = {2, 2 * P, 3}, part[3] = {2, 2, 3};
  int x = rt_prog_buf(&p, "x", RT_F32, 3, full, RT_BUF_INPUT);
  int s = rt_prog_buf(&p, "s", RT_F32, 3, part, RT_BUF_TEMP);
  int y = rt_prog_buf(&p, "y", RT_F32, 3, full, RT_BUF_OUTPUT);
  int z = rt_prog_buf(&p, "z", RT_F32, 3, full, RT_BUF_OUTPUT);
  int r = rt_prog_buf(&p, "r", RT_F32, 3, part, RT_BUF_TEMP);
  int w = rt_prog_buf(&p, "w", RT_F32, 3, full, RT_BUF_OUTPUT);
  rt_instr *ins = rt_prog_emit(&p, RT_SHARD_SLICE, s);
  ins->in[0] = x, ins->nin = 1, ins->group = g, ins->outer = 2, ins->n = 2 * P, ins->inner = 3;
  ins = rt_prog_emit(&p, RT_ALL_GATHER, y);
  ins->in[0] = s, ins->nin = 1, ins->group = g, ins->outer = 2, ins->n = 2, ins->inner = 3;
  ins = rt_prog_emit(&p, RT_ALL_REDUCE, z);
  ins->in[0] = x, ins->nin = 1, ins->group = g;
  ins = rt_prog_emit(&p, RT_REDUCE_SCATTER, r);
  ins->in[0] = x, ins->nin = 1, ins->group = g, ins->outer = 2, ins->n = 2 * P, ins->inner = 3;
  ins = rt_prog_emit(&p, RT_ALL_GATHER, w);
  ins->in[0] = r, ins->nin = 1, ins->group = g, ins->outer = 2, ins->n = 2, ins->inner = 3;
  rt_prog_finish(&p);
  char err[512] = "";
  rt_mpi *m = rt_mpi_new(&p, err, sizeof err);
  check(m != NULL, "exec: rt_mpi_new: %s", err);
  rt_exec *e = m ? rt_exec_new(&p, rt_backend_cpu(), rt_mpi_comm(m)) : NULL;
  check(!m || e != NULL, "exec: rt_exec_new");
  if (e) {
    size_t n = (size_t)(12 * P);
    float *xs = malloc(n * sizeof *xs);
    for (size_t i = 0; i < n; i++) xs[i] = val(me, i);
    int rc = rt_exec_set(e, x, xs, n * sizeof *xs, err, sizeof err);
    if (!rc) rc = rt_exec_run(e, err, sizeof err);
    check(rc == 0, "exec: %s", err);
    const float *ys = rt_exec_data(e, y), *zs = rt_exec_data(e, z), *ws = rt_exec_data(e, w);
    size_t bad_y = 0, bad_z = 0, bad_w = 0;
    for (size_t i = 0; rc == 0 && ys && zs && ws && i < n; i++) {
      /* the shards of x on each member, gathered: element i came from the member owning its rows */
      size_t row = i / 3 % (size_t)(2 * P);
      bad_y += ys[i] != val((int)(row / 2), i);
      float sum = 0;
      for (int q = 0; q < P; q++) sum += val(q, i);
      bad_z += zs[i] != sum;
      bad_w += ws[i] != zs[i];
    }
    check(rc == 0 && ys && zs && ws, "exec: outputs missing");
    check(bad_y == 0, "exec: shard_slice then all_gather: %zu wrong", bad_y);
    check(bad_z == 0, "exec: all_reduce: %zu wrong", bad_z);
    check(bad_w == 0, "exec: reduce_scatter then all_gather differs from all_reduce in %zu", bad_w);
    free(xs);
    rt_exec_free(e);
  }
  rt_mpi_free(m);
  rt_prog_free(&p);
}

/* ---- agreement and the mesh size check ---- */

static void test_agree(void) {
  char err[512] = "";
  int bad = 2 < world ? 2 : world - 1;
  rt_mpi_agree(NULL, 0, NULL, err, sizeof err);   /* warm up */
  check(rt_mpi_agree(NULL, 0, NULL, err, sizeof err) == 0, "agree: all ok");
  char msg[64], want[96];
  snprintf(msg, sizeof msg, "boom on %d", me);
  snprintf(want, sizeof want, "rank %d: boom on %d", bad, bad);
  int rc = rt_mpi_agree(NULL, me == bad ? -1 : 0, msg, err, sizeof err);
  check(rc == -1 && strcmp(err, want) == 0, "agree, rank %d failing: rc %d: '%s', want '%s'", bad, rc, err, want);
  /* several fail: the lowest rank's message wins */
  snprintf(want, sizeof want, "rank %d: boom on %d", world > 1 ? 1 : 0, world > 1 ? 1 : 0);
  rc = rt_mpi_agree(NULL, me >= 1 || world == 1 ? -1 : 0, msg, err, sizeof err);
  check(rc == -1 && strcmp(err, want) == 0, "agree, ranks 1.. failing: rc %d: '%s', want '%s'", rc, err, want);

  /* over an rt_mpi's own communicator */
  rt_prog p;
  rt_prog_init(&p);
  p.mesh_rank = 1;
  p.mesh[0] = world;
  p.axis_names[0] = "batch";
  rt_mpi *m = rt_mpi_new(&p, err, sizeof err);
  check(m != NULL, "agree: rt_mpi_new: %s", err);
  if (m) {
    snprintf(want, sizeof want, "rank %d: boom on %d", world - 1, world - 1);
    rc = rt_mpi_agree(m, me == world - 1 ? -1 : 0, msg, err, sizeof err);
    check(rc == -1 && strcmp(err, want) == 0, "agree on m: rc %d: '%s', want '%s'", rc, err, want);
    check(rt_mpi_agree(m, 0, "unused", err, sizeof err) == 0, "agree on m: all ok");
  }
  rt_mpi_free(m);
  rt_prog_free(&p);
}

static void test_mesh_size(void) {
  rt_prog p;
  rt_prog_init(&p);
  p.mesh_rank = 2;
  p.mesh[0] = 2, p.mesh[1] = 2;
  p.axis_names[0] = "batch", p.axis_names[1] = "model";
  char err[512] = "", want[256];
  rt_mpi *m = rt_mpi_new(&p, err, sizeof err);
  if (world == 4) {
    check(m != NULL, "mesh 2x2 on 4 ranks: %s", err);
  } else {
    snprintf(want, sizeof want, "the mesh batch=2, model=2 needs 4 ranks but mpirun started %d; run mpirun -n 4", world);
    check(m == NULL && strcmp(err, want) == 0, "mesh 2x2 on %d ranks: '%s'", world, err);
  }
  rt_mpi_free(m);
  p.mesh_rank = 1;
  p.mesh[0] = world + 1;
  m = rt_mpi_new(&p, err, sizeof err);
  snprintf(want, sizeof want, "the mesh batch=%d needs %d ranks but mpirun started %d; run mpirun -n %d", world + 1,
           world + 1, world, world + 1);
  check(m == NULL && strcmp(err, want) == 0, "mesh [%d]: '%s'", world + 1, err);
  rt_mpi_free(m);
  /* a group naming an axis the mesh lacks */
  p.mesh[0] = world;
  rt_prog_group(&p, 1, (int[]){1});
  m = rt_mpi_new(&p, err, sizeof err);
  check(m == NULL && strstr(err, "lacks"), "group on a missing axis: '%s'", err);
  rt_mpi_free(m);
  rt_prog_free(&p);
}

int main(int argc, char **argv) {
  if (rt_mpi_init(&argc, &argv)) {
    fprintf(stderr, "MPI_Init failed\n");
    return 1;
  }
  world = rt_mpi_world_size();
  me = rt_mpi_world_rank();
  if (argc > 1 && strcmp(argv[1], "--fail") == 0) {
    /* the last rank fails mid-step while the others wait in a collective:
       every rank must go down (the script checks the exit and the message) */
    if (me == world - 1) rt_mpi_fail("step 3: boom");
    MPI_Barrier(MPI_COMM_WORLD);
    rt_mpi_finalize();
    return 0;
  }
  static const mesh_def meshes[] = {
    {1, {2}, {"batch"}},
    {1, {4}, {"batch"}},
    {2, {2, 2}, {"batch", "model"}},
    {1, {8}, {"data"}},
    {2, {4, 2}, {"data", "model"}},
    {3, {2, 2, 2}, {"pipe", "data", "model"}},
  };
  for (int pass = 0; pass < 2; pass++) {
    phase = pass ? "mpi" : "shm";
    if (pass) setenv("CARVE_MPI_SHM", "0", 1);
    for (size_t i = 0; i < sizeof meshes / sizeof *meshes; i++) {
      int64_t prod = 1;
      for (int a = 0; a < meshes[i].rank; a++) prod *= meshes[i].size[a];
      if (prod != world) continue;
      test_mesh(&meshes[i]);
      test_exec(&meshes[i]);
    }
  }
  phase = "misc";
  test_agree();
  test_mesh_size();

  int local[2] = {npass, nfail}, total[2] = {0, 0};
  MPI_Allreduce(local, total, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("mpi collectives on %d ranks: %d passed, %d failed\n", world, total[0], total[1]);
  rt_mpi_finalize();
  return total[1] ? 1 : 0;
}

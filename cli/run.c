/*
** cli_run.c: carve check, carve run (one process) and carve lower.
*/
#include "cli/cli.h"
#include "interp/drive/feed.h"
#include "interp/lower/lower.h"
#include "interp/drive/session.h"
#include "runtime/mesh.h"
#include "runtime/comm_mpi.h"
#include "runtime/exec.h"
#include "runtime/mpi_util.h"
#include "runtime/init.h"
#include "runtime/safet.h"
#include "util/json.h"

#include <errno.h>
#include <math.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void cli_report(const diag *d) {
  fputs(diag_text(d), stderr);
}

int cli_load(session *s, const cli_opts *o) {
  session_init(s);
  session_opts so = {o->files[0], o->model, o->train, o->nfiles > 1 ? o->files[1] : NULL, {o->mesh, o->strict, o->lenient, NULL}};
  if (session_load(s, &so) < 0) {
    cli_report(&s->diag);
    session_free(s);
    return -1;
  }
  return 0;
}

#define load cli_load

int cli_check(const cli_opts *o) {
  session s;
  if (load(&s, o) < 0) return 1;
  ir_graph *g = s.g;
  if (o->print) {
    arena a;
    arena_init(&a);
    fputs(ir_print(g, &a), stdout);
    arena_free(&a);
  } else {
    int64_t nparam = 0;
    int nops = 0, np = 0;
    for (int i = 0; i < g->nvals; i++) {
      ir_value *v = g->vals[i];
      if (v->kind == IR_PARAM) { nparam += ir_nelem(&v->shape); np++; }
      nops += v->kind == IR_OP;
    }
    printf("%s: model '%s' is well-formed: %d ops, %d params (%.4g M values)%s\n",
           o->files[0], g->name, nops, np, (double)nparam / 1e6,
           g->train ? (g->train == TRAIN_ADAM ? ", Adam training step" : ", SGD training step") : "");
  }
  if (s.diag.nwarnings) cli_report(&s.diag);
  session_free(&s);
  return 0;
}

int cli_lower(const cli_opts *o) {
  session s;
  if (load(&s, o) < 0) return 1;
  rt_prog p;
  lower_result lr;
  if (lower_program(s.g, s.plan, &p, &lr, &s.diag) < 0) {
    cli_report(&s.diag);
    session_free(&s);
    return 1;
  }
  arena a;
  arena_init(&a);
  int ndev = rt_mesh_devices(&p), rank = o->rank < 0 ? 0 : o->rank;
  if (rank >= ndev) {
    fprintf(stderr, "carve: error: --rank %d is outside the mesh of %d device%s (0..%d)\n", rank, ndev, ndev == 1 ? "" : "s", ndev - 1);
    arena_free(&a); lower_result_free(&lr); rt_prog_free(&p); session_free(&s);
    return 1;
  }
  if (p.mesh_rank) {
    /* every rank runs these instructions; what differs is which piece of each
       tensor it holds, and so where its slices and offsets fall */
    printf("rank %d of %d, mesh coordinates:", rank, ndev);
    for (int i = 0; i < p.mesh_rank; i++) printf(" %s=%d", p.axis_names[i], rt_mesh_coord(&p, rank, i));
    printf("\n(every rank runs the same instructions on its own pieces)\n\nthis rank's pieces of the inputs and parameters:\n");
    for (int b = 0; b < p.nbufs; b++) {
      const rt_buf *rb = &p.bufs[b];
      if (rb->kind != RT_BUF_INPUT) continue;
      printf("  %-28s", rb->name);
      int64_t off[RT_MAXRANK];
      rt_mesh_block(&p, rank, b, off);
      for (int i = 0; i < rb->rank; i++) printf("%s%lld:%lld", i ? ", " : "[", (long long)off[i], (long long)(off[i] + rb->shape[i]));
      ir_shape gs = {rb->rank, {0}};
      for (int i = 0; i < rb->rank; i++) gs.d[i] = rb->global_shape[i];
      printf("%s of %s\n", rb->rank ? "]" : "[]", ir_shape_str(&a, &gs));
    }
    printf("\n");
  }
  fputs(rt_prog_dump(&p, &a), stdout);
  arena_free(&a);
  lower_result_free(&lr);
  rt_prog_free(&p);
  session_free(&s);
  return 0;
}

/* ---- run ---- */

typedef struct runner {
  const ir_graph *g;
  const sh_plan *plan;
  rt_prog p;
  lower_result lr;
  int lowered;
  rt_exec *e;
  const rt_comm *comm;
  int rank, nranks;
  double *losses;
} runner;

static int runner_lower(runner *r, const ir_graph *g, const sh_plan *plan, diag *d) {
  r->g = g;
  r->plan = plan;
  if (lower_program(g, plan, &r->p, &r->lr, d) < 0) return -1;
  r->lowered = 1;
  return 0;
}

static void runner_free(runner *r) {
  rt_exec_free(r->e);
  if (r->lowered) { lower_result_free(&r->lr); rt_prog_free(&r->p); }
  free(r->losses);
}

/* Give every leaf this device's piece: from the files, or the deterministic init. */
static int bind_leaves(runner *r, st_file *params, st_file *data, char *err, size_t errlen) {
  const ir_graph *g = r->g;
  for (int i = 0; i < g->nvals; i++) {
    const ir_value *v = g->vals[i];
    int b = r->lr.buf_of[i];
    if ((v->kind != IR_INPUT && v->kind != IR_PARAM && v->kind != IR_STATE) || b < 0) continue;
    const rt_buf *rb = &r->p.bufs[b];
    size_t bytes = (size_t)rb->nelem * rt_dtype_size(rb->dtype);
    void *tmp = malloc(bytes ? bytes : 1);
    if (!tmp) { snprintf(err, errlen, "out of memory for '%s'", v->name); return -1; }
    int64_t off[RT_MAXRANK];
    feed_block(&r->p, b, r->comm, off);
    st_file *src = v->kind == IR_INPUT ? data : params;
    int rc = 0;
    if (v->kind == IR_PARAM && params && !st_find(params, v->name))
      rc = -1, snprintf(err, errlen, "no tensor named '%s' in the --params file; it must hold every parameter", v->name);
    else if (v->kind == IR_INPUT && data && !st_find(data, v->name))
      rc = -1, snprintf(err, errlen, "no tensor named '%s' in the --data file; it must hold every input", v->name);
    else if (src && st_find(src, v->name))
      rc = st_read_block(src, v->name, rb->dtype, rb->rank, rb->global_shape, off, rb->shape, tmp, err, errlen);
    else {
      rt_init in;
      feed_init(g, v, &in);
      rt_init_block(&in, rb->dtype, rb->rank, rb->global_shape, off, rb->shape, tmp);
    }
    if (rc == 0) rc = rt_exec_set(r->e, b, tmp, bytes, err, errlen);
    free(tmp);
    if (rc) return -1;
  }
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The full tensor of value id on rank 0 (NULL elsewhere): every rank's piece put in place. */
static float *gather_full(runner *r, int id) {
  int b = r->lr.buf_of[id];
  const rt_buf *rb = &r->p.bufs[b];
  const float *mine = rt_exec_data(r->e, b);
  int64_t total = 1;
  for (int i = 0; i < rb->rank; i++) total *= rb->global_shape[i];
  size_t bytes = (size_t)rb->nelem * 4;
  float *all = NULL, *full = NULL;
  if (r->rank == 0) { all = mem_alloc(bytes * (size_t)r->nranks + 4); full = mem_alloc((size_t)total * 4 + 4); }
  if (r->nranks > 1) {
    if (rt_mpi_gather(mine, bytes, all) < 0) rt_mpi_fail("gathering a tensor for --save/--check failed");
  } else if (all) memcpy(all, mine, bytes);
  if (r->rank == 0) {
    for (int q = 0; q < r->nranks; q++) {
      int64_t off[RT_MAXRANK], idx[RT_MAXRANK];
      rt_mesh_block(&r->p, q, b, off);
      const float *src = all + (size_t)q * (size_t)rb->nelem;
      for (int64_t k = 0; k < rb->nelem; k++) {
        int64_t rem = k, gidx = 0;
        for (int i = rb->rank - 1; i >= 0; i--) { idx[i] = rem % rb->shape[i]; rem /= rb->shape[i]; }
        for (int i = 0; i < rb->rank; i++) gidx = gidx * rb->global_shape[i] + off[i] + idx[i];
        full[gidx] = src[k];
      }
    }
  }
  free(all);
  return full;
}

/* --profile: this rank's time per step by kind of instruction (elementwise
** ops by function), largest first; on stderr with --json so that stdout
** stays one JSON object. */
static void print_profile(const runner *r, long steps, int json_out) {
  const double *sec = rt_exec_seconds(r->e);
  if (!sec) return;
  enum { MAXK = 64 };
  char names[MAXK][32];
  double tot[MAXK] = {0}, all = 0;
  int cnt[MAXK] = {0}, nk = 0;
  for (int i = 0; i < r->p.ninstrs; i++) {
    const rt_instr *x = &r->p.instrs[i];
    char nm[32];
    if (x->op == RT_EW) snprintf(nm, sizeof nm, "%s", rt_ewfn_name((rt_ewfn)x->fn));
    else snprintf(nm, sizeof nm, "%s", rt_op_name((rt_op)x->op));
    int k;
    for (k = 0; k < nk; k++) if (!strcmp(names[k], nm)) break;
    if (k == nk) { if (nk == MAXK) continue; snprintf(names[nk++], sizeof names[0], "%s", nm); }
    tot[k] += sec[i] / (double)steps;
    cnt[k]++;
    all += sec[i] / (double)steps;
  }
  FILE *f = json_out ? stderr : stdout;
  fprintf(f, "profile%s, per step (the first step left out when there are more): %.3f ms in instructions\n",
          r->nranks > 1 ? " of rank 0" : "", 1e3 * all);
  for (int done = 0; done < nk; done++) {
    int b = -1;
    for (int k = 0; k < nk; k++) if (cnt[k] >= 0 && (b < 0 || tot[k] > tot[b])) b = k;
    fprintf(f, "  %-18s %9.3f ms  %5.1f %%  (%d instruction%s)\n", names[b], 1e3 * tot[b], all > 0 ? 100 * tot[b] / all : 0, cnt[b], cnt[b] == 1 ? "" : "s");
    cnt[b] = -1;
  }
}

/* Can a file be created beside `path`? (rank 0 writes --save) */
static int save_folder_bad(const char *path, char *err, size_t errlen) {
  const char *slash = strrchr(path, '/');
  char dir[4096];
  if (!slash) snprintf(dir, sizeof dir, ".");
  else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path ? slash - path : 1), path);
  if (access(dir, W_OK) == 0) return 0;
  diag_errbuf(err, errlen, "--save %.200s: cannot write in the folder '%.200s' (%s)", path, dir, strerror(errno));
  return 1;
}

static int is_state(const ir_value *v) { return v->kind == IR_PARAM || v->kind == IR_STATE; }

static int save_state(runner *r, const char *path, char *err, size_t errlen) {
  const ir_graph *g = r->g;
  st_out *outs = mem_calloc((size_t)g->nvals + 1, sizeof *outs);
  float **keep = mem_calloc((size_t)g->nvals + 1, sizeof *keep);
  int n = 0;
  for (int i = 0; i < g->nvals; i++) {
    const ir_value *v = g->vals[i];
    if (!is_state(v) || r->lr.buf_of[i] < 0) continue;
    keep[n] = gather_full(r, i);
    outs[n] = (st_out){v->name, RT_F32, v->shape.rank, v->shape.d, keep[n]};
    n++;
  }
  int rc = 0;
  if (r->rank == 0) rc = st_write(path, outs, n, err, errlen);
  for (int i = 0; i < n; i++) free(keep[i]);
  free(keep);
  free(outs);
  return rc;
}

/* Run the unpartitioned program on rank 0 and compare: the largest of the
** losses' relative errors and each parameter's ||a - b|| / ||b||. */
static double check_against_one_device(runner *r, const char *params_path, const char *data_path, long steps, char *err, size_t errlen, int *failed) {
  runner one = {0};
  double worst = 0;
  diag d;
  diag_init(&d);
  st_file *params = NULL, *data = NULL;
  *failed = 0;
  if (runner_lower(&one, r->g, NULL, &d) < 0) { snprintf(err, errlen, "lowering the one-device program failed"); *failed = 1; goto out; }
  one.e = rt_exec_new(&one.p, rt_backend_cpu(), NULL);
  one.nranks = 1;
  if ((params_path && !(params = st_open(params_path, err, errlen))) || (data_path && !(data = st_open(data_path, err, errlen))) ||
      bind_leaves(&one, params, data, err, errlen) < 0) { *failed = 1; goto out; }
  int out = one.lr.buf_of[r->g->outputs[0]];
  for (long s = 0; s < steps; s++) {
    if (rt_exec_run(one.e, err, errlen) < 0) { *failed = 1; goto out; }
    const float *o1 = rt_exec_data(one.e, out);
    double l1 = 0;
    int64_t no = one.p.bufs[out].nelem;
    if (r->g->vals[r->g->outputs[0]]->shape.rank == 0) l1 = o1[0];
    else for (int64_t k = 0; k < no; k++) l1 += o1[k];      /* as the partitioned run reports it */
    double e = fabs(r->losses[s] - l1) / (fabs(l1) > 0 ? fabs(l1) : 1);
    if (e > worst || isnan(e)) worst = isnan(e) ? INFINITY : e;
    if (r->g->train) rt_exec_carry(one.e);
  }
out:
  if (params) st_close(params);
  if (data) st_close(data);
  diag_free(&d);
  /* parameters, and a tensor output: gathered from every rank (a collective), compared on rank 0 */
  int outv = r->g->outputs[0];
  for (int i = 0; i < r->g->nvals; i++) {
    const ir_value *v = r->g->vals[i];
    if ((v->kind != IR_PARAM && !(i == outv && v->shape.rank > 0)) || r->lr.buf_of[i] < 0) continue;
    float *full = gather_full(r, i);
    if (r->rank == 0 && !*failed) {
      const float *ref = rt_exec_data(one.e, one.lr.buf_of[i]);
      double num = 0, den = 0;
      for (int64_t k = 0; k < ir_nelem(&v->shape); k++) {
        double dd = (double)full[k] - (double)ref[k];
        num += dd * dd;
        den += (double)ref[k] * (double)ref[k];
      }
      double e = den > 0 ? sqrt(num / den) : sqrt(num);
      if (e > worst || isnan(e)) worst = isnan(e) ? INFINITY : e;
    }
    free(full);
  }
  runner_free(&one);
  return worst;
}

int cli_run(const cli_opts *o) {
  if (o->steps < 0) {
    fprintf(stderr, "carve: error: run needs --steps N (how many times to execute the program)\n");
    return 2;
  }
  int distributed = o->nfiles > 1;   /* a tactic file: one MPI rank per device */
  const char *launched = getenv("OMPI_COMM_WORLD_SIZE");
  if (!distributed && launched && atoi(launched) > 1) {
    if (!getenv("OMPI_COMM_WORLD_RANK") || !strcmp(getenv("OMPI_COMM_WORLD_RANK"), "0"))
      fprintf(stderr, "carve: error: without a tactic file the program runs on one device; give a tactic file, or start carve without mpirun\n");
    return 1;
  }
  runner r = {0};
  r.nranks = 1;
  char err[512] = "", agreed[600] = "";
  if (distributed) {
    if (rt_mpi_init(NULL, NULL) < 0) { fprintf(stderr, "carve: error: MPI did not start\n"); return 1; }
    r.rank = rt_mpi_world_rank();
    r.nranks = rt_mpi_world_size();
  }
  session s;
  session_init(&s);
  session_opts so = {o->files[0], o->model, o->train, o->nfiles > 1 ? o->files[1] : NULL, {o->mesh, o->strict, o->lenient, NULL}};
  int rc = session_load(&s, &so);
  if (rc == 0 && runner_lower(&r, s.g, s.plan, &s.diag) < 0) rc = -1;
  if (distributed && rt_mpi_agree(NULL, rc, "the model or tactic file did not load", agreed, sizeof agreed) < 0) {
    if (r.rank == 0) cli_report(&s.diag);
    runner_free(&r);
    session_free(&s);
    rt_mpi_finalize();
    return 1;
  }
  if (rc < 0) { cli_report(&s.diag); runner_free(&r); session_free(&s); return 1; }
  const ir_graph *g = s.g;
  rt_mpi *mpi = NULL;
  st_file *params = NULL, *data = NULL;
  int status = 0;
  if (distributed) {
    mpi = rt_mpi_new(&r.p, err, sizeof err);
    if (rt_mpi_agree(NULL, mpi ? 0 : -1, err, agreed, sizeof agreed) < 0) goto fail_agreed;
    r.comm = rt_mpi_comm(mpi);
  }
  r.e = rt_exec_new(&r.p, rt_backend_cpu(), r.comm);
  if (o->profile) rt_exec_profile(r.e);
  if (o->save && r.rank == 0 && save_folder_bad(o->save, err, sizeof err)) status = -1;   /* before hours of training, not after */
  if (status == 0 && ((o->params && !(params = st_open(o->params, err, sizeof err))) || (o->data && !(data = st_open(o->data, err, sizeof err))) ||
      bind_leaves(&r, params, data, err, sizeof err) < 0))
    status = -1;
  if (distributed) { if (rt_mpi_agree(mpi, status, err, agreed, sizeof agreed) < 0) goto fail_agreed; }
  else if (status < 0) { snprintf(agreed, sizeof agreed, "%s", err); goto fail_agreed; }

  const ir_value *out = g->vals[g->outputs[0]];
  int scalar = out->shape.rank == 0;
  double *times = mem_calloc((size_t)o->steps + 1, sizeof(double));
  r.losses = mem_calloc((size_t)o->steps + 1, sizeof(double));
  for (long st = 0; st < o->steps; st++) {
    double t0 = now();
    if (rt_exec_run(r.e, err, sizeof err) < 0) {
      if (distributed) rt_mpi_fail(err);
      snprintf(agreed, sizeof agreed, "%s", err);
      free(times);
      goto fail_agreed;
    }
    times[st] = now() - t0;
    double l = 0;
    if (scalar) l = ((const float *)rt_exec_data(r.e, r.lr.buf_of[out->id]))[0];   /* outputs are whole on every rank */
    else {    /* a tensor: its pieces put back together on rank 0 */
      float *full = gather_full(&r, out->id);
      if (full) for (int64_t k = 0; k < ir_nelem(&out->shape); k++) l += full[k];
      free(full);
    }
    r.losses[st] = l;
    if (!o->json && r.rank == 0) {
      printf("step %ld  %s %.6f  (%.3f s)\n", st + 1, scalar ? "loss" : "sum of the output", l, times[st]);
      fflush(stdout);
    }
    if (g->train) rt_exec_carry(r.e);
    if (o->profile && st == 0 && o->steps > 1) rt_exec_profile(r.e);   /* the first step warms up (page faults): leave it out */
  }
  double med = 0, peak = (double)rt_exec_peak(r.e);
  if (o->steps > 0) {
    int first = o->steps > 1 ? 1 : 0;
    qsort(times + first, (size_t)(o->steps - first), sizeof(double), cmp_double);
    med = times[first + (o->steps - first) / 2];
  }
  free(times);
  double agg[2] = {med, peak};
  if (distributed) rt_mpi_max(agg, 2);
  double check = -1;
  int check_failed = 0;
  if (o->check) check = check_against_one_device(&r, o->params, o->data, o->steps, err, sizeof err, &check_failed);
  if (o->save) {
    status = save_state(&r, o->save, err, sizeof err);
    if (distributed) { if (rt_mpi_agree(mpi, status, err, agreed, sizeof agreed) < 0) goto fail_agreed; }
    else if (status < 0) { snprintf(agreed, sizeof agreed, "%s", err); goto fail_agreed; }
  }
  if (r.rank == 0 && o->profile && o->steps > 0) print_profile(&r, o->steps > 1 ? o->steps - 1 : 1, o->json);
  if (r.rank == 0) {
    if (check_failed) fprintf(stderr, "carve: warning: --check could not run the one-device program: %s\n", err);
    if (o->json) {
      json j;
      json_init(&j);
      json_obj(&j);
      json_key(&j, "losses");
      json_arr(&j);
      for (long st = 0; st < o->steps; st++) json_num(&j, r.losses[st]);
      json_end_arr(&j);
      json_key(&j, "step_time"); json_num(&j, agg[0]);
      json_key(&j, "peak_memory"); json_int(&j, (int64_t)agg[1]);
      json_key(&j, "ranks"); json_int(&j, r.nranks);
      if (o->check) { json_key(&j, "max_rel_error"); json_num(&j, check); }
      json_end_obj(&j);
      puts(sb_str(&j.out));
      json_free(&j);
    } else {
      printf("median step %.4f s, peak memory %.1f MiB per device%s\n", agg[0], agg[1] / (1 << 20), r.nranks > 1 ? " (the largest over ranks)" : "");
      if (o->check) printf("max relative error against one device: %.3g (losses and every updated parameter)\n", check);
      if (o->save) printf("saved parameters%s to %s\n", g->train == TRAIN_ADAM ? " and Adam state" : "", o->save);
    }
    fflush(stdout);
  }
  rc = 0;
  goto done;
fail_agreed:
  if (r.rank == 0) fprintf(stderr, "carve: error: %s\n", agreed);
  rc = 1;
done:
  if (params) st_close(params);
  if (data) st_close(data);
  rt_exec_free(r.e);
  r.e = NULL;
  if (mpi) rt_mpi_free(mpi);
  runner_free(&r);
  session_free(&s);
  if (distributed) rt_mpi_finalize();
  return rc;
}

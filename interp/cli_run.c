/*
** cli_run.c: carve check, carve run (one process) and carve lower.
*/
#include "interp/cli.h"
#include "interp/feed.h"
#include "interp/lower.h"
#include "interp/session.h"
#include "runtime/exec.h"
#include "runtime/init.h"
#include "runtime/safet.h"
#include "util/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void cli_report(const diag *d) {
  if (d->text) fputs(d->text, stderr);
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
  fputs(rt_prog_dump(&p, &a), stdout);
  arena_free(&a);
  lower_result_free(&lr);
  rt_prog_free(&p);
  session_free(&s);
  return 0;
}

/* ---- run ---- */

static void full_block(int rank, int64_t *off) { for (int i = 0; i < rank; i++) off[i] = 0; }

static int bind_leaf(const ir_graph *g, const ir_value *v, const rt_buf *b, int bi, rt_exec *e,
                     st_file *params, st_file *data, char *err, size_t errlen) {
  size_t bytes = (size_t)b->nelem * rt_dtype_size(b->dtype);
  void *tmpbuf = malloc(bytes ? bytes : 1);
  if (!tmpbuf) { snprintf(err, errlen, "out of memory for '%s'", v->name); return -1; }
  int64_t off[RT_MAXRANK];
  full_block(b->rank, off);
  int rc = 0;
  st_file *src = v->kind == IR_INPUT ? data : params;
  int from_file = src && (v->kind != IR_STATE || st_find(src, v->name));
  if (v->kind == IR_PARAM && params && !st_find(params, v->name)) {
    snprintf(err, errlen, "no tensor named '%s' in the --params file; it must hold every parameter", v->name);
    rc = -1;
  } else if (v->kind == IR_INPUT && data && !st_find(data, v->name)) {
    snprintf(err, errlen, "no tensor named '%s' in the --data file; it must hold every input", v->name);
    rc = -1;
  } else if (from_file) {
    rc = st_read_block(src, v->name, b->dtype, b->rank, b->shape, off, b->shape, tmpbuf, err, errlen);
  } else {
    rt_init in;
    feed_init(g, v, &in);
    rt_init_block(&in, b->dtype, b->rank, b->shape, off, b->shape, tmpbuf);
  }
  if (rc == 0) rc = rt_exec_set(e, bi, tmpbuf, bytes, err, errlen);
  free(tmpbuf);
  return rc;
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

static int save_state(const ir_graph *g, const rt_prog *p, const lower_result *lr, rt_exec *e, const char *path, char *err, size_t errlen) {
  st_out *outs = calloc((size_t)g->nvals + 1, sizeof *outs);
  int n = 0;
  for (int i = 0; i < g->nvals; i++) {
    const ir_value *v = g->vals[i];
    if (v->kind != IR_PARAM && v->kind != IR_STATE) continue;
    int b = lr->buf_of[i];
    if (b < 0) continue;
    outs[n].name = v->name;
    outs[n].dtype = p->bufs[b].dtype;
    outs[n].rank = p->bufs[b].rank;
    outs[n].shape = p->bufs[b].shape;
    outs[n].data = rt_exec_data(e, b);
    n++;
  }
  int rc = st_write(path, outs, n, err, errlen);
  free(outs);
  return rc;
}

int cli_run(const cli_opts *o) {
  if (o->steps < 0) {
    fprintf(stderr, "carve: error: run needs --steps N (how many times to execute the program)\n");
    return 2;
  }
  session s;
  if (load(&s, o) < 0) return 1;
  ir_graph *g = s.g;
  rt_prog p;
  lower_result lr;
  int rc = 1;
  char err[512] = "";
  st_file *params = NULL, *data = NULL;
  rt_exec *e = NULL;
  double *times = NULL, *losses = NULL;
  if (lower_program(g, NULL, &p, &lr, &s.diag) < 0) { cli_report(&s.diag); session_free(&s); return 1; }
  if (o->params && !(params = st_open(o->params, err, sizeof err))) goto fail;
  if (o->data && !(data = st_open(o->data, err, sizeof err))) goto fail;
  e = rt_exec_new(&p, rt_backend_cpu(), NULL);
  for (int i = 0; i < g->nvals; i++) {
    const ir_value *v = g->vals[i];
    if ((v->kind == IR_INPUT || v->kind == IR_PARAM || v->kind == IR_STATE) && lr.buf_of[i] >= 0)
      if (bind_leaf(g, v, &p.bufs[lr.buf_of[i]], lr.buf_of[i], e, params, data, err, sizeof err) < 0) goto fail;
  }
  const ir_value *out = g->vals[g->outputs[0]];
  int scalar = out->shape.rank == 0;
  times = calloc((size_t)o->steps + 1, sizeof(double));
  losses = calloc((size_t)o->steps + 1, sizeof(double));
  for (long st = 0; st < o->steps; st++) {
    double t0 = now();
    if (rt_exec_run(e, err, sizeof err) < 0) goto fail;
    times[st] = now() - t0;
    const float *ov = rt_exec_data(e, lr.buf_of[out->id]);
    double l = 0;
    if (scalar) l = ov[0];
    else for (int64_t k = 0; k < ir_nelem(&out->shape); k++) l += ov[k];
    losses[st] = l;
    if (!o->json) printf("step %ld  %s %.6f  (%.3f s)\n", st + 1, scalar ? "loss" : "sum of output", l, times[st]);
    fflush(stdout);
    if (g->train) rt_exec_carry(e);
  }
  if (o->save && save_state(g, &p, &lr, e, o->save, err, sizeof err) < 0) goto fail;
  double med = 0;
  if (o->steps > 0) {
    int first = o->steps > 1 ? 1 : 0;
    qsort(times + first, (size_t)(o->steps - first), sizeof(double), cmp_double);
    med = times[first + (o->steps - first) / 2];
  }
  size_t peak = rt_exec_peak(e);
  if (o->json) {
    json j;
    json_init(&j);
    json_obj(&j);
    json_key(&j, "losses");
    json_arr(&j);
    for (long st = 0; st < o->steps; st++) json_num(&j, losses[st]);
    json_end_arr(&j);
    json_key(&j, "step_time"); json_num(&j, med);
    json_key(&j, "peak_memory"); json_int(&j, (int64_t)peak);
    json_end_obj(&j);
    puts(j.p);
    json_free(&j);
  } else {
    printf("median step %.4f s, peak memory %.1f MiB\n", med, (double)peak / (1 << 20));
    if (o->save) printf("saved parameters%s to %s\n", g->train == TRAIN_ADAM ? " and Adam state" : "", o->save);
  }
  rc = 0;
  goto done;
fail:
  fprintf(stderr, "carve: error: %s\n", err);
done:
  free(times);
  free(losses);
  rt_exec_free(e);
  if (params) st_close(params);
  if (data) st_close(data);
  lower_result_free(&lr);
  rt_prog_free(&p);
  session_free(&s);
  return rc;
}

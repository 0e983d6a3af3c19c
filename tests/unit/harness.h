/*
** harness.h: build a model from text, lower it, bind values by name and
** run it on one device. Shared by the numerical tests (golden values,
** finite differences, training). Header-only so each test binary stays
** one file plus libcarve.a.
*/
#ifndef tests_harness_h
#define tests_harness_h

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/front/build.h"
#include "interp/train/train.h"
#include "interp/lower/lower.h"
#include "lang/cir.h"
#include "runtime/exec.h"
#include "runtime/init.h"

typedef struct hx {
  arena mem;
  diag d;
  ir_graph *g;
  rt_prog p;
  lower_result lr;
  rt_exec *e;
  int lowered;
} hx;

/* A file under the source tree, read whole (malloc'd; the test frees it). */
static inline char *hx_slurp(const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", SRCDIR, rel);
  FILE *f = fopen(path, "rb");
  cr_assert(f, "cannot open %s", path);
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  for (size_t k; (k = fread(buf + n, 1, cap - n - 1, f)) > 0; ) {
    n += k;
    if (n + 1 == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  buf[n] = 0;
  return buf;
}

/* Parse and build; NULL-safe failure reports the diagnostics. */
static inline int hx_build(hx *h, const char *text) {
  memset(h, 0, sizeof *h);
  arena_init(&h->mem);
  diag_init(&h->d);
  const diag_src *src = diag_src_string(&h->mem, "test.cir", text, strlen(text));
  cir_file *f = cir_parse(&h->mem, &h->d, src);
  if (!f) return -1;
  h->g = build_model(f, NULL, &h->d);
  return h->g ? 0 : -1;
}

static inline void hx_free(hx *h) {
  if (h->e) rt_exec_free(h->e);
  if (h->lowered) { lower_result_free(&h->lr); rt_prog_free(&h->p); }
  ir_graph_free(h->g);
  arena_free(&h->mem);
  diag_free(&h->d);
}

/* Mark extra outputs by name (grad.w, ...). */
static inline void hx_output(hx *h, const char *name) {
  ir_value *v = ir_lookup(h->g, name);
  cr_assert(v, "no value named %s", name);
  if (!v->is_output) ir_add_output(h->g, v->id);
}

static inline void hx_lower_opts(hx *h, const lower_opts *o) {
  ir_link(h->g);
  int rc = lower_program_opts(h->g, NULL, o, &h->p, &h->lr, &h->d);
  cr_assert(rc == 0, "lowering failed: %s", diag_text(&h->d) ? diag_text(&h->d) : "");
  h->lowered = 1;
  h->e = rt_exec_new(&h->p, rt_backend_cpu(), NULL);
}

static inline void hx_lower(hx *h) { hx_lower_opts(h, NULL); }

static inline int hx_buf(hx *h, const char *name) {
  ir_value *v = ir_lookup(h->g, name);
  cr_assert(v, "no value named %s", name);
  return h->lr.buf_of[v->id];
}

static inline void hx_set(hx *h, const char *name, const void *data) {
  int b = hx_buf(h, name);
  cr_assert(b >= 0, "%s has no buffer", name);
  char err[256];
  size_t bytes = (size_t)h->p.bufs[b].nelem * rt_dtype_size(h->p.bufs[b].dtype);
  cr_assert(rt_exec_set(h->e, b, data, bytes, err, sizeof err) == 0, "%s", err);
}

/* Every leaf not yet set gets its deterministic init (ids in [0, range)). */
static inline void hx_init_rest(hx *h, int64_t id_range) {
  for (int i = 0; i < h->g->nvals; i++) {
    ir_value *v = h->g->vals[i];
    int b = h->lr.buf_of[i];
    if (v->kind == IR_OP || v->kind == IR_CONST || b < 0 || rt_exec_data(h->e, b)) continue;
    rt_buf *rb = &h->p.bufs[b];
    void *tmp = calloc((size_t)rb->nelem + 1, rt_dtype_size(rb->dtype));
    int64_t off[RT_MAXRANK] = {0};
    rt_init in = {RT_INIT_NORMAL, v->kind == IR_INPUT ? 1.0 : v->init.a, v->init.b, rt_init_seed(v->name)};
    if (v->kind != IR_INPUT && v->init.kind == INIT_ZEROS) in.kind = RT_INIT_ZEROS;
    if (v->kind != IR_INPUT && v->init.kind == INIT_ONES) in.kind = RT_INIT_ONES;
    if (v->kind != IR_INPUT && v->init.kind == INIT_UNIFORM) in.kind = RT_INIT_UNIFORM;
    if (v->dtype == IR_I32) { in.kind = RT_INIT_INTS; in.b = (double)id_range; }
    rt_init_block(&in, rb->dtype, rb->rank, rb->shape, off, rb->shape, tmp, 1);
    hx_set(h, v->name, tmp);
    free(tmp);
  }
}

static inline void hx_run(hx *h) {
  char err[256];
  cr_assert(rt_exec_run(h->e, err, sizeof err) == 0, "run failed: %s", err);
}

static inline float *hx_get(hx *h, const char *name) {
  int b = hx_buf(h, name);
  cr_assert(b >= 0, "%s has no buffer", name);
  float *p = rt_exec_data(h->e, b);
  cr_assert(p, "%s has no data", name);
  return p;
}

static inline int64_t hx_nelem(hx *h, const char *name) {
  ir_value *v = ir_lookup(h->g, name);
  return ir_nelem(&v->shape);
}

/* max |a - b| / max(floor, |b|), where the floor is at least 1% of the
** largest |b|: float32 results of values computed by cancellation (gelu of
** a negative input) cannot be relatively exact where they are tiny. */
static inline double hx_relerr(const float *a, const float *b, int64_t n, double floor_) {
  double worst = 0, big = 0;
  for (int64_t i = 0; i < n; i++) big = fmax(big, fabs((double)b[i]));
  floor_ = fmax(floor_, 0.01 * big);
  for (int64_t i = 0; i < n; i++) {
    double den = fabs((double)b[i]) > floor_ ? fabs((double)b[i]) : floor_;
    double e = fabs((double)a[i] - (double)b[i]) / den;
    if (e > worst || isnan(e)) worst = isnan(e) ? INFINITY : e;
  }
  return worst;
}

/* ||a - b|| / ||b||: the relative error of a whole tensor */
static inline double hx_normerr(const float *a, const float *b, int64_t n) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = (double)a[i] - (double)b[i];
    num += d * d;
    den += (double)b[i] * (double)b[i];
  }
  if (isnan(num)) return INFINITY;
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* the same for doubles */
static inline double hx_normerr_d(const double *a, const double *b, int64_t n) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < n; i++) { num += (a[i] - b[i]) * (a[i] - b[i]); den += b[i] * b[i]; }
  if (isnan(num)) return INFINITY;
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

#endif

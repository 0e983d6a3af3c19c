/* fuzz_diff.c: differential. The input bytes choose a small model and a
** plan on a 2-device mesh; the partitioned program runs on 2 in-process
** devices (threads, runtime/comm_local.c, as tests/unit/test_partition.c
** does) and must equal the one-device program: the loss, after a
** training step each parameter's update, and with every value kept
** (lower_opts.keep_values, as bisection lowers) every value of the step.
** A relative error beyond 1e-4 (of the norm of the whole tensor, against
** a floor for tensors near zero) is a finding, unless the same model in
** f64 on one device shows it to be f32's rounding: the partitioned value
** no further from the f64 one than 4 times the one-device value is (a
** gradient that cancels to nothing but its rounding, as a layer norm's
** bias under a log_softmax over a dim its gradient sums over); a plan
** carve refuses (with a located error) is fine.
**
** The bytes: a mode byte (bit 0 a training step with SGD, bit 1 every value
** kept, bits 2-3 zero: the model is tests/unit/randmodel.h's random model
** drawn from the next 8 bytes, smooth ops only, else this file's own), then
** the model's choices, then the plan's; bit 4 a pipeline plan instead (2
** stages on a, 1-4 microbatches, GPipe, 1F1B, interleaved or zero-bubble: refused where
** the batch does not divide or the program cannot be cut); bit 5 the axis
** deals its pieces zig-zag (the stdlib's context first, so every split on
** a keeps that order: refused where a dim does not halve). Bytes past the
** end read as 0.
** The model's own: 1-8 ops among add, sub, mul and div (of two values, or
** of a value and a literal, either side: a partial sum beside a complete
** value or a literal), matmul (a partial sum when its contraction is
** split; a vector broadcast to a matrix first), sum and mean over a dim, relu and gelu, a bias added, reshape;
** last, a value times a new parameter (a step always trains one); the
** loss sums the mean squares of the values no op reads. The plan: 1-4
** statements, each a split (now and then a replicate) of a parameter or
** an input (now and then an op's result) on axis a. */
#include "fuzz.h"
#include "interp/drive/drive.h"
#include "interp/front/build.h"
#include "interp/tactic/tactic.h"
#include "interp/train/train.h"
#include "lang/cir.h"
#include "runtime/comm_local.h"
#include "tests/unit/randmodel.h"

#include <math.h>

#define TOL 1e-4
#define LR 0.1

/* ---- the bytes ---- */

typedef struct bytes { const uint8_t *p; size_t n, i; } bytes;

static unsigned take(bytes *b, unsigned n) {       /* a choice among n (0 when the bytes ran out) */
  unsigned x = b->i < b->n ? b->p[b->i++] : 0;
  return n ? x % n : 0;
}

/* ---- the model ---- */

typedef struct val { char name[12]; int rank; int64_t d[3]; } val;
typedef struct gen { bytes *b; strbuf decl, body; val v[48]; int nv, nleaf; char used[48]; } gen;

static int64_t dim(gen *g) { static const int64_t ds[] = {2, 4, 8, 4, 2, 6, 8, 3}; return ds[take(g->b, 8)]; }

static void shape_text(char *out, size_t n, int rank, const int64_t *d) {
  size_t k = (size_t)snprintf(out, n, "[");
  for (int i = 0; i < rank; i++) k += (size_t)snprintf(out + k, n - k, "%s%lld", i ? ", " : "", (long long)d[i]);
  snprintf(out + k, n - k, "]");
}

static int leaf(gen *g, int rank, const int64_t *d, int param) {     /* param < 0: either */
  if (param < 0) param = take(g->b, 3) != 0;
  val *v = &g->v[g->nv];
  snprintf(v->name, sizeof v->name, "%c%d", param ? 'w' : 'x', g->nleaf++);
  v->rank = rank;
  memcpy(v->d, d, sizeof(int64_t) * (size_t)rank);
  char s[64];
  shape_text(s, sizeof s, rank, d);
  sb_printf(&g->decl, "  %s %s : f32%s%s\n", param ? "param" : "input", v->name, s, param ? " = normal(0.5)" : "");
  return g->nv++;
}

static int same(const val *v, int rank, const int64_t *d) {
  if (v->rank != rank) return 0;
  for (int i = 0; i < rank; i++) if (v->d[i] != d[i]) return 0;
  return 1;
}

/* One of the last values of that shape (d NULL: of any rank >= 1), or a new leaf. */
static int get(gen *g, int rank, const int64_t *d) {
  int cand[4], n = 0;
  for (int i = g->nv - 1; i >= 0 && n < 4; i--) if (d ? same(&g->v[i], rank, d) : 1) cand[n++] = i;
  unsigned k = take(g->b, (unsigned)n + 1);
  if (k < (unsigned)n) return cand[k];
  if (d) return leaf(g, rank, d, -1);
  int64_t x[3];
  rank = 1 + (int)take(g->b, 3);
  for (int i = 0; i < rank; i++) x[i] = dim(g);
  return leaf(g, rank, x, -1);
}

static int emit(gen *g, int rank, const int64_t *d, int a, int b, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int emit(gen *g, int rank, const int64_t *d, int a, int b, const char *fmt, ...) {
  val *v = &g->v[g->nv];
  snprintf(v->name, sizeof v->name, "v%d", g->nv);
  v->rank = rank;
  memcpy(v->d, d, sizeof(int64_t) * (size_t)rank);
  char text[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  sb_printf(&g->body, "  %s = %s\n", v->name, text);
  g->used[a] = 1;
  if (b >= 0) g->used[b] = 1;
  return g->nv++;
}

#define NM(i) g->v[i].name

static void step(gen *g) {
  static const char *const lits[] = {"0.5", "1.0", "2.0", "-1.5", "3.0", "0.25"};
  static const char *const ew[] = {"add", "sub", "mul"};
  int a = get(g, 0, NULL), b;
  const val *x = &g->v[a];
  int64_t d[3];
  memcpy(d, x->d, sizeof d);
  switch (take(g->b, 10)) {
  case 0:                                   /* two values */
    b = get(g, x->rank, x->d);
    emit(g, x->rank, x->d, a, b, "%s(%s, %s)", ew[take(g->b, 3)], NM(a), NM(b));
    return;
  case 1: {                                 /* a value and a literal, either side */
    const char *l = lits[take(g->b, 6)];
    unsigned k = take(g->b, 4);
    if (k == 3) emit(g, x->rank, x->d, a, -1, "div(%s, %s)", NM(a), l);
    else if (take(g->b, 2)) emit(g, x->rank, x->d, a, -1, "%s(%s, %s)", ew[k], NM(a), l);
    else emit(g, x->rank, x->d, a, -1, "%s(%s, %s)", ew[k], l, NM(a));
    return;
  }
  case 2:                                   /* a / (b b + 1) */
    b = get(g, x->rank, x->d);
    emit(g, x->rank, x->d, a, b, "div(%s, add(mul(%s, %s), 1.0))", NM(a), NM(b), NM(b));
    return;
  case 3: case 4: {                         /* [.., k] x [k, n] (a vector broadcast to [m, k] first) */
    if (x->rank == 1) {
      int64_t m[2] = {dim(g), x->d[0]};
      char s[64];
      shape_text(s, sizeof s, 2, m);
      a = emit(g, 2, m, a, -1, "broadcast(%s, %s)", NM(a), s);
      x = &g->v[a];
      memcpy(d, x->d, sizeof d);
    }
    int64_t w[2] = {x->d[x->rank - 1], dim(g)};
    b = get(g, 2, w);
    d[x->rank - 1] = w[1];
    emit(g, x->rank, d, a, b, "matmul(%s, %s)", NM(a), NM(b));
    return;
  }
  case 5: {                                 /* sum or mean over one dim */
    int k = (int)take(g->b, (unsigned)x->rank), keep = x->rank == 1 || take(g->b, 3) == 0, n = 0;
    for (int i = 0; i < x->rank; i++) if (i != k) d[n++] = x->d[i]; else if (keep) d[n++] = 1;
    emit(g, n, d, a, -1, "%s(%s, dims = [%d]%s)", take(g->b, 2) ? "sum" : "mean", NM(a), k, keep ? ", keepdims = true" : "");
    return;
  }
  case 6:
    emit(g, x->rank, x->d, a, -1, "%s(%s)", take(g->b, 2) ? "relu" : "gelu", NM(a));
    return;
  case 7: {                                 /* a bias over the last dim */
    b = get(g, 1, x->d + x->rank - 1);
    emit(g, x->rank, x->d, a, b, "%s(%s, %s)", take(g->b, 2) ? "add" : "mul", NM(a), NM(b));
    return;
  }
  case 8: {                                 /* two dims merged, or one split in two */
    int n = 0;
    if (x->rank >= 2 && take(g->b, 2)) {
      int i = (int)take(g->b, (unsigned)x->rank - 1);
      for (int j = 0; j < x->rank; j++) { if (j == i) { d[n++] = x->d[j] * x->d[j + 1]; j++; } else d[n++] = x->d[j]; }
    } else {
      int i = (int)take(g->b, (unsigned)x->rank);
      for (int j = 0; j < x->rank; j++) {
        if (j == i && x->rank < 3 && x->d[j] % 2 == 0 && x->d[j] > 2) { d[n++] = 2; d[n++] = x->d[j] / 2; }
        else d[n++] = x->d[j];
      }
    }
    char s[64];
    shape_text(s, sizeof s, n, d);
    emit(g, n, d, a, -1, "reshape(%s, %s)", NM(a), s);
    return;
  }
  default:                                  /* a value times a new leaf */
    b = leaf(g, x->rank, x->d, -1);
    emit(g, x->rank, x->d, a, b, "mul(%s, %s)", NM(a), NM(b));
    return;
  }
}

/* The model's text (malloc'd). */
static char *own_model(bytes *b) {
  gen *g = calloc(1, sizeof *g);
  g->b = b;
  sb_init(&g->decl);
  sb_init(&g->body);
  int ops = 1 + (int)take(b, 8);
  for (int i = 0; i < ops; i++) step(g);
  int a = get(g, 0, NULL), w = leaf(g, g->v[a].rank, g->v[a].d, 1);   /* last, a parameter to train */
  emit(g, g->v[a].rank, g->v[a].d, a, w, "mul(%s, %s)", g->v[a].name, g->v[w].name);
  strbuf m;
  sb_init(&m);
  sb_printf(&m, "model diff {\n%s%s  loss = ", sb_str(&g->decl), sb_str(&g->body));
  int k = 0;
  for (int i = 0; i < g->nv; i++)
    if (!g->used[i] && g->v[i].name[0] == 'v') sb_printf(&m, "add(");
  for (int i = 0; i < g->nv; i++) {
    if (g->used[i] || g->v[i].name[0] != 'v') continue;
    char term[64];
    snprintf(term, sizeof term, "mean(mul(%s, %s))", NM(i), NM(i));
    sb_printf(&m, k++ == 0 ? "%s" : ", %s)", term);
  }
  sb_printf(&m, ", 0.0)\n  return loss\n}\n");
  char *s = strdup(sb_str(&m));
  sb_free(&m);
  sb_free(&g->decl);
  sb_free(&g->body);
  free(g);
  return s;
}
#undef NM

/* ---- the plan ---- */

static char *plan_text(const ir_graph *g, bytes *b, int pipeline, int zigzag) {
  strbuf t;
  sb_init(&t);
  if (pipeline) {                             /* two stages, the batch (every input's first dim) in microbatches or whole */
    unsigned m = 1 + take(b, 4), order = take(b, 4);
    static const char *const orders[] = {"1f1b", "gpipe", "interleaved", "zb-h1"};
    sb_printf(&t, "version 1\nmesh a = 2\nuse \"pipeline\" as pp (axis = a, microbatches = %u, order = \"%s\")\nschedule pp\n", m,
              orders[order]);
    char *s = strdup(sb_str(&t));
    sb_free(&t);
    return s;
  }
  sb_puts(&t, zigzag ? "version 1\nmesh a = 2\nuse \"context\" as cp (axis = a)\ntactic t {\n" : "version 1\nmesh a = 2\ntactic t {\n");
  int n = 1 + (int)take(b, 4);
  for (int s = 0; s < n; s++) {
    int want = take(b, 6) == 0 ? IR_OP : -1, cand[64], nc = 0;
    for (int v = 0; v < g->nvals && nc < 64; v++) {
      const ir_value *x = g->vals[v];
      if (x->shape.rank == 0 || !x->name || x->name[0] == 0) continue;
      if (want == IR_OP ? x->kind == IR_OP && x->name[0] == 'v' && !strchr(x->name, '.') : x->kind == IR_PARAM || x->kind == IR_INPUT)
        cand[nc++] = v;
    }
    if (!nc) continue;
    const ir_value *x = g->vals[cand[take(b, (unsigned)nc)]];
    const char *kind = x->kind == IR_PARAM ? "param" : x->kind == IR_INPUT ? "input" : "value";
    if (take(b, 8) == 0) sb_printf(&t, "  replicate %s \"%s\" on a\n", kind, x->name);
    else sb_printf(&t, "  shard %s \"%s\" dim %d on a\n", kind, x->name, (int)take(b, (unsigned)x->shape.rank));
  }
  sb_puts(&t, zigzag ? "}\nschedule cp, t\n" : "}\nschedule t\n");
  char *s = strdup(sb_str(&t));
  sb_free(&t);
  return s;
}

/* ---- running ---- */

typedef struct run {
  const ir_graph *g;
  rt_prog p;
  lower_result lr;
  rt_local *l;              /* NULL: one device */
  int keep, train, soft;     /* soft: a run that fails says so (the f64 reference), not a finding */
  double loss;
  void **before;            /* one device: each parameter before the step */
  void **after;             /* device 0: each compared value after it */
  char err[2][256];
} run;

/* Is value v compared: a parameter after the step, every kept f32 value
** (f64 in the reference a would-be finding is measured against). */
static int compared(const run *r, int v) {
  const ir_value *x = r->g->vals[v];
  int b = r->lr.buf_of[v];
  if (b < 0 || (r->p.bufs[b].dtype != RT_F32 && r->p.bufs[b].dtype != RT_F64)) return 0;
  if (x->kind == IR_PARAM || x->kind == IR_STATE) return r->train;
  return r->keep && x->kind == IR_OP && r->p.bufs[b].kind == RT_BUF_OUTPUT;
}

static int device(int dev, void *arg) {
  run *r = arg;
  drive dr;
  drive_adopt(&dr, &r->p, &r->lr, NULL);
  dr.g = r->g;                               /* the leaves bind from the IR's inits */
  const rt_world *w = r->l ? rt_local_world(r->l, dev) : rt_world_single();
  char *err = r->err[dev], why[256];
  int rc = drive_start(&dr, rt_backend_cpu(), r->l ? rt_local_comm(r->l, dev) : NULL, w, NULL, NULL, why, sizeof why);
  if (w->agree(w->impl, rc, rc ? why : "", err, sizeof r->err[dev]) < 0) { drive_free(&dr); return -1; }
  for (int v = 0; v < r->g->nvals && rc == 0 && !r->l; v++)
    if (r->train && r->g->vals[v]->kind == IR_PARAM && compared(r, v)) rc = drive_gather(&dr, v, &r->before[v], err, sizeof r->err[dev]);
  double loss = 0;
  if (rc == 0) rc = drive_step(&dr, &loss, err, sizeof r->err[dev]);
  if (dev == 0) r->loss = loss;
  for (int v = 0; v < r->g->nvals && rc == 0; v++) {
    if (!compared(r, v)) continue;
    void *full;
    rc = drive_gather(&dr, v, &full, err, sizeof r->err[dev]);
    if (dev == 0) r->after[v] = full;
    else free(full);
  }
  drive_free(&dr);
  return rc;
}

/* Lower (plan NULL: one device) and run; 0, or -1 with a located error in d
** (lowering refused), or aborts when a run fails. */
static int lower_run(run *r, const ir_graph *g, const sh_plan *plan, int keep, int train, diag *d) {
  int soft = r->soft;
  memset(r, 0, sizeof *r);
  r->soft = soft;
  r->g = g;
  r->keep = keep;
  r->train = train;
  lower_opts lo = {0};
  lo.keep_values = keep;
  if (lower_program_opts(g, plan, &lo, &r->p, &r->lr, d) < 0) return -1;
  r->before = calloc((size_t)g->nvals + 1, sizeof(void *));
  r->after = calloc((size_t)g->nvals + 1, sizeof(void *));
  int rc;
  if (plan) {
    r->l = rt_local_new(&r->p);
    fuzz_check(r->l && rt_local_devices(r->l) == 2, "no in-process mesh of 2 devices", NULL);
    rc = rt_local_run(r->l, device, r);
    rt_local_free(r->l);
  } else {
    rc = device(0, r);
  }
  if (rc && r->soft) return -1;
  if (rc) {
    fprintf(stderr, "fuzz finding: the %s program does not run: %s%s\n", plan ? "partitioned" : "one-device", r->err[0],
            r->err[1][0] ? r->err[1] : "");
    abort();
  }
  return 0;
}

static void run_free(run *r) {
  for (int v = 0; r->before && v < r->g->nvals; v++) { free(r->before[v]); free(r->after[v]); }
  free(r->before);
  free(r->after);
  lower_result_free(&r->lr);
  rt_prog_free(&r->p);
}

/* ||a - b|| / max(||b - base||, floor) (base NULL: 0), and whether b is all finite. */
static double rel(const float *a, const float *b, const float *base, int64_t n, double floor_, int *finite) {
  double num = 0, den = 0;
  *finite = 1;
  for (int64_t k = 0; k < n; k++) {
    if (!isfinite(b[k])) { *finite = 0; return 0; }
    double e = (double)a[k] - b[k], s = (double)b[k] - (base ? base[k] : 0);
    num += e * e;
    den += s * s;
  }
  if (!(num == num)) return INFINITY;
  return sqrt(num) / fmax(sqrt(den), floor_);
}

/* The same model in f64 on one device, each compared value rounded to f32
** and matched by name to g32's values (NULL where it has none); NULL when
** it does not build or run. */
static float **exact(const char *model, int keep, int train, const ir_graph *g32) {
  char *m64 = strdup(model);
  for (char *q = strstr(m64, "f32["); q; q = strstr(q, "f32[")) q[2] = '4', q[1] = '6';
  arena a;
  arena_init(&a);
  diag d;
  diag_init(&d);
  float **out = NULL;
  train_spec ts;
  cir_file *f = cir_parse(&a, &d, diag_src_string(&a, "diff64.cir", m64, strlen(m64)));
  ir_graph *g = f ? build_model(f, NULL, &d) : NULL;
  if (g && (!train || (train_parse(&a, "sgd(lr = 0.1)", &ts, &d) == 0 && train_build(g, &ts, &d) == 0))) {
    ir_link(g);
    run r = {0};
    r.soft = 1;
    if (lower_run(&r, g, NULL, keep, train, &d) == 0) {
      out = calloc((size_t)g32->nvals + 1, sizeof *out);
      for (int v = 0; v < g32->nvals; v++) {
        const ir_value *x = g32->vals[v], *y = x->name ? ir_lookup(g, x->name) : NULL;
        if (!y || !r.after[y->id] || ir_nelem(&y->shape) != ir_nelem(&x->shape)) continue;
        int64_t n = ir_nelem(&x->shape);
        out[v] = malloc(sizeof(float) * (size_t)(n + 1));
        for (int64_t k = 0; k < n; k++) out[v][k] = (float)((const double *)r.after[y->id])[k];
      }
    }
    run_free(&r);
  }
  if (g) ir_graph_free(g);
  diag_free(&d);
  arena_free(&a);
  free(m64);
  return out;
}

/* ||two - one|| of value v measured as the finding is, and ||one - exact||
** and ||two - exact|| likewise: a difference that f32's own rounding makes
** (a gradient that cancels to nothing but its rounding) leaves the
** partitioned run about as near the exact one as the one-device run is. */
static double measure(const run *one, int v, const float *a, const float *b, int *finite) {
  int64_t n = ir_nelem(&one->g->vals[v]->shape);
  const float *base = one->before[v];
  double floor_ = 1e-2 * sqrt((double)n);   /* a tensor near zero: measured against 0.01 an element */
  if (base) {                                /* a parameter: its update, against 1% of the parameter */
    double norm = 0;
    for (int64_t k = 0; k < n; k++) norm += (double)base[k] * base[k];
    floor_ = 1e-2 * sqrt(norm);
  }
  return rel(a, b, base, n, floor_, finite);
}

static void compare(const run *one, const run *two, const char *model, const char *tac) {
  const ir_graph *g = one->g;
  if (!isfinite(one->loss) || fabs(one->loss) > 1e6) return;     /* blown up on one device: nothing to compare */
  double e = fabs(two->loss - one->loss) / fmax(fabs(one->loss), 1e-6);
  const char *what = NULL;
  if (!(e <= TOL)) what = "the loss";
  float **ref = NULL;
  int have_ref = 0;
  for (int v = 0; v < g->nvals && !what; v++) {
    const float *a = two->after[v], *b = one->after[v];
    if (!a || !b) continue;
    int finite;
    e = measure(one, v, a, b, &finite);
    if (!finite || e <= TOL) continue;
    if (!have_ref) { ref = exact(model, one->keep, one->train, g); have_ref = 1; }
    int f1, f2;
    double e1 = ref && ref[v] ? measure(one, v, b, ref[v], &f1) : -1, e2 = ref && ref[v] ? measure(one, v, a, ref[v], &f2) : -1;
    if (getenv("FUZZ_DIFF_VERBOSE"))
      fprintf(stderr, "%s: %g from one device; against f64, one device %g, two %g\n", g->vals[v]->name, e, e1, e2);
    if (e1 >= 0 && f1 && f2 && e2 <= 4 * e1 + TOL) continue;   /* rounding: as near the exact values as one device's */
    what = g->vals[v]->name;
  }
  for (int v = 0; ref && v < g->nvals; v++) free(ref[v]);
  free(ref);
  if (!what) return;
  fprintf(stderr, "fuzz finding: %s differs from one device's by %g (loss %.9g on 2 devices, %.9g on one)\n%s%s", what, e,
          two->loss, one->loss, model, tac);
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bytes b = {data, size, 0};
  unsigned mode = take(&b, 256);
  int train = mode & 1, keep = (mode >> 1) & 1;
  char *model;
  if (((mode >> 2) & 3) == 0) {                /* randmodel.h's, its generator seeded from 8 bytes */
    rng = 0;
    for (int k = 0; k < 8; k++) rng = rng << 8 | take(&b, 256);
    if (!rng) rng = 1;                         /* xorshift stays at 0 */
    rm_smooth = 1;
    model = random_model();
  } else {
    model = own_model(&b);
  }
  arena a;
  arena_init(&a);
  diag d;
  diag_init(&d);
  static const char *const names[] = {"diff.cir", "diff.tac"};
  char *tac = NULL;
  cir_file *f = cir_parse(&a, &d, diag_src_string(&a, "diff.cir", model, strlen(model)));
  ir_graph *g = f ? build_model(f, NULL, &d) : NULL;
  train_spec ts;
  fuzz_check(g != NULL, "the generated model does not build", &d);
  fuzz_check(!train || (train_parse(&a, "sgd(lr = 0.1)", &ts, &d) == 0 && train_build(g, &ts, &d) == 0), "no training step", &d);
  diag_clear(&d);                              /* the model's warnings (a parameter the loss does not reach) */
  tac = plan_text(g, &b, (mode >> 4) & 1, (mode >> 5) & 1);
  tac_file *tf = tac_parse(&a, &d, diag_src_string(&a, "diff.tac", tac, strlen(tac)));
  fuzz_check(tf != NULL, "the generated tactic file does not parse", &d);
  tactic_opts o = {0};
  o.stdlib_dir = SRCDIR "/stdlib-tactics";     /* (the pipeline plans use the stdlib's) */
  sh_plan *p = tactic_apply(g, tf, &o, &a, &d);
  int verbose = getenv("FUZZ_DIFF_VERBOSE") != NULL;   /* what an input makes: FUZZ_DIFF_VERBOSE=1 fuzz_diff FILE */
  if (verbose) fprintf(stderr, "%s%s(mode: %s%s%s)\n%s\n", model, tac, train ? "sgd" : "forward", keep ? ", every value kept" : "",
                       ((mode >> 2) & 3) ? "" : ", randmodel.h", p ? "applied" : diag_text(&d));
  if (!p) fuzz_failed_well(&d, names, 2);      /* refused: fine, with its place */
  else {
    ir_link(g);
    run one, two;
    if (lower_run(&one, g, NULL, keep, train, &d) < 0) fuzz_failed_well(&d, names, 2);
    else {
      if (lower_run(&two, g, p, keep, train, &d) < 0) fuzz_failed_well(&d, names, 2);
      else {
        if (verbose) fprintf(stderr, "loss %.9g on one device, %.9g on two\n", one.loss, two.loss);
        compare(&one, &two, model, tac);
        run_free(&two);
      }
      run_free(&one);
    }
    shard_free(p);
  }
  ir_graph_free(g);
  diag_free(&d);
  arena_free(&a);
  free(tac);
  free(model);
  return 0;
}

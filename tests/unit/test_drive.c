/*
** test_drive.c: the drive library runs a partitioned training step on an
** in-process mesh (one thread a device), without the command line: every
** device agrees on the losses, --check's comparison with the one-device
** program finds float rounding only, and the saved file equals the one a
** single device saves.
*/
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "interp/drive/drive.h"
#include "interp/drive/session.h"
#include "interp/lower/lower.h"
#include "runtime/comm_local.h"
#include "runtime/safet.h"

#define STEPS 3

typedef struct mesh_run {
  const session *s;
  const drive *first;       /* device 0's program: the mesh and groups */
  rt_local *l;
  double loss[8][STEPS];
  double worst;
  const char *save;
  char err[8][256];
} mesh_run;

static int device(int dev, void *arg) {
  mesh_run *m = arg;
  drive r;
  diag d;
  diag_init(&d);
  int rc = drive_lower(&r, m->s->g, m->s->plan, &d);
  diag_free(&d);
  if (rc == 0) rc = drive_start(&r, rt_backend_cpu(), rt_local_comm(m->l, dev), rt_local_world(m->l, dev), NULL, NULL, m->err[dev], sizeof m->err[dev]);
  for (int s = 0; s < STEPS && rc == 0; s++) rc = drive_step(&r, &m->loss[dev][s], m->err[dev], sizeof m->err[dev]);
  drive_compared c = {.worst = -1};
  if (rc == 0) rc = drive_check(&r, NULL, NULL, m->loss[dev], STEPS, NULL, &c, m->err[dev], sizeof m->err[dev]);
  if (dev == 0) m->worst = c.worst;
  if (rc == 0 && m->save) rc = drive_save(&r, m->save, m->err[dev], sizeof m->err[dev]);
  drive_free(&r);
  return rc;
}

static void load(session *s, const char *tac) {
  session_init(s);
  char model[512], tactics[512];
  snprintf(model, sizeof model, "%s/examples/gpt2_small.cir", SRCDIR);
  snprintf(tactics, sizeof tactics, "%s/examples/%s", SRCDIR, tac);
  session_opts o = {model, NULL, "adam(lr = 1e-3)", tac ? tactics : NULL, {0}};
  cr_assert(session_load(s, &o) == 0, "%s", diag_text(&s->diag));
}

/* One device through the same library: the reference losses and file. */
static void single(double *loss, const char *save) {
  session s;
  load(&s, NULL);
  drive r;
  char err[256];
  diag d;
  diag_init(&d);
  cr_assert(drive_lower(&r, s.g, NULL, &d) == 0, "%s", diag_text(&d));
  diag_free(&d);
  cr_assert(drive_start(&r, rt_backend_cpu(), NULL, rt_world_single(), NULL, NULL, err, sizeof err) == 0, "%s", err);
  for (int st = 0; st < STEPS; st++) cr_assert(drive_step(&r, &loss[st], err, sizeof err) == 0, "%s", err);
  cr_assert(drive_save(&r, save, err, sizeof err) == 0, "%s", err);
  drive_free(&r);
  session_free(&s);
}

static void run_mesh(const char *tac, double *one_loss, const char *one_file) {
  session s;
  load(&s, tac);
  mesh_run m = {0};
  m.s = &s;
  drive first;
  diag d;
  diag_init(&d);
  cr_assert(drive_lower(&first, s.g, s.plan, &d) == 0, "%s", diag_text(&d));
  diag_free(&d);
  m.l = rt_local_new(&first.prog);
  cr_assert(m.l);
  char path[] = "/tmp/carve_drive_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  close(fd);
  m.save = path;
  int ndev = rt_local_devices(m.l);
  int rc = rt_local_run(m.l, device, &m);
  for (int i = 0; i < ndev; i++) cr_assert(rc == 0 && !m.err[i][0], "device %d: %s", i, m.err[i]);
  for (int st = 0; st < STEPS; st++) {
    for (int i = 1; i < ndev; i++) cr_assert_eq(m.loss[i][st], m.loss[0][st], "devices disagree on the loss of step %d", st + 1);
    cr_assert(fabs(m.loss[0][st] - one_loss[st]) <= 1e-5 * fabs(one_loss[st]), "step %d: %g vs one device %g", st + 1, m.loss[0][st], one_loss[st]);
  }
  cr_assert(m.worst >= 0 && m.worst < 1e-5, "--check's comparison: %g", m.worst);
  /* the file saved from the mesh holds the one-device tensors */
  char e1[256], e2[256];
  st_file *a = st_open(path, e1, sizeof e1), *b = st_open(one_file, e2, sizeof e2);
  cr_assert(a && b, "%s %s", e1, e2);
  cr_assert_eq(st_count(a), st_count(b));
  for (int i = 0; i < st_count(b); i++) {
    const st_tensor *tb = st_at(b, i), *ta = st_find(a, tb->name);
    cr_assert(ta && ta->nbytes == tb->nbytes, "'%s' missing or resized", tb->name);
    const float *x = (const float *)ta->data, *y = (const float *)tb->data;
    double num = 0, den = 0;
    for (size_t k = 0; k < tb->nbytes / 4; k++) { num += (x[k] - y[k]) * (double)(x[k] - y[k]); den += (double)y[k] * y[k]; }
    cr_assert(sqrt(num) <= 1e-5 * (sqrt(den) + 1e-30), "'%s' differs: %g", tb->name, sqrt(num / (den > 0 ? den : 1)));
  }
  st_close(a);
  st_close(b);
  unlink(path);
  rt_local_free(m.l);
  drive_free(&first);
  session_free(&s);
}

Test(drive, partitioned_steps_on_the_in_process_mesh) {
  double one[STEPS];
  char path[] = "/tmp/carve_drive_one_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  close(fd);
  single(one, path);
  cr_assert(one[2] < one[0], "the loss falls: %g -> %g", one[0], one[2]);
  run_mesh("gpt2_small_bp_mp.tac", one, path);      /* batch x model, Megatron */
  run_mesh("gpt2_small.tac", one, path);            /* + ZeRO-3 + embedding split */
  unlink(path);
}

/* losses of `steps` steps of a model (examples/gpt2_small.cir: NULL) under train, lowered with o, on one device */
static void losses_of(const char *path, const char *train, const lower_opts *o, double *loss, int steps) {
  session s;
  session_init(&s);
  char model[512];
  snprintf(model, sizeof model, "%s", path ? path : SRCDIR "/examples/gpt2_small.cir");
  session_opts so = {model, NULL, train, NULL, {0}};
  cr_assert(session_load(&s, &so) == 0, "%s", diag_text(&s.diag));
  drive r;
  char err[256];
  diag d;
  diag_init(&d);
  cr_assert(drive_lower_opts(&r, s.g, NULL, o, &d) == 0, "%s", diag_text(&d));
  diag_free(&d);
  cr_assert(drive_start(&r, rt_backend_cpu(), NULL, rt_world_single(), NULL, NULL, err, sizeof err) == 0, "%s", err);
  for (int st = 0; st < steps; st++) cr_assert(drive_step(&r, &loss[st], err, sizeof err) == 0, "%s", err);
  drive_free(&r);
  session_free(&s);
}

/* --check's f32 twin of a low-precision step (lower_opts.widen) computes
** what the same step computes in f32: the losses of the bf16 and f16
** steps widened equal the f32 step's to f32 rounding, while the steps run
** as declared are off by their precision's rounding. */
Test(drive, a_widened_low_precision_step_computes_in_f32) {
  enum { N = 3 };
  double f32[N], low[N], wide[N];
  lower_opts w = {0};
  w.widen = 1;
  losses_of(NULL, "adam(lr = 1e-3)", NULL, f32, N);
  const char *low_steps[] = {"adam(lr = 1e-3, precision = bf16)", "adam(lr = 1e-3, precision = f16)"};
  for (int k = 0; k < 2; k++) {
    losses_of(NULL, low_steps[k], NULL, low, N);
    losses_of(NULL, low_steps[k], &w, wide, N);
    double off = 0;
    for (int st = 0; st < N; st++) {
      cr_assert(fabs(wide[st] - f32[st]) <= 1e-7 * fabs(f32[st]), "%s widened, step %d: %.9g, f32 %.9g", low_steps[k], st + 1, wide[st], f32[st]);
      off = fmax(off, fabs(low[st] - f32[st]) / fabs(f32[st]));
    }
    cr_assert(off > 1e-6, "%s as declared rounds nothing: %g from f32", low_steps[k], off);
  }
}

/* A model declared in bf16 (parameters and inputs too): widened, it is the
** same model declared in f32, loss for loss (the same init, read in f32). */
Test(drive, a_widened_bf16_model_is_the_f32_model) {
  enum { N = 3 };
  double f32[N], wide[N];
  lower_opts w = {0};
  w.widen = 1;
  char *text = hx_slurp("tests/data/bf16_params.cir"), *p;
  while ((p = strstr(text, "bf16["))) memcpy(p, " f32[", 5);
  char path[] = "/tmp/carve_f32_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text) && close(fd) == 0);
  free(text);
  losses_of(path, "adam(lr = 1e-2)", NULL, f32, N);
  unlink(path);
  losses_of(SRCDIR "/tests/data/bf16_params.cir", "adam(lr = 1e-2)", &w, wide, N);
  for (int st = 0; st < N; st++) cr_assert(wide[st] == f32[st], "step %d: widened %.9g, f32 %.9g", st + 1, wide[st], f32[st]);
  cr_assert(f32[N - 1] < f32[0], "the loss falls: %g -> %g", f32[0], f32[N - 1]);
}

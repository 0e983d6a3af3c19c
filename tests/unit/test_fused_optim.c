/*
** test_fused_optim.c: the optimizer updates lowered as one instruction per
** parameter (RT_ADAM, RT_SGD) train exactly as the value-by-value IR does:
** parameters after three steps agree to 1e-6, on the GPT and the MLP, for
** SGD, SGD with momentum and weight decay, Adam with weight decay and
** AdamW; and
** the partitioned programs (ZeRO included) still fuse.
*/
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/drive/drive.h"
#include "interp/drive/session.h"
#include "runtime/plan.h"

#define STEPS 3

static void load(session *s, const char *model, const char *train, const char *tac) {
  char mp[512], tp[512];
  snprintf(mp, sizeof mp, "%s/examples/%s", SRCDIR, model);
  snprintf(tp, sizeof tp, "%s/examples/%s", SRCDIR, tac ? tac : "");
  session_init(s);
  session_opts o = {mp, NULL, train, tac ? tp : NULL, {0}};
  cr_assert(session_load(s, &o) == 0, "%s", diag_text(&s->diag));
}

static int count_op(const rt_prog *p, rt_op op) {
  int n = 0;
  for (int i = 0; i < p->ninstrs; i++) n += p->instrs[i].op == op;
  return n;
}

static int nparams(const ir_graph *g) {
  int n = 0;
  for (int i = 0; i < g->nvals; i++) n += g->vals[i]->kind == IR_PARAM;
  return n;
}

/* every parameter after STEPS steps, lowered with or without fusion (malloc'd, in value order) */
static float **train_opts(const session *s, const lower_opts *lo, int *nfused, size_t *block) {
  drive r;
  diag d;
  diag_init(&d);
  cr_assert(drive_lower_opts(&r, s->g, NULL, lo, &d) == 0, "%s", diag_text(&d));
  if (block) {
    rt_memplan m;
    rt_memplan_make(&r.prog, &m);
    *block = m.block;
    rt_memplan_free(&m);
  }
  diag_free(&d);
  *nfused = count_op(&r.prog, RT_ADAM) + count_op(&r.prog, RT_SGD);
  char err[256];
  cr_assert(drive_start(&r, rt_backend_cpu(), NULL, rt_world_single(), NULL, NULL, err, sizeof err) == 0, "%s", err);
  for (int st = 0; st < STEPS; st++) {
    double loss;
    cr_assert(drive_step(&r, &loss, err, sizeof err) == 0, "%s", err);
  }
  float **w = calloc((size_t)s->g->nvals, sizeof *w);
  for (int i = 0; i < s->g->nvals; i++)
    if (s->g->vals[i]->kind == IR_PARAM) cr_assert(drive_gather(&r, i, (void **)&w[i], err, sizeof err) == 0, "%s", err);
  drive_free(&r);
  return w;
}

static float **train(const session *s, int fused, int *nfused) {
  lower_opts lo = {0};
  lo.no_fused_optim = !fused;
  return train_opts(s, &lo, nfused, NULL);
}

static void same_training(const char *model, const char *opt) {
  session s;
  load(&s, model, opt, NULL);
  int nf, nu;
  float **a = train(&s, 1, &nf), **b = train(&s, 0, &nu);
  cr_assert_eq(nf, nparams(s.g), "%s with %s: %d fused updates for %d parameters", model, opt, nf, nparams(s.g));
  cr_assert_eq(nu, 0);
  for (int i = 0; i < s.g->nvals; i++) {
    const ir_value *v = s.g->vals[i];
    if (v->kind != IR_PARAM) continue;
    int64_t n = ir_nelem(&v->shape);
    double worst = 0, big = 0;
    for (int64_t k = 0; k < n; k++) {
      worst = fmax(worst, fabs((double)a[i][k] - b[i][k]));
      big = fmax(big, fabs((double)b[i][k]));
    }
    cr_assert(worst <= 1e-6 * big, "%s with %s: '%s' differs by %g (largest %g)", model, opt, v->name, worst, big);
    free(a[i]);
    free(b[i]);
  }
  free(a);
  free(b);
  session_free(&s);
}

Test(fused_optim, gpt_sgd) { same_training("gpt2_small.cir", "sgd(lr = 0.1)"); }
Test(fused_optim, gpt_sgd_momentum_decay) { same_training("gpt2_small.cir", "sgd(lr = 0.1, momentum = 0.9, weight_decay = 0.01)"); }
Test(fused_optim, gpt_adam_decay) { same_training("gpt2_small.cir", "adam(lr = 1e-3, weight_decay = 0.01)"); }
Test(fused_optim, gpt_adamw) { same_training("gpt2_small.cir", "adamw(lr = 1e-3, weight_decay = 0.1)"); }
Test(fused_optim, mlp_adamw) { same_training("mlp_small.cir", "adamw(lr = 1e-2, weight_decay = 0.5)"); }
Test(fused_optim, mlp_sgd) { same_training("mlp_small.cir", "sgd(lr = 0.1)"); }
Test(fused_optim, mlp_sgd_momentum_decay) { same_training("mlp_small.cir", "sgd(lr = 0.1, momentum = 0.9, weight_decay = 0.01)"); }
Test(fused_optim, mlp_adam_decay) { same_training("mlp_small.cir", "adam(lr = 1e-2, weight_decay = 0.1)"); }

/* ZeRO splits parameters and state: each device still updates its piece in one pass */
static void fuses_on_device(const char *tac, int ranks) {
  session s;
  load(&s, "gpt2_small.cir", "adam(lr = 1e-3)", NULL);
  int want = nparams(s.g);
  session_free(&s);
  session_init(&s);
  char mp[512], tp[512];
  snprintf(mp, sizeof mp, "%s/examples/gpt2_small.cir", SRCDIR);
  snprintf(tp, sizeof tp, "%s/examples/%s", SRCDIR, tac);
  session_opts o = {mp, NULL, "adam(lr = 1e-3)", tp, {0}};
  o.tac.ranks = ranks;
  cr_assert(session_load(&s, &o) == 0, "%s", diag_text(&s.diag));
  drive r;
  diag d;
  diag_init(&d);
  cr_assert(drive_lower(&r, s.g, s.plan, &d) == 0, "%s", diag_text(&d));
  diag_free(&d);
  cr_assert_eq(count_op(&r.prog, RT_ADAM), want, "%s: %d of %d updates fused", tac, count_op(&r.prog, RT_ADAM), want);
  drive_free(&r);
  session_free(&s);
}

Test(fused_optim, zero_fuses) {
  fuses_on_device("gpt2_small_bp_mp_z1.tac", 0);
  fuses_on_device("gpt2_small_bp_mp_z2.tac", 0);
  fuses_on_device("gpt2_small_bp_mp_z3.tac", 0);
}

/* Updates hoisted to just after their gradient (interp/lower/hoist.c):
** the same arithmetic, so the same bits; each update after everything
** that writes what it reads or reads what it writes; the memory plan no
** larger. */
static void hoisted(const char *model, const char *opt) {
  session s;
  load(&s, model, opt, NULL);
  lower_opts ho = {0}, kept = {0};
  kept.no_hoist = 1;
  int nh, nk;
  size_t bh, bk;
  float **a = train_opts(&s, &ho, &nh, &bh), **b = train_opts(&s, &kept, &nk, &bk);
  cr_expect_eq(nh, nk);
  cr_expect_leq(bh, bk, "%s: hoisting grew the plan from %zu to %zu bytes", model, bk, bh);
  for (int i = 0; i < s.g->nvals; i++) {
    if (s.g->vals[i]->kind != IR_PARAM) continue;
    cr_expect(memcmp(a[i], b[i], sizeof(float) * (size_t)ir_nelem(&s.g->vals[i]->shape)) == 0,
              "%s: '%s' differs once updates are hoisted", model, s.g->vals[i]->name);
    free(a[i]);
    free(b[i]);
  }
  free(a);
  free(b);
  drive r;
  diag d;
  diag_init(&d);
  cr_assert(drive_lower_opts(&r, s.g, NULL, &ho, &d) == 0, "%s", diag_text(&d));
  diag_free(&d);
  const rt_prog *p = &r.prog;
  int last_other = -1, early = 0;
  for (int i = 0; i < p->ninstrs; i++)
    if (p->instrs[i].op != RT_ADAM && p->instrs[i].op != RT_SGD) last_other = i;
  for (int i = 0; i < p->ninstrs; i++) {
    const rt_instr *u = &p->instrs[i];
    if (u->op != RT_ADAM && u->op != RT_SGD) continue;
    early += i < last_other;
    for (int j = i + 1; j < p->ninstrs; j++) {     /* nothing after it touches its parameter or gradient */
      const rt_instr *x = &p->instrs[j];
      cr_expect(x->out != u->in[0] && x->out != u->in[1], "instruction %d writes what update %d read", j, i);
      for (int k = 0; k < RT_MAXIN; k++)
        cr_expect(x->in[k] < 0 || (x->in[k] != u->in[0] && x->in[k] != u->in[1]), "instruction %d reads what update %d used", j, i);
    }
  }
  cr_expect_geq(early, nh / 2, "%s: %d of %d updates moved into the backward pass", model, early, nh);
  drive_free(&r);
  session_free(&s);
}

Test(fused_optim, hoisted_gpt_adam) { hoisted("gpt2_small.cir", "adam(lr = 1e-3, weight_decay = 0.01)"); }
Test(fused_optim, hoisted_mlp_sgd_momentum) { hoisted("mlp_small.cir", "sgd(lr = 0.1, momentum = 0.9)"); }

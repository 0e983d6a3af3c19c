/*
** test_biasgrad.c: a bias gradient's reduce_sum taken by the elementwise
** pass before it (lw_fold_bias_grads in interp/lower/biasgrad.c). Folded,
** the GPT's MLP and residual gradients write their row sums themselves
** and those reduce_sums are gone; three Adam steps give the same losses
** and parameters, bit for bit, as the unfolded program. Partitioned
** programs fold too (tests/e2e/mpi_run.sh runs them with --check against
** one device).
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/drive/drive.h"
#include "interp/drive/session.h"

#define STEPS 3

static void load(session *s, const char *tac, int ranks) {
  char mp[512], tp[512];
  snprintf(mp, sizeof mp, "%s/examples/gpt2_small.cir", SRCDIR);
  snprintf(tp, sizeof tp, "%s/examples/%s", SRCDIR, tac ? tac : "");
  session_init(s);
  session_opts o = {mp, NULL, "adam(lr = 1e-3)", tac ? tp : NULL, {0}};
  o.tac.ranks = ranks;
  cr_assert(session_load(s, &o) == 0, "%s", diag_text(&s->diag));
}

static void lower(drive *r, const session *s, int fold) {
  lower_opts lo = {0};
  lo.no_fold_rows = !fold;
  diag d;
  diag_init(&d);
  cr_assert(drive_lower_opts(r, s->g, s->plan, &lo, &d) == 0, "%s", diag_text(&d));
  diag_free(&d);
}

static int count(const rt_prog *p, rt_op op, int with_sum) {
  int n = 0;
  for (int i = 0; i < p->ninstrs; i++)
    n += p->instrs[i].op == op && (with_sum < 0 || (p->instrs[i].in[3] >= 0) == with_sum);
  return n;
}

/* the folded and unfolded programs of s; the row sums each folded program has */
static int both(const session *s, drive *f, drive *u) {
  lower(f, s, 1);
  lower(u, s, 0);
  int sums = count(&f->prog, RT_EW, 1), gam = 0;
  for (int i = 0; i < f->prog.ninstrs; i++)
    gam += f->prog.instrs[i].op == RT_LAYERNORM_GRAD && f->prog.instrs[i].mode == RT_LN_GAMMA;
  cr_expect_eq(count(&u->prog, RT_EW, 1), 0);
  /* the other reduce_sums that go are the layer norms' gamma gradients (normgrad.c) */
  int gone = count(&u->prog, RT_REDUCE, -1) - count(&f->prog, RT_REDUCE, -1);
  cr_expect_eq(gone, sums + gam, "%d reduce_sums went for %d row sums and %d gamma gradients", gone, sums, gam);
  return sums;
}

Test(biasgrad, same_bits) {
  session s;
  load(&s, NULL, 0);
  drive f, u;
  /* per block: the MLP's first bias (gelu_tanh_grad) and a residual add */
  int sums = both(&s, &f, &u);
  cr_expect_geq(sums, 4, "%d elementwise ops write row sums", sums);
  char err[256];
  cr_assert(drive_start(&f, rt_backend_cpu(), NULL, rt_world_single(), NULL, NULL, err, sizeof err) == 0, "%s", err);
  cr_assert(drive_start(&u, rt_backend_cpu(), NULL, rt_world_single(), NULL, NULL, err, sizeof err) == 0, "%s", err);
  for (int st = 0; st < STEPS; st++) {
    double lf, lu;
    cr_assert(drive_step(&f, &lf, err, sizeof err) == 0, "%s", err);
    cr_assert(drive_step(&u, &lu, err, sizeof err) == 0, "%s", err);
    cr_expect(lf == lu && lf > 0, "step %d: loss %.9g folded, %.9g unfolded", st + 1, lf, lu);
  }
  for (int i = 0; i < s.g->nvals; i++) {
    const ir_value *v = s.g->vals[i];
    if (v->kind != IR_PARAM) continue;
    float *a, *b;
    cr_assert(drive_gather(&f, i, (void **)&a, err, sizeof err) == 0, "%s", err);
    cr_assert(drive_gather(&u, i, (void **)&b, err, sizeof err) == 0, "%s", err);
    cr_expect(!memcmp(a, b, (size_t)ir_nelem(&v->shape) * sizeof(float)), "'%s' differs after %d steps", v->name, STEPS);
    free(a);
    free(b);
  }
  drive_free(&f);
  drive_free(&u);
  session_free(&s);
}

static void partitioned(const char *tac) {
  session s;
  load(&s, tac, 2);
  drive f, u;
  int sums = both(&s, &f, &u);
  cr_expect_geq(sums, 4, "%s: %d elementwise ops write row sums", tac, sums);
  drive_free(&f);
  drive_free(&u);
  session_free(&s);
}

Test(biasgrad, batch_parallel_folds) { partitioned("gpt2_small_bp.tac"); }
Test(biasgrad, megatron_folds) { partitioned("gpt2_small_mp.tac"); }

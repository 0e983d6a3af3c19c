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

#include "rowfolds.h"

#define STEPS 3

static int count(const rt_prog *p, rt_op op, int with_sum) {
  int n = 0;
  for (int i = 0; i < p->ninstrs; i++)
    n += p->instrs[i].op == op && (with_sum < 0 || (p->instrs[i].in[3] >= 0) == with_sum);
  return n;
}

/* the folded and unfolded programs of s; the row sums each folded program has */
static int both(const session *s, drive *f, drive *u) {
  rf_lower(f, s, 1);
  rf_lower(u, s, 0);
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
  rf_load(&s, NULL, 0);
  drive f, u;
  /* per block: the MLP's first bias (gelu_tanh_grad) and a residual add */
  int sums = both(&s, &f, &u);
  cr_expect_geq(sums, 4, "%d elementwise ops write row sums", sums);
  rf_same_training(&s, &f, &u, STEPS);
  drive_free(&f);
  drive_free(&u);
  session_free(&s);
}

static void partitioned(const char *tac) {
  session s;
  rf_load(&s, tac, 2);
  drive f, u;
  int sums = both(&s, &f, &u);
  cr_expect_geq(sums, 4, "%s: %d elementwise ops write row sums", tac, sums);
  drive_free(&f);
  drive_free(&u);
  session_free(&s);
}

Test(biasgrad, batch_parallel_folds) { partitioned("gpt2_small_bp.tac"); }
Test(biasgrad, megatron_folds) { partitioned("gpt2_small_mp.tac"); }

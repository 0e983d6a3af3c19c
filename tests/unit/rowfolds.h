/*
** rowfolds.h: the small GPT's Adam step lowered with and without the
** lowering's row folds (lower_opts.no_fold_rows: normgrad.c, lossgrad.c,
** biasgrad.c), and trained side by side: the losses of every step and the
** parameters after the last must be the same bits. Shared by
** test_lossgrad.c and test_biasgrad.c. Header-only, like harness.h.
*/
#ifndef tests_rowfolds_h
#define tests_rowfolds_h

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/drive/drive.h"
#include "interp/drive/session.h"

/* examples/gpt2_small.cir with Adam, under examples/TAC on RANKS devices (tac NULL: one) */
static inline void rf_load(session *s, const char *tac, int ranks) {
  char mp[512], tp[512];
  snprintf(mp, sizeof mp, "%s/examples/gpt2_small.cir", SRCDIR);
  snprintf(tp, sizeof tp, "%s/examples/%s", SRCDIR, tac ? tac : "");
  session_init(s);
  session_opts o = {mp, NULL, "adam(lr = 1e-3)", tac ? tp : NULL, {0}};
  o.tac.ranks = ranks;
  cr_assert(session_load(s, &o) == 0, "%s", diag_text(&s->diag));
}

static inline void rf_lower(drive *r, const session *s, int fold) {
  lower_opts lo = {0};
  lo.no_fold_rows = !fold;
  lo.loss_chunk_bytes = -1;          /* lmloss.c would take the xent_grad (test_lmloss.c) */
  lo.no_fuse_elementwise = 1;        /* (fuse.c would take reductions and elementwise ops the counts look for) */
  diag d;
  diag_init(&d);
  cr_assert(drive_lower_opts(r, s->g, s->plan, &lo, &d) == 0, "%s", diag_text(&d));
  diag_free(&d);
}

/* f (folded) and u (not) on one device for `steps` steps: the same bits */
static inline void rf_same_training(const session *s, drive *f, drive *u, int steps) {
  char err[256];
  cr_assert(drive_start(f, rt_backend_cpu(), NULL, rt_world_single(), NULL, NULL, err, sizeof err) == 0, "%s", err);
  cr_assert(drive_start(u, rt_backend_cpu(), NULL, rt_world_single(), NULL, NULL, err, sizeof err) == 0, "%s", err);
  for (int st = 0; st < steps; st++) {
    double lf, lu;
    cr_assert(drive_step(f, &lf, err, sizeof err) == 0, "%s", err);
    cr_assert(drive_step(u, &lu, err, sizeof err) == 0, "%s", err);
    cr_expect(lf == lu && lf > 0, "step %d: loss %.9g folded, %.9g unfolded", st + 1, lf, lu);
  }
  for (int i = 0; i < s->g->nvals; i++) {
    const ir_value *v = s->g->vals[i];
    if (v->kind != IR_PARAM) continue;
    float *a, *b;
    cr_assert(drive_gather(f, i, (void **)&a, err, sizeof err) == 0, "%s", err);
    cr_assert(drive_gather(u, i, (void **)&b, err, sizeof err) == 0, "%s", err);
    cr_expect(!memcmp(a, b, (size_t)ir_nelem(&v->shape) * sizeof(float)), "'%s' differs after %d steps", v->name, steps);
    free(a);
    free(b);
  }
}

#endif

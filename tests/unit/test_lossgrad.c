/*
** test_lossgrad.c: cross-entropy's loss computed by its gradient's pass
** (lw_fold_loss in interp/lower/lossgrad.c). Folded, the program has no
** xent: the xent_grad runs in its place and writes the loss too. The
** losses and parameters of three Adam steps must be the same bits as the
** unfolded program's; under batch parallelism the loss is a temporary
** that the planner must place from the xent_grad on, before its
** all-reduce reads it.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/drive/drive.h"
#include "interp/drive/session.h"
#include "runtime/plan.h"

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

/* the instruction of op (xent_grad: with a loss in3 or not), -1 none */
static int find(const rt_prog *p, rt_op op, int with_loss) {
  for (int i = 0; i < p->ninstrs; i++)
    if (p->instrs[i].op == op && (with_loss < 0 || (p->instrs[i].in[3] >= 0) == with_loss)) return i;
  return -1;
}

Test(lossgrad, same_bits) {
  session s;
  load(&s, NULL, 0);
  drive f, u;
  lower(&f, &s, 1);
  lower(&u, &s, 0);
  cr_expect_eq(find(&f.prog, RT_XENT, -1), -1, "folded: no xent left");
  cr_expect_geq(find(&f.prog, RT_XENT_GRAD, 1), 0, "folded: the gradient writes the loss");
  cr_expect_geq(find(&u.prog, RT_XENT, -1), 0);
  int gf = 0, gu = 0;
  for (int i = 0; i < f.prog.ninstrs; i++) gf += f.prog.instrs[i].op == RT_XENT_GRAD;
  for (int i = 0; i < u.prog.ninstrs; i++) gu += u.prog.instrs[i].op == RT_XENT_GRAD;
  cr_expect(gf == 1 && gu == 1, "one xent_grad each: %d folded, %d unfolded", gf, gu);
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

/* Under BP the loss is this device's partial sum, a temporary the
** all-reduce reads: the planner places it from the xent_grad that now
** writes it, which runs before that all-reduce. */
Test(lossgrad, partial_loss_placed) {
  session s;
  load(&s, "gpt2_small_bp.tac", 2);
  drive f;
  lower(&f, &s, 1);
  int g = find(&f.prog, RT_XENT_GRAD, 1);
  cr_assert(g >= 0, "the gradient writes the loss under BP too");
  int loss = f.prog.instrs[g].in[3], reduced = -1;
  cr_assert_eq(f.prog.bufs[loss].kind, RT_BUF_TEMP);
  for (int i = 0; i < f.prog.ninstrs; i++)
    if (f.prog.instrs[i].op == RT_ALL_REDUCE && f.prog.instrs[i].in[0] == loss) reduced = i;
  cr_assert(reduced > g, "the loss is all-reduced (at %d) after the gradient writes it (at %d)", reduced, g);
  rt_memplan m;
  rt_memplan_make(&f.prog, &m);
  cr_expect_eq(m.first_write[loss], g, "the loss is placed from instruction %d, not %d", g, m.first_write[loss]);
  cr_expect_geq(m.last_use[loss], reduced);
  rt_memplan_free(&m);
  drive_free(&f);
  session_free(&s);
}

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

#include "runtime/plan.h"
#include "rowfolds.h"

#define STEPS 3

/* the instruction of op (xent_grad: with a loss in3 or not), -1 none */
static int find(const rt_prog *p, rt_op op, int with_loss) {
  for (int i = 0; i < p->ninstrs; i++)
    if (p->instrs[i].op == op && (with_loss < 0 || (p->instrs[i].in[3] >= 0) == with_loss)) return i;
  return -1;
}

Test(lossgrad, same_bits) {
  session s;
  rf_load(&s, NULL, 0);
  drive f, u;
  rf_lower(&f, &s, 1);
  rf_lower(&u, &s, 0);
  cr_expect_eq(find(&f.prog, RT_XENT, -1), -1, "folded: no xent left");
  cr_expect_geq(find(&f.prog, RT_XENT_GRAD, 1), 0, "folded: the gradient writes the loss");
  cr_expect_geq(find(&u.prog, RT_XENT, -1), 0);
  int gf = 0, gu = 0;
  for (int i = 0; i < f.prog.ninstrs; i++) gf += f.prog.instrs[i].op == RT_XENT_GRAD;
  for (int i = 0; i < u.prog.ninstrs; i++) gu += u.prog.instrs[i].op == RT_XENT_GRAD;
  cr_expect(gf == 1 && gu == 1, "one xent_grad each: %d folded, %d unfolded", gf, gu);
  rf_same_training(&s, &f, &u, STEPS);
  drive_free(&f);
  drive_free(&u);
  session_free(&s);
}

/* Under BP the loss is this device's partial sum, a temporary the
** all-reduce reads: the planner places it from the xent_grad that now
** writes it, which runs before that all-reduce. */
Test(lossgrad, partial_loss_placed) {
  session s;
  rf_load(&s, "gpt2_small_bp.tac", 2);
  drive f;
  rf_lower(&f, &s, 1);
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

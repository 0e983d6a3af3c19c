/*
** lossgrad.c: cross-entropy's loss computed by its gradient's pass.
**
** A training step computes the loss, xent(logits, labels), and then its
** gradient, xent_grad(logits, labels, seed): two passes over the logits
** (the largest activation of a language model), each finding every row's
** maximum and summing its exponentials. The gradient's pass has all the
** loss needs, so where both read the same logits and labels, xent_grad
** runs where xent was and writes the loss too (its in3; rt_instr_writes_in
** tells the planner), and xent goes. The loss is the same bits: the kernel
** sums each row as xent does and adds the rows in the same order.
**
** Runs after the program is finished, where values are not kept.
*/
#include "interp/lower/lower_int.h"
#include "util/mem.h"

#include <stdlib.h>
#include <string.h>

static int touches(const rt_instr *x, int b) {
  if (x->out == b) return 1;
  for (int k = 0; k < RT_MAXIN; k++) if (x->in[k] == b) return 1;
  return 0;
}

/* Where instruction at (an xent) may give way to the xent_grad after it
** that reads its logits and labels: that xent_grad's index, else -1. The
** seed it reads may be filled between the two (lowering emits the
** literal there); fill[0..*nfill) gets such fills, to run before. */
static int its_gradient(const rt_prog *p, int at, int *fill, int *nfill) {
  const rt_instr *x = &p->instrs[at];
  *nfill = 0;
  for (int j = at + 1; j < p->ninstrs; j++) {
    const rt_instr *g = &p->instrs[j];
    if (g->op == RT_XENT_GRAD && !rt_xent_split(g) && g->in[0] == x->in[0] && g->in[1] == x->in[1] && g->in[3] < 0 &&
        g->outer == x->outer && g->n == x->n) {
      for (int i = at; i < j; i++) {   /* what it reads holds still; nothing between uses its result */
        const rt_instr *y = &p->instrs[i];
        if (rt_instr_writes(y, g->in[0]) || rt_instr_writes(y, g->in[1]) || touches(y, g->out)) return -1;
        if (!touches(y, g->in[2])) continue;
        if (y->op != RT_FILL || y->out != g->in[2] || *nfill == 4) return -1;
        fill[(*nfill)++] = i;
      }
      return j;
    }
    if (rt_instr_writes(g, x->in[0]) || rt_instr_writes(g, x->in[1])) return -1;
  }
  return -1;
}

int lw_fold_loss(rt_prog *p) {
  int folded = 0;
  for (int i = 0; i < p->ninstrs; i++) {
    /* over split classes the loss reads one logit a row (the statistics came
       before, from collectives): nothing to fold */
    if (p->instrs[i].op != RT_XENT || rt_xent_split(&p->instrs[i]) || p->bufs[p->instrs[i].out].dtype != RT_F32) continue;
    int fill[4], nfill, j = its_gradient(p, i, fill, &nfill);
    if (j < 0) continue;
    /* [i, j] becomes: the fills, the xent_grad writing the loss, the rest in order */
    rt_instr *run = mem_alloc(sizeof(rt_instr) * (size_t)(j - i + 1));
    int n = 0;
    for (int k = 0; k < nfill; k++) run[n++] = p->instrs[fill[k]];
    run[n] = p->instrs[j];
    run[n].in[3] = p->instrs[i].out;
    run[n].nin = 4;
    run[n++].beta = p->instrs[i].alpha;   /* the loss's scale */
    for (int k = i + 1, f = 0; k < j; k++) {
      if (f < nfill && fill[f] == k) { f++; continue; }
      run[n++] = p->instrs[k];
    }
    memcpy(&p->instrs[i], run, sizeof(rt_instr) * (size_t)n);
    memmove(&p->instrs[i + n], &p->instrs[j + 1], sizeof(rt_instr) * (size_t)(p->ninstrs - j - 1));
    p->ninstrs -= j + 1 - i - n;
    free(run);
    folded++;
  }
  if (folded) rt_prog_finish(p);
  return folded;
}

/*
** biasgrad.c: a sum over rows taken by the elementwise pass that makes
** what it sums.
**
** A bias's gradient is its output gradient summed over the rows, and that
** gradient is often made by an elementwise instruction just before: the
** activation's gradient (gelu_tanh_grad for an MLP's first bias) or the
** residual stream's (an add of two branches' gradients). Lowered apart,
** the reduce_sum reads the whole result again from memory:
**
**     t  = ew fn(a, b)                  [rows, w]
**     db = reduce_sum t                 over the rows, to [w]
**
** Here the ew writes db too (its in3; rt_instr_writes_in tells the
** planner), adding each row's piece while it is still in L1, and the
** reduce goes. t is kept: the GEMMs that make the weight's and the
** input's gradients read it. The kernel adds as reduce_sum does (double,
** rows in order), so db is the same bits.
**
** Only f32 sums with scale 1 over dense operands are taken, only where
** nothing between the two instructions touches db or writes what the ew
** made, and only within NEAR instructions of it: the scan between them is
** then bounded, so the pass stays linear in the program (a bias gradient's
** sum follows its ew within a few). Runs after the program is finished,
** where values are not kept.
*/
#include "interp/lower/lower_int.h"
#include "util/mem.h"

#include <stdlib.h>

static int touches(const rt_instr *x, int b) {
  if (x->out == b) return 1;
  for (int k = 0; k < RT_MAXIN; k++) if (x->in[k] == b) return 1;
  return 0;
}

enum { NEAR = 64 };

/* instruction ei, an elementwise op that can take the reduce at ri */
static int can_take(const rt_prog *p, int ei, int ri) {
  const rt_instr *e = &p->instrs[ei], *r = &p->instrs[ri];
  if (ri - ei > NEAR) return 0;
  int ar = rt_ewfn_arity((rt_ewfn)e->fn);
  if (e->op != RT_EW || e->in[3] >= 0 || ar < 1 || ar > 2 || e->fn >= RT_ABS || e->rank < 1) return 0;
  if (p->bufs[e->out].dtype != RT_F32 || e->shape[e->rank - 1] != r->inner) return 0;
  for (int k = 0; k < ar; k++)
    if (e->in[k] < 0 || p->bufs[e->in[k]].dtype != RT_F32 || !rt_ew_dense(e, k) || e->in[k] == r->out) return 0;
  for (int i = ei + 1; i < ri; i++) {
    const rt_instr *y = &p->instrs[i];
    if (touches(y, r->out) || rt_instr_writes(y, e->out)) return 0;
  }
  return 1;
}

int lw_fold_bias_grads(rt_prog *p) {
  int ni = p->ninstrs, nb = p->nbufs, folded = 0;
  int *writer = mem_alloc(sizeof(int) * ((size_t)nb + 1)), *writers = mem_calloc((size_t)nb + 1, sizeof(int));
  char *gone = mem_calloc((size_t)ni + 1, 1);
  for (int i = 0; i < ni; i++)
    for (int k = -1; k < RT_MAXIN; k++) {
      const rt_instr *x = &p->instrs[i];
      int b = k < 0 ? x->out : x->in[k];
      if (b >= 0 && b < nb && (k < 0 || rt_instr_writes_in(x, k))) { writers[b]++; writer[b] = i; }
    }
  for (int i = 0; i < ni; i++) {
    const rt_instr *r = &p->instrs[i];
    if (r->op != RT_REDUCE || r->fn != RT_RSUM || r->outer != 1 || r->alpha != 1.0f) continue;
    int t = r->in[0];
    if (t < 0 || t >= nb || r->out < 0 || r->out >= nb || p->bufs[r->out].dtype != RT_F32) continue;
    if (writers[t] != 1 || writer[t] >= i || !can_take(p, writer[t], i)) continue;
    const rt_instr *e = &p->instrs[writer[t]];
    int64_t all = 1;
    for (int d = 0; d < e->rank; d++) all *= e->shape[d];
    if (all != r->n * r->inner) continue;
    p->instrs[writer[t]].in[3] = r->out;
    p->instrs[writer[t]].nin = 4;
    gone[i] = 1;
    folded++;
  }
  if (folded) {
    int w = 0;
    for (int i = 0; i < ni; i++) if (!gone[i]) p->instrs[w++] = p->instrs[i];
    p->ninstrs = w;
    rt_prog_finish(p);
  }
  free(writer);
  free(writers);
  free(gone);
  return folded;
}

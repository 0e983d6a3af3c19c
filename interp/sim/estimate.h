/*
** estimate.h: the search's cost of a plan, kept up to date as actions
** change it. Where the simulator lowers the whole program and costs its
** instructions, the estimator costs each op from the layout math alone:
** its operands brought to the layout it computes in (reshard steps), its
** compute (GEMM FLOPs, or bytes at memory bandwidth), its result reduced
** and laid out as the plan wants; with the simulator's own formulas. Memory
** is the leaves (parameters, optimizer state, inputs) plus the peak over
** program order of the op values alive, a segment tree over the program
** so that a value's new size updates the peak in O(log n).
**
** After an action, est_update re-costs only the ops next to the values the
** plan's undo log says changed, so an evaluation costs what the action
** touched; est_rollback takes it back as shard_rollback takes back the
** plan. The simulator checks what the search finally keeps.
*/
#ifndef interp_sim_estimate_h
#define interp_sim_estimate_h

#include "interp/shard/shard.h"
#include "interp/sim/sim.h"

typedef struct estimator estimator;

typedef struct est_cost {
  double seconds;               /* compute + communication */
  double compute, communication;
  double memory;                /* bytes per device at the peak */
  double leaves;                /* of which parameters, optimizer state and inputs */
} est_cost;

typedef struct est_mark { int nlog; } est_mark;

/* An estimator of plan p (which it reads, never changes) on the profile
** and links of o (copied). Costs every op once. */
estimator *est_new(const sh_plan *p, const sim_opts *o);
void       est_free(estimator *e);

/* Re-cost what the plan changed since its mark m. */
void     est_update(estimator *e, sh_mark m);
est_mark est_mark_now(const estimator *e);
/* Back to the costs at mark m (after the plan's own rollback). */
void     est_rollback(estimator *e, est_mark m);

void est_get(const estimator *e, est_cost *c);
/* Seconds of op v as the estimator sees it now (0 for leaves): reports. */
double est_op_seconds(const estimator *e, int v);

#endif

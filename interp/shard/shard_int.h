/*
** shard_int.h: what the files of the sharding state share (shard.c: the
** state and the actions; prop.c: propagation; partial.c: computation
** layouts and partial sums).
*/
#ifndef interp_shard_int_h
#define interp_shard_int_h

#include "interp/shard/shard.h"

/* Can axis be appended to dim of v? NULL yes; else a reason (and the decision it loses to). */
const char *sh_blocked(const sh_plan *p, int v, int dim, int axis, int *lost_to);
/* Append axis to dim of v as decision why (saved in the undo log first). */
void sh_put_axis(sh_plan *p, int v, int dim, int axis, int why);
/* dim i of value x as op u reads it: without its storage axes (ZeRO's),
** which only the optimizer's update ops read split */
sh_dim sh_seen_dim(const sh_plan *p, const ir_value *u, int x, int i);

static inline int sh_prefix_of(const sh_dim *a, const sh_dim *b) {   /* a is a prefix of b */
  if (a->n > b->n) return 0;
  for (int i = 0; i < a->n; i++) if (a->ax[i] != b->ax[i]) return 0;
  return 1;
}

/* Operand k of op v, or the result itself for k = nargs (the rules' numbering). */
static inline int sh_operand_value(const ir_value *v, int k) { return k < v->nargs ? v->args[k] : v->id; }

static inline uint32_t sh_axes_of(const sh_dim *d) {
  uint32_t m = 0;
  for (int i = 0; i < d->n; i++) m |= 1u << d->ax[i];
  return m;
}

#endif

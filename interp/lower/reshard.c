/*
** lower_reshard.c: the collectives that take a value from one layout to
** another: partial sums reduced (or reduce-scattered where the target
** splits that axis next), a minor axis moved between dims by one
** all-to-all, axes gathered minor first, new axes sliced locally.
*/
#include "interp/lower/lower_int.h"

#include <string.h>

/* ---- collectives and resharding ---- */

int lw_group(lctx *c, uint32_t axes) {
  if (c->group_cache[axes] >= 0) return c->group_cache[axes];
  int ax[SH_MAXAXES], n = 0;
  for (int i = 0; i < c->plan->mesh.n; i++) if ((axes >> i) & 1) ax[n++] = i;
  return c->group_cache[axes] = rt_prog_group(c->p, n, ax);
}

int lw_dim_group(lctx *c, const sh_dim *d) {
  if (!d->n) return -1;
  /* a dim split over several axes: the group lists them major to minor */
  uint32_t m = 0;
  int inorder = 1;
  for (int i = 0; i < d->n; i++) { m |= 1u << d->ax[i]; if (i && d->ax[i] < d->ax[i - 1]) inorder = 0; }
  if (inorder) return lw_group(c, m);
  int ax[SH_MAXAXES];
  for (int i = 0; i < d->n; i++) ax[i] = d->ax[i];
  return rt_prog_group(c->p, d->n, ax);
}

void lw_local_shape(const sh_plan *pl, const ir_shape *global, const sh_dim *dims, ir_shape *out) {
  *out = *global;
  for (int i = 0; i < global->rank; i++) out->d[i] /= shard_dim_pieces(pl, &dims[i]);
}

int lw_same_dims(const sh_dim *a, const sh_dim *b, int rank) {
  for (int i = 0; i < rank; i++) {
    if (a[i].n != b[i].n) return 0;
    for (int k = 0; k < a[i].n; k++) if (a[i].ax[k] != b[i].ax[k]) return 0;
  }
  return 1;
}


/* The collectives taking a value laid out as `from` (partial over `partial`,
** to be summed) to the layout `to`; at most 3 steps a dim. */
int lw_plan_steps(const sh_plan *pl, int rank, const sh_dim *from, uint32_t partial, const sh_dim *to, step *st) {
  sh_dim cur[IR_MAXRANK];
  int n = 0;
  for (int i = 0; i < rank; i++) cur[i] = from[i];
  /* partial sums: reduce-scatter where the target splits a dim on that axis next, else all-reduce */
  uint32_t ar = 0;
  for (int a = 0; a < pl->mesh.n; a++) {
    if (!((partial >> a) & 1)) continue;
    int done = 0;
    for (int i = 0; i < rank && !done; i++) {
      int k = cur[i].n, pre = k < to[i].n;
      for (int j = 0; j < k && pre; j++) pre = cur[i].ax[j] == to[i].ax[j];
      if (pre && to[i].ax[k] == a) {
        st[n++] = (step){RT_REDUCE_SCATTER, i, 0, 1u << a};
        cur[i].ax[cur[i].n++] = (int8_t)a;
        done = 1;
      }
    }
    if (!done) ar |= 1u << a;
  }
  if (ar) st[n++] = (step){RT_ALL_REDUCE, 0, 0, ar};
  /* a minor axis moving from one dim to the end of another: one all-to-all */
  for (int i = 0; i < rank; i++) {
    if (!cur[i].n) continue;
    int a = cur[i].ax[cur[i].n - 1], keep = 0;
    for (int k = 0; k < to[i].n && k < cur[i].n; k++) keep |= to[i].ax[k] == a && k == cur[i].n - 1;
    if (keep) continue;
    for (int j = 0; j < rank; j++) {
      if (j == i || cur[j].n >= to[j].n || to[j].ax[cur[j].n] != a) continue;
      int pre = 1;
      for (int k = 0; k < cur[j].n; k++) pre &= cur[j].ax[k] == to[j].ax[k];
      if (!pre) continue;
      st[n++] = (step){RT_ALL_TO_ALL, j, i, 1u << a};
      cur[i].n--;
      cur[j].ax[cur[j].n++] = (int8_t)a;
      break;
    }
  }
  /* gather what the target does not have, minor first; then slice what it adds */
  for (int i = 0; i < rank; i++) {
    for (;;) {
      int pre = cur[i].n <= to[i].n;
      for (int k = 0; k < cur[i].n && pre; k++) pre = cur[i].ax[k] == to[i].ax[k];
      if (pre) break;
      st[n++] = (step){RT_ALL_GATHER, i, 0, 1u << cur[i].ax[cur[i].n - 1]};
      cur[i].n--;
    }
    while (cur[i].n < to[i].n) {
      int a = to[i].ax[cur[i].n];
      st[n++] = (step){RT_SHARD_SLICE, i, 0, 1u << a};
      cur[i].ax[cur[i].n++] = (int8_t)a;
    }
  }
  return n;
}

/* Emit the steps from buffer `in` (local shape s); the last writes `dst` (or a new temp). */
int lw_emit_steps(lctx *c, int in, ir_shape s, const step *st, int n, int dst, const char *name) {
  int cur = in;
  for (int k = 0; k < n; k++) {
    ir_shape t = s;
    int64_t P = 1;
    for (int a = 0; a < c->plan->mesh.n; a++) if ((st[k].axes >> a) & 1) P *= c->plan->mesh.size[a];
    if (st[k].op == RT_ALL_GATHER) t.d[st[k].dim] *= P;
    if (st[k].op == RT_REDUCE_SCATTER || st[k].op == RT_SHARD_SLICE) t.d[st[k].dim] /= P;
    if (st[k].op == RT_ALL_TO_ALL) { t.d[st[k].dim] /= P; t.d[st[k].dim2] *= P; }
    int out = k == n - 1 && dst >= 0 ? dst : lw_tmp(c, name, RT_F32, t.rank, t.d);
    rt_instr *x = rt_prog_emit(c->p, (rt_op)st[k].op, out);
    x->nin = 1;
    x->in[0] = cur;
    x->group = lw_group(c, st[k].axes);
    int d0 = st[k].op == RT_ALL_TO_ALL ? 0 : st[k].dim;
    x->outer = lw_prod(s.d, 0, d0);
    x->n = s.d[d0];
    x->inner = lw_prod(s.d, d0 + 1, s.rank);
    x->rank = (uint8_t)s.rank;
    for (int i = 0; i < s.rank; i++) x->shape[i] = s.d[i];
    x->split_dim = (int8_t)st[k].dim;
    x->concat_dim = (int8_t)st[k].dim2;
    if (st[k].op == RT_ALL_REDUCE) { x->outer = 1; x->n = ir_nelem(&s); x->inner = 1; }
    cur = out;
    s = t;
  }
  return cur;
}

const sh_dim *lw_final_dims(lctx *c, int v) {
  const ir_value *x = V(c, v);
  if (x->carry >= 0) return c->plan->lay[x->carry].dim;   /* a new value takes its leaf's layout */
  return c->plan->lay[v].dim;
}

/* Operand k of op v in the layout `want`. */
int lw_operand_in(lctx *c, int id, const sh_dim *want, ir_shape *shape) {
  if (c->src[id] != id) {             /* a scalar broadcast read in place: its source, as it is */
    int s = c->src[id];
    *shape = V(c, s)->shape;
    return lw_buf(c, s);
  }
  const ir_value *x = V(c, id);
  int b = lw_buf(c, id);
  if (!c->plan || c->isconst[id]) { *shape = x->shape; return b; }
  const sh_dim *have = lw_final_dims(c, id);
  lw_local_shape(c->plan, &x->shape, want, shape);
  if (lw_same_dims(have, want, x->shape.rank)) return b;
  step st[3 * IR_MAXRANK + 2];
  ir_shape hs;
  lw_local_shape(c->plan, &x->shape, have, &hs);
  int n = lw_plan_steps(c->plan, x->shape.rank, have, 0, want, st);
  int first = c->p->ninstrs;
  int r = lw_emit_steps(c, b, hs, st, n, -1, x->name);
  for (int k = first; k < c->p->ninstrs; k++) c->p->instrs[k].src = id;   /* reports name the value moved */
  return r;
}


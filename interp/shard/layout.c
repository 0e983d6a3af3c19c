/*
** layout.c: local shapes, reshard steps, bytes per step.
*/
#include "interp/shard/layout.h"

int64_t layout_pieces(const sh_plan *p, const sh_dim *d) {
  int64_t n = 1;
  for (int i = 0; i < d->n; i++) n *= p->mesh.size[d->ax[i]];
  return n;
}

void layout_local_shape(const sh_plan *pl, const ir_shape *global, const sh_dim *dims, ir_shape *out) {
  *out = *global;
  for (int i = 0; i < global->rank; i++) out->d[i] /= layout_pieces(pl, &dims[i]);
}

int layout_same(const sh_dim *a, const sh_dim *b, int rank) {
  for (int i = 0; i < rank; i++) {
    if (a[i].n != b[i].n) return 0;
    for (int k = 0; k < a[i].n; k++) if (a[i].ax[k] != b[i].ax[k]) return 0;
  }
  return 1;
}


/* whether axis a splits a dim of d */
static int splits(const sh_dim *d, int rank, int a) {
  for (int i = 0; i < rank; i++)
    for (int k = 0; k < d[i].n; k++) if (d[i].ax[k] == a) return 1;
  return 0;
}

int layout_steps(const sh_plan *pl, int rank, const sh_dim *from, uint32_t partial, const sh_dim *to, layout_step *st) {
  sh_dim cur[IR_MAXRANK];
  int n = 0;
  for (int i = 0; i < rank; i++) cur[i] = from[i];
  /* partial sums: reduce-scatter where the target splits a dim on that axis next, else all-reduce */
  /* (again after each: one scatter may open the way for the next, as
  ** from a sum over batch and model to [model+batch]) */
  uint32_t ar = partial;
  for (int progress = 1; progress;) {
    progress = 0;
    for (int a = 0; a < pl->mesh.n; a++) {
      if (!((ar >> a) & 1)) continue;
      for (int i = 0; i < rank; i++) {
        int k = cur[i].n, pre = k < to[i].n;
        for (int j = 0; j < k && pre; j++) pre = cur[i].ax[j] == to[i].ax[j];
        if (pre && to[i].ax[k] == a) {
          st[n++] = (layout_step){RT_REDUCE_SCATTER, i, 0, 1u << a};
          cur[i].ax[cur[i].n++] = (int8_t)a;
          ar &= ~(1u << a);
          progress = 1;
          break;
        }
      }
    }
  }
  if (ar) st[n++] = (layout_step){RT_ALL_REDUCE, 0, 0, ar};
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
      st[n++] = (layout_step){RT_ALL_TO_ALL, j, i, 1u << a};
      cur[i].n--;
      cur[j].ax[cur[j].n++] = (int8_t)a;
      break;
    }
  }
  /* gather what the target does not have, minor first; then slice what it
  ** adds: at once where the axis splits nothing else (the gathers after it
  ** move less), else once every gather is done (an axis sliced into one
  ** dim while it still splits another would pair pieces of different
  ** devices: from [-, batch+model] to [batch, -]) */
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < rank; i++) {
      for (;;) {
        int pre = cur[i].n <= to[i].n;
        for (int k = 0; k < cur[i].n && pre; k++) pre = cur[i].ax[k] == to[i].ax[k];
        if (pre) break;
        st[n++] = (layout_step){RT_ALL_GATHER, i, 0, 1u << cur[i].ax[cur[i].n - 1]};
        cur[i].n--;
      }
      while (cur[i].n < to[i].n) {
        int a = to[i].ax[cur[i].n];
        if (pass == 0 && splits(cur, rank, a)) break;
        st[n++] = (layout_step){RT_SHARD_SLICE, i, 0, 1u << a};
        cur[i].ax[cur[i].n++] = (int8_t)a;
      }
    }
  /* an axis of one device moves and splits nothing: no step over it */
  uint32_t one = 0;
  for (int a = 0; a < pl->mesh.n; a++) if (pl->mesh.size[a] == 1) one |= 1u << a;
  int m = 0;
  for (int k = 0; k < n; k++)
    if (st[k].axes & ~one) { st[m] = st[k]; st[m++].axes &= ~one; }
  return m;
}

int64_t layout_group_devices(const sh_plan *p, uint32_t axes) {
  int64_t n = 1;
  for (int a = 0; a < p->mesh.n; a++) if ((axes >> a) & 1) n *= p->mesh.size[a];
  return n;
}

void layout_step_shape(const sh_plan *p, const layout_step *st, const ir_shape *s, ir_shape *out) {
  int64_t P = layout_group_devices(p, st->axes);
  *out = *s;
  switch (st->op) {
  case RT_ALL_GATHER: out->d[st->dim] *= P; break;
  case RT_REDUCE_SCATTER: case RT_SHARD_SLICE: out->d[st->dim] /= P; break;
  case RT_ALL_TO_ALL: out->d[st->dim] /= P; out->d[st->dim2] *= P; break;
  default: break;
  }
}

int64_t layout_step_bytes(const sh_plan *p, const layout_step *st, const ir_shape *s, size_t elem) {
  if (st->op == RT_SHARD_SLICE) return 0;
  ir_shape t;
  layout_step_shape(p, st, s, &t);
  return rt_coll_bytes_of(ir_nelem(s), ir_nelem(&t), elem);
}

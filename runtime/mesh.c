/*
** mesh.c: coordinates, group indices and pieces on a row-major mesh.
*/
#include "runtime/mesh.h"

int rt_mesh_devices(const rt_prog *p) {
  int64_t n = 1;
  for (int i = 0; i < p->mesh_rank; i++) n *= p->mesh[i];
  return (int)n;
}

int rt_mesh_coord(const rt_prog *p, int device, int axis) {
  int64_t below = 1;
  for (int i = axis + 1; i < p->mesh_rank; i++) below *= p->mesh[i];
  return (int)((device / below) % p->mesh[axis]);
}

int rt_mesh_index(const rt_prog *p, int device, int group) {
  if (group < 0) return 0;
  const rt_group *g = &p->groups[group];
  int64_t idx = 0;
  for (int i = 0; i < g->naxes; i++) idx = idx * p->mesh[g->axes[i]] + rt_mesh_coord(p, device, g->axes[i]);
  return (int)idx;
}

int rt_mesh_color(const rt_prog *p, int device, int group) {
  const rt_group *g = &p->groups[group];
  int64_t col = 0;
  for (int a = 0; a < p->mesh_rank; a++) {
    int in = 0;
    for (int i = 0; i < g->naxes; i++) in |= g->axes[i] == a;
    if (!in) col = col * p->mesh[a] + rt_mesh_coord(p, device, a);
  }
  return (int)col;
}

int rt_mesh_group_size(const rt_prog *p, int group) {
  if (group < 0) return 1;
  int64_t n = 1;
  for (int i = 0; i < p->groups[group].naxes; i++) n *= p->mesh[p->groups[group].axes[i]];
  return (int)n;
}

int rt_mesh_zigzag(const rt_prog *p, int group) {
  return group >= 0 && group < p->ngroups && p->groups[group].naxes == 1 && (p->zigzag >> p->groups[group].axes[0] & 1);
}

int64_t rt_mesh_row(const rt_prog *p, int group, int q, int64_t n, int64_t r) {
  if (!rt_mesh_zigzag(p, group)) return (int64_t)q * n + r;
  int64_t h = n / 2, P = rt_mesh_group_size(p, group);
  return r < h ? (int64_t)q * h + r : (2 * P - 1 - q) * h + (r - h);
}

void rt_mesh_blocks(const rt_prog *p, int device, int b, int64_t off[2][RT_MAXRANK], int64_t *shape, int *nblk, int *zdim) {
  const rt_buf *rb = &p->bufs[b];
  *nblk = 1;
  *zdim = -1;
  for (int i = 0; i < rb->rank; i++) {
    int g = rb->dim_group[i], q = g >= 0 ? rt_mesh_index(p, device, g) : 0;
    shape[i] = rb->shape[i];
    off[0][i] = off[1][i] = g >= 0 ? (int64_t)q * rb->shape[i] : 0;
    if (*zdim < 0 && rt_mesh_zigzag(p, g)) {
      *zdim = i;
      *nblk = 2;
      shape[i] = rb->shape[i] / 2;
      off[0][i] = rt_mesh_row(p, g, q, rb->shape[i], 0);
      off[1][i] = rt_mesh_row(p, g, q, rb->shape[i], shape[i]);
    }
  }
}

void rt_mesh_block(const rt_prog *p, int device, int b, int64_t *off) {
  int64_t o[2][RT_MAXRANK], shape[RT_MAXRANK];
  int n, z;
  rt_mesh_blocks(p, device, b, o, shape, &n, &z);
  for (int i = 0; i < p->bufs[b].rank; i++) off[i] = o[0][i];
}

int rt_mesh_ring_block(const rt_prog *p, const rt_instr *at, int q, rt_instr *fixed) {
  const rt_instr x = *at, *ins = &x;     /* (fixed may be at) */
  int g = ins->group, P = rt_mesh_group_size(p, g), from = ((q - ins->split_dim) % P + P) % P;
  *fixed = x;
  if (!rt_mesh_zigzag(p, g)) {
    fixed->off += (int64_t)q * ins->m;
    fixed->n2 += (int64_t)from * ins->n;
    return 0;
  }
  if (ins->m % 2 || ins->n % 2) return -1;
  fixed->mode |= RT_ATTN_ZIGZAG;
  fixed->off = ins->off + rt_mesh_row(p, g, q, ins->m, 0);
  fixed->stride_a = ins->off + rt_mesh_row(p, g, q, ins->m, ins->m / 2);
  fixed->n2 = ins->n2 + rt_mesh_row(p, g, from, ins->n, 0);
  fixed->stride_b = ins->n2 + rt_mesh_row(p, g, from, ins->n, ins->n / 2);
  return 0;
}

int64_t rt_mesh_global_index(const rt_prog *p, int device, int b, int64_t k) {
  const rt_buf *rb = &p->bufs[b];
  int64_t idx[RT_MAXRANK], g = 0;
  for (int i = rb->rank - 1; i >= 0; i--) { idx[i] = k % rb->shape[i]; k /= rb->shape[i]; }
  for (int i = 0; i < rb->rank; i++) {
    int grp = rb->dim_group[i];
    int64_t row = grp >= 0 ? rt_mesh_row(p, grp, rt_mesh_index(p, device, grp), rb->shape[i], idx[i]) : idx[i];
    g = g * rb->global_shape[i] + row;
  }
  return g;
}

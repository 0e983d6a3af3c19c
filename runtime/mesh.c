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

void rt_mesh_block(const rt_prog *p, int device, int b, int64_t *off) {
  const rt_buf *rb = &p->bufs[b];
  for (int i = 0; i < rb->rank; i++)
    off[i] = rb->dim_group[i] >= 0 ? (int64_t)rt_mesh_index(p, device, rb->dim_group[i]) * rb->shape[i] : 0;
}

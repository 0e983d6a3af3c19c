/*
** feed.c: default values of leaves, and where a device's piece sits.
*/
#include "interp/drive/feed.h"

/* i32 inputs: ids within the smallest table or class count they index */
static int64_t id_range(const ir_graph *g, const ir_value *v) {
  int64_t r = 0;
  for (int k = 0; k < v->nusers; k++) {
    const ir_value *u = g->vals[v->users[k]];
    int64_t n = 0;
    if (u->op == IR_EMBEDDING && u->args[1] == v->id) n = g->vals[u->args[0]]->shape.d[0];
    if (u->op == IR_CROSS_ENTROPY && u->args[1] == v->id) {
      const ir_shape *s = &g->vals[u->args[0]]->shape;
      n = s->d[s->rank - 1];
    }
    if (n && (!r || n < r)) r = n;
  }
  return r ? r : 100;
}

void feed_init(const ir_graph *g, const ir_value *v, rt_init *in) {
  *in = (rt_init){RT_INIT_NORMAL, 1.0, 0, rt_init_seed(v->name)};
  if (v->kind != IR_INPUT) {
    static const rt_initkind kinds[] = {RT_INIT_NORMAL, RT_INIT_ZEROS, RT_INIT_ONES, RT_INIT_UNIFORM};  /* ORDER ir_initkind */
    _Static_assert(sizeof kinds / sizeof kinds[0] == INIT_NKINDS, "ORDER ir_initkind: kinds");
    in->kind = kinds[v->init.kind];
    in->a = v->init.a;
    in->b = v->init.b;
  } else if (v->dtype == IR_I32) {
    in->kind = RT_INIT_INTS;
    in->b = (double)id_range(g, v);
  }
}

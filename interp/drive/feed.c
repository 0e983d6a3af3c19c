/*
** feed.c: default values of leaves, and where a device's piece sits.
*/
#include "interp/drive/feed.h"
#include "util/mem.h"

#include <stdlib.h>

/* The ids x may hold as its user u reads them (0: u bounds nothing):
** an embedding's rows, cross_entropy's classes, where gather's starts fit,
** a one-hot's classes. *fails: u stops the run on an id outside (gather
** clamps, a one-hot compare gives false). */
static int64_t user_bound(const ir_graph *g, const ir_value *u, const ir_value *x, int *fails) {
  *fails = 1;
  if (u->op == IR_EMBEDDING && u->args[1] == x->id) return g->vals[u->args[0]]->shape.d[0];
  if (u->op == IR_EMBEDDING_GRAD && u->args[0] == x->id) return u->attr.rows;   /* a backward program's scatter */
  if ((u->op == IR_CROSS_ENTROPY || u->op == IR_CROSS_ENTROPY_GRAD) && u->args[1] == x->id) {
    const ir_shape *s = &g->vals[u->args[0]]->shape;
    return s->d[s->rank - 1];
  }
  *fails = 0;
  int64_t m = 0;
  if ((u->op == IR_GATHER || u->op == IR_SCATTER) && u->args[1] == x->id) {   /* starts within the operand */
    const ir_index *ix = u->attr.index;
    const ir_shape *s = &g->vals[u->args[0]]->shape;
    for (int c = 0; c < ix->n[IX_START_MAP]; c++) {
      int d = (int)ix->v[IX_START_MAP][c];
      int64_t room = s->d[d] - ix->v[IX_SLICE][d] + 1;
      if (room > 0 && (!m || room < m)) m = room;
    }
  }
  if (u->op == IR_COMPARE && u->nargs == 2) {     /* against an iota: a one-hot of that many classes */
    const ir_value *o = g->vals[u->args[u->args[0] == x->id]];
    if (o->op == IR_IOTA) m = o->shape.d[o->attr.dim];
  }
  return m;
}

/* integer inputs: ids within the smallest table or class count they index,
** found through the integer values made from them (an imported program
** converts, reshapes, concatenates and wraps ids before its lookup) */
static int64_t id_range(const ir_graph *g, const ir_value *v) {
  int64_t r = 0;
  int *stack = mem_alloc(sizeof(int) * (size_t)g->nvals), n = 0;   /* each value pushed once: linear */
  char *pushed = mem_calloc((size_t)g->nvals, 1);
  stack[n++] = v->id;
  pushed[v->id] = 1;
  while (n > 0) {
    const ir_value *x = g->vals[stack[--n]];
    for (int k = 0; k < x->nusers; k++) {
      const ir_value *u = g->vals[x->users[k]];
      int fails;
      int64_t m = user_bound(g, u, x, &fails);
      if (m && (!r || m < r)) r = m;
      if (!m && ir_dtype_isint(u->dtype) && !pushed[u->id]) {   /* the ids flow on */
        pushed[u->id] = 1;
        stack[n++] = u->id;
      }
    }
  }
  free(stack);
  free(pushed);
  return r ? r : 100;
}

int64_t feed_id_bound(const ir_graph *g, const ir_value *v, const ir_value **by) {
  int64_t r = 0;
  *by = NULL;
  for (int k = 0; k < v->nusers; k++) {
    const ir_value *u = g->vals[v->users[k]];
    int fails;
    int64_t m = user_bound(g, u, v, &fails);
    if (fails && m > 0 && (!r || m < r)) { r = m; *by = u; }
  }
  return r;
}

void feed_init(const ir_graph *g, const ir_value *v, rt_init *in) {
  *in = (rt_init){RT_INIT_NORMAL, 1.0, 0, rt_init_seed(v->name)};
  if (v->kind != IR_INPUT) {
    static const rt_initkind kinds[] = {RT_INIT_NORMAL, RT_INIT_ZEROS, RT_INIT_ONES, RT_INIT_UNIFORM};  /* ORDER ir_initkind */
    _Static_assert(sizeof kinds / sizeof kinds[0] == INIT_NKINDS, "ORDER ir_initkind: kinds");
    in->kind = kinds[v->init.kind];
    in->a = v->init.a;
    in->b = v->init.b;
  } else if (ir_dtype_isint(v->dtype)) {
    in->kind = RT_INIT_INTS;
    in->b = (double)id_range(g, v);
  } else if (v->dtype == IR_I1) {
    in->kind = RT_INIT_INTS;            /* masks: true and false alike */
    in->b = 2;
  }
}

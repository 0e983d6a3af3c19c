/*
** program.c: the rewrites of fuse/ in order (activations; softmax and the
** other rows, which the one-hot cross-entropy and attention then read;
** attention), then the graph put
** back in order: values a rewrite added come before their first reader,
** and what nothing reads any more goes (what the program itself left
** unread stays).
*/
#include "interp/fuse/match.h"
#include "util/mem.h"

#include <stdlib.h>
#include <string.h>

/* every value after its operands, the order otherwise kept (a rewrite adds
** values at the end that an earlier one reads) */
static void reorder(ir_graph *g) {
  int n = g->nvals, k = 0, moved = 0;
  for (int i = 0; i < n && !moved; i++)
    for (int j = 0; j < g->vals[i]->nargs; j++) moved |= g->vals[i]->args[j] > i;
  if (!moved) return;
  int *order = mem_alloc(sizeof(int) * (size_t)(n + 1)), *stack = mem_alloc(sizeof(int) * (size_t)(n + 1));
  char *done = mem_calloc((size_t)n + 1, 1);
  for (int i = 0; i < n; i++) {
    if (done[i]) continue;
    int top = 0;
    stack[top++] = i;
    while (top) {                        /* emit the operands first */
      int v = stack[top - 1], pushed = 0;
      for (int j = 0; j < g->vals[v]->nargs && !pushed; j++) {
        int a = g->vals[v]->args[j];
        if (!done[a]) { stack[top++] = a; pushed = 1; }
      }
      if (pushed) continue;
      top--;
      if (!done[v]) { done[v] = 1; order[k++] = v; }
    }
  }
  ir_reorder(g, order);
  free(order);
  free(stack);
  free(done);
}

/* the ops nothing reads before the rewrites: the program's own (a tactic
** may name them), which stay */
static ir_value **unread(const ir_graph *g, int *n) {
  ir_value **u = mem_alloc(sizeof *u * (size_t)(g->nvals + 1));
  *n = 0;
  for (int i = 0; i < g->nvals; i++) {
    ir_value *v = g->vals[i];
    if (v->kind == IR_OP && !v->is_output && !v->nusers && v->carry < 0) u[(*n)++] = v;
  }
  return u;
}

/* drop the ops the rewrites left unread (last to first, so that chains go) */
static void drop_dead(ir_graph *g, ir_value *const *keep, int nkeep) {
  int n = g->nvals, any = 0;
  int *reads = mem_calloc((size_t)n + 1, sizeof(int));
  char *dead = mem_calloc((size_t)n + 1, 1);
  for (int i = 0; i < n; i++)
    for (int k = 0; k < g->vals[i]->nargs; k++) reads[g->vals[i]->args[k]]++;
  for (int i = 0; i < nkeep; i++) reads[keep[i]->id]++;
  for (int i = n - 1; i >= 0; i--) {
    const ir_value *v = g->vals[i];
    if (v->kind != IR_OP || v->is_output || reads[i] || v->carry >= 0) continue;
    dead[i] = any = 1;
    for (int k = 0; k < v->nargs; k++) reads[v->args[k]]--;
  }
  if (any) ir_compact(g, dead);
  free(reads);
  free(dead);
}

void fuse_program(ir_graph *g, fuse_counts *out) {
  fuse_counts c;
  memset(&c, 0, sizeof c);
  int nkeep;
  ir_value **keep = unread(g, &nkeep);
  fuse_acts(g, &c);
  fuse_rows(g, &c);
  fuse_onehot_xent(g, &c);
  fuse_attention(g, &c);
  fuse_updates(g, &c);
  reorder(g);
  drop_dead(g, keep, nkeep);
  free(keep);
  c.attention += ir_fuse_attention(g);
  if (out) *out = c;
}

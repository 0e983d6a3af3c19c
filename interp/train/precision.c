/*
** precision.c: mixed-precision training (`--train 'adam(..., precision =
** bf16)'`): the forward program computes in bf16 while the parameters,
** their gradients and the optimizer state stay f32 (master weights), as
** flax's dtype = bf16 with param_dtype = f32 and JAX's mixed-precision
** policies do. Each f32 parameter and input is converted to bf16 where the
** forward reads it; every op then computes in bf16 as carve computes that
** type (each result rounded to bf16 once, GEMMs accumulating in f32, the
** composite ops in f32 inside); the loss is converted back to f32. The
** backward pass goes through the converts: the activations' gradients in
** bf16, each parameter's gradient converted to f32 where it arrives.
*/
#include "interp/train/train.h"
#include "util/mem.h"

#include <stdlib.h>

/* whether op v reads operand k as a number that a lower precision may round
** (not bit patterns, not a value converted to an integer) */
static int rounds(const ir_value *v) {
  if (v->op == IR_BITCAST) return 0;
  if (v->op == IR_CONVERT && !ir_dtype_isfloat(v->attr.dtype)) return 0;
  return 1;
}

/* the graph back in an order where each value follows what it reads: the
** values added (converts, each of one value that was there) right after
** what they read */
static void in_order(ir_graph *g, int n0) {
  int n = g->nvals, *order = mem_alloc(sizeof(int) * (size_t)(n + 1)), *first = mem_alloc(sizeof(int) * (size_t)(n0 + 1)),
      *next = mem_alloc(sizeof(int) * (size_t)(n + 1)), m = 0;
  for (int i = 0; i < n0; i++) first[i] = -1;
  for (int i = n - 1; i >= n0; i--) { int a = g->vals[i]->args[0]; next[i] = first[a]; first[a] = i; }
  for (int i = 0; i < n0; i++) {
    order[m++] = i;
    for (int j = first[i]; j >= 0; j = next[j]) order[m++] = j;
  }
  ir_reorder(g, order);
  free(order);
  free(first);
  free(next);
}

int train_precision(ir_graph *g, ir_dtype t, diag *d) {
  int n0 = g->nvals;
  int *cast = mem_alloc(sizeof(int) * (size_t)(n0 + 1));
  for (int i = 0; i < n0; i++) cast[i] = -1;
  ir_attrs at = {0};
  at.dtype = t;
  int rc = 0;
  /* in order, so that each op's operands have their types already: the
  ** leaves converted where read, and then an op reading the low type reads
  ** its other f32 operands converted too (types do not mix) */
  for (int i = 0; i < n0 && rc == 0; i++) {
    ir_value *v = g->vals[i];
    if (v->kind != IR_OP || !rounds(v)) continue;
    int low = 0;
    for (int k = 0; k < v->nargs; k++) {
      const ir_value *a = g->vals[v->args[k]];
      low |= a->dtype == t || (a->kind != IR_OP && a->kind != IR_CONST && a->dtype == IR_F32);
    }
    for (int k = 0; k < v->nargs && low; k++) {
      const ir_value *a = g->vals[v->args[k]];
      if (a->kind == IR_CONST || a->dtype != IR_F32) continue;
      int *c = a->kind != IR_OP ? &cast[a->id] : NULL, x = c && *c >= 0 ? *c : -1;   /* a leaf's once */
      if (x < 0 && (x = ir_emit(g, d, arena_printf(&g->mem, "%s.%s", a->name, ir_dtype_name(t)), IR_CONVERT, &a->id, 1, &at)) < 0) {
        rc = -1;
        break;
      }
      if (c) *c = x;
      v->args[k] = x;
    }
    if (rc == 0 && low && ir_infer(g, v, d) < 0) rc = -1;
  }
  free(cast);
  if (rc < 0) return -1;
  int loss = g->outputs[0];
  if (g->vals[loss]->dtype == t) {       /* the loss back in f32, under its name (the low one: NAME.bf16) */
    ir_attrs f = {0};
    f.dtype = IR_F32;
    const char *name = g->vals[loss]->name;
    if (ir_rename(g, g->vals[loss], ir_fresh_name(g, arena_printf(&g->mem, "%s.%s", name, ir_dtype_name(t)))) < 0)
      return diag_error(d, g->vals[loss]->at, "internal error: renaming the loss");
    int l32 = ir_emit(g, d, name, IR_CONVERT, &loss, 1, &f);
    if (l32 < 0) return -1;
    g->vals[loss]->is_output = 0;
    g->vals[l32]->is_output = 1;
    g->outputs[0] = l32;
  }
  in_order(g, n0);
  ir_link(g);
  return 0;
}

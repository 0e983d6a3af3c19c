/*
** print.c: IR -> model-file text that parses back to the same IR.
** Values are printed in definition order, one statement each; literal
** constants are printed inline; optional attributes always appear in
** their normalized form (dims non-negative, defaults spelled out).
*/
#include "interp/ir/ir.h"
#include "interp/ir/ops.h"
#include "util/strbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_ints(strbuf *s, const int64_t *x, int n) {
  sb_printf(s, "[");
  for (int i = 0; i < n; i++) sb_printf(s, i ? ", %lld" : "%lld", (long long)x[i]);
  sb_printf(s, "]");
}

/* a number as the model language reads it back: non-finite ones as strings
** (a NaN with its sign) */
static void put_number(strbuf *s, double x) {
  if (x != x) sb_printf(s, signbit(x) ? "\"-nan\"" : "\"nan\"");
  else if (isinf(x)) sb_printf(s, x > 0 ? "\"inf\"" : "\"-inf\"");
  else sb_num(s, x);              /* the shortest text that reads back as x */
}

static void put_values(strbuf *s, const ir_value *v) {
  int64_t n = ir_nelem(&v->attr.to);
  sb_printf(s, "[");
  int exact = ir_dtype_isint(v->attr.dtype) || v->attr.dtype == IR_I1;   /* integers beyond 2^53 too */
  for (int64_t k = 0; k < n; k++) {
    if (k) sb_printf(s, ", ");
    if (exact) sb_printf(s, "%lld", (long long)ir_value_at_int(v, k));
    else put_number(s, ir_value_at(v, k));
  }
  sb_printf(s, "]");
}

static void put_operand(strbuf *s, const ir_value *v) {
  if (v->kind == IR_CONST && v->dtype != IR_F32) {      /* a typed literal keeps its type */
    sb_printf(s, "constant([");
    put_number(s, v->attr.scalar);
    sb_printf(s, "], shape = [], dtype = %s)", ir_dtype_name(v->dtype));
  } else if (v->kind == IR_CONST && isfinite(v->attr.scalar)) sb_num(s, v->attr.scalar);
  else if (v->kind == IR_CONST) sb_printf(s, "%s", v->attr.scalar != v->attr.scalar ? "div(0, 0)" : v->attr.scalar > 0 ? "div(1, 0)" : "div(-1, 0)");
  else sb_printf(s, "%s", v->name);
}

static void put_init(strbuf *s, const ir_init *in) {
  switch (in->kind) {
  case INIT_NORMAL: sb_puts(s, " = normal("); sb_num(s, in->a); sb_puts(s, ")"); break;
  case INIT_ZEROS: sb_printf(s, " = zeros"); break;
  case INIT_ONES: sb_printf(s, " = ones"); break;
  case INIT_UNIFORM: sb_puts(s, " = uniform("); sb_num(s, in->a); sb_puts(s, ", "); sb_num(s, in->b); sb_puts(s, ")"); break;
  default: break;
  }
}

static void put_op(strbuf *s, const ir_graph *g, const ir_value *v) {
  const ir_opinfo *oi = ir_opinfo_of(v->op);
  const ir_attrs *a = &v->attr;
  sb_printf(s, "  %s = %s(", v->name, oi->name);
  int argk = 0, first = 1, opt;
  char name[IR_SIG_NAME], t;
  for (const char *p = oi->sig; ir_sig_next(&p, name, &t, &opt);) {
    if (!first) sb_printf(s, ", ");
    first = 0;
    if (opt || (a->index && t != 'v')) sb_printf(s, "%s = ", name);     /* gather's lists read best by name */
    int64_t xs[IR_MAXRANK];
    switch (t) {
    case 'v': put_operand(s, g->vals[v->args[argk++]]); break;
    case 'V':
      sb_printf(s, "[");
      for (; argk < v->nargs; argk++) { if (argk) sb_printf(s, ", "); put_operand(s, g->vals[v->args[argk]]); }
      sb_printf(s, "]");
      break;
    case 's':
      if (a->index && !strcmp(name, "combine")) sb_printf(s, "\"%s\"", ir_combiner_name(a->index->combine));
      else if (a->index) sb_printf(s, "\"%s\"", a->index->other_bounds ? (v->op == IR_GATHER ? "fill" : "clip") : (v->op == IR_GATHER ? "clip" : "skip"));
      else sb_printf(s, "\"%s\"", a->spec);
      break;
    case 'i':
      if (a->index) sb_printf(s, "%d", a->index->ivd);
      else if (!strcmp(name, "dim")) sb_printf(s, "%d", a->dim);
      else if (!strcmp(name, "start")) sb_printf(s, "%lld", (long long)a->start);
      else if (!strcmp(name, "rows")) sb_printf(s, "%lld", (long long)a->rows);
      else sb_printf(s, "%lld", (long long)a->end);
      break;
    case 'f': sb_num(s, ir_attr_number(a, name)); break;
    case 'b': sb_printf(s, "%s", ir_attr_flag(a, name) ? "true" : "false"); break;
    case 't': sb_printf(s, "%s", ir_dtype_name(a->dtype)); break;
    case 'F': put_values(s, v); break;
    case 'I':
      if (a->index) {
        int k = ir_index_list(v->op, name);
        put_ints(s, a->index->v[k], a->index->n[k]);
      } else if (!strcmp(name, "shape")) put_ints(s, a->to.d, a->to.rank);
      else {
        for (int i = 0; i < a->ndims; i++) xs[i] = a->dims[i];
        put_ints(s, xs, a->ndims);
      }
      break;
    }
  }
  sb_printf(s, ")\n");
}

char *ir_print(const ir_graph *g, arena *out) {
  strbuf s;
  sb_init(&s);
  sb_printf(&s, "model %s {\n", g->name);
  for (int i = 0; i < g->nvals; i++) {
    const ir_value *v = g->vals[i];
    switch (v->kind) {
    case IR_CONST: break;
    case IR_INPUT: case IR_PARAM: case IR_STATE:
      sb_printf(&s, "  %s %s : %s", v->kind == IR_INPUT ? "input" : "param", v->name, ir_dtype_name(v->dtype));
      put_ints(&s, v->shape.d, v->shape.rank);
      if (v->kind != IR_INPUT) put_init(&s, &v->init);
      if (v->kind == IR_STATE) sb_printf(&s, "   # optimizer state");
      sb_printf(&s, "\n");
      break;
    case IR_OP:
      put_op(&s, g, v);
      break;
    }
  }
  sb_printf(&s, "  return ");
  for (int i = 0; i < g->nouts; i++) sb_printf(&s, i ? ", %s" : "%s", g->vals[g->outputs[i]]->name);
  sb_printf(&s, "\n}\n");
  char *r = arena_strndup(out, sb_str(&s), s.n);
  sb_free(&s);
  return r;
}

/*
** print.c: IR -> model-file text that parses back to the same IR.
** Values are printed in definition order, one statement each; literal
** constants are printed inline; optional attributes always appear in
** their normalized form (dims non-negative, defaults spelled out).
*/
#include "interp/ir/ir.h"
#include "interp/ir/ops.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sbuf { char *p; size_t n, cap; } sbuf;

static void put(sbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *s, const char *fmt, ...) {
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (s->n + (size_t)n + 1 > s->cap) {
    s->cap = (s->n + (size_t)n + 1) * 2;
    s->p = mem_realloc(s->p, s->cap);
  }
  vsnprintf(s->p + s->n, (size_t)n + 1, fmt, aq);
  va_end(aq);
  s->n += (size_t)n;
}

static void put_ints(sbuf *s, const int64_t *x, int n) {
  put(s, "[");
  for (int i = 0; i < n; i++) put(s, i ? ", %lld" : "%lld", (long long)x[i]);
  put(s, "]");
}

static void put_operand(sbuf *s, const ir_value *v) {
  if (v->kind == IR_CONST) put(s, "%.17g", v->attr.scalar);
  else put(s, "%s", v->name);
}

static void put_init(sbuf *s, const ir_init *in) {
  switch (in->kind) {
  case INIT_NORMAL: put(s, " = normal(%.17g)", in->a); break;
  case INIT_ZEROS: put(s, " = zeros"); break;
  case INIT_ONES: put(s, " = ones"); break;
  case INIT_UNIFORM: put(s, " = uniform(%.17g, %.17g)", in->a, in->b); break;
  }
}

static void put_op(sbuf *s, const ir_graph *g, const ir_value *v) {
  const ir_opinfo *oi = ir_opinfo_of(v->op);
  const ir_attrs *a = &v->attr;
  put(s, "  %s = %s(", v->name, oi->name);
  const char *p = oi->sig;
  int argk = 0, first = 1;
  while (*p) {
    while (*p == ' ') p++;
    if (!*p) break;
    const char *c = strchr(p, ':');
    char name[16] = {0};
    memcpy(name, p, (size_t)(c - p));
    char t = c[1];
    int opt = c[2] == '?';
    p = c + 2 + opt;
    if (!first) put(s, ", ");
    first = 0;
    if (opt) put(s, "%s = ", name);
    int64_t xs[IR_MAXRANK];
    switch (t) {
    case 'v': put_operand(s, g->vals[v->args[argk++]]); break;
    case 'V':
      put(s, "[");
      for (; argk < v->nargs; argk++) { if (argk) put(s, ", "); put_operand(s, g->vals[v->args[argk]]); }
      put(s, "]");
      break;
    case 's': put(s, "\"%s\"", a->spec); break;
    case 'i':
      if (!strcmp(name, "dim")) put(s, "%d", a->dim);
      else if (!strcmp(name, "start")) put(s, "%lld", (long long)a->start);
      else if (!strcmp(name, "rows")) put(s, "%lld", (long long)a->rows);
      else put(s, "%lld", (long long)a->end);
      break;
    case 'f': put(s, "%.17g", a->eps); break;
    case 'b': put(s, "%s", a->keepdims ? "true" : "false"); break;
    case 'I':
      if (!strcmp(name, "shape")) put_ints(s, a->to.d, a->to.rank);
      else {
        for (int i = 0; i < a->ndims; i++) xs[i] = a->dims[i];
        put_ints(s, xs, a->ndims);
      }
      break;
    }
  }
  put(s, ")\n");
}

char *ir_print(const ir_graph *g, arena *out) {
  sbuf s = {0};
  put(&s, "model %s {\n", g->name);
  for (int i = 0; i < g->nvals; i++) {
    const ir_value *v = g->vals[i];
    switch (v->kind) {
    case IR_CONST: break;
    case IR_INPUT: case IR_PARAM: case IR_STATE:
      put(&s, "  %s %s : %s", v->kind == IR_INPUT ? "input" : "param", v->name, ir_dtype_name(v->dtype));
      put_ints(&s, v->shape.d, v->shape.rank);
      if (v->kind != IR_INPUT) put_init(&s, &v->init);
      if (v->kind == IR_STATE) put(&s, "   # optimizer state");
      put(&s, "\n");
      break;
    case IR_OP:
      put_op(&s, g, v);
      break;
    }
  }
  put(&s, "  return ");
  for (int i = 0; i < g->nouts; i++) put(&s, i ? ", %s" : "%s", g->vals[g->outputs[i]]->name);
  put(&s, "\n}\n");
  char *r = arena_strndup(out, s.p, s.n);
  free(s.p);
  return r;
}

/*
** export_int.h: what export.c (the module, arguments, results) and
** emit.c (one carve op as stablehlo ops) share.
*/
#ifndef interp_export_int_h
#define interp_export_int_h

#include "interp/export/export.h"
#include "util/strbuf.h"

/* A tensor written to the text: its SSA name ("%3", "%l0.q") and type. */
typedef struct ex_val {
  const char *n;
  ir_dtype t;
  ir_shape s;
} ex_val;

typedef struct ex_const { double x; ir_dtype t; const char *n; } ex_const;

typedef struct ex_ctx {
  const ir_graph *g;
  diag *d;
  strbuf *out;
  arena *a;               /* names, for the length of the export */
  ex_val *val;            /* per IR value: how it was written (n NULL: not yet) */
  char *skip;             /* per IR value: written as part of its user (a scatter's ids, its gradient) */
  int next;               /* the next helper number (%0, %1, ...) */
  ex_const *consts;       /* scalar constants written so far, reused */
  int nconsts, constcap;
  int failed;
  int composites;         /* carve's composite ops as stablehlo.composite "carve.NAME" */
  strbuf *funcs;          /* their decompositions, private functions after @main */
  int nfuncs;
} ex_ctx;

/* Mark what an op writes on behalf of another (before ex_value is called). */
void ex_plan_fusions(ex_ctx *c);
/* Write IR value id (an op) as stablehlo ops; c->val[id] names the result. -1 after an error in c->d. */
int ex_value(ex_ctx *c, int id);
/* a number as a literal of type t (floats with every digit, non-finite ones as bits) */
void ex_put_lit(strbuf *b, double x, ir_dtype t);
/* "tensor<2x3xf32>" */
const char *ex_type(ex_ctx *c, ir_dtype t, const ir_shape *s);
/* The SSA name an IR value's result takes: "%" and its carve name where MLIR can spell it. */
const char *ex_ssa_name(ex_ctx *c, const char *name);

#endif

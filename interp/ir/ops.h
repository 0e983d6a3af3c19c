/*
** ops.h: the op registry. One row per op kind gives its source name and
** its argument signature, which the builder uses to bind call arguments
** (positional or by keyword), the printer to print them back, and the
** error messages to say what an op expects.
*/
#ifndef interp_ops_h
#define interp_ops_h

#include "interp/ir/ir.h"

/*
** Signature: space-separated slots "name:T" with T one of
**   v  a value           V  a list of values (concat)
**   s  a string          i  an integer        f  a number
**   I  a list of ints    b  true/false        t  a dtype name (f32, i32, ...)
**   F  a list of numbers (constant's values; "nan", "inf", "-inf" as strings)
** and a trailing '?' for an optional slot (printed as a keyword).
*/
typedef struct ir_opinfo {
  const char *name;
  const char *sig;
  unsigned flags;
} ir_opinfo;

enum {
  OPF_INTERNAL = 1,     /* made by autodiff or optimizers, not part of the documented language */
  OPF_UNARY = 2,        /* elementwise, one operand */
  OPF_BINARY = 4,       /* elementwise, two operands, broadcasting */
  OPF_NODIFF = 8,       /* autodiff does not go through it */
  OPF_TERNARY = 16      /* elementwise, three operands, broadcasting (select) */
};

const ir_opinfo *ir_opinfo_of(ir_opkind op);
/* The next slot of signature *sig (advanced past it): its name (at most
** IR_SIG_NAME - 1 characters), type letter and whether it is optional; 0
** at the end. for (const char *p = sig; ir_sig_next(&p, ...);) walks all. */
#define IR_SIG_NAME 32
int ir_sig_next(const char **sig, char *name, char *type, int *optional);
/* Source name -> kind; -1 if unknown. */
int ir_op_lookup(const char *name);
/* "a close name" for error messages ("did you mean 'softmax'?"), or NULL. */
const char *ir_op_suggest(const char *name);
/* carve's composite ops: those written out of primitive ops (softmax,
** layer norm, attention, their gradients, ...), which carve export keeps
** whole as stablehlo.composite "carve.NAME" and carve import takes back. */
int ir_op_is_composite(ir_opkind op);
/* gather's and scatter's list attributes: the IX_ list a signature name
** stands for, or -1. */
int ir_index_list(ir_opkind op, const char *name);
/* A scatter's combiner: "add" -> IR_ADD ("replace" -> IR_LEAF), -1 for
** others; and back. */
int ir_combiner(const char *name);
const char *ir_combiner_name(int op);

#endif

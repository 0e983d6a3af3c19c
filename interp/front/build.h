/*
** build.h: turn a parsed model file into a checked IR graph.
*/
#ifndef interp_build_h
#define interp_build_h

#include "interp/ir/ir.h"
#include "lang/cir.h"
#include "util/strbuf.h"

/* Pick the model named `model` (or the only one when NULL), expand repeat
** blocks and name templates, flatten nested calls, check every shape.
** NULL after the first error, recorded in d. */
ir_graph *build_model(const cir_file *f, const char *model, diag *d);

/* Bind one call's arguments to the op's signature and add the op (shared
** with the REPL). Exposed for tests. */
ir_value *build_call(ir_graph *g, diag *d, const cir_expr *call, const char *name);

/* One line per op of the model language, its arguments as a call writes
** them ("sum(x, dims = .., keepdims = ..)"), for --help. */
void build_op_list(strbuf *out);

#endif

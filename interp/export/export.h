/*
** export.h: the IR (and, when given, its sharding plan) written as
** StableHLO MLIR text in the pretty syntax JAX prints: a module with the
** plan's sdy.mesh, one public @main whose arguments are the program's
** leaves (inputs, parameters, optimizer state) in definition order, each
** with its sdy.sharding and a loc("name") carrying carve's name, and whose
** results carry jax.result_info names and shardings. Every carve op is
** written as primitive stablehlo ops (interp/export/emit.c), one spelling
** per op, all of which carve's own importer (interp/front/hlo.c) reads.
*/
#ifndef interp_export_h
#define interp_export_h

#include "interp/ir/ir.h"
#include "interp/shard/shard.h"

/* The text of g under plan p (NULL: one device, no mesh, no shardings),
** in a. NULL after an error in d (an op with no StableHLO spelling). */
char *export_program(const ir_graph *g, const sh_plan *p, arena *a, diag *d);
/* The same; composites 1: carve's composite ops (softmax, layer norm,
** attention, their gradients, ...) as stablehlo.composite "carve.NAME" with
** their decompositions beside (so that carve import gets the op back
** whole), 0: written out as primitive ops. export_program writes them. */
char *export_program_opts(const ir_graph *g, const sh_plan *p, int composites, arena *a, diag *d);

#endif

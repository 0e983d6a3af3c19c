/*
** hlo.h: StableHLO / MHLO syntax trees (lang/mlir.h) -> IR. The entry
** function's arguments become inputs and parameters, private functions
** reached by call are inlined, and each op maps onto carve's ops
** (dot_general to einsum, broadcast_in_dim to reshape + broadcast, a
** gather of whole rows to embedding, ...). An op outside the supported
** set is a located error naming it. Argument shardings (sdy.sharding)
** are returned beside the graph so that the caller can write them as a
** tactic file.
*/
#ifndef interp_front_hlo_h
#define interp_front_hlo_h

#include "interp/ir/ir.h"
#include "lang/mlir.h"

#define HLO_MAXAXES 8

typedef struct hlo_opts {
  const char *entry;       /* the function to import; NULL: "main", else the only public one */
  const char *params;      /* comma-separated globs over argument names that are parameters;
                              NULL: the rule of hlo.c's params_and_data */
  int as_written;          /* composites (stablehlo.composite "carve.NAME") read as their decompositions */
} hlo_opts;

/* One argument's sharding: for each dim, the mesh axes it is split over. */
typedef struct hlo_sharding {
  int value;               /* the argument's value id */
  int rank;
  int naxes[IR_MAXRANK];
  const char *axes[IR_MAXRANK][HLO_MAXAXES];
} hlo_sharding;

typedef struct hlo_info {
  int naxes;               /* the module's sdy.mesh (the first one), or none */
  const char *axis[HLO_MAXAXES];
  int64_t size[HLO_MAXAXES];
  hlo_sharding *shardings; /* in the graph's arena */
  int nshardings;
} hlo_info;

/* Build the graph of f's entry function. info may be NULL. NULL after the
** first error, recorded in d at the op's place in the .mlir file. */
ir_graph *hlo_build(const mlir_file *f, const hlo_opts *o, hlo_info *info, diag *d);

/* The sharding tactic file of info (mesh line, one shard statement per
** split dim, a schedule), or NULL when the program carries no mesh. In a. */
char *hlo_tactics(const ir_graph *g, const hlo_info *info, arena *a);

/* carve import: read the .mlir file at path and render the model file of
** its entry function (*cir) and, when it carries a mesh, the tactic file
** of its argument shardings (*tac, else NULL); both in a. -1 after an
** error in d. */
int hlo_import(arena *a, diag *d, const char *path, const hlo_opts *o, char **cir, char **tac);

#endif

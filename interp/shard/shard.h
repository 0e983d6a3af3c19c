/*
** shard.h: the sharding state of a program on a mesh.
**
** Each value has a layout: for each dim the mesh axes it is split over,
** major to minor, and the axes over which it is a partial sum (derived
** from the ops, recomputed by shard_partials). Every axis a value uses
** carries the decision that put it there (a tactic statement, or
** propagation through an op from another value), so that `explain` can
** print the chain. replicate constraints forbid axes on a value or a dim.
** Conflicts are kept with their provenance; nothing is overwritten.
*/
#ifndef interp_shard_h
#define interp_shard_h

#include <stdint.h>
#include "interp/ir/ir.h"

#define SH_MAXAXES 8

typedef struct sh_mesh {
  int n;
  const char *name[SH_MAXAXES];   /* interned in the plan's arena */
  int64_t size[SH_MAXAXES];
  loc at;                         /* where the mesh was declared */
  uint32_t virt;                  /* virtual axes: their pieces run one after another on each
                                     device (a pipeline's microbatches), no device of their own */
  uint32_t zigzag;                /* axes whose pieces are dealt zig-zag: of a dim split in 2P
                                     blocks over such an axis of P devices, the device at index q
                                     holds blocks q and 2P-1-q (context parallelism's causal
                                     balance), not block q of P */
} sh_mesh;

/* A pipeline (the stdlib's pipeline tactic, ctx:pipeline): the program's
** values placed on stages along a mesh axis, the batch split into
** microbatches along a virtual axis that each device runs in turn, in the
** order of a schedule; gradients are summed over the microbatches and the
** optimizer updates once per step. */
enum { SH_GPIPE, SH_1F1B, SH_INTERLEAVED, SH_ZB };
typedef struct sh_pipe {
  int axis;                       /* the stage axis (-1: no pipeline) */
  int micro;                      /* the microbatch axis (in mesh.virt) */
  int order;                      /* SH_GPIPE, SH_1F1B, SH_INTERLEAVED or SH_ZB (zero-bubble ZB-H1) */
  int chunks;                     /* parts of the program a device holds (interleaved: virtual stages), 1 else */
  int ncuts;                      /* values that end parts 0 .. ncuts - 1 (0: found from the program); part
                                     k runs on stage k mod stages */
  int *cuts;                      /* in the plan's arena */
  const char *tactic;
  loc at;
} sh_pipe;

typedef struct sh_dim {
  int n;
  int8_t ax[SH_MAXAXES];          /* major to minor */
} sh_dim;

typedef struct sh_layout {
  sh_dim dim[IR_MAXRANK];
  uint32_t partial;               /* axes of a partial sum, as produced by the op */
  uint32_t forbid[IR_MAXRANK];    /* replicate: axes this dim may not use */
  int why[SH_MAXAXES];            /* decision that put each axis here (-1: none) */
  uint32_t store;                 /* axes of storage splits (ZeRO's): ops other than the optimizer's
                                     update read the value gathered on them, and propagation does
                                     not carry them into the forward and backward passes */
  int forbid_why[SH_MAXAXES];     /* decision behind a replicate of each axis */
} sh_layout;

typedef enum sh_source { SRC_TACTIC, SRC_PROP } sh_source;

typedef struct sh_decision {
  sh_source src;
  int value, dim, axis;
  const char *tactic;             /* the tactic (schedule entry) that acted, or whose propagation did */
  loc at;                         /* the statement */
  int op;                         /* SRC_PROP: the op it went through */
  int from;                       /* SRC_PROP: the value it came from */
  int from_decision;              /* SRC_PROP: the decision on that value */
  int replicate;                  /* a replicate constraint rather than a split */
  int storage;                    /* a storage split (sh_layout.store) */
} sh_decision;

typedef struct sh_conflict {
  int value, op, axis;            /* op -1: a tactic statement's own conflict */
  int from_tactic;                /* 1: from a tactic statement (errors under --strict) */
  const char *tactic;
  loc at;
  const char *message;
  int lost_to;                    /* the decision that won (-1 if none) */
  int next;                       /* the value's previous conflict (-1: none) */
} sh_conflict;

/* A tactic's word on a value it chose not to split (ctx:note): why, for
** carve explain. */
typedef struct sh_note {
  int value;
  const char *tactic;
  loc at;
  const char *text;
} sh_note;

typedef struct sh_undo { int value; sh_layout old; } sh_undo;

typedef struct sh_plan {
  arena mem;
  const ir_graph *g;
  sh_mesh mesh;
  sh_layout *lay;                 /* one per value */
  sh_decision *dec; int ndec, deccap;
  sh_conflict *con; int ncon, concap;
  int *con_last;                  /* per value: its latest conflict (-1: none), to find repeats at once */
  sh_note *note; int nnote, notecap;
  const char *tactic;             /* the tactic being applied (for provenance) */
  loc at;                         /* its current statement */
  int storage;                    /* the splits tactics make now are storage splits */
  char *keep;                     /* per value: its partial sum is passed on as it is */
  float *early;                   /* per value reduced where it is made though it could be passed on: the
                                     bytes its sum would cost reduced further on (0: not such a value) */
  /* undo log: a value's layout before its first change since the last mark */
  sh_undo *log; int nlog, logcap;
  uint32_t epoch, *logged;        /* logged[v] == epoch: already saved since the mark */
  struct sh_rule **rules;         /* per op: its rule once worked out (rules.c), in mem */
  sh_pipe pipe;
  int ring;                       /* fused attention may keep its sequence split: the lowering passes
                                     the keys and values around the devices that split it (ring
                                     attention; the stdlib's context tactic asks for it) */
} sh_plan;

/* A point to come back to: the REPL's undo, the search's try-and-take-back.
** Decisions, conflicts and notes are append-only, layouts are saved before their
** first change after the mark, so a mark costs nothing and a rollback
** costs what changed since. Partial sums are derived: after a rollback,
** call shard_partials again where they are wanted. */
typedef struct sh_mark { int ndec, ncon, nlog, nnote; int nmesh; uint32_t virt, zigzag; sh_pipe pipe; int ring; } sh_mark;

sh_plan *shard_new(const ir_graph *g, const sh_mesh *m);
void     shard_free(sh_plan *p);

int      shard_axis(const sh_plan *p, const char *name);            /* -1 if unknown */
/* The devices of the mesh (its virtual axes have none of their own). */
int64_t  shard_devices(const sh_plan *p);
int      shard_uses_axis(const sh_layout *l, int rank, int axis);   /* the dim using it, or -1 */
/* Local shape of value v on one device. */
void     shard_local(const sh_plan *p, int v, ir_shape *out);
/* "[[batch], [], [model]]" style text, "{}" style partials: for reports. */
const char *shard_str(const sh_plan *p, int v, arena *a);
/* "[batch, -, model+batch]": a layout of rank dims */
const char *shard_dims_str(const sh_plan *p, const sh_dim *dims, int rank, arena *a);
const char *shard_axes_str(const sh_plan *p, uint32_t mask, arena *a);

/* The actions (a tactic statement, the REPL, Lua). Return 0 when applied,
** 1 when refused as a conflict (recorded), -1 on an error in d (indivisible). */
int shard_split(sh_plan *p, int v, int dim, int axis, diag *d);
int shard_replicate(sh_plan *p, int v, int dim /* -1: every dim */, int axis);

sh_mark shard_mark(sh_plan *p);
void    shard_rollback(sh_plan *p, sh_mark m);

/* Propagate every decision through the graph to a fixed point. */
void shard_propagate(sh_plan *p);
/* The same from a fixed point, when only what changed since mark m can
** move: it visits the ops next to those values and on (the search's
** evaluations). Where splits conflict, the order of visits can pick a
** different winner than shard_propagate: commit with that one. */
void shard_propagate_from(sh_plan *p, sh_mark m);
/* Partial sums: which axes each op's result is a partial sum over, and
** which it passes on unreduced. Computed once the tactics are applied;
** actions see none (shard_unpartial clears them before more actions). */
void shard_partials(sh_plan *p);
void shard_unpartial(sh_plan *p);

int  shard_record(sh_plan *p, sh_decision d);

/* A pipelined plan's placement (pipe.axis >= 0; stages.c): mask[v] the
** stages that compute value v (bit s: stage s), fwd[v] 1 for the forward
** pass (the loss depends on it), cuts[0 .. n-2] the values that end each
** of the n stages. */
typedef struct sh_stages {
  uint64_t *mask; char *fwd;
  int *part;                      /* value -> the part of the program it belongs to (-1: where it is read) */
  int *cuts; int n;               /* the values that end parts 0 .. n - 2 (n parts: stages x chunks) */
} sh_stages;
/* Fill st (free it with shard_stages_free, also after an error); -1 with a
** located error when the program cannot be cut. */
int  shard_stages(const sh_plan *p, sh_stages *st, diag *d);
void shard_stages_free(sh_stages *st);
/* A note on value v from the tactic being applied, at its statement (p->at). */
void shard_note(sh_plan *p, int v, const char *text);
void shard_conflict(sh_plan *p, int value, int op, int axis, int from_tactic, int lost_to, const char *fmt, ...)
  __attribute__((format(printf, 7, 8)));

/* ---- the op rules (rules.c): the factor view of every op ---- */

/* a gather: the indices' dims, the operand's and the result's, none shared;
** an op that would need more leaves the rest of its dims whole */
#define SH_MAXF (4 * IR_MAXRANK)

enum { F_PASS, F_CONTRACT, F_WHOLE };

typedef struct sh_rule {
  int nf;
  int8_t kind[SH_MAXF];
  int nops;                       /* operands, then the result at index nops-1 */
  int8_t (*map)[IR_MAXRANK];      /* nops rows: the factor of each dim, -1: none (size 1 or free) */
  int8_t *rank;                   /* nops */
  int shift;                      /* EMBEDDING/EMBEDDING_GRAD/CROSS_ENTROPY: see rules.c */
} sh_rule;

/* Fill r for op value v, its rows in mem (an op has as many operands as the
** program gives it: a concatenation of hundreds); 0, or -1 for values that
** are not ops. */
int shard_rule(const ir_graph *g, const ir_value *v, sh_rule *r, arena *mem);
/* The same for op v of p's graph, worked out once per plan and kept (the
** passes that visit ops again and again: propagation, the search); the
** rows are the plan's. */
int shard_rule_of(const sh_plan *p, int v, sh_rule *r);
/* Let fused attention keep its sequence split (ring attention) or not: the
** kept rules of attention ops are worked out again. */
void shard_set_ring(sh_plan *p, int on);


/* ---- how one op computes under the plan (shared by analysis and lowering) ---- */

typedef struct sh_oplayout {
  sh_rule r;
  sh_dim fac[SH_MAXF];            /* the axes each factor is split over while computing */
  uint32_t contract;              /* axes of the contracting factors: the result's partial sum */
} sh_oplayout;

/* A parameter, or one behind the reshapes, transposes and converts an
** export writes before a dot: a tactic's split of it is kept where ops
** disagree, and it is gathered at each use (ZeRO-3 keeps nothing gathered). */
int sh_param_like(const ir_graph *g, int x);

/* Decide the computation layout of op v: operands' splits first, the
** result's where they only add slicing, pass factors before contracting
** ones where an axis would be used twice. */
void shard_oplayout(const sh_plan *p, int v, sh_oplayout *o);
/* A partial sum reduced where it is made, into the layout every reader
** wants (into) when that splits an axis of the sum: a reduce-scatter, not
** an all-reduce and a slice. 0 when the plan's own layout is kept. */
int shard_reduced_into(const sh_plan *p, int v, sh_dim *into);
/* Why op u computes with a mesh axis on the factor it does: the factor,
** the operand and dim whose split brought it there (-1: none), the bytes
** that layout moves (parameters, and all), and the same for the layout
** where factor `factor` takes the axis instead (alt_factor -1: not asked). */
typedef struct sh_choice {
  int factor, from_op, from_dim;
  double params, all;
  int alt_factor;
  double alt_params, alt_all;
} sh_choice;
int shard_axis_choice(const sh_plan *p, int u, int axis, int factor, sh_choice *c);
/* The dims layout an operand (or the result, k = nargs) has while computing. */
void shard_required(const sh_plan *p, const sh_oplayout *o, int k, sh_dim *dims, int rank);

/* After shard_partials: a value whose partial sum its users take as it is
** (partial + partial, a linear op) rather than reduced where it is made. */
int shard_keeps_partial(const sh_plan *p, int v);

#endif

/*
** diff.h: what changes between two plans of one model (carve diff): the
** values whose sharding differs, the collectives each program has that
** the other lacks, memory and step time from the simulator, and the
** conflicts found in one plan only. Names that differ only in their
** numbers (l0.attn.wq, l1.attn.wq) and change alike are one group,
** l{i}.attn.wq with i = 0, 1, so that a 96-layer model prints one line a
** pattern. Meshes may differ: shardings are compared by axis names.
*/
#ifndef interp_report_diff_h
#define interp_report_diff_h

#include "interp/shard/shard.h"
#include "interp/sim/sim.h"
#include "runtime/prog.h"
#include "util/json.h"
#include "util/strbuf.h"

/* One plan: its tactic file, the plan (partial sums computed), its
** lowered program, and the simulator's prediction (NULL: none) on prof. */
/* the kinds of collective, from RT_ALL_REDUCE to the end of rt_op (send and recv too) */
#define DIFF_NKINDS (RT_NOPS - RT_ALL_REDUCE)

typedef struct diff_side {
  const char *name;
  const sh_plan *plan;
  const rt_prog *prog;
  const sim_result *sim;
  const sim_profile *prof;
} diff_side;

#define DIFF_MAXSLOTS 8

/* Values or collectives whose names follow one pattern and change alike. */
typedef struct diff_group {
  const char *pattern;         /* "l{i}.attn.wq"; the name itself for a group of one */
  const char *what;            /* values: "param", "grad", ...; collectives: the kind */
  const char *a, *b;           /* values: the sharding in A and in B ("[-, model, -]", "+ partial {model}");
                                  collectives: the axes ("{model}") and "" */
  int n;                       /* members */
  int order;                   /* program order of the first member */
  int *members;                /* values: value ids; collectives: indices into the diff's collective keys */
  int nslots;                  /* the placeholders of pattern, named i j k ... in order */
  int8_t run[DIFF_MAXSLOTS];   /* which run of digits of a member's name each one stands for */
  int count;                   /* collectives: how many added (> 0) or removed (< 0) in all */
  double bytes;                /* collectives: their bytes per device in all */
} diff_group;

/* A collective as the two programs have it: kind, the value it moves, its axes. */
typedef struct diff_coll {
  const char *kind, *value, *axes;
  int count[2];
  double bytes[2];
  int first[2];                  /* its first instruction in each program (-1: none) */
} diff_coll;

typedef struct diff_conflict { int side; const sh_conflict *c; } diff_conflict;

typedef struct report_diff_t {
  arena mem;
  const diff_side *side[2];
  int mesh_differs;
  int nvalues, nchanged;         /* values compared (no literals), and those that differ */
  diff_group *values;            /* grouped, in program order of their first member */
  int nvgroups;
  diff_coll *coll;               /* every (kind, value, axes) of either program */
  int ncoll;
  int kind_count[2][DIFF_NKINDS];   /* by kind, in RT_OP order from RT_ALL_REDUCE */
  double kind_bytes[2][DIFF_NKINDS];
  diff_group *added, *removed;   /* grouped like the values */
  int nadded, nremoved;
  int nbytes_changed;            /* keys in both, as many times, with other bytes */
  diff_conflict *conflicts;      /* in one plan and not the other */
  int nconflicts;
} report_diff_t;

/* Compare plans a and b (over the same graph). */
void report_diff_compute(report_diff_t *d, const diff_side *a, const diff_side *b);
void report_diff_free(report_diff_t *d);
/* The text of carve diff. */
void report_diff(strbuf *b, const report_diff_t *d);
/* The JSON object of carve diff --json. */
void report_diff_json(json *j, const report_diff_t *d);
/* "i = 0..11" for group g's slot k (values or collectives of d). */
void report_diff_numbers(strbuf *b, const report_diff_t *d, const diff_group *g, int k, int collectives);

#endif

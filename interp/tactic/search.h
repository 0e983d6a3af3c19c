/*
** search.h: automatic tactics. `tactic found = auto (axes = [model], ...)`
** searches the actions a tactic file could write (split a dim of an input,
** a parameter, optimizer state, or chosen intermediates, on an axis) for
** the plan with the best predicted step time or memory, and applies what
** it found; `carve auto` writes it back as a tactic file.
**
** What makes it fast: values of one layer pattern (l0.mlp.w1 ... l95.mlp.w1
** are "l*.mlp.w1") are one candidate, so a model of 96 layers has the
** candidates of one; candidates that propagation ties together (splitting
** wq's heads splits wk's, wv's and wo's) are found by their footprint on
** the first round and searched as one choice after; each evaluation costs
** only what the action changed (shard_propagate_from, the estimator's
** incremental update, the plan's undo log). The simulator checks the plan
** finally kept.
*/
#ifndef interp_tactic_search_h
#define interp_tactic_search_h

#include "interp/shard/shard.h"
#include "interp/sim/estimate.h"
#include "interp/sim/profile.h"
#include "lang/tac.h"

typedef enum search_objective { SEARCH_TIME, SEARCH_MEMORY } search_objective;
typedef enum search_strategy { SEARCH_BEAM, SEARCH_MCTS } search_strategy;

/* What a search reports while it runs (for a progress bar). */
typedef struct search_progress {
  int64_t evals, budget;          /* budget 0: none */
  double elapsed, seconds;        /* seconds 0: no time budget */
  double best_seconds, best_memory;
  int fits;                       /* the best so far is under the memory limit */
} search_progress;
typedef void (*search_progress_fn)(void *ud, const search_progress *pr, int done);

/* Strategies that take a whole axis, which the search may try beside its
** splits (auto's try = [...]): the stdlib's context and pipeline tactics. */
enum { SEARCH_TRY_CONTEXT = 1, SEARCH_TRY_PIPELINE = 2 };

typedef struct search_opts {
  uint32_t axes;                  /* the mesh axes to split on */
  unsigned try_whole;             /* SEARCH_TRY_* bits (tactic.c's run_auto tries them) */
  search_objective objective;
  double memory_limit;            /* bytes per device */
  int64_t budget;                 /* evaluations (0: until nothing improves) */
  double seconds;                 /* wall-clock budget (0: none); results then depend on speed */
  uint64_t seed;
  unsigned kinds;                 /* 1 << TAC_SEL_INPUT | ...: the leaves it acts on */
  const char **globs;             /* and these intermediates (value globs) */
  int nglobs;
  search_strategy strategy;
  int beam;                       /* states kept each round (1: greedy) */
  const sim_profile *prof;
  sim_opts sim;                   /* the profile, links, tf32, overlap */
  const char *links;              /* the links spec, for the final simulation */
  search_progress_fn progress;
  void *progress_ud;
} search_opts;

typedef struct search_action {
  tac_sel sel;                    /* input, param, state, grad or value */
  const char *pattern;            /* "l*.mlp.w1": the members' names, digits as '*' */
  int *members, nmembers;         /* value ids, ascending */
  int dim, axis;
  est_cost after;                 /* the estimate once applied */
} search_action;

typedef struct search_stats {
  int64_t evals;                  /* actions tried and costed */
  int candidates;                 /* (pattern, dim, axis) triples */
  int choices;                    /* after tying candidates with the same footprint */
  int values;                     /* values the candidates act on */
  int rounds;
  double seconds;
} search_stats;

typedef struct search_result {
  search_action *acts;            /* in the order applied (arena) */
  int nacts;
  est_cost start, found;          /* estimates */
  double sim_start, sim_found;    /* the simulator's step time, seconds */
  double mem_start, mem_found;    /* and its peak memory, bytes */
  int fits;
  search_stats st;
} search_result;

/* Read an auto declaration's arguments (x in f) for plan p. prof_dir:
** where profiles live; device: a --device overriding the declaration's
** (NULL: its own, else h100-sxm). -1 with a located error. */
int search_opts_read(const sh_plan *p, const tac_file *f, const tac_decl *x, const char *prof_dir, const char *device,
                     arena *a, sim_profile *prof, search_opts *o, diag *d);

/* Search from p's current state and apply what is found, each action as
** tactic `<name>_<k>` followed by shard_propagate, so that a file with
** those tactics scheduled in order rebuilds exactly this plan. The plan
** must have no partial sums computed (between tactics). -1 with an error
** in d when nothing fits the memory limit (the plan is then left as the
** smallest found) or a simulation fails. */
int search_run(sh_plan *p, const search_opts *o, const char *name, arena *a, search_result *r, diag *d);
/* The plan as it stands, lowered and simulated on o's profile: its step
** time and peak memory a device. 0, or -1 with the error in d. */
int search_simulate(sh_plan *p, const search_opts *o, arena *a, double *seconds, double *memory, diag *d);

/* One action as a tactic statement: 'shard param "l*.mlp.w1" dim 1 on model'. */
void search_action_text(const sh_plan *p, const search_action *x, strbuf *b);

#endif

/*
** tactic.h: apply a tactic file's schedule to a program: resolve the mesh,
** the tactics (blocks, stdlib files, Lua scripts), their arguments and
** selectors, then apply each scheduled tactic and propagate.
*/
#ifndef interp_tactic_h
#define interp_tactic_h

#include "interp/shard/shard.h"
#include "interp/tactic/search.h"
#include "lang/tac.h"
#include "util/strbuf.h"

/* What an auto tactic found, for `carve auto` to write down. */
/* A strategy that takes a whole axis, as an auto tactic tried it (try = [...]). */
typedef struct tactic_tried {
  const char *use;                /* its use line ("use \"context\" as found_cp (axis = cp)"); NULL: the search alone */
  const char *name;               /* the name it gives the tactic (found_cp) */
  int axis;                       /* the axis it takes (-1: none) */
  double seconds, memory;         /* simulated, with the search over the other axes after it */
  int ok;                         /* it applied (a pipeline whose microbatches do not divide the batch does not) */
  const char *why;                /* when it did not: its first error, without the place */
  int after;                      /* applied after the search (a pipeline whose batch the search splits), not before */
  unsigned strategy;              /* SEARCH_TRY_CONTEXT or SEARCH_TRY_PIPELINE (0: the search alone) */
  int applied;                    /* the strategy itself applied (what failed, if anything, came after it) */
} tactic_tried;

typedef struct tactic_found {
  const char *name;               /* the auto tactic */
  const tac_file *file;           /* where it is declared */
  const tac_decl *decl;
  const sim_profile *prof;
  search_opts opts;
  search_result r;
  tactic_tried *tried;            /* with try = [...]: every plan tried, the search alone first */
  int ntried, chosen;             /* tried[chosen] is the plan kept */
  struct tactic_found *next;
} tactic_found;

typedef struct tactic_opts {
  const char *mesh;        /* --mesh text overriding the file's mesh, or NULL */
  int strict;              /* conflicts from tactics are errors */
  int lenient;             /* a selector matching nothing is a warning */
  const char *stdlib_dir;  /* the folders `use "NAME"` searches, ':'-separated (NULL: datadir_path's) */
  const char *profile_dir; /* the folders device profiles are found in, ':'-separated (NULL: sim_profile_dir()) */
  const char *device;      /* --device: the profile auto tactics and ctx:cost() cost on (NULL: h100-sxm) */
  search_progress_fn progress;   /* auto tactics report here while they search (NULL: silent) */
  void *progress_ud;
  tactic_found **found;    /* auto tactics append what they found here (NULL: not kept) */
  int ranks;               /* processes that each apply the file (carve run under mpirun): auto tactics then refuse time budgets */
  long long lua_steps;     /* Lua tactics: instructions a script may run (0: LAPI_STEPS) */
  size_t lua_memory;       /* Lua tactics: bytes a script may hold (0: LAPI_MEMORY) */
} tactic_opts;

/* Read --mesh "batch=4, model=2" into m (names in a); -1 with a located
** error ("--mesh:1:9: ..."). */
int tactic_parse_mesh(arena *a, const char *text, sh_mesh *m, diag *d);

/* Apply the whole file; returns the plan (NULL after an error in d). The
** plan's conflicts list what was refused; under strict, a conflict from a
** tactic statement is an error. */
sh_plan *tactic_apply(const ir_graph *g, const tac_file *f, const tactic_opts *o, arena *mem, diag *d);

/* ---- one step at a time (the REPL, Lua, the search) ---- */

typedef struct tactic_ctx {
  const ir_graph *g;
  sh_plan *p;
  const tac_file *f;       /* where tactic names are looked up (blocks, use lines) */
  const tactic_opts *o;
  arena *mem;              /* resolved files and names live here */
  diag *d;
} tactic_ctx;

/* A plan with no decisions yet, on f's mesh (or o->mesh). */
sh_plan *tactic_plan_new(const ir_graph *g, const tac_file *f, const tactic_opts *o, arena *mem, diag *d);
/* Apply the tactic called name in c->f (a block, a use line, a Lua script),
** then propagate. off: where the name was written, for messages. */
int tactic_run(tactic_ctx *c, const char *name, uint32_t off);
/* Apply one statement written in f outside any tactic, as tactic `who`,
** then propagate. 0, or -1 with an error in c->d (a refusal is a conflict,
** recorded in the plan, not an error). */
int tactic_run_stmt(tactic_ctx *c, const tac_file *f, const tac_stmt *s, const char *who);
/* After the last tactic: --strict's check, then the partial sums. */
int tactic_finish(tactic_ctx *c);

/* What auto tactics found, written back (found.c): the text of f with each
** auto declaration in list replaced by the tactics found_1, found_2 ...
** (one per action, in order) and the schedule naming them in its place.
** Loading it gives exactly plan p. -1 with a located error. */
int  tactic_found_text(const tac_file *f, const sh_plan *p, const tactic_found *list, strbuf *out, arena *a, diag *d);
/* tactic_found_text, then a check that the text, loaded as path under
** options o, rebuilds exactly plan p (every value's layout and replicate
** constraints). -1 with an error: nothing should be written then. */
int  tactic_found_file(const ir_graph *g, const tac_file *f, const sh_plan *p, const tactic_found *list, const tactic_opts *o,
                       const char *path, strbuf *out, arena *a, diag *d);
/* Three lines on how the search went, each beginning with prefix. */
void tactic_found_summary(strbuf *b, const tactic_found *x, const char *prefix, arena *a);

#endif

/*
** repl.h: the REPL's sessions, without a terminal. A line goes in, text
** comes out: tactic statements and declarations apply at once (with
** propagation), commands report on the state, and every error is printed
** and forgotten; nothing ends the session but 'quit'. The command line's
** `carve repl` adds line editing, history and completion around it
** (cli/repl.c); tests and fuzzers drive it directly.
*/
#ifndef interp_repl_repl_h
#define interp_repl_repl_h

#include "util/strbuf.h"

typedef struct repl repl;

typedef struct repl_opts {
  const char *model_path;        /* NULL: no model yet ('load' one, or a tactic file after a model) */
  const char *model_name;        /* --model */
  const char *train;             /* --train */
  const char *tactic_path;       /* applied first, when given */
  const char *mesh;              /* --mesh */
  const char *device;            /* the profile 'cost' uses (NULL: h100-sxm) */
  const char *profile_dir;       /* the folders of the profiles, ':'-separated (NULL: sim_profile_dir()) */
  int no_fuse;                   /* --no-fuse: attention as the model wrote it */
  int strict, lenient;           /* --strict, --lenient: as apply takes them */
  const char *stdlib_dir;        /* the folders `use "NAME"` searches, ':'-separated (NULL: the default) */
} repl_opts;

enum { REPL_DONE = 0, REPL_MORE = 1, REPL_QUIT = 2 };

/* A session; what loading said (and any error) is in out. Never NULL. */
repl *repl_new(const repl_opts *o, strbuf *out);
void  repl_free(repl *r);
/* One line of input. REPL_MORE: the statement goes on (give the next line);
** REPL_QUIT: 'quit'; else REPL_DONE. What the line did, or its error, is
** appended to out. */
int   repl_line(repl *r, const char *line, strbuf *out);
/* The prompt for the next line ("carve> ", or "   ... " inside a statement). */
const char *repl_prompt(const repl *r);
/* How many lines ended in an error so far; whether a statement is unfinished. */
int   repl_errors(const repl *r);
int   repl_pending(const repl *r);

/* The current plan (NULL before a mesh), for tests and tools. */
struct sh_plan;
const struct sh_plan *repl_plan(const repl *r);

/* Completion: the words that could replace the word ending at cursor in
** line (commands, keywords, value names, axes; a word with * or ? lists
** the names it matches). Calls add for each, in order; returns how many. */
int repl_complete(repl *r, const char *line, int cursor, void (*add)(void *ctx, const char *word), void *ctx);

#endif

/*
** session.h: what every command does first: read the model file, build
** the IR of the chosen model, and turn it into a training step when asked.
** The REPL keeps one session alive; commands make one and drop it.
*/
#ifndef interp_session_h
#define interp_session_h

#include "interp/train/train.h"
#include "interp/ir/ir.h"
#include "interp/tactic/tactic.h"
#include "lang/tac.h"

typedef struct session_opts {
  const char *model_path;
  const char *model_name;   /* --model */
  const char *train;        /* --train text, or NULL for the forward program */
  const char *tactic_path;  /* NULL: one device */
  tactic_opts tac;          /* --mesh, --strict, --lenient */
  int no_fuse;              /* --no-fuse: keep attention as the model wrote it (interp/ir/fuse.c) */
} session_opts;

typedef struct session {
  arena mem;                /* sources and syntax trees */
  diag diag;                /* every message of the session */
  ir_graph *g;
  train_spec train;
  tac_file *tac;
  sh_plan *plan;            /* NULL without a tactic file */
} session;

void session_init(session *s);
int  session_load(session *s, const session_opts *o);
void session_free(session *s);

#endif

/*
** session.c: load, build, train.
*/
#include "interp/drive/session.h"
#include "interp/front/front.h"
#include "interp/fuse/fuse.h"

#include <string.h>

void session_init(session *s) {
  memset(s, 0, sizeof *s);
  arena_init(&s->mem);
  diag_init(&s->diag);
}

int session_load(session *s, const session_opts *o) {
  if (o->train && train_parse(&s->mem, o->train, &s->train, &s->diag) < 0) return -1;
  front_opts fo = {.model = o->model_name, .as_written = o->no_fuse};
  s->g = front_read(&s->mem, &s->diag, o->model_path, &fo);
  if (!s->g) return -1;
  if (!o->no_fuse) fuse_program(s->g, NULL);
  if (o->train && train_build(s->g, &s->train, &s->diag) < 0) return -1;
  if (!o->tactic_path) {
    if (o->tac.mesh) return diag_error(&s->diag, LOC_NONE, "--mesh needs a tactic file saying how to split the program");
    return 0;
  }
  const diag_src *ts = diag_load_file(&s->mem, &s->diag, o->tactic_path);
  if (!ts) return -1;
  s->tac = tac_parse(&s->mem, &s->diag, ts);
  if (!s->tac) return -1;
  s->plan = tactic_apply(s->g, s->tac, &o->tac, &s->mem, &s->diag);
  return s->plan ? 0 : -1;
}

void session_free(session *s) {
  shard_free(s->plan);
  ir_graph_free(s->g);
  arena_free(&s->mem);
  diag_free(&s->diag);
  memset(s, 0, sizeof *s);
}

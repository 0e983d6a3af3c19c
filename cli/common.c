/*
** common.c: what every command does alike: report the session's messages
** and load the model and tactic file.
*/
#include "cli/cli.h"
#include "interp/drive/session.h"

void cli_report(const diag *d) { fputs(diag_text(d), stderr); }

void cli_session_opts(const cli_opts *o, session_opts *so) {
  *so = (session_opts){o->files[0], o->model, o->train, o->nfiles > 1 ? o->files[1] : NULL, {o->mesh, o->strict, o->lenient, NULL}};
}

int cli_load(session *s, const cli_opts *o) {
  session_init(s);
  session_opts so;
  cli_session_opts(o, &so);
  if (session_load(s, &so) < 0) {
    cli_report(&s->diag);
    session_free(s);
    return -1;
  }
  return 0;
}

/*
** export.c: carve export: a model (and its plan) as StableHLO text with
** sdy shardings, for JAX to run.
*/
#include "cli/cli.h"
#include "interp/export/export.h"
#include "util/file.h"

#include <errno.h>
#include <string.h>

int cli_export(const cli_opts *o) {
  if (!o->out) {
    fprintf(stderr, "carve: error: export needs -o PROGRAM.mlir (see 'carve export --help')\n");
    return 2;
  }
  session s;
  if (cli_load(&s, o) < 0) return 1;
  arena a;
  arena_init(&a);
  int rc = 0;
  char *text = export_program(s.g, s.plan, &a, &s.diag);
  if (!text) rc = -1;
  else if (file_write_atomic(o->out, text, strlen(text)) < 0)
    rc = diag_error(&s.diag, LOC_NONE, "cannot write '%s': %s", o->out, strerror(errno));
  if (rc == 0 && !o->quiet) fprintf(stderr, "carve: wrote %s\n", o->out);
  if (s.diag.nerrors || s.diag.nwarnings) cli_report(&s.diag);
  arena_free(&a);
  session_free(&s);
  return rc < 0 ? 1 : 0;
}

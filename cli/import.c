/*
** import.c: carve import: a StableHLO program (.mlir) to a model file,
** and its argument shardings to a tactic file.
*/
#include "cli/cli.h"
#include "interp/front/hlo.h"
#include "util/file.h"

#include <errno.h>
#include <string.h>

int cli_import(const cli_opts *o) {
  if (!o->out) {
    fprintf(stderr, "carve: error: import needs -o MODEL.cir (see 'carve import --help')\n");
    return 2;
  }
  arena a;
  arena_init(&a);
  diag d;
  diag_init(&d);
  hlo_opts ho = {.entry = o->model, .params = o->params_from_args, .as_written = o->no_fuse};
  char *cir, *tac;
  int rc = hlo_import(&a, &d, o->files[0], &ho, &cir, &tac);
  if (rc == 0 && file_write_atomic(o->out, cir, strlen(cir)) < 0)
    rc = diag_error(&d, LOC_NONE, "cannot write '%s': %s", o->out, strerror(errno));
  if (rc == 0 && o->tactics_out) {
    if (!tac) {
      diag_warning(&d, LOC_NONE, "%s has no sdy.mesh; no tactic file was written to '%s'", o->files[0], o->tactics_out);
    } else if (file_write_atomic(o->tactics_out, tac, strlen(tac)) < 0) {
      rc = diag_error(&d, LOC_NONE, "cannot write '%s': %s", o->tactics_out, strerror(errno));
    }
  }
  if (rc == 0 && !o->quiet) fprintf(stderr, "carve: wrote %s%s%s\n", o->out, o->tactics_out && tac ? " and " : "", o->tactics_out && tac ? o->tactics_out : "");
  if (d.nerrors || d.nwarnings) cli_report(&d);
  diag_free(&d);
  arena_free(&a);
  return rc < 0 ? 1 : 0;
}

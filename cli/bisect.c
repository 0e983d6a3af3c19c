/*
** bisect.c: carve bisect: the first value where two saved programs (carve
** lower -o) differ, the second being the reference; --tolerance and the
** report, which carve run --bisect shares.
*/
#include "cli/cli.h"
#include "interp/drive/bisect.h"

#include <stdlib.h>
#include <string.h>

/* --tolerance X: a positive number, else 0 after saying why (the default when not given). */
double cli_tolerance(const cli_opts *o, int say) {
  if (!o->tolerance) return BISECT_TOLERANCE;
  char *end;
  double t = strtod(o->tolerance, &end);
  if (*o->tolerance && !*end && t > 0 && t < 1e10) return t;
  if (say) fprintf(stderr, "carve: error: --tolerance '%s': give a relative error such as 1e-4\n", o->tolerance);
  return 0;
}

void cli_bisect_print(const cli_opts *o, const bisect_result *res, const progfile *desc) {
  if (o->json) {
    json j;
    json_init(&j);
    bisect_json(&j, res, desc);
    puts(sb_str(&j.out));
    json_free(&j);
  } else {
    strbuf b;
    sb_init(&b);
    bisect_report(&b, res, desc);
    fputs(sb_str(&b), stdout);
    sb_free(&b);
  }
  fflush(stdout);
}

int cli_bisect(const cli_opts *o) {
  double tol = cli_tolerance(o, 1);
  if (tol <= 0) return 2;
  progfile a, b;
  diag d;
  diag_init(&d);
  int rc = 0;
  memset(&b, 0, sizeof b);
  if (progfile_read(&a, &d, o->files[0]) < 0 || progfile_read(&b, &d, o->files[1]) < 0) {
    cli_report(&d);
    rc = 1;
    goto out;
  }
  bisect_result res;
  char err[512];
  if (bisect_files(&a, &b, o->params, o->data, o->steps < 1 ? 1 : o->steps, tol, &res, err, sizeof err) < 0) {
    fprintf(stderr, "carve: error: %s\n", err);
    rc = 1;
    goto out;
  }
  res.ref = o->files[1];
  cli_bisect_print(o, &res, &a);
  bisect_free(&res);
out:
  progfile_free(&a);
  progfile_free(&b);
  diag_free(&d);
  return rc;
}

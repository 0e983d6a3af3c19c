/*
** bisect.c: carve bisect: the first value where two saved programs (carve
** lower -o) differ, the second being the reference; --tolerance and the
** report, which carve run --bisect shares.
*/
#include "cli/cli.h"
#include "interp/drive/bisect.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --tolerance X: a plain positive decimal number (no hexadecimal, no inf),
** else 0 after saying why; the default when not given. */
double cli_tolerance(const cli_opts *o, int say) {
  const char *t = o->tolerance;
  if (!t) return BISECT_TOLERANCE;
  char *end;
  errno = 0;
  double x = strtod(t, &end);
  if (*t && !*end && !errno && isfinite(x) && x > 0 && !strpbrk(t, "xXpP")) return x;
  if (say) fprintf(stderr, "carve: error: --tolerance '%s': give a positive decimal number, as in --tolerance 1e-5\n", t);
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
  if (res.first >= 0) rc = 1;          /* a value over the tolerance: the programs differ */
  bisect_free(&res);
out:
  progfile_free(&a);
  progfile_free(&b);
  diag_free(&d);
  return rc;
}

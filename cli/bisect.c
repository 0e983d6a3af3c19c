/*
** bisect.c: carve bisect: the first value where two saved programs (carve
** lower -o) differ, the second being the reference.
*/
#include "cli/cli.h"
#include "interp/drive/bisect.h"

#include <string.h>

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
  if (o->json) {
    json j;
    json_init(&j);
    bisect_json(&j, &res, &a);
    puts(sb_str(&j.out));
    json_free(&j);
  } else {
    strbuf s;
    sb_init(&s);
    bisect_report(&s, &res, &a);
    fputs(sb_str(&s), stdout);
    sb_free(&s);
  }
  bisect_free(&res);
out:
  progfile_free(&a);
  progfile_free(&b);
  diag_free(&d);
  return rc;
}

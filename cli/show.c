/*
** show.c: carve show: which device holds which block of a value, as text
** and, with --svg, as a picture for documents.
*/
#include "cli/cli.h"
#include "interp/report/picture.h"
#include "util/file.h"

#include <errno.h>
#include <string.h>

int cli_show(const cli_opts *o) {
  cli_opts o2 = *o;
  o2.nfiles = 2;
  session s;
  if (cli_load(&s, &o2) < 0) return 1;
  int v = cli_value(&s, o, o->files[2]);
  int rc = 0;
  if (v < 0) {
    rc = 1;
  } else if (o->rank >= shard_devices(s.plan)) {
    fprintf(stderr, "carve: error: --rank %d is outside the mesh of %lld devices (0..%lld)\n", o->rank,
            (long long)shard_devices(s.plan), (long long)shard_devices(s.plan) - 1);
    rc = 1;
  } else {
    strbuf b;
    sb_init(&b);
    report_picture(&b, s.plan, v, o->rank);
    fputs(sb_str(&b), stdout);
    if (o->svg) {
      sb_clear(&b);
      report_picture_svg(&b, s.plan, v);
      if (file_write_atomic(o->svg, sb_str(&b), b.n) < 0) {
        fprintf(stderr, "carve: error: cannot write '%s': %s; check that its folder exists and is writable\n", o->svg, strerror(errno));
        rc = 1;
      } else printf("wrote %s\n", o->svg);
    }
    sb_free(&b);
  }
  session_free(&s);
  return rc;
}

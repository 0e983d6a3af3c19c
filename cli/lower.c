/*
** lower.c: carve lower: one device's program as text.
*/
#include "cli/cli.h"
#include "interp/drive/progfile.h"
#include "interp/drive/session.h"
#include "interp/lower/lower.h"
#include "runtime/mesh.h"

int cli_lower(const cli_opts *o) {
  session s;
  lower_opts lo = {o->keep_values, o->drop_collective};   /* --test-drop-collective: tests only */
  if (cli_lower_opts(o, &lo) < 0 || cli_load(&s, o) < 0) return 1;
  rt_prog p;
  lower_result lr;
  if ((o->keep_values || o->drop_collective) && !o->out) {
    fprintf(stderr, "carve: error: --keep-values and --test-drop-collective shape the program a file keeps: give -o FILE\n");
    session_free(&s);
    return 2;
  }
  if (lower_program_opts(s.g, s.plan, &lo, &p, &lr, &s.diag) < 0) {
    cli_report(&s.diag);
    session_free(&s);
    return 1;
  }
  int ndev = rt_mesh_devices(&p), rank = o->rank < 0 ? 0 : o->rank, rc = 0;
  arena a;
  arena_init(&a);
  if (o->out) {      /* the program for 'carve bisect': the same on every rank */
    progfile f;
    char err[512];
    progfile_describe(&f, s.g, s.plan, &p, &lr);
    if (progfile_write(&f, o->out, err, sizeof err) < 0) {
      fprintf(stderr, "carve: error: %s\n", err);
      rc = 1;
    } else {
      printf("wrote %s: %d instructions over %d buffers, %d device%s%s\n", o->out, p.ninstrs, p.nbufs, ndev, ndev == 1 ? "" : "s",
             o->keep_values ? ", every value kept" : "");
    }
    progfile_free(&f);
    goto out;
  }
  if (rank >= ndev) {
    fprintf(stderr, "carve: error: --rank %d is outside the mesh of %d device%s (0..%d)\n", rank, ndev, ndev == 1 ? "" : "s", ndev - 1);
    rc = 1;
    goto out;
  }
  if (p.mesh_rank) {
    /* every rank runs these instructions; what differs is which piece of each
       tensor it holds, and so where its slices and offsets fall */
    printf("rank %d of %d, mesh coordinates:", rank, ndev);
    for (int i = 0; i < p.mesh_rank; i++) printf(" %s=%d", p.axis_names[i], rt_mesh_coord(&p, rank, i));
    int stage = p.stage_axis >= 0 ? rt_prog_stage(&p, rank) : -1;
    if (stage >= 0)
      printf("\n(the ranks of stage %d run its instructions, marked [stage %d] below, each on its own pieces)\n\n"
             "this rank's pieces of the inputs and parameters its stage holds:\n", stage, stage);
    else
      printf("\n(every rank runs the same instructions on its own pieces)\n\nthis rank's pieces of the inputs and parameters:\n");
    for (int b = 0; b < p.nbufs; b++) {
      const rt_buf *rb = &p.bufs[b];
      if (rb->kind != RT_BUF_INPUT || (stage >= 0 && !rt_stage_holds(&p, stage, b))) continue;
      int64_t off[2][RT_MAXRANK], shape[RT_MAXRANK];
      int nblk, z;
      rt_mesh_blocks(&p, rank, b, off, shape, &nblk, &z);
      printf("  %-28s", rb->name);
      for (int i = 0; i < rb->rank; i++) {      /* a dim dealt zig-zag: its two blocks, "0:4 + 28:32" */
        printf("%s%lld:%lld", i ? ", " : "[", (long long)off[0][i], (long long)(off[0][i] + shape[i]));
        if (i == z) printf(" + %lld:%lld", (long long)off[1][i], (long long)(off[1][i] + shape[i]));
      }
      ir_shape gs = {rb->rank, {0}};
      for (int i = 0; i < rb->rank; i++) gs.d[i] = rb->global_shape[i];
      printf("%s of %s\n", rb->rank ? "]" : "[]", ir_shape_str(&a, &gs));
    }
    printf("\n");
  }
  fputs(rt_prog_dump(&p, &a), stdout);
out:
  arena_free(&a);
  lower_result_free(&lr);
  rt_prog_free(&p);
  session_free(&s);
  return rc;
}

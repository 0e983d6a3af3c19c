/*
** test_bisect.c: numerics bisection on the in-process mesh (one thread a
** device, no MPI). A correct plan (gpt2_small, BP + Megatron, an Adam step,
** partial sums passed on unreduced included) has no value beyond the
** tolerance; a planted wrong collective (the lowering's test-only switch
** that leaves the k-th all-reduce undone) is found: the first mismatch is
** the value that all-reduce makes, and the report says the plan reduces it
** and no collective does. Program files written by carve lower -o read
** back to the same program, and bisecting two of them finds the same
** value; a damaged file is refused with its place.
*/
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interp/drive/bisect.h"
#include "interp/drive/session.h"
#include "runtime/comm_local.h"

typedef struct mesh_bisect {
  const session *s;
  lower_opts lo;
  rt_local *l;
  long steps;
  bisect_result res;        /* device 0's */
  strbuf report;            /* device 0's */
  char err[8][256];
} mesh_bisect;

static int device(int dev, void *arg) {
  mesh_bisect *m = arg;
  drive r;
  diag d;
  diag_init(&d);
  int rc = drive_lower_opts(&r, m->s->g, m->s->plan, &m->lo, &d);
  diag_free(&d);
  if (rc == 0) rc = drive_start(&r, rt_backend_cpu(), rt_local_comm(m->l, dev), rt_local_world(m->l, dev), NULL, NULL, m->err[dev], sizeof m->err[dev]);
  progfile desc;
  progfile_describe(&desc, m->s->g, m->s->plan, &r.prog, &r.lr);
  bisect_result res;
  if (rc == 0) rc = bisect_run(&r, &desc, NULL, NULL, m->steps, 0, &res, m->err[dev], sizeof m->err[dev]);
  if (rc == 0 && dev == 0) {
    m->res = res;
    bisect_report(&m->report, &res, &desc);
  } else if (rc == 0) bisect_free(&res);
  progfile_free(&desc);
  drive_free(&r);
  return rc;
}

static void load(session *s, const char *model, const char *tac, const char *train) {
  session_init(s);
  char mp[512], tp[512];
  snprintf(mp, sizeof mp, "%s/%s", SRCDIR, model);
  snprintf(tp, sizeof tp, "%s/%s", SRCDIR, tac);
  session_opts o = {mp, NULL, train, tp, {0}};
  cr_assert(session_load(s, &o) == 0, "%s", diag_text(&s->diag));
}

static void run(mesh_bisect *m, const session *s, int drop, long steps) {
  memset(m, 0, sizeof *m);
  m->s = s;
  m->lo = (lower_opts){1, drop};
  m->steps = steps;
  sb_init(&m->report);
  drive first;
  diag d;
  diag_init(&d);
  cr_assert(drive_lower_opts(&first, s->g, s->plan, &m->lo, &d) == 0, "%s", diag_text(&d));
  diag_free(&d);
  m->l = rt_local_new(&first.prog);
  int rc = rt_local_run(m->l, device, m);
  for (int i = 0; i < rt_local_devices(m->l); i++) cr_assert(rc == 0 && !m->err[i][0], "device %d: %s", i, m->err[i]);
  rt_local_free(m->l);
  drive_free(&first);
}

/* the values a step computes (every one of them is compared) */
static int computed(const session *s) {
  int n = 0;
  for (int i = 0; i < s->g->nvals; i++) n += s->g->vals[i]->kind == IR_OP;
  return n;
}

static void done(mesh_bisect *m) {
  bisect_free(&m->res);
  sb_free(&m->report);
}

/* The value the k-th all_reduce of the ordinary lowering makes. */
static const char *kth_all_reduce(const session *s, int k) {
  rt_prog p;
  lower_result lr;
  diag d;
  diag_init(&d);
  lower_opts lo = {0};
  lo.bucket_bytes = -1;             /* as bisect lowers (keeping values): no reduction joined */
  cr_assert(lower_program_opts(s->g, s->plan, &lo, &p, &lr, &d) == 0);
  diag_free(&d);
  const char *name = NULL;
  for (int i = 0, n = 0; i < p.ninstrs && !name; i++)
    if (p.instrs[i].op == RT_ALL_REDUCE && ++n == k) name = s->g->vals[p.instrs[i].src]->name;
  lower_result_free(&lr);
  rt_prog_free(&p);
  cr_assert(name, "no all_reduce number %d", k);
  return name;
}

Test(bisect, a_correct_plan_has_no_mismatch) {
  session s;
  load(&s, "examples/gpt2_small.cir", "examples/gpt2_small_bp_mp.tac", "adam(lr = 1e-3)");
  mesh_bisect m;
  run(&m, &s, 0, 1);
  cr_assert_eq(m.res.first, -1, "%s", sb_str(&m.report));
  cr_assert_eq(m.res.nrows, computed(&s), "every value of the step: %d of %d", m.res.nrows, computed(&s));
  cr_assert(m.res.rows[m.res.worst].error < 1e-4, "%s", sb_str(&m.report));
  cr_assert(strstr(sb_str(&m.report), "bisect: no value differs beyond 1e-4; the largest error is"), "%s", sb_str(&m.report));
  cr_assert_eq(m.res.missing, 0);
  done(&m);
  session_free(&s);
}

Test(bisect, partial_sums_are_added_up_before_comparing) {
  session s;
  load(&s, "tests/data/pictures/pic.cir", "tests/data/pictures/partial_2x2.tac", NULL);
  cr_assert(shard_keeps_partial(s.plan, ir_lookup(s.g, "h")->id), "h stays a partial sum over b");
  mesh_bisect m;
  run(&m, &s, 0, 1);
  cr_assert_eq(m.res.first, -1, "%s", sb_str(&m.report));
  int seen = 0;
  for (int k = 0; k < m.res.nrows; k++) seen |= m.res.rows[k].value == ir_lookup(s.g, "h")->id;
  cr_assert(seen, "the partial sum h is compared");
  done(&m);
  session_free(&s);
}

Test(bisect, later_steps_compare_the_leaves_too) {
  session s;
  load(&s, "examples/gpt2_small.cir", "examples/gpt2_small_bp_mp.tac", "sgd(lr = 0.1)");
  mesh_bisect m;
  run(&m, &s, 0, 3);
  cr_assert_eq(m.res.first, -1, "%s", sb_str(&m.report));
  cr_assert_eq(m.res.step, 3);
  cr_assert_eq(s.g->vals[m.res.rows[0].value]->kind, IR_INPUT, "the first value compared is a leaf: %s", s.g->vals[m.res.rows[0].value]->name);
  done(&m);
  session_free(&s);
}

typedef struct dcase { int k; } dcase;

static void planted(int k) {
  session s;
  load(&s, "examples/gpt2_small.cir", "examples/gpt2_small_bp_mp.tac", "adam(lr = 1e-3)");
  const char *want = kth_all_reduce(&s, k);
  mesh_bisect m;
  run(&m, &s, k, 1);
  cr_assert(m.res.first >= 0, "the dropped all_reduce %d (of '%s') is found: %s", k, want, sb_str(&m.report));
  const char *got = s.g->vals[m.res.rows[m.res.first].value]->name;
  cr_assert_str_eq(got, want, "%s", sb_str(&m.report));
  cr_assert(m.res.rows[m.res.first].error > 1e-2, "a missing sum is a large error");
  cr_assert(strstr(sb_str(&m.report), "made by no collective, though the plan reduces it over"), "%s", sb_str(&m.report));
  for (int i = 0; i < m.res.first; i++) cr_assert(m.res.rows[i].error <= 1e-4);
  done(&m);
  session_free(&s);
}

Test(bisect, a_dropped_forward_all_reduce_is_found) { planted(1); }      /* l0.o.einsum over model */
Test(bisect, a_dropped_loss_all_reduce_is_found) { planted(5); }         /* loss over batch */
Test(bisect, a_dropped_backward_all_reduce_is_found) { planted(11); }    /* bwd.l1.h.matmul.da over model */

/* The collectives a value is made by, as the report names them. */
static void made_by(const char *tac, const char *value, const char *want) {
  session s;
  load(&s, "examples/gpt2_small.cir", tac, "adam(lr = 1e-3)");
  rt_prog p;
  lower_result lr;
  lower_opts lo = {1, 0};
  cr_assert(lower_program_opts(s.g, s.plan, &lo, &p, &lr, &s.diag) == 0);
  progfile f;
  progfile_describe(&f, s.g, s.plan, &p, &lr);
  strbuf b;
  sb_init(&b);
  bisect_made_by(&b, &f, ir_lookup(s.g, value)->id);
  cr_assert_str_eq(sb_str(&b), want, "%s", value);
  sb_free(&b);
  progfile_free(&f);
  lower_result_free(&lr);
  rt_prog_free(&p);
  session_free(&s);
}

Test(bisect, the_report_names_the_collectives_that_made_a_value) {
  made_by("examples/gpt2_small_bp_mp.tac", "l0.o.einsum", "made by all_reduce over {model}");
  made_by("examples/gpt2_small_bp_mp.tac", "grad.l0.mlp.w1", "made by all_reduce over {batch}");
  made_by("examples/gpt2_small_bp_mp_z2.tac", "grad.l0.mlp.w1", "made by reduce_scatter over {batch}");
  made_by("examples/gpt2_small_bp_mp.tac", "l0.h", "made by no collective");
}

/* ---- program files ---- */

static void lower_to_file(const session *s, const sh_plan *plan, int keep, int drop, int fuse, const char *path) {
  rt_prog p;
  lower_result lr;
  diag d;
  diag_init(&d);
  lower_opts lo = {keep, drop};
  lo.no_fuse_elementwise = !fuse;
  cr_assert(lower_program_opts(s->g, plan, &lo, &p, &lr, &d) == 0, "%s", diag_text(&d));
  diag_free(&d);
  progfile f;
  progfile_describe(&f, s->g, plan, &p, &lr);
  char err[256];
  cr_assert(progfile_write(&f, path, err, sizeof err) == 0, "%s", err);
  /* it reads back to the same program */
  progfile g;
  diag_init(&d);
  cr_assert(progfile_read(&g, &d, path) == 0, "%s", diag_text(&d));
  diag_free(&d);
  arena a;
  arena_init(&a);
  cr_assert_str_eq(rt_prog_dump(&g.prog, &a), rt_prog_dump(&p, &a));
  cr_assert_eq(g.prog.ninstrs, p.ninstrs);
  for (int i = 0; i < p.ninstrs; i++) {   /* every field, and a constant's bytes (its pointer aside) */
    rt_instr x = g.prog.instrs[i], y = p.instrs[i];
    if (y.op == RT_CONST) cr_assert(!memcmp(x.data, y.data, (size_t)p.bufs[y.out].nelem * rt_dtype_size(p.bufs[y.out].dtype)));
    if (y.op == RT_FUSED) cr_assert(!memcmp(x.data, y.data, sizeof(rt_fused)), "the steps of fused instruction %d differ", i);
    x.data = y.data = NULL;
    cr_assert(!memcmp(&x, &y, sizeof x), "instruction %d differs", i);
  }
  cr_assert_eq(g.prog.stage_axis, p.stage_axis);
  for (int i = 0; i < p.nbufs; i++) {
    cr_assert_eq(g.prog.bufs[i].kind, p.bufs[i].kind);
    cr_assert_eq(g.prog.bufs[i].stages, p.bufs[i].stages);
    cr_assert_eq(g.prog.bufs[i].carry_from, p.bufs[i].carry_from);
    cr_assert(!memcmp(g.prog.bufs[i].dim_group, p.bufs[i].dim_group, sizeof p.bufs[i].dim_group));
  }
  for (int v = 0; v < s->g->nvals; v++) {
    cr_assert_eq(g.lr.buf_of[v], lr.buf_of[v]);
    cr_assert_eq(g.lr.partial[v], lr.partial[v]);
    cr_assert_str_eq(g.vals[v].name, f.vals[v].name);
    cr_assert_str_eq(g.vals[v].sharding, f.vals[v].sharding);
    cr_assert_eq(g.leaves[v].init.seed, f.leaves[v].init.seed);
  }
  arena_free(&a);
  progfile_free(&g);
  progfile_free(&f);
  lower_result_free(&lr);
  rt_prog_free(&p);
}

/* a program file's text stamped as carve stamps it: FNV-1a of everything
** before the end line */
static void restamp(char *text) {
  char *end = strstr(text, "\nend ");
  cr_assert(end);
  uint64_t h = 1469598103934665603ull;
  for (const char *c = text; c <= end; c++) { h ^= (unsigned char)*c; h *= 1099511628211ull; }
  sprintf(end + 1, "end %016llx\n", (unsigned long long)h);
}

/* text's first line made "carve-program v" (the buffer holds a character more) */
static void set_version(char *text, int v) {
  char head[32], *nl = strchr(text, '\n');
  int hl = snprintf(head, sizeof head, "carve-program %d", v);
  cr_assert(nl);
  memmove(text + hl, nl, strlen(nl) + 1);
  memcpy(text, head, (size_t)hl);
}

/* the text of a program file of version 10 (without fused steps) as version
** 7 wrote it: each instruction's shape, strides and perm cut to their first
** 8 entries */
static void v7_of(const char *v8, char *out) {
  static const char *const keys[] = {" shape ", " stride0 ", " stride1 ", " stride2 ", " perm "};
  cr_assert(!strncmp(v8, "carve-program 10\n", 17));
  const char *p = v8;
  char *o = out;
  while (*p) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p + 1) : strlen(p);
    int instr = !strncmp(p, "instr ", 6);
    const char *q = p;
    while (q < p + len) {
      int k = -1;
      for (int i = 0; i < 5 && instr; i++)
        if (!strncmp(q, keys[i], strlen(keys[i]))) k = i;
      if (k < 0) { *o++ = *q++; continue; }
      size_t kl = strlen(keys[k]);
      memcpy(o, q, kl);
      o += kl;
      q += kl;
      for (int commas = 0; *q != ' ' && *q != '\n'; q++) {
        if (*q == ',' && ++commas == 8) { while (*q != ' ' && *q != '\n') q++; break; }
        *o++ = *q;
      }
    }
    p += len;
  }
  *o = 0;
  set_version(out, 7);
  restamp(out);
}

/* a program file's text, in a buffer of 16 MiB (a character spare past it) */
static char *file_text(const char *path) {
  char *text = calloc(1 << 24, 1);
  FILE *f = fopen(path, "r");
  cr_assert(text && f);
  size_t n = fread(text, 1, (1 << 24) - 2, f);
  fclose(f);
  cr_assert(n > 0, "%s is empty", path);
  return text;
}

/* a program file of this text is refused with a message holding want */
static void refused(const char *path, const char *text, const char *want) {
  FILE *f = fopen(path, "w");
  cr_assert(f && fputs(text, f) >= 0 && fclose(f) == 0);
  progfile a;
  diag d;
  diag_init(&d);
  cr_assert(progfile_read(&a, &d, path) < 0, "read: %s", text);
  cr_assert(strstr(diag_text(&d), want), "wanted '%s' in: %s", want, diag_text(&d));
  progfile_free(&a);
  diag_free(&d);
}

Test(bisect, saved_programs) {
  session s;
  load(&s, "examples/gpt2_small.cir", "examples/gpt2_small_bp_mp.tac", "adam(lr = 1e-3)");
  char pa[] = "/tmp/carve_bisect_a_XXXXXX", pb[] = "/tmp/carve_bisect_b_XXXXXX", pc[] = "/tmp/carve_bisect_c_XXXXXX";
  close(mkstemp(pa));
  close(mkstemp(pb));
  close(mkstemp(pc));
  lower_to_file(&s, s.plan, 1, 0, 1, pa);
  lower_to_file(&s, NULL, 1, 0, 1, pb);
  lower_to_file(&s, s.plan, 1, 11, 1, pc);
  progfile a, b, c;
  diag d;
  diag_init(&d);
  cr_assert(progfile_read(&a, &d, pa) == 0 && progfile_read(&b, &d, pb) == 0 && progfile_read(&c, &d, pc) == 0, "%s", diag_text(&d));
  char err[256];
  bisect_result res;
  cr_assert(bisect_files(&a, &b, NULL, NULL, 1, 0, &res, err, sizeof err) == 0, "%s", err);
  cr_assert_eq(res.first, -1);
  cr_assert_eq(res.nrows, computed(&s), "%d of %d values compared", res.nrows, computed(&s));
  bisect_free(&res);
  cr_assert(bisect_files(&c, &b, NULL, NULL, 1, 0, &res, err, sizeof err) == 0, "%s", err);
  cr_assert(res.first >= 0);
  cr_assert_str_eq(c.vals[res.rows[res.first].value].name, kth_all_reduce(&s, 11));
  bisect_free(&res);
  /* two plans against each other: the partitioned program is the reference */
  cr_assert(bisect_files(&c, &a, NULL, NULL, 2, 0, &res, err, sizeof err) == 0, "%s", err);
  cr_assert(res.first >= 0 && res.step == 2);
  bisect_free(&res);
  progfile_free(&a);
  progfile_free(&b);
  progfile_free(&c);
  /* a damaged file: refused with its place, never run */
  FILE *f = fopen(pa, "r+");
  cr_assert(f);
  fseek(f, 200, SEEK_SET);
  fputc('7', f);
  fclose(f);
  diag_clear(&d);
  cr_assert(progfile_read(&a, &d, pa) < 0);
  cr_assert(strstr(diag_text(&d), pa) && strstr(diag_text(&d), "error:"), "%s", diag_text(&d));
  progfile_free(&a);
  diag_free(&d);
  refused(pb, "carve-program 1\nmodel m train 0 values 0\nmesh\nbuf 0 name \"x\"", ":4:");    /* located on its line */
  refused(pb, "carve-program 11\n", "version 11");
  /* the program as run: its elementwise chains fused (the step's scalars:
  ** Adam's bias corrections); they read back the same (lower_to_file), and
  ** a file of an older version holding them is refused */
  lower_to_file(&s, s.plan, 0, 0, 1, pc);
  char *old = file_text(pc);
  cr_assert(!strncmp(old, "carve-program 10\n", 17) && strstr(old, "op fused "));
  set_version(old, 8);
  restamp(old);
  refused(pb, old, "fused steps in a program file before version 9");
  /* an Adam update saved before its scalars changed is refused, not misread */
  lower_to_file(&s, s.plan, 0, 0, 0, pc);       /* updates fused, elementwise chains apart */
  free(old);
  old = file_text(pc);
  cr_assert(!strncmp(old, "carve-program 10\n", 17) && strstr(old, "op adam ") && !strstr(old, "op fused "));
  /* a file of version 7 (8 entries in each instruction's fixed-rank lists)
  ** reads as the same program */
  char *v7 = calloc(1 << 24, 1);
  v7_of(old, v7);
  progfile g7, g8;
  diag_init(&d);
  FILE *f7 = fopen(pb, "w");
  cr_assert(f7 && fputs(v7, f7) >= 0 && fclose(f7) == 0);
  cr_assert(progfile_read(&g7, &d, pb) == 0 && progfile_read(&g8, &d, pc) == 0, "%s", diag_text(&d));
  cr_assert_eq(g7.prog.ninstrs, g8.prog.ninstrs);
  for (int i = 0; i < g8.prog.ninstrs; i++) {
    rt_instr x = g7.prog.instrs[i], y = g8.prog.instrs[i];
    x.data = y.data = NULL;
    cr_assert(!memcmp(&x, &y, sizeof x), "instruction %d of the version-7 file differs", i);
  }
  progfile_free(&g7);
  progfile_free(&g8);
  diag_free(&d);
  set_version(v7, 3);     /* lists of 8 entries, as version 3 wrote them */
  refused(pb, v7, "before version 4 reads other scalars; lower the model again");
  free(v7);
  free(old);
  unlink(pa);
  unlink(pb);
  unlink(pc);
  session_free(&s);
}

/* A pipelined program in a file: its stage axis, and the stages that hold
** each buffer and run each instruction, read back exactly (lower_to_file
** compares every field); a stages line in a file of an older version, and
** a stage the mesh does not have, are refused at their place. */
Test(bisect, saved_pipelines) {
  session s;
  load(&s, "tests/data/gpt_pp.cir", "tests/data/pp2.tac", "sgd(lr = 0.1)");
  char pa[] = "/tmp/carve_pp_XXXXXX", pb[] = "/tmp/carve_pq_XXXXXX";
  int fa = mkstemp(pa), fb = mkstemp(pb);
  cr_assert(fa >= 0 && fb >= 0);
  close(fa);
  close(fb);
  lower_to_file(&s, s.plan, 0, 0, 1, pa);
  char *text = file_text(pa);
  cr_assert(strstr(text, "\nstages 0\n") && strstr(text, " stages 2\n"), "the stages are written");
  char *copy = strdup(text);
  set_version(copy, 9);
  restamp(copy);
  refused(pb, copy, "a stages line in a program file before version 10");
  free(copy);
  char *b = strstr(text, "\nbuf 0 ");
  cr_assert(b);
  char *st = strstr(b, " stages ");
  cr_assert(st && st < strchr(b + 1, '\n'));
  st[8] = '4';                            /* stage 2 of 2 */
  restamp(text);
  refused(pb, text, "names stages the mesh does not have (2)");
  free(text);
  unlink(pa);
  unlink(pb);
  session_free(&s);
}

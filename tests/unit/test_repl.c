/*
** test_repl.c: the REPL's sessions driven a line at a time: statements
** apply with propagation, errors never end a session, a statement can go
** on over lines, undo goes back to exactly the state of any earlier step,
** and a saved tactic file loads back to exactly the state it was saved
** from; show draws which device holds which block as carve show does;
** completion offers commands, values (by prefix or glob) and axes.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interp/drive/session.h"
#include "interp/repl/repl.h"
#include "interp/report/picture.h"

static char model[512];

static repl *start(const char *mesh, strbuf *out) {
  snprintf(model, sizeof model, "%s/examples/gpt2_small.cir", SRCDIR);
  repl_opts o = {model, NULL, "adam(lr = 1e-3)", NULL, mesh, NULL, SRCDIR "/profiles"};
  sb_init(out);
  repl *r = repl_new(&o, out);
  cr_assert(strstr(sb_str(out), "model 'gpt2_small'"), "%s", sb_str(out));
  return r;
}

/* feed lines; returns what they printed */
static const char *feed(repl *r, strbuf *out, const char *lines) {
  sb_clear(out);
  char *copy = strdup(lines), *save = NULL;
  for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) repl_line(r, l, out);
  free(copy);
  return sb_str(out);
}

/* The layouts of every value, as text: what two equal states share. */
static char *state(const sh_plan *p) {
  strbuf b;
  sb_init(&b);
  for (int v = 0; v < p->g->nvals; v++) {
    const sh_layout *l = &p->lay[v];
    sb_printf(&b, "%d:", v);
    for (int d = 0; d < IR_MAXRANK; d++) {
      sb_printf(&b, "[%x", l->forbid[d]);
      for (int k = 0; k < l->dim[d].n; k++) sb_printf(&b, ",%d", l->dim[d].ax[k]);
      sb_putc(&b, ']');
    }
    sb_putc(&b, '\n');
  }
  sb_printf(&b, "conflicts %d\n", p->ncon);
  for (int i = 0; i < p->ncon; i++) sb_printf(&b, "%s\n", p->con[i].message);
  char *s = strdup(sb_str(&b));
  sb_free(&b);
  return s;
}

Test(repl, statements_apply_and_errors_do_not_end_the_session) {
  strbuf out;
  repl *r = start("batch = 2, model = 2", &out);
  const char *o = feed(r, &out, "shard param \"l0.mlp.w1\" dim 1 on model\n");
  cr_assert(strstr(o, "l0.mlp.w1                    [-, model]"), "%s", o);
  cr_assert(strstr(o, "l0.mlp.w2                    [model, -]"), "propagation shows at once: %s", o);
  o = feed(r, &out, "shard param \"nope\" dim 0 on model\nshow nothing\nfrobnicate\nmesh batch = 4\n");
  cr_assert(strstr(o, "(repl line 2):1:13: error: no param matches 'nope'"), "%s", o);
  cr_assert(strstr(o, "carve: error: no value named 'nothing'"), "%s", o);
  cr_assert(strstr(o, "(repl line 4):1:1: error: unexpected 'frobnicate'"), "%s", o);
  cr_assert(strstr(o, "error: the mesh is fixed once there is a plan"), "%s", o);
  cr_assert_eq(repl_errors(r), 4);
  o = feed(r, &out, "show l0.mlp.w2\nexplain l0.mlp.w2\nconflicts\ncollectives\ncost\nschedule\nvalues l0.mlp.b*\nhelp\n");
  cr_assert(strstr(o, "l0.mlp.w2: f32[256, 64], sharding [model, -], local f32[128, 64]\n"), "%s", o);
  cr_assert(strstr(o, "  [128:256, 0:64]  d1 d3\n"), "and which device holds which block: %s", o);
  cr_assert(strstr(o, "tactic 'repl1' split dim 1 of 'l0.mlp.w1' on 'model'"), "%s", o);
  cr_assert(strstr(o, "total: 2 all_reduce"), "%s", o);
  cr_assert(strstr(o, "on h100-sxm: step "), "%s", o);
  cr_assert(strstr(o, "  1  repl1: shard param \"l0.mlp.w1\" dim 1 on model"), "%s", o);
  cr_assert(strstr(o, "l0.mlp.b1 ") && strstr(o, "l0.mlp.b2 ") && !strstr(o, "l0.mlp.w1 "), "%s", o);
  cr_assert_eq(repl_errors(r), 4, "reports are no errors");
  cr_assert_eq(repl_line(r, "quit", &out), REPL_QUIT);
  repl_free(r);
  sb_free(&out);
}

Test(repl, a_statement_goes_on_over_lines) {
  strbuf out;
  repl *r = start("batch = 2, model = 2", &out);
  sb_clear(&out);
  cr_assert_eq(repl_line(r, "use \"zero\" as z3 (axis = batch,", &out), REPL_MORE);
  cr_assert_str_eq(repl_prompt(r), "   ... ");
  cr_assert_eq(repl_line(r, "                  stage = 3)", &out), REPL_DONE);
  cr_assert_str_eq(repl_prompt(r), "carve> ");
  cr_assert(strstr(sb_str(&out), "wte                          [batch, -]"), "%s", sb_str(&out));
  repl_free(r);
  sb_free(&out);
}

Test(repl, undo_to_any_depth) {
  strbuf out;
  repl *r = start("batch = 2, model = 2", &out);
  const char *steps[] = {
    "shard inputs dim 0 on batch",
    "use \"megatron\" as mp (axis = model)",
    "replicate value \"logits\" on model",
    "use \"zero\" as z2 (axis = batch, stage = 2)",
  };
  char *before[5];
  before[0] = state(repl_plan(r));
  for (int i = 0; i < 4; i++) {
    feed(r, &out, steps[i]);
    cr_assert_eq(repl_errors(r), 0, "%s", sb_str(&out));
    before[i + 1] = state(repl_plan(r));
    cr_assert(strcmp(before[i + 1], before[i]), "step %d changed nothing", i);
  }
  for (int i = 4; i > 0; i--) {
    feed(r, &out, "undo");
    char *now = state(repl_plan(r));
    cr_assert_str_eq(now, before[i - 1], "undo to step %d differs", i - 1);
    free(now);
  }
  cr_assert(strstr(feed(r, &out, "undo"), "nothing to undo"));
  for (int i = 0; i < 4; i++) feed(r, &out, steps[i]);        /* and forward again, the same way */
  char *again = state(repl_plan(r));
  cr_assert_str_eq(again, before[4]);
  feed(r, &out, "reset");
  char *reset = state(repl_plan(r));
  cr_assert_str_eq(reset, before[0]);
  for (int i = 0; i < 5; i++) free(before[i]);
  free(again);
  free(reset);
  repl_free(r);
  sb_free(&out);
}

/* show draws the picture of carve show: a grid for two split dims, a list
** with copies or partial sums otherwise, one rank's block with 'rank R' */
Test(repl, show_draws_which_device_holds_which_block) {
  strbuf out;
  repl *r = start("batch = 2, model = 2", &out);
  const char *o = feed(r, &out, "use \"batch\" as bp (axis = batch)\nuse \"megatron\" as mp (axis = model)\nshow l0.h\n");
  cr_assert_eq(repl_errors(r), 0, "%s", o);
  cr_assert(strstr(o,
    "l0.h: f32[4, 32, 256], sharding [batch, -, model], local f32[2, 32, 128]\n"
    "mesh: batch=2, model=2 (4 devices as (batch, model): d0=(0,0) d1=(0,1) d2=(1,0) d3=(1,1))\n"
    "rows: dim 0 on batch; columns: dim 2 on model\n"
    "      | 0:128 | 128:256\n"
    "------+-------+--------\n"
    "  0:2 | d0    | d1\n"
    "  2:4 | d2    | d3\n"), "%s", o);
  cr_assert_str_eq(feed(r, &out, "show l0.attn.wq rank 1"),
    "l0.attn.wq: f32[64, 4, 16], sharding [-, model, -], local f32[64, 2, 16]\n"
    "mesh: batch=2, model=2 (4 devices as (batch, model): d0=(0,0) d1=(0,1) d2=(1,0) d3=(1,1))\n"
    "rank 1 (batch=0, model=1) holds [0:64, 2:4, 0:16]\n");
  o = feed(r, &out, "show bwd.l0.v.da");
  cr_assert(strstr(o, "  [2:4, 0:32, 0:64]  d2 d3  partial over {model}\n"), "a partial sum is marked: %s", o);
  cr_assert(strstr(feed(r, &out, "show wte"), "every device holds the whole\n"), "%s", sb_str(&out));
  /* the same text as carve show's, from the REPL's plan */
  const sh_plan *p = repl_plan(r);
  strbuf want;
  sb_init(&want);
  for (int v = 0; v < p->g->nvals; v += 37) {
    if (p->g->vals[v]->kind == IR_CONST) continue;
    sb_clear(&want);
    report_picture(&want, p, v, -1);
    char line[300];
    snprintf(line, sizeof line, "show %s", p->g->vals[v]->name);
    cr_assert_str_eq(feed(r, &out, line), sb_str(&want));
  }
  sb_free(&want);
  cr_assert_eq(repl_errors(r), 0);
  /* mistakes are errors that say what to type, and the session goes on */
  cr_assert_str_eq(feed(r, &out, "show l0.h rank 4"), "carve: error: rank 4 is outside the mesh of 4 devices (0..3)\n");
  cr_assert_str_eq(feed(r, &out, "show l0.h 2"),
    "carve: error: show takes a value and at most 'rank R' after it, as in 'show l0.h rank 0'\n");
  cr_assert_str_eq(feed(r, &out, "show nothing rank 0"), "carve: error: no value named 'nothing'\n");
  cr_assert_eq(repl_errors(r), 3);
  repl_free(r);
  sb_free(&out);
}

/* save, then load the file into a fresh session: the same state */
static void save_load(const char *lines) {
  strbuf out;
  repl *r = start("batch = 2, model = 2", &out);
  feed(r, &out, lines);
  cr_assert_eq(repl_errors(r), 0, "%s", sb_str(&out));
  char path[] = "/tmp/carve_repl_XXXXXX.tac";
  int fd = mkstemps(path, 4);
  cr_assert(fd >= 0);
  close(fd);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "save %s", path);
  cr_assert(strstr(feed(r, &out, cmd), "saved "), "%s", sb_str(&out));
  char *saved = state(repl_plan(r));
  /* the file, applied as any tactic file is */
  session s;
  session_init(&s);
  session_opts o = {model, NULL, "adam(lr = 1e-3)", path, {0}};
  cr_assert(session_load(&s, &o) == 0, "%s", diag_text(&s.diag));
  shard_unpartial(s.plan);
  char *loaded = state(s.plan);
  cr_assert_str_eq(loaded, saved, "the saved file does not load back to the same state");
  /* and 'load' in a REPL gives it too */
  repl *r2 = start(NULL, &out);
  snprintf(cmd, sizeof cmd, "load %s", path);
  feed(r2, &out, cmd);
  cr_assert_eq(repl_errors(r2), 0, "%s", sb_str(&out));
  char *reloaded = state(repl_plan(r2));
  cr_assert_str_eq(reloaded, saved);
  free(saved);
  free(loaded);
  free(reloaded);
  session_free(&s);
  repl_free(r);
  repl_free(r2);
  sb_free(&out);
  unlink(path);
}

Test(repl, save_loads_back_exactly) {
  save_load("shard inputs dim 0 on batch\nuse \"megatron\" as mp (axis = model)\nuse \"zero\" as z3 (axis = batch, stage = 3)\n");
  save_load("shard param \"l0.mlp.w1\" dim 1 on model\nreplicate value \"l0.h\" on batch\nshard values dim first on batch\n");
  save_load("tactic emb(axis = model) {\n shard param \"wte\" dim 0 on axis\n}\nshard param \"l1.attn.wq\" dim 1 on model\n");
}

/* auto: a search from the state now, kept as the plain tactics it found;
** undo takes the whole search back, save writes what it found */
Test(repl, auto_searches_from_here) {
  strbuf out;
  repl *r = start("batch = 2, model = 2", &out);
  feed(r, &out, "shard inputs dim 0 on batch");
  char *before = state(repl_plan(r));
  const char *o = feed(r, &out, "auto axes = [model], over = [params], objective = memory");
  cr_assert_eq(repl_errors(r), 0, "%s", o);
  cr_expect(strstr(o, "searched on h100-sxm"), "%s", o);
  cr_expect(strstr(o, "objective memory"), "%s", o);
  o = feed(r, &out, "schedule");
  cr_expect(strstr(o, "auto2_1, "), "%s", o);   /* repl1 was the statement before */
  const sh_plan *p = repl_plan(r);
  int split = 0;
  for (int v = 0; v < p->g->nvals; v++)
    if (p->g->vals[v]->kind == IR_PARAM)
      for (int d = 0; d < IR_MAXRANK; d++) split |= p->lay[v].dim[d].n > 0 && p->lay[v].dim[d].ax[0] == 1;
  cr_expect(split, "no parameter split on model by a search for memory");
  feed(r, &out, "undo");
  char *after = state(repl_plan(r));
  cr_expect_str_eq(after, before, "undo did not take the search back");
  o = feed(r, &out, "auto axes = [nope]");
  cr_expect(strstr(o, "error: unknown axis 'nope'"), "%s", o);
  free(before);
  free(after);
  repl_free(r);
  sb_free(&out);
  save_load("shard inputs dim 0 on batch\nauto axes = [model], over = [params], objective = memory\n");
}

static void add(void *ctx, const char *w) {
  strbuf *b = ctx;
  sb_printf(b, "%s ", w);
}

Test(repl, completion) {
  strbuf out, c;
  repl *r = start("batch = 2, model = 2", &out);
  sb_init(&c);
  repl_complete(r, "sh", 2, add, &c);
  cr_assert_str_eq(sb_str(&c), "show shard ");
  sb_clear(&c);
  repl_complete(r, "explain l0.mlp.w", 16, add, &c);
  cr_assert_str_eq(sb_str(&c), "l0.mlp.w1 l0.mlp.w2 ");
  sb_clear(&c);
  repl_complete(r, "show l?.mlp.b1", 14, add, &c);      /* a glob lists its matches */
  cr_assert_str_eq(sb_str(&c), "l0.mlp.b1 l1.mlp.b1 ");
  sb_clear(&c);
  repl_complete(r, "shard param \"wte\" dim 0 on m", 28, add, &c);
  cr_assert_str_eq(sb_str(&c), "model ");
  sb_free(&c);
  repl_free(r);
  sb_free(&out);
}

/* a value fused into attention: the REPL says where it went */
Test(repl, fused_value_names_its_attention_op) {
  strbuf out;
  sb_init(&out);
  char m[512];
  snprintf(m, sizeof m, "%s/tests/data/attn_reshape.cir", SRCDIR);
  repl_opts o = {m, NULL, NULL, NULL, "model = 2", NULL, SRCDIR "/profiles"};
  repl *r = repl_new(&o, &out);
  const char *t = feed(r, &out, "explain p");
  cr_expect(strstr(t, "no value named 'p': it was fused into the attention op") && strstr(t, "--no-fuse"), "%s", t);
  repl_free(r);
  o.no_fuse = 1;                 /* kept as written, p is there */
  r = repl_new(&o, &out);
  t = feed(r, &out, "explain p");
  cr_expect(!strstr(t, "no value named"), "%s", t);
  repl_free(r);
  sb_free(&out);
}

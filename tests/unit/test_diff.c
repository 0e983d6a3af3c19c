/*
** test_diff.c: carve diff's comparison of two plans. On gpt2_small's Adam
** step, batch parallelism (BP, batch = 4) against BP + Megatron (batch = 2,
** model = 2): the parameters whose sharding differs are exactly the
** Megatron weights (wq, wk, wv, wo, w1, b1, w2 of each layer, one pattern
** each), and the collectives B adds are exactly 8 all-reduces over model
** (4 a layer, 2 layers), none removed. On the 12-layer GPT-2 the same
** patterns carry i = 0..11. A plan against itself differs in nothing; a
** conflict in one plan only is named.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "interp/drive/session.h"
#include "interp/lower/lower.h"
#include "interp/report/diff.h"
#include "lang/tac.h"

typedef struct pair {
  session s;
  sh_plan *b;
  rt_prog prog[2];
  lower_result lr[2];
  diff_side side[2];
  report_diff_t d;
} pair;

/* The model with tactic file A, and B from a file or from text. */
static void load(pair *x, const char *model, const char *train, const char *a, const char *b_file, const char *b_text) {
  memset(x, 0, sizeof *x);
  char mp[512], ap[512], bp[512];
  snprintf(mp, sizeof mp, "%s/examples/%s", SRCDIR, model);
  snprintf(ap, sizeof ap, "%s/examples/%s", SRCDIR, a);
  session_init(&x->s);
  session_opts o = {mp, NULL, train, ap, {0}};
  cr_assert(session_load(&x->s, &o) == 0, "%s", diag_text(&x->s.diag));
  const diag_src *src;
  if (b_file) {
    snprintf(bp, sizeof bp, "%s/examples/%s", SRCDIR, b_file);
    src = diag_load_file(&x->s.mem, &x->s.diag, bp);
  } else {
    src = diag_src_string(&x->s.mem, "b.tac", b_text, strlen(b_text));
  }
  tac_file *tf = src ? tac_parse(&x->s.mem, &x->s.diag, src) : NULL;
  x->b = tf ? tactic_apply(x->s.g, tf, &o.tac, &x->s.mem, &x->s.diag) : NULL;
  cr_assert(x->b, "%s", diag_text(&x->s.diag));
  const sh_plan *plans[2] = {x->s.plan, x->b};
  for (int k = 0; k < 2; k++) {
    lower_opts lo = {0};
    lo.bucket_bytes = -1;           /* each reduction alone: the counts below */
    cr_assert(lower_program_opts(x->s.g, plans[k], &lo, &x->prog[k], &x->lr[k], &x->s.diag) == 0, "%s", diag_text(&x->s.diag));
    x->side[k] = (diff_side){k ? "B" : "A", plans[k], &x->prog[k], NULL, NULL};
  }
  report_diff_compute(&x->d, &x->side[0], &x->side[1]);
}

static void unload(pair *x) {
  report_diff_free(&x->d);
  for (int k = 0; k < 2; k++) { lower_result_free(&x->lr[k]); rt_prog_free(&x->prog[k]); }
  shard_free(x->b);
  session_free(&x->s);
}

static const char *const megatron[] = {"l{i}.attn.wq", "l{i}.attn.wk", "l{i}.attn.wv", "l{i}.attn.wo", "l{i}.mlp.w1", "l{i}.mlp.b1", "l{i}.mlp.w2"};

/* The parameter groups are exactly the Megatron weights, each with the layers in `layers`. */
static void exactly_megatron(pair *x, const char *layers) {
  int nparams = 0;
  for (int k = 0; k < x->d.nvgroups; k++) {
    const diff_group *g = &x->d.values[k];
    if (strcmp(g->what, "param")) continue;
    cr_assert(nparams < 7, "more than the Megatron weights: %s", g->pattern);
    cr_assert_str_eq(g->pattern, megatron[nparams], "parameter %d", nparams);
    cr_assert_eq(g->nslots, 1);
    strbuf b;
    sb_init(&b);
    report_diff_numbers(&b, &x->d, g, 0, 0);
    cr_assert_str_eq(sb_str(&b), layers, "%s", g->pattern);
    sb_free(&b);
    nparams++;
  }
  cr_assert_eq(nparams, 7, "the seven Megatron weights");
}

Test(diff, bp_against_bp_mp_is_the_megatron_weights_and_eight_all_reduces) {
  pair x;
  load(&x, "gpt2_small.cir", "adam(lr = 1e-3)", "gpt2_small_bp.tac", "gpt2_small_bp_mp.tac", NULL);
  cr_assert(x.d.mesh_differs, "batch=4 against batch=2, model=2");
  exactly_megatron(&x, "i = 0, 1");
  int added = 0;
  for (int k = 0; k < x.d.nadded; k++) {
    const diff_group *g = &x.d.added[k];
    cr_assert_str_eq(g->what, "all_reduce", "%s", g->pattern);
    cr_assert_str_eq(g->a, "{model}", "%s", g->pattern);
    added += g->count;
  }
  cr_assert_eq(added, 8, "4 all-reduces a layer, 2 layers");
  cr_assert_eq(x.d.nremoved, 0, "BP's all-reduces are all still there");
  cr_assert_eq(x.d.kind_count[0][0], 31);
  cr_assert_eq(x.d.kind_count[1][0], 39);
  strbuf b;
  sb_init(&b);
  report_diff(&b, &x.d);
  cr_assert(strstr(sb_str(&b), "meshes differ: A batch=4 (4 devices), B batch=2, model=2 (4 devices)"), "%s", sb_str(&b));
  cr_assert(strstr(sb_str(&b), "only in B (8):"), "%s", sb_str(&b));
  cr_assert(strstr(sb_str(&b), "only in A (0)"), "%s", sb_str(&b));
  sb_free(&b);
  unload(&x);
}

Test(diff, twelve_layers_are_one_line_a_pattern) {
  pair x;
  load(&x, "gpt2.cir", "adam(lr = 1e-3)", "gpt2_bp.tac", "gpt2_bp_mp.tac", NULL);
  exactly_megatron(&x, "i = 0..11");
  int added = 0;
  for (int k = 0; k < x.d.nadded; k++) added += x.d.added[k].count;
  cr_assert_eq(added, 48, "4 all-reduces a layer, 12 layers");
  cr_assert_eq(x.d.nadded, 4, "one line per pattern: %d", x.d.nadded);
  unload(&x);
}

Test(diff, a_plan_against_itself_differs_in_nothing) {
  pair x;
  load(&x, "gpt2_small.cir", "adam(lr = 1e-3)", "gpt2_small_bp_mp.tac", "gpt2_small_bp_mp.tac", NULL);
  cr_assert_eq(x.d.nchanged, 0);
  cr_assert_eq(x.d.nadded + x.d.nremoved + x.d.nbytes_changed + x.d.nconflicts, 0);
  cr_assert(!x.d.mesh_differs);
  unload(&x);
}

Test(diff, a_conflict_in_one_plan_only) {
  pair x;
  load(&x, "mlp_small.cir", NULL, "mlp_mp.tac", NULL,
       "mesh model = 2\ntactic keep { replicate param \"w1\" on model }\nuse \"megatron\" as mp (axis = model)\nschedule keep, mp\n");
  cr_assert(x.d.nconflicts >= 1, "B's replicate refuses Megatron's split of w1");
  for (int i = 0; i < x.d.nconflicts; i++) cr_assert_eq(x.d.conflicts[i].side, 1, "the conflicts are B's");
  strbuf b;
  sb_init(&b);
  report_diff(&b, &x.d);
  /* megatron is a Lua script: the refused split is placed at its line */
  cr_assert(strstr(sb_str(&b), "only in B: ") && strstr(sb_str(&b), "megatron.lua:") &&
            strstr(sb_str(&b), "'w1' is kept whole on that axis by a replicate (tactic 'mp')"), "%s", sb_str(&b));
  sb_free(&b);
  json j;
  json_init(&j);
  report_diff_json(&j, &x.d);
  cr_assert(strstr(sb_str(&j.out), "\"only_b\":[{"), "%s", sb_str(&j.out));
  json_free(&j);
  unload(&x);
}

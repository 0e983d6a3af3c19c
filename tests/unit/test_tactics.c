/*
** test_tactics.c: sharding rules, propagation in both directions, conflicts
** and their provenance, each kind of collective, and the collective counts
** of the standard strategies against their analytic values (PartIR's
** Table 3 reasoning: Megatron adds 4 all-reduces a layer, batch parallelism
** one a parameter gradient plus the loss, ZeRO turns them into
** reduce-scatters and all-gathers).
*/
#include "harness.h"
#include "interp/report/report.h"
#include "interp/shard/layout.h"
#include "interp/tactic/tactic.h"
#include "runtime/kern_ring.h"
#include "runtime/mesh.h"
#include "runtime/plan.h"

#include <stdio.h>
#include <string.h>

typedef struct setup {
  arena mem;
  diag d;
  ir_graph *g;
  sh_plan *p;
  rt_prog prog;
  lower_result lr;
  int counts[RT_NOPS];
} setup;

/* fuse: rewrite attention into the fused op first, as sessions do */
static int load_opt(setup *s, const char *model_text, const char *model_path, const char *tac_text, const char *train, int fuse) {
  memset(s, 0, sizeof *s);
  arena_init(&s->mem);
  diag_init(&s->d);
  const diag_src *src;
  if (model_path) {
    char path[512];
    snprintf(path, sizeof path, "%s/examples/%s", SRCDIR, model_path);
    src = diag_load_file(&s->mem, &s->d, path);
  } else {
    src = diag_src_string(&s->mem, "m.cir", model_text, strlen(model_text));
  }
  cir_file *f = cir_parse(&s->mem, &s->d, src);
  if (!f) return -1;
  s->g = build_model(f, NULL, &s->d);
  if (!s->g) return -1;
  if (fuse) ir_fuse_attention(s->g);
  if (train) {
    train_spec t;
    if (train_parse(&s->mem, train, &t, &s->d) < 0 || train_build(s->g, &t, &s->d) < 0) return -1;
  }
  const diag_src *ts = diag_src_string(&s->mem, "t.tac", tac_text, strlen(tac_text));
  tac_file *tf = tac_parse(&s->mem, &s->d, ts);
  if (!tf) return -1;
  tactic_opts o = {0};
  s->p = tactic_apply(s->g, tf, &o, &s->mem, &s->d);
  if (!s->p) return -1;
  lower_opts lo = {0};
  lo.bucket_bytes = -1;             /* each reduction alone: the counts Megatron-LM's and the papers' tables give */
  if (lower_program_opts(s->g, s->p, &lo, &s->prog, &s->lr, &s->d) < 0) return -1;
  for (int i = 0; i < s->prog.ninstrs; i++) s->counts[s->prog.instrs[i].op]++;
  return 0;
}

static int load(setup *s, const char *model_text, const char *model_path, const char *tac_text, const char *train) {
  return load_opt(s, model_text, model_path, tac_text, train, 0);
}

static void unload(setup *s) {
  lower_result_free(&s->lr);
  rt_prog_free(&s->prog);
  shard_free(s->p);
  ir_graph_free(s->g);
  diag_free(&s->d);
  arena_free(&s->mem);
}

static const char *layout(setup *s, const char *name) {
  ir_value *v = ir_lookup(s->g, name);
  cr_assert(v, "no value %s", name);
  return shard_str(s->p, v->id, &s->mem);
}

/* ---- rules ---- */

typedef struct rcase { char body[200]; char value[16]; char map[80]; } rcase;

/* map: for each operand then the result, the factor kind of each dim:
** P pass, C contract, W whole, . none; operands separated by '|' */
static rcase rcases[] = {
  {"input a : f32[4, 8]\n input b : f32[8, 6]\n y = matmul(a, b)", "y", "PC|CP|PP"},
  {"input a : f32[2, 4, 8]\n input b : f32[8, 6]\n y = matmul(a, b)", "y", "PPC|CP|PPP"},
  {"input a : f32[2, 3, 4]\n input w : f32[4, 5, 6]\n y = einsum(\"bsd,dhk->bhsk\", a, w)", "y", "PPC|CPP|PPPP"},
  {"input a : f32[4, 8]\n input b : f32[8]\n y = add(a, b)", "y", "PP|P|PP"},
  {"input a : f32[4, 8]\n input b : f32[4, 1]\n y = mul(a, b)", "y", "PP|P.|PP"},
  {"input a : f32[4, 8]\n y = softmax(a)", "y", "PP|PP"},             /* split: the rows' statistics all-reduced */
  {"input a : f32[4, 8]\n y = max(a, dims = [1])", "y", "PW|P"},
  {"input a : f32[4, 8]\n input g : f32[8]\n input b : f32[8]\n y = layernorm(a, g, b)", "y", "PW|W|W|PW"},
  {"input a : f32[4, 8, 3]\n y = sum(a, dims = [1])", "y", "PCP|PP"},
  {"input a : f32[4, 8, 3]\n y = max(a, dims = [1])", "y", "PWP|PP"},
  {"input a : f32[4, 6, 8]\n y = reshape(a, [24, 8])", "y", "PWP|PP"},
  {"input a : f32[24, 8]\n y = reshape(a, [4, 6, 8])", "y", "PP|PWP"},
  {"input a : f32[4, 8]\n y = transpose(a, [1, 0])", "y", "PP|PP"},
  {"input t : f32[10, 4]\n input i : i32[2, 3]\n y = embedding(t, i)", "y", "CP|PP|PPP"},
  {"input z : f32[2, 3, 10]\n input l : i32[2, 3]\n y = cross_entropy(z, l)", "y", "CCC|CC|"},   /* the classes too: vocabulary-parallel */
  {"input z : f32[2, 3, 10]\n input l : i32[2, 3]\n input d : f32[]\n y = cross_entropy_grad(z, l, d)", "y", "PPP|PP||PPP"},
  {"input a : f32[2, 4, 4]\n y = causal_mask(a)", "y", "PPW|PPW"},   /* the rows (queries) may split: context parallelism */
  {"input a : f32[4, 8]\n input b : f32[4, 2]\n y = concat([a, b], 1)", "y", "PW|PW|PW"},
  {"input a : f32[4, 8]\n y = slice(a, 1, 2, 5)", "y", "PW|PW"},
};

ParameterizedTestParameters(rules, factor_kinds) { return cr_make_param_array(rcase, rcases, sizeof rcases / sizeof rcases[0]); }

ParameterizedTest(rcase *c, rules, factor_kinds) {
  char src[400];
  snprintf(src, sizeof src, "model m {\n %s\n return %s\n}\n", c->body, c->value);
  hx h;
  cr_assert(hx_build(&h, src) == 0, "%s", diag_text(&h.d));
  ir_value *v = ir_lookup(h.g, c->value);
  sh_rule r;
  cr_assert(shard_rule(h.g, v, &r, &h.g->mem) == 0);
  char got[80];
  size_t k = 0;
  for (int o = 0; o < r.nops; o++) {
    if (o) got[k++] = '|';
    for (int i = 0; i < r.rank[o]; i++) {
      int f = r.map[o][i];
      got[k++] = f < 0 ? '.' : r.kind[f] == F_PASS ? 'P' : r.kind[f] == F_CONTRACT ? 'C' : 'W';
    }
  }
  got[k] = 0;
  cr_assert_str_eq(got, c->map, "rule of %s", c->body);
  hx_free(&h);
}

Test(rules, shared_factors_link_the_dims) {
  hx h;
  cr_assert(hx_build(&h, "model m {\n input a : f32[4, 8]\n input b : f32[8, 6]\n y = matmul(a, b)\n return y\n}\n") == 0);
  sh_rule r;
  cr_assert(shard_rule(h.g, ir_lookup(h.g, "y"), &r, &h.g->mem) == 0);
  cr_assert_eq(r.map[0][1], r.map[1][0], "the contracted dims share a factor");
  cr_assert_eq(r.map[0][0], r.map[2][0]);
  cr_assert_eq(r.map[1][1], r.map[2][1]);
  hx_free(&h);
}

/* ---- propagation ---- */

#define CHAIN "model m {\n input x : f32[8, 4]\n param w : f32[4, 6]\n h = tanh(matmul(x, w))\n" \
              " y = softmax(h)\n s = sum(y, dims = [1])\n return s\n}\n"

Test(propagation, forward_from_an_input) {
  setup s;
  cr_assert(load(&s, CHAIN, NULL, "mesh b = 2\ntactic t { shard input \"x\" dim 0 on b }\nschedule t\n", NULL) == 0, "%s", diag_text(&s.d));
  cr_assert_str_eq(layout(&s, "h"), "[b, -]");
  cr_assert_str_eq(layout(&s, "y"), "[b, -]");
  cr_assert_str_eq(layout(&s, "s"), "[b]");
  cr_assert_str_eq(layout(&s, "w"), "[-, -]");
  for (int op = RT_ALL_REDUCE; op <= RT_ALL_TO_ALL; op++) cr_assert_eq(s.counts[op], 0, "batch-split rows need no communication");
  unload(&s);
}

Test(propagation, backward_from_an_output) {
  setup s;
  cr_assert(load(&s, CHAIN, NULL, "mesh b = 2\ntactic t { shard value \"s\" dim 0 on b }\nschedule t\n", NULL) == 0, "%s", diag_text(&s.d));
  cr_assert_str_eq(layout(&s, "y"), "[b, -]");
  cr_assert_str_eq(layout(&s, "h.matmul"), "[b, -]");
  cr_assert_str_eq(layout(&s, "x"), "[b, -]", "back through matmul to its operand");
  unload(&s);
}

Test(propagation, contraction_splits_the_partner_and_leaves_a_partial_sum) {
  setup s;
  cr_assert(load(&s, CHAIN, NULL, "mesh m = 2\ntactic t { shard param \"w\" dim 0 on m }\nschedule t\n", NULL) == 0, "%s", diag_text(&s.d));
  cr_assert_str_eq(layout(&s, "x"), "[-, m]", "the contracted dim of x follows w's");
  cr_assert_str_eq(layout(&s, "h.matmul"), "[-, -]");
  cr_assert(s.p->lay[ir_lookup(s.g, "h.matmul")->id].partial == 1u, "a partial sum over m");
  cr_assert_eq(s.counts[RT_ALL_REDUCE], 1);
  unload(&s);
}

Test(propagation, whole_dims_stop_it) {
  setup s;
  const char *m = "model m {\n input x : f32[8, 4]\n param w : f32[4, 6]\n h = tanh(matmul(x, w))\n"
                  " y = max(h, dims = [1], keepdims = true)\n s = sum(y, dims = [1])\n return s\n}\n";
  cr_assert(load(&s, m, NULL, "mesh m = 2\ntactic t { shard value \"h\" dim 1 on m }\nschedule t\n", NULL) == 0, "%s", diag_text(&s.d));
  cr_assert_str_eq(layout(&s, "y"), "[-, -]", "max needs its dim whole");
  cr_assert_str_eq(layout(&s, "w"), "[-, m]", "backward it goes on");
  unload(&s);
}

Test(propagation, refinement_nests_axes) {
  setup s;
  cr_assert(load(&s, CHAIN, NULL, "mesh a = 2, b = 2\ntactic t { shard input \"x\" dim 0 on a\n shard input \"x\" dim 0 on b }\nschedule t\n", NULL) == 0, "%s", diag_text(&s.d));
  cr_assert_str_eq(layout(&s, "x"), "[a+b, -]");
  cr_assert_str_eq(layout(&s, "y"), "[a+b, -]");
  unload(&s);
}

/* ---- conflicts ---- */

Test(conflicts, first_tactic_wins_and_both_are_named) {
  setup s;
  const char *tac = "mesh m = 2\n"
                    "tactic rows { shard param \"w\" dim 0 on m }\n"
                    "tactic cols { shard param \"w\" dim 1 on m }\n"
                    "schedule rows, cols\n";
  cr_assert(load(&s, CHAIN, NULL, tac, NULL) == 0, "%s", diag_text(&s.d));
  cr_assert_str_eq(layout(&s, "w"), "[m, -]", "the first decision stands");
  cr_assert_eq(s.p->ncon, 1);
  sh_conflict *k = &s.p->con[0];
  cr_assert_str_eq(k->tactic, "cols");
  cr_assert(k->from_tactic);
  cr_assert(strstr(k->message, "already uses that axis on another dim"), "%s", k->message);
  cr_assert(k->lost_to >= 0);
  cr_assert_str_eq(s.p->dec[k->lost_to].tactic, "rows");
  int line, col;
  diag_linecol(k->at.src, k->at.off, &line, &col);
  cr_assert_eq(line, 3, "the losing statement's line");
  diag_linecol(s.p->dec[k->lost_to].at.src, s.p->dec[k->lost_to].at.off, &line, &col);
  cr_assert_eq(line, 2, "the winning statement's line");
  unload(&s);
}

Test(conflicts, strict_makes_them_errors) {
  arena m;
  arena_init(&m);
  diag d;
  diag_init(&d);
  const char *tac = "mesh m = 2\ntactic rows { shard param \"w\" dim 0 on m }\ntactic cols { shard param \"w\" dim 1 on m }\nschedule rows, cols\n";
  cir_file *f = cir_parse(&m, &d, diag_src_string(&m, "m.cir", CHAIN, strlen(CHAIN)));
  ir_graph *g = build_model(f, NULL, &d);
  tac_file *tf = tac_parse(&m, &d, diag_src_string(&m, "t.tac", tac, strlen(tac)));
  tactic_opts o = {.strict = 1};
  cr_assert_null(tactic_apply(g, tf, &o, &m, &d));
  cr_assert(strstr(diag_text(&d), "t.tac:3:15: error: conflict (--strict)"), "%s", diag_text(&d));
  cr_assert(strstr(diag_text(&d), "t.tac:2:15: note: the decision that won, by tactic 'rows'"), "%s", diag_text(&d));
  ir_graph_free(g);
  diag_free(&d);
  arena_free(&m);
}

Test(conflicts, replicate_forbids_and_propagation_stops) {
  setup s;
  const char *tac = "mesh b = 2\ntactic keep { replicate value \"y\" on b }\ntactic bp { shard input \"x\" dim 0 on b }\nschedule keep, bp\n";
  cr_assert(load(&s, CHAIN, NULL, tac, NULL) == 0, "%s", diag_text(&s.d));
  cr_assert_str_eq(layout(&s, "h"), "[b, -]");
  cr_assert_str_eq(layout(&s, "y"), "[-, -]", "kept whole");
  /* what a tactic asked for is no conflict: the stop is a note on the value */
  cr_assert_eq(s.p->ncon, 0, "%s", s.p->ncon ? s.p->con[0].message : "");
  int found = 0;
  for (int i = 0; i < s.p->nnote; i++) found |= strstr(s.p->note[i].text, "(the replicate by tactic 'keep')") != NULL;
  cr_assert(found, "the stop is noted");
  cr_assert_eq(s.counts[RT_ALL_GATHER], 1, "the lowering gathers h for softmax's y");
  unload(&s);
}

Test(conflicts, indivisible_split_is_an_error) {
  setup s;
  int rc = load(&s, CHAIN, NULL, "mesh b = 3\ntactic t { shard input \"x\" dim 0 on b }\nschedule t\n", NULL);
  cr_assert(rc < 0);
  cr_assert(strstr(diag_text(&s.d), "t.tac:2:12: error: cannot split dim 0 of 'x' (size 8) into 3 pieces on 'b': it is not divisible"), "%s", diag_text(&s.d));
  unload(&s);
}

typedef struct terr { char tac[200]; char expect[120]; } terr;
static terr terrs[] = {
  {"mesh b = 2\ntactic t { shard input \"x\" dim 0 on q }\nschedule t\n", "2:37: error: unknown axis 'q'; the mesh has b"},
  {"mesh b = 2\ntactic t { shard input \"x\" dim 5 on b }\nschedule t\n", "2:32: error: dim 5 is out of range for 'x' of rank 2"},
  {"mesh b = 2\ntactic t { shard input \"zz\" dim 0 on b }\nschedule t\n", "2:24: error: no input matches 'zz'"},
  {"mesh b = 2\nschedule nope\n", "2:10: error: unknown tactic 'nope' in the schedule"},
  {"mesh b = 2\nuse \"nosuch\" as n (axis = b)\nschedule n\n", "2:5: error: no stdlib tactic 'nosuch'"},
  {"mesh b = 2\nuse \"zero\" as z (axis = b)\nschedule z\n", "zero needs a stage"},
  {"mesh b = 2\nuse \"zero\" as z (axis = b, stage = 2)\nschedule z\n", "zero shards optimizer state: apply it to a training step"},
  {"mesh b = 2\nuse \"batch\" as z (axs = b)\nschedule z\n", "tactic 'batch' takes no argument 'axs'"},
  {"tactic t { shard input \"x\" dim 0 on b }\nschedule t\n", "no mesh: add a line like 'mesh batch = 2, model = 2' or pass --mesh"},
  {"mesh b = 2\ntactic t { shard input \"x\" dim 0 on b }\n", "no schedule"},
  {"mesh b = 2\ntactic t { shard input \"x\" dim 0 on b }\nschedule t, t\n", "'t' is scheduled twice"},
  {"mesh b = 2\ntactic f = lua \"f.lua\"\nschedule f\n", "2:16: error: cannot open Lua script 'f.lua'"},
  {"mesh b = 65536, c = 65536\ntactic t { shard input \"x\" dim 0 on b }\nschedule t\n", "the mesh has more than 2^20 devices (1048576), the most carve plans for; make axis 'c' smaller"},
};

ParameterizedTestParameters(conflicts, located_errors) { return cr_make_param_array(terr, terrs, sizeof terrs / sizeof terrs[0]); }

ParameterizedTest(terr *c, conflicts, located_errors) {
  setup s;
  cr_assert(load(&s, CHAIN, NULL, c->tac, NULL) < 0, "accepted: %s", c->tac);
  cr_assert(diag_text(&s.d) && strstr(diag_text(&s.d), c->expect), "wanted '%s' in:\n%s", c->expect, diag_text(&s.d));
  unload(&s);
}

/* ---- each kind of collective ---- */

Test(collectives, all_to_all_moves_a_split) {
  setup s;
  const char *tac = "mesh b = 2\ntactic t {\n shard input \"x\" dim 0 on b\n replicate value \"h\" dim 0 on b\n shard value \"h\" dim 1 on b\n}\nschedule t\n";
  cr_assert(load(&s, "model m {\n input x : f32[8, 4]\n h = exp(x)\n y = tanh(h)\n return y\n}\n", NULL, tac, NULL) == 0, "%s", diag_text(&s.d));
  cr_assert_str_eq(layout(&s, "x"), "[b, -]");
  cr_assert_str_eq(layout(&s, "h"), "[-, b]");
  cr_assert_eq(s.counts[RT_ALL_TO_ALL], 1);
  cr_assert_eq(s.counts[RT_ALL_GATHER], 0, "outputs stay split as they are");
  unload(&s);
}

/* Every layout of a rank-3 value over a mesh of three axes, each axis in
** at most one dim, major to minor. */
enum { LR = 3, LA = 3 };
static int all_layouts(sh_dim (*out)[LR]) {
  int n = 0;
  for (int code = 0; code < 64; code++) {          /* each axis: no dim, or dim 0, 1, 2 */
    int where[LA];
    for (int a = 0, c = code; a < LA; a++, c /= 4) where[a] = c % 4 - 1;
    static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int q = 0; q < 6; q++) {                  /* the order the axes take within their dims */
      sh_dim d[LR];
      memset(d, 0, sizeof d);
      for (int k = 0; k < LA; k++) {
        int a = perms[q][k];
        if (where[a] >= 0) d[where[a]].ax[d[where[a]].n++] = (int8_t)a;
      }
      int dup = 0;
      for (int m = 0; m < n && !dup; m++) dup = !memcmp(out[m], d, sizeof d);
      if (!dup) memcpy(out[n++], d, sizeof d);
    }
  }
  return n;
}

static int axis_dim(const sh_dim *d, int a) {
  for (int i = 0; i < LR; i++)
    for (int k = 0; k < d[i].n; k++) if (d[i].ax[k] == a) return i;
  return -1;
}

/* From any layout (with any unused axes a partial sum) to any other, each
** reshard step is one a device can do on what it holds: an axis is
** gathered from the minor end of its dim, and sliced or scattered into a
** dim only when it splits no other (a device's pieces of two dims would
** otherwise come from different devices' data), and the steps end at the
** target with nothing left to sum. */
Test(collectives, every_reshard_is_a_sequence_of_valid_steps) {
  static sh_dim lays[512][LR];
  int n = all_layouts(lays);
  cr_assert_gt(n, 100);
  sh_plan pl;
  memset(&pl, 0, sizeof pl);
  pl.mesh.n = LA;
  for (int a = 0; a < LA; a++) pl.mesh.size[a] = 2;
  for (int f = 0; f < n; f++)
    for (int t = 0; t < n; t++) {
      uint32_t unused = 0;
      for (int a = 0; a < LA; a++) if (axis_dim(lays[f], a) < 0) unused |= 1u << a;
      for (uint32_t partial = 0; partial <= unused; partial = (partial - unused) & unused) {
        layout_step st[LAYOUT_MAXSTEPS];
        int ns = layout_steps(&pl, LR, lays[f], partial, lays[t], st);
        cr_assert(ns >= 0 && ns <= LAYOUT_MAXSTEPS);
        sh_dim cur[LR];
        memcpy(cur, lays[f], sizeof cur);
        uint32_t left = partial;
        for (int k = 0; k < ns; k++) {
          uint32_t ax = st[k].axes;
          int a = __builtin_ctz(ax), i = st[k].dim, ok = 1;
          switch (st[k].op) {
          case RT_ALL_REDUCE: ok = (ax & left) == ax; left &= ~ax; break;
          case RT_REDUCE_SCATTER:
            ok = (left >> a) & 1 && axis_dim(cur, a) < 0;
            left &= ~ax;
            cur[i].ax[cur[i].n++] = (int8_t)a;
            break;
          case RT_SHARD_SLICE: ok = !left && axis_dim(cur, a) < 0; cur[i].ax[cur[i].n++] = (int8_t)a; break;
          case RT_ALL_GATHER: ok = !left && cur[i].n && cur[i].ax[cur[i].n - 1] == a; cur[i].n -= ok; break;
          case RT_ALL_TO_ALL: {
            int j = st[k].dim2;
            ok = !left && cur[j].n && cur[j].ax[cur[j].n - 1] == a;
            cur[j].n -= ok;
            cur[i].ax[cur[i].n++] = (int8_t)a;
            break;
          }
          default: ok = 0;
          }
          cr_assert(ok && ((ax & (ax - 1)) == 0 || st[k].op == RT_ALL_REDUCE),
                    "layout %d -> %d (partial %u): step %d (op %d, dim %d, axes %u) is not valid there", f, t, partial, k,
                    st[k].op, i, ax);
          for (int b = 0; b < LA; b++) {           /* each axis in one dim at most */
            int seen = 0;
            for (int d = 0; d < LR; d++)
              for (int m = 0; m < cur[d].n; m++) seen += cur[d].ax[m] == b;
            cr_assert(seen <= 1, "layout %d -> %d (partial %u): after step %d axis %d splits %d dims", f, t, partial, k, b, seen);
          }
        }
        cr_assert(!left && layout_same(cur, lays[t], LR), "layout %d -> %d (partial %u): the steps end elsewhere", f, t, partial);
        if (partial == unused) break;
      }
    }
}

Test(collectives, reduce_scatter_fuses_reduce_and_split) {
  setup s;
  /* w's rows split the contraction (a partial sum); then the result is wanted split by rows */
  const char *tac = "mesh m = 2\ntactic t1 { shard param \"w\" dim 0 on m }\ntactic t2 { shard value \"h.matmul\" dim 0 on m }\nschedule t1, t2\n";
  cr_assert(load(&s, CHAIN, NULL, tac, NULL) == 0, "%s", diag_text(&s.d));
  cr_assert_eq(s.counts[RT_REDUCE_SCATTER], 1);
  cr_assert_eq(s.counts[RT_ALL_REDUCE], 0);
  unload(&s);
}

Test(counts, megatron_through_reshapes) {
  char text[512];
  snprintf(text, sizeof text, "mesh model = 2\nuse \"megatron\" as mp (axis = model)\nschedule mp\n");
  setup s;
  char path[512];
  snprintf(path, sizeof path, "../tests/data/attn_reshape.cir");
  cr_assert(load(&s, NULL, path, text, "adam(lr = 1e-3)") == 0, "%s", diag_text(&s.d));
  cr_assert_str_eq(layout(&s, "wq"), "[-, model]");
  cr_assert_str_eq(layout(&s, "wo"), "[model, -]", "the output projection is the row-parallel partner");
  cr_assert_eq(s.p->ncon, 0);
  cr_assert_eq(s.counts[RT_ALL_REDUCE], 2, "one layer: one forward, one backward");
  cr_assert_eq(s.counts[RT_ALL_GATHER] + s.counts[RT_ALL_TO_ALL] + s.counts[RT_REDUCE_SCATTER], 0);
  unload(&s);
}

/* ---- collective counts of the standard strategies ---- */

static int nparams(const ir_graph *g) {
  int n = 0;
  for (int i = 0; i < g->nvals; i++) n += g->vals[i]->kind == IR_PARAM;
  return n;
}

/* ZeRO-3 gathers a parameter at each forward and backward use */
static int param_uses(const ir_graph *g) {
  int n = 0;
  for (int i = 0; i < g->nvals; i++) {
    const ir_value *v = g->vals[i];
    if (v->kind != IR_PARAM) continue;
    for (int k = 0; k < v->nusers; k++) {
      const ir_value *u = g->vals[v->users[k]];
      if (strncmp(u->name, "new.", 4) && strncmp(u->name, "adam.", 5) && strncmp(u->name, "sgd.", 4)) n++;
    }
  }
  return n;
}

#define LAYERS 2   /* gpt2_small */

static void counts_once(const char *tac, const char *text, int ar, int ag, int rs, int a2a, int fuse) {
  setup s;
  cr_assert(load_opt(&s, NULL, "gpt2_small.cir", text, "adam(lr = 1e-3)", fuse) == 0, "%s", diag_text(&s.d));
  int fused = 0;
  for (int i = 0; i < s.prog.ninstrs; i++) fused += s.prog.instrs[i].op == RT_ATTENTION;
  cr_expect_eq(fused, fuse ? LAYERS : 0, "%s: attention instructions", tac);
  int P = nparams(s.g);
  cr_assert_eq(P, 4 + 13 * LAYERS);
  if (ar < 0) ar = -ar == 1 ? P + 1 : -ar == 2 ? P + 1 + 4 * LAYERS : 0;
  if (ag < 0) ag = -ag == 1 ? P : -ag == 2 ? param_uses(s.g) : param_uses(s.g) + 1;
  if (rs < 0) rs = P;
  cr_expect_eq(s.counts[RT_ALL_REDUCE], ar, "%s (fused %d): all_reduce", tac, fuse);
  cr_expect_eq(s.counts[RT_ALL_GATHER], ag, "%s (fused %d): all_gather", tac, fuse);
  cr_expect_eq(s.counts[RT_REDUCE_SCATTER], rs, "%s (fused %d): reduce_scatter", tac, fuse);
  cr_expect_eq(s.counts[RT_ALL_TO_ALL], a2a, "%s (fused %d): all_to_all", tac, fuse);
  unload(&s);
}

/* with attention as written and fused: the fused op's batch and heads
** split as the einsums' did, so the counts are the same */
static void counts(const char *tac, int ar, int ag, int rs, int a2a) {
  char rel[256];
  snprintf(rel, sizeof rel, "examples/%s", tac);
  char *text = hx_slurp(rel);
  for (int fuse = 0; fuse < 2; fuse++) counts_once(tac, text, ar, ag, rs, a2a, fuse);
  free(text);
}

Test(counts, batch_parallel) { counts("gpt2_small_bp.tac", -1, 0, 0, 0); }                 /* one per gradient + the loss */
Test(counts, megatron) { counts("gpt2_small_mp.tac", 4 * LAYERS, 0, 0, 0); }               /* 2 forward + 2 backward a layer */
Test(counts, batch_and_megatron) { counts("gpt2_small_bp_mp.tac", -2, 0, 0, 0); }
Test(counts, zero1) { counts("gpt2_small_bp_mp_z1.tac", -2, -1, 0, 0); }                  /* gradients whole, updates gathered */
Test(counts, zero2) { counts("gpt2_small_bp_mp_z2.tac", 4 * LAYERS + 1, -1, -1, 0); }     /* gradients scattered, updates gathered */
Test(counts, zero3) { counts("gpt2_small_bp_mp_z3.tac", 4 * LAYERS + 1, -2, -1, 0); }     /* parameters gathered at each use */
/* An axis of one device moves nothing: batch = 1 beside megatron leaves
** megatron's collectives alone, batch = 1 by itself none */
Test(counts, axes_of_one_device) {
  counts_once("batch = 1, model = 2", "version 1\nmesh batch = 1, model = 2\nuse \"batch\" as bp (axis = batch)\n"
              "use \"megatron\" as mp (axis = model)\nschedule bp, mp\n", 4 * LAYERS, 0, 0, 0, 1);
  counts_once("batch = 1", "version 1\nmesh batch = 1\nuse \"batch\" as bp (axis = batch)\nschedule bp\n", 0, 0, 0, 0, 1);
}
/* + the table split by vocabulary: the lookup is a partial sum (1 all-reduce),
** so is the tied projection's gradient for its input (1 more); the logits
** come out split by class and cross_entropy is the vocabulary-parallel one:
** each row's max and sum of exponentials over all classes (2 all-reduces of
** [rows] values, one max and one sum; the gradient reuses them), the loss a
** partial sum over model too, reduced by the all-reduce batch parallelism
** has anyway (before: the logits gathered whole, 11 all-reduces and 50
** all-gathers); the table's two gradient contributions are summed as
** partial sums and scattered once */
Test(counts, zero3_and_embedding) { counts("gpt2_small.tac", 4 * LAYERS + 1 + 2 + 2, -2, -1, 0); }
/* Megatron with the vocabulary split, as Megatron-LM runs GPT: 4 a layer, the
** lookup, the tied projection's input gradient, and for the loss the max and
** the sum of exponentials; Megatron's third all-reduce (the target logits) is
** carve's all-reduce of the scalar loss (a partial sum over the classes):
** 13 both */
Test(counts, megatron_and_embedding) {
  counts("../tests/data/mp_vocab.tac", 4 * LAYERS + 2 + 3, 0, 0, 0);
  counts("../tests/data/mp_vocab4.tac", 4 * LAYERS + 2 + 3, 0, 0, 0);
  /* + batch: one per gradient (30), the loss's (over both axes now) */
  counts("../tests/data/bp_mp_vocab.tac", 30 + 1 + 4 * LAYERS + 2 + 2, 0, 0, 0);
}

/* Megatron's sequence parallelism (megatron then sequence on one axis):
** each layer's forward is all-gather, column-parallel GEMMs, row-parallel
** GEMM, reduce-scatter, twice (attention, MLP): Megatron-LM's 2 + 2 where
** megatron alone all-reduces twice, the same bytes. The backward gathers
** the residual's gradient before each row-parallel GEMM's input gradient
** and, as Megatron-LM does, the input again for each weight gradient;
** it reduce-scatters the gradients of q, k and v (carve's three GEMMs: two
** reduce-scatters where Megatron's fused one has one). No weight moves:
** every all-gather and reduce-scatter moves an activation or its gradient.
** The norms' gains and biases are reduced, as in Megatron-LM. */
Test(counts, sequence_parallel) {
  char *text = hx_slurp("examples/gpt2_small_mp_sp.tac");
  for (int fuse = 0; fuse < 2; fuse++) {
    setup s;
    cr_assert(load_opt(&s, NULL, "gpt2_small.cir", text, "adam(lr = 1e-3)", fuse) == 0, "%s", diag_text(&s.d));
    const rt_prog *p = &s.prog;
    cr_expect_eq(s.counts[RT_ALL_GATHER], 6 * LAYERS, "fused %d: all_gather", fuse);
    cr_expect_eq(s.counts[RT_REDUCE_SCATTER], 4 * LAYERS, "fused %d: reduce_scatter", fuse);
    cr_expect_eq(s.counts[RT_ALL_TO_ALL], 0, "fused %d: all_to_all", fuse);
    char fwd[64] = "";
    int nf = 0;
    for (int i = 0; i < p->ninstrs; i++) {
      const rt_instr *x = &p->instrs[i];
      if (!rt_is_collective((rt_op)x->op) || x->src < 0) continue;
      const ir_value *v = s.g->vals[x->src];
      if (x->op == RT_ALL_GATHER || x->op == RT_REDUCE_SCATTER) {
        cr_expect(v->kind != IR_PARAM && v->role != ROLE_GRAD, "fused %d: %s moves %s", fuse, rt_coll_name(x), v->name);
        if (nf < 4 * LAYERS) fwd[nf++] = x->op == RT_ALL_GATHER ? 'g' : 's';
      }
    }
    cr_expect_str_eq(fwd, "gsgsgsgs", "fused %d: the forward's gathers (g) and reduce-scatters (s)", fuse);
    unload(&s);
  }
  free(text);
}

/* Expert parallelism (the stdlib's experts, then batch on the same axis):
** GShard's collectives. With a group dim the tokens are moved to the
** experts by one all_to_all (the dispatch, xin) and back by one (the
** combine, eo); the backward moves the experts' output gradient to the
** experts once (bwd.out.db) and reads the forward's moved eo for the
** gates' gradient (it costs no memory: the moved copy lives in place of
** eo), GShard's three. Without groups the dispatch is a contraction over
** the tokens, reduce-scattered onto the experts, and the combine reads the
** experts' output gathered, in the backward gathered again (as Megatron
** gathers again rather than keep a gathered copy). The router's
** scatter-add of routing weights is one all-reduce. No weight moves, and
** the expert weights' gradients need no reduction (each device has its
** experts' tokens). */
/* The collectives of model under tac that move values (not the
** all-reduces), in order; returns how many all-reduces there are. */
static int moved_values(const char *model, const char *tac, const char *moved) {
  char *text = hx_slurp(tac);
  setup s;
  cr_assert(load(&s, NULL, model, text, "adam(lr = 1e-3)") == 0, "%s", diag_text(&s.d));
  char got[1024] = "";
  size_t n = 0;
  for (int i = 0; i < s.prog.ninstrs; i++) {
    const rt_instr *x = &s.prog.instrs[i];
    if (!rt_is_collective((rt_op)x->op) || x->src < 0 || x->op == RT_ALL_REDUCE) continue;
    n += (size_t)snprintf(got + n, sizeof got - n, "%s%s %s", n ? ", " : "", rt_coll_name(x), s.g->vals[x->src]->name);
    cr_assert(n < sizeof got);
  }
  cr_expect_str_eq(got, moved, "%s under %s: the collectives that move values", model, tac);
  int ar = s.counts[RT_ALL_REDUCE];
  unload(&s);
  free(text);
  return ar;
}

static void moe_counts(const char *model, const char *moved, int ar) {
  char path[128];
  snprintf(path, sizeof path, "../tests/data/%s", model);
  cr_expect_eq(moved_values(path, "tests/data/moe_experts.tac", moved), ar, "%s: all_reduce", model);
}

Test(counts, expert_parallel) {
  /* the loss, the router's weight gradient */
  moe_counts("moe_gshard.cir", "all_to_all xin, all_to_all eo, all_to_all bwd.out.db", 2);
  moe_counts("moe_switch.cir", "reduce_scatter xin, all_gather eo, all_gather eo, reduce_scatter bwd.out.db", 2);
  /* + the scatter-add of the routing weights */
  moe_counts("moe_router.cir", "all_to_all xin, all_to_all eo, all_to_all bwd.out.db", 3);
}

/* Context parallelism (the stdlib's context on an axis of its own, the
** attention as written): each device keeps its queries, and the forward
** gathers each layer's keys and values (as Transformer Engine's
** all_gather context parallelism); the causal mask, the scores and the
** softmax stay split. The backward gathers k and v again, reduce-scatters
** their gradients onto the sequence, and gathers the layer's normed input
** once for the key and value weights' gradients. Nothing moves the
** scores. The all-reduces are the gradients' (but the position table's,
** split by position as the sequence is) and the loss's. */
Test(counts, context_parallel) {
  int ar = moved_values("gpt2_small.cir", "tests/data/cp2.tac",
                        "all_gather l0.k, all_gather l0.v, all_gather l1.k, all_gather l1.v, "
                        "all_gather l1.v, all_gather l1.k, reduce_scatter bwd.l1.v.da, all_gather l1.a, reduce_scatter bwd.l1.k.da, "
                        "all_gather l0.v, all_gather l0.k, reduce_scatter bwd.l0.v.da, all_gather l0.a, reduce_scatter bwd.l0.k.da");
  cr_expect_eq(ar, 4 + 13 * LAYERS - 1 + 1, "one a gradient but wpe's, and the loss");
}

/* The all-reduces of a program in order, by the values they reduce. */
static void reduced_values(const char *model, const char *tac, const char *train, const char *want) {
  char *text = hx_slurp(tac);
  setup s;
  cr_assert(load(&s, NULL, model, text, train) == 0, "%s", diag_text(&s.d));
  char got[256] = "";
  size_t n = 0;
  for (int i = 0; i < s.prog.ninstrs; i++) {
    const rt_instr *x = &s.prog.instrs[i];
    if (x->op != RT_ALL_REDUCE || x->src < 0) continue;
    n += (size_t)snprintf(got + n, sizeof got - n, "%s%s", n ? ", " : "", s.g->vals[x->src]->name);
    cr_assert(n < sizeof got);
  }
  cr_expect_str_eq(got, want, "%s under %s", model, tac);
  unload(&s);
  free(text);
}

/* A partial sum is reduced where it is cheapest, not as far on as it can
** be passed. An RMS norm spelled as JAX writes it, differentiated as
** written under Megatron: the output gradient (a partial sum of the two
** GEMMs' input gradients) feeds two elementwise chains that each meet the
** residual's gradient; it is reduced once where they fork, Megatron's one
** all-reduce a block each way (not one for each chain and one for the
** gains' gradients). A partial sum broadcast is reduced before the
** broadcast. */
Test(counts, reduced_where_cheapest) {
  reduced_values("../tests/data/rmsnorm_jax.cir", "tests/data/mp2.tac", "sgd(lr = 0.1)", "x2.matmul.3, x3.matmul.3, grad.h2, grad.h");
  reduced_values("../tests/data/bcast_partial.cir", "tests/data/bcast_partial.tac", NULL, "s");
  /* and carve explain says why */
  char *text = hx_slurp("tests/data/bcast_partial.tac");
  setup s;
  cr_assert(load(&s, NULL, "../tests/data/bcast_partial.cir", text, NULL) == 0, "%s", diag_text(&s.d));
  strbuf b;
  sb_init(&b);
  report_explain(&b, s.p, ir_lookup(s.g, "s")->id);
  cr_expect(strstr(sb_str(&b), "reduced here, not passed on: its readers would carry the sum to reductions of 2.0 KiB further on "
                               "(it forks, or is broadcast), against 32 B here"), "%s", sb_str(&b));
  sb_free(&b);
  unload(&s);
  free(text);
}

/* softmax and log_softmax over classes split by vocabulary (written as
** JAX programs write the loss, differentiated as written): one max and one
** sum of exp(x - max) of [rows] values for both (the same logits share
** their statistics), each gradient one sum of [rows]; nothing gathers the
** logits */
Test(counts, softmax_over_split_classes) {
  reduced_values("../tests/data/softmax_vocab.cir", "tests/data/softmax_vocab.tac", "sgd(lr = 0.1)",
                 "h.embedding, lp, lp, loss, bwd.p.x, bwd.lp.x, bwd.h.tanh");
  char *text = hx_slurp("tests/data/softmax_vocab.tac");
  setup s;
  cr_assert(load(&s, NULL, "../tests/data/softmax_vocab.cir", text, "sgd(lr = 0.1)") == 0, "%s", diag_text(&s.d));
  int max = 0;
  for (int i = 0; i < s.prog.ninstrs; i++) max += s.prog.instrs[i].op == RT_ALL_REDUCE && s.prog.instrs[i].fn == RT_RMAX;
  cr_expect_eq(max, 1, "one max for both");
  cr_expect_eq(s.counts[RT_ALL_GATHER] + s.counts[RT_ALL_TO_ALL], 0, "the logits never move");
  unload(&s);
  free(text);
}

/* carve explain says why a value moves: the op that reads it otherwise, the
** collective, and the factor that holds the axis (the weight's split, and
** the bytes the other choice would move); a partial sum reduce-scattered
** into the layout its readers want says so */
Test(explain, why_a_value_moves) {
  char *text = hx_slurp("examples/gpt2_small_mp_sp.tac");
  setup s;
  cr_assert(load(&s, NULL, "gpt2_small.cir", text, "adam(lr = 1e-3)") == 0, "%s", diag_text(&s.d));
  strbuf b;
  sb_init(&b);
  report_explain(&b, s.p, ir_lookup(s.g, "l0.a")->id);
  const char *e = sb_str(&b);
  cr_expect(strstr(e, "einsum 'l0.q' reads it as [-, -, -]: all_gather over {model} on dim 1 (32.0 KiB a device)"), "%s", e);
  cr_expect(strstr(e, "'model' stays on dim 1 of 'l0.attn.wq' (a parameter"), "%s", e);
  cr_expect(strstr(e, "keeping it here instead would move 32.0 KiB (16.0 KiB of parameters), against 32.0 KiB (0 B)"), "%s", e);
  sb_free(&b);
  sb_init(&b);
  report_explain(&b, s.p, ir_lookup(s.g, "bwd.l0.q.da")->id);
  e = sb_str(&b);
  cr_expect(strstr(e, "reduce-scattered where it is made, into [-, model, -]"), "%s", e);
  cr_expect(!strstr(e, "reads it as"), "stored as its readers read it: %s", e);
  sb_free(&b);
  unload(&s);
  free(text);
}

/* The vocabulary-parallel loss in detail: no collective moves the logits or
** their gradient; one all-reduce (max) and one (sum) of [rows] values over
** model, both made for the loss and read again by its gradient (one
** xent_sumexp); the loss itself reduced once, over every axis it is a
** partial sum over */
static void vocab_parallel(const char *tac, int rows, const char *loss_axes) {
  char rel[256];
  snprintf(rel, sizeof rel, "examples/%s", tac);
  char *text = hx_slurp(rel);
  setup s;
  cr_assert(load(&s, NULL, "gpt2_small.cir", text, "adam(lr = 1e-3)") == 0, "%s", diag_text(&s.d));
  const rt_prog *p = &s.prog;
  int max = 0, sums = 0, loss = 0;
  for (int i = 0; i < p->ninstrs; i++) {
    const rt_instr *x = &p->instrs[i];
    if (!rt_is_collective((rt_op)x->op) || x->src < 0) continue;
    const char *v = s.g->vals[x->src]->name;
    cr_expect(strcmp(v, "logits") && strcmp(v, "bwd.loss.logits"), "%s: %s moves %s", tac, rt_coll_name(x), v);
    if (strcmp(v, "loss") || x->op != RT_ALL_REDUCE) continue;
    uint32_t m = 0;
    for (int k = 0; k < p->groups[x->group].naxes; k++) m |= 1u << p->groups[x->group].axes[k];
    const char *axes = shard_axes_str(s.p, m, &s.mem);
    if (p->bufs[x->out].nelem == 1) { loss++; cr_expect_str_eq(axes, loss_axes, "%s: the loss reduced over", tac); continue; }
    cr_expect_eq(p->bufs[x->out].nelem, rows, "%s: statistics of %lld rows", tac, (long long)p->bufs[x->out].nelem);
    cr_expect_str_eq(axes, "{model}", "%s: statistics over", tac);
    if (x->fn == RT_RMAX) max++;
    else if (x->fn == RT_RSUM) sums++;
  }
  cr_expect(max == 1 && sums == 1 && loss == 1, "%s: %d max, %d sum, %d loss all-reduces", tac, max, sums, loss);
  cr_expect_eq(s.counts[RT_XENT_SUMEXP], 1, "%s: the gradient reuses the loss's statistics", tac);
  int split = 0;
  for (int i = 0; i < p->ninstrs; i++) split += rt_xent_split(&p->instrs[i]);
  cr_expect_eq(split, 2, "%s: the loss and its gradient over split classes", tac);
  cr_expect(s.counts[RT_XENT] == 1 && s.counts[RT_XENT_GRAD] == 1 && s.counts[RT_XENT_PROJ] == 0,
            "%s: neither folded into the gradient's pass (lossgrad.c) nor into the projection (lmloss.c)", tac);
  unload(&s);
  free(text);
}

Test(counts, vocab_parallel_loss) {
  vocab_parallel("gpt2_small.tac", 64, "{batch, model}");          /* 4 x 32 positions over batch = 2 */
  vocab_parallel("../tests/data/mp_vocab.tac", 128, "{model}");
  vocab_parallel("../tests/data/mp_vocab4.tac", 128, "{model}");
  vocab_parallel("../tests/data/bp_mp_vocab.tac", 64, "{batch, model}");
}

/* A buffer transposed the same way twice is transposed once: the head
** split of a gradient feeds both the input gradient's GEMM and the weight
** gradient's (before: 24 transposes in gpt2_small's Adam step, now 18). */
Test(lowering, no_transpose_twice) {
  const char *tacs[] = {"gpt2_small_bp.tac", "gpt2_small_bp_mp.tac"};
  for (int t = 0; t < 2; t++) {
    char rel[256];
    snprintf(rel, sizeof rel, "examples/%s", tacs[t]);
    char *text = hx_slurp(rel);
    setup s;
    cr_assert(load(&s, NULL, "gpt2_small.cir", text, "adam(lr = 1e-3)") == 0, "%s", diag_text(&s.d));
    const rt_prog *p = &s.prog;
    int n = 0;
    for (int i = 0; i < p->ninstrs; i++) {
      const rt_instr *a = &p->instrs[i];
      if (a->op != RT_TRANSPOSE) continue;
      n++;
      for (int j = i + 1; j < p->ninstrs && p->instrs[j].out != a->in[0]; j++) {
        const rt_instr *b = &p->instrs[j];
        cr_expect(!(b->op == RT_TRANSPOSE && b->in[0] == a->in[0] && !memcmp(a->perm, b->perm, sizeof a->perm)),
                  "%s: instructions %d and %d transpose buffer %d alike", tacs[t], i, j, a->in[0]);
      }
    }
    cr_expect(n > 0);
    unload(&s);
    free(text);
  }
}

/* --bucket 25MiB: every gradient's reduction of a plan joins one bucket
** (gpt2_small's 30 gradients hold 461 KiB); with 1 KiB, no bucket holds
** more than 1 KiB unless it is one gradient alone (then it is no bucket) */
static void bucketed(const char *tac, int ar, int rs) {
  char rel[256];
  snprintf(rel, sizeof rel, "examples/%s", tac);
  char *text = hx_slurp(rel);
  setup s;
  cr_assert(load(&s, NULL, "gpt2_small.cir", text, "adam(lr = 1e-3)") == 0, "%s", diag_text(&s.d));
  for (int small = 0; small < 2; small++) {
    rt_prog p;
    lower_result lr;
    lower_opts o = {0};
    o.bucket_bytes = small ? 1024 : 25 << 20;
    cr_assert(lower_program_opts(s.g, s.p, &o, &p, &lr, &s.d) == 0, "%s", diag_text(&s.d));
    int n[RT_NOPS] = {0}, buckets = 0;
    for (int i = 0; i < p.ninstrs; i++) {
      const rt_instr *x = &p.instrs[i];
      n[x->op]++;
      if (!rt_is_collective((rt_op)x->op) || x->src >= 0) continue;
      buckets++;
      int64_t bytes = p.bufs[x->in[0]].nelem * 4;
      cr_expect(!small || bytes <= 1024, "%s: a bucket of %lld bytes over 1 KiB", tac, (long long)bytes);
    }
    if (!small) {
      cr_expect_eq(n[RT_ALL_REDUCE], ar, "%s bucketed: all_reduce", tac);
      cr_expect_eq(n[RT_REDUCE_SCATTER], rs, "%s bucketed: reduce_scatter", tac);
      cr_expect_eq(n[RT_ALL_GATHER], s.counts[RT_ALL_GATHER], "%s bucketed: all_gather", tac);
      cr_expect_eq(buckets, 1, "%s: buckets", tac);
    } else {
      cr_expect(buckets > 1 && n[RT_ALL_REDUCE] + n[RT_REDUCE_SCATTER] < s.counts[RT_ALL_REDUCE] + s.counts[RT_REDUCE_SCATTER],
                "%s: %d buckets of 1 KiB", tac, buckets);
    }
    lower_result_free(&lr);
    rt_prog_free(&p);
  }
  unload(&s);
  free(text);
}

Test(counts, bucketed) {
  bucketed("gpt2_small_bp.tac", 2, 0);                       /* one bucket + the loss */
  bucketed("gpt2_small_bp_mp.tac", 4 * LAYERS + 2, 0);       /* Megatron's, the loss, one bucket */
  bucketed("gpt2_small_bp_mp_z1.tac", 4 * LAYERS + 2, 0);
  bucketed("gpt2_small_bp_mp_z2.tac", 4 * LAYERS + 1, 1);    /* the gradients scattered in one */
  bucketed("gpt2_small_bp_mp_z3.tac", 4 * LAYERS + 1, 1);
  bucketed("gpt2_small.tac", 4 * LAYERS + 5, 1);           /* + the loss's max and sum of exponentials */
}

/* Is x one of the copies of a value into a bucket (bucket.c)? */
static int copies_into_bucket(const rt_prog *p, const rt_instr *x) {
  return x->op == RT_BLOCK_COPY && x->src >= 0 && p->bufs[x->out].name && !strncmp(p->bufs[x->out].name, "bucket", 6);
}

/* Without --bucket the tiny gradient reductions (at most 4 KiB: biases,
** norm gains and biases) share one bucket, the others stay alone: under
** batch parallelism each alone is P + 1 all-reduces, joined it is that
** less the tiny ones plus their bucket; the bucket's members are exactly
** the tiny gradients */
Test(counts, tiny_reductions_joined_by_default) {
  char *text = hx_slurp("examples/gpt2_small_bp.tac");
  setup s;
  cr_assert(load(&s, NULL, "gpt2_small.cir", text, "adam(lr = 1e-3)") == 0, "%s", diag_text(&s.d));
  int P = nparams(s.g), tiny = 0;
  for (int i = 0; i < s.g->nvals; i++)
    tiny += s.g->vals[i]->role == ROLE_GRAD && ir_nelem(&s.g->vals[i]->shape) * 4 <= LOWER_TINY_BYTES;
  cr_assert(tiny > 1 && tiny < P, "%d tiny gradients of %d", tiny, P);
  rt_prog p;
  lower_result lr;
  lower_opts o = {0};
  cr_assert(lower_program_opts(s.g, s.p, &o, &p, &lr, &s.d) == 0, "%s", diag_text(&s.d));
  int ar = 0, buckets = 0, copies_in = 0;
  for (int i = 0; i < p.ninstrs; i++) {
    const rt_instr *x = &p.instrs[i];
    ar += x->op == RT_ALL_REDUCE;
    if (x->op == RT_ALL_REDUCE && x->src < 0) buckets++;
    if (copies_into_bucket(&p, x)) copies_in++;
  }
  cr_expect_eq(buckets, 1);
  cr_expect_eq(copies_in, tiny, "every tiny gradient, and only those, copied into the bucket");
  cr_expect_eq(ar, P + 1 - tiny + 1, "%d all-reduces with %d tiny gradients of %d", ar, tiny, P);
  lower_result_free(&lr);
  rt_prog_free(&p);
  unload(&s);
  free(text);
}

/* ... and so are tiny sums of activations a step reduces back to back: a
** router's scatter-add of routing weights and the loss's mean (the loss,
** a program output, is reduced where it is made) */
Test(counts, tiny_activation_sums_joined) {
  char *text = hx_slurp("tests/data/moe_experts.tac");
  setup s;
  cr_assert(load(&s, NULL, "../tests/data/moe_router.cir", text, "adam(lr = 1e-3)") == 0, "%s", diag_text(&s.d));
  rt_prog p;
  lower_result lr;
  lower_opts o = {0};
  cr_assert(lower_program_opts(s.g, s.p, &o, &p, &lr, &s.d) == 0, "%s", diag_text(&s.d));
  char in[128] = "";
  size_t n = 0;
  int ar = 0;
  for (int i = 0; i < p.ninstrs; i++) {
    const rt_instr *x = &p.instrs[i];
    ar += x->op == RT_ALL_REDUCE;
    if (copies_into_bucket(&p, x))
      n += (size_t)snprintf(in + n, sizeof in - n, "%s%s", n ? ", " : "", s.g->vals[x->src]->name);
    cr_assert(n < sizeof in);
  }
  cr_expect_str_eq(in, "importance, loss.mean");
  cr_expect_eq(ar, 2, "the bucket and the router's gradient");
  lower_result_free(&lr);
  rt_prog_free(&p);
  unload(&s);
  free(text);
}

/* --mesh is read by the tactic grammar's mesh rule: located errors with a
** caret, and the axes it names replace the file's. */
Test(tactics, mesh_option) {
  typedef struct { const char *mesh, *expect; } me;
  me cases[] = {
    {"batch=4 model=2", "--mesh:1:9: error: unexpected 'model', expected ',' or end of input\n  batch=4 model=2\n          ^\n"},
    {"batch=4, model=", "--mesh:1:16: error: unexpected end of input, expected an integer\n"},
    {"batch=0", "--mesh:1:7: error: mesh axis 'batch' must have a size of at least 1\n  batch=0\n        ^\n"},
    {"b=2,b=2", "--mesh:1:5: error: mesh axis 'b' is listed twice\n"},
    {"b=2,", "--mesh:1:5: error: unexpected end of input, expected the name of a mesh axis\n"},
    {"", "--mesh:1:1: error: unexpected end of input, expected the name of a mesh axis\n"},
    {"a=65536,b=65536", "--mesh:1:9: error: the mesh has more than 2^20 devices (1048576), the most carve plans for; make axis 'b' smaller\n"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    arena a;
    diag d;
    arena_init(&a);
    diag_init(&d);
    sh_mesh m;
    cr_assert(tactic_parse_mesh(&a, cases[i].mesh, &m, &d) < 0, "'%s' accepted", cases[i].mesh);
    cr_assert(!strncmp(diag_text(&d), cases[i].expect, strlen(cases[i].expect)), "for '%s' wanted:\n%s\ngot:\n%s", cases[i].mesh, cases[i].expect, diag_text(&d));
    diag_free(&d);
    arena_free(&a);
  }
  arena a;
  diag d;
  arena_init(&a);
  diag_init(&d);
  sh_mesh m;
  cr_assert(tactic_parse_mesh(&a, " batch = 64 ,model=8", &m, &d) == 0, "%s", diag_text(&d));
  cr_assert(m.n == 2 && !strcmp(m.name[0], "batch") && m.size[0] == 64 && !strcmp(m.name[1], "model") && m.size[1] == 8);
  diag_free(&d);
  arena_free(&a);
}

/* ---- snapshots: the REPL's undo and the search's try-and-take-back ---- */

static int same_state(const sh_plan *a, const sh_plan *b) {
  if (a->ndec != b->ndec || a->ncon != b->ncon) return 0;
  for (int v = 0; v < a->g->nvals; v++)
    if (memcmp(&a->lay[v], &b->lay[v], sizeof a->lay[v])) return 0;
  return 1;
}

/* Apply the statements of text (REPL form) one by one to c's plan. */
static void stmts(tactic_ctx *c, const char *text) {
  const diag_src *src = diag_src_string(c->mem, "line", text, strlen(text));
  int inc;
  tac_file *f = tac_parse_line(c->mem, c->d, src, &inc);
  cr_assert(f, "%s", diag_text(c->d));
  for (int i = 0; i < f->ndecls; i++)
    for (int k = 0; k < f->decls[i].nstmts; k++)
      cr_assert(tactic_run_stmt(c, f, &f->decls[i].stmts[k], "repl") == 0, "%s", diag_text(c->d));
}

Test(tactics, snapshot_round_trip) {
  setup s;
  cr_assert(load(&s, NULL, "gpt2_small.cir", "mesh batch = 2, model = 2\ntactic none { replicate value \"loss\" on batch }\nschedule none\n",
                 "adam(lr = 1e-3)") == 0, "%s", diag_text(&s.d));
  tactic_opts o = {0};
  /* two plans fed the same statements: one with marks and rollbacks between, one straight */
  const diag_src *ts = diag_src_string(&s.mem, "t.tac", "mesh batch = 2, model = 2\n", 26);
  tac_file *tf = tac_parse_line(&s.mem, &s.d, ts, &(int){0});
  cr_assert(tf);
  sh_plan *a = tactic_plan_new(s.g, tf, &o, &s.mem, &s.d), *b = tactic_plan_new(s.g, tf, &o, &s.mem, &s.d);
  tactic_ctx ca = {s.g, a, tf, &o, &s.mem, &s.d}, cb = {s.g, b, tf, &o, &s.mem, &s.d};
  const char *bp = "shard inputs dim 0 on batch\n";
  const char *mp = "shard param \"l0.mlp.w1\" dim 1 on model\nshard param \"l1.mlp.w1\" dim 1 on model\n";
  const char *bad = "shard param \"l0.mlp.w2\" dim 1 on model\nshard values dim first on batch\n";
  stmts(&ca, bp);
  stmts(&cb, bp);
  cr_assert(same_state(a, b));
  sh_mark m0 = shard_mark(a);
  stmts(&ca, mp);
  cr_assert(!same_state(a, b), "Megatron's statements changed nothing");
  sh_mark m1 = shard_mark(a);
  stmts(&ca, bad);                   /* conflicts and wide propagation */
  cr_assert(a->ncon > b->ncon);
  shard_rollback(a, m1);             /* one step back: bp + mp */
  stmts(&cb, mp);
  cr_assert(same_state(a, b), "undo of one step differs from never taking it");
  shard_rollback(a, m0);             /* two steps back: bp */
  for (int k = 0; k < 50; k++) {     /* the search's try-and-take-back leaves no trace */
    sh_mark t = shard_mark(a);
    stmts(&ca, k % 2 ? mp : bad);
    shard_rollback(a, t);
  }
  sh_plan *c = tactic_plan_new(s.g, tf, &o, &s.mem, &s.d);
  tactic_ctx cc = {s.g, c, tf, &o, &s.mem, &s.d};
  stmts(&cc, bp);
  cr_assert(same_state(a, c), "undo to any depth differs from the state it returns to");
  /* and the state after a rollback goes on like a fresh one */
  stmts(&ca, mp);
  stmts(&cc, mp);
  cr_assert(same_state(a, c));
  shard_partials(a);
  shard_partials(c);
  for (int v = 0; v < s.g->nvals; v++) cr_assert_eq(shard_keeps_partial(a, v), shard_keeps_partial(c, v));
  shard_free(a);
  shard_free(b);
  shard_free(c);
  unload(&s);
}

/* ---- pipeline stages ---- */

static int pipe_load(setup *s, const char *model, const char *tac, const char *train) {
  char path[512];
  snprintf(path, sizeof path, "%s/tests/data/%s", SRCDIR, model);
  arena m;
  arena_init(&m);
  diag d;
  diag_init(&d);
  const diag_src *src = diag_load_file(&m, &d, path);
  cr_assert(src, "%s", diag_text(&d));
  char *text = arena_strndup(&m, src->text, src->len);
  int rc = load(s, text, NULL, tac, train);
  diag_free(&d);
  arena_free(&m);
  return rc;
}

static int count_on(const rt_prog *p, int stage, rt_op op) {
  int n = 0;
  for (int i = 0; i < p->ninstrs; i++) n += p->instrs[i].op == op && rt_stage_runs(&p->instrs[i], stage);
  return n;
}

/* What crosses between stages is what one device's step passes there: each
   microbatch's activation at each boundary, its gradient back, and the loss
   to every stage that reports it; no collective. */
Test(pipeline, transfers_per_microbatch) {
  static const struct { const char *mesh; int stages, micro; const char *order; } c[] = {
    {"stage = 2", 2, 4, "1f1b"}, {"stage = 4", 4, 4, "gpipe"}, {"stage = 4", 4, 8, "1f1b"}, {"stage = 2", 2, 1, "1f1b"},
    {"stage = 2", 2, 4, "interleaved"},
  };
  for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
    char tac[256];
    snprintf(tac, sizeof tac, "version 1\nmesh %s\nuse \"pipeline\" as pp (axis = stage, microbatches = %d, order = \"%s\")\nschedule pp\n",
             c[k].mesh, c[k].micro, c[k].order);
    setup s;
    cr_assert(pipe_load(&s, "mlp4.cir", tac, "sgd(lr = 0.1)") == 0, "%s", diag_text(&s.d));
    int P = c[k].stages, M = c[k].micro, parts = strcmp(c[k].order, "interleaved") ? P : 4;   /* (interleaved: a layer a part) */
    cr_expect_eq(s.counts[RT_SEND], 2 * (parts - 1) * M + (P - 1), "%s, %s, %d microbatches: %d sends", c[k].mesh, c[k].order, M,
                 s.counts[RT_SEND]);
    cr_expect_eq(s.counts[RT_RECV], s.counts[RT_SEND]);
    cr_expect_eq(s.counts[RT_ALL_REDUCE] + s.counts[RT_ALL_GATHER] + s.counts[RT_REDUCE_SCATTER] + s.counts[RT_ALL_TO_ALL], 0);
    for (int st = 0; st < P; st++) {   /* 4 / P layers a stage: each matmul once a microbatch forward, twice backward (the first once) */
      int L = 4 / P;
      cr_expect_eq(count_on(&s.prog, st, RT_GEMM), M * (3 * L - (st == 0)), "stage %d: %d GEMMs", st, count_on(&s.prog, st, RT_GEMM));
      cr_expect_eq(count_on(&s.prog, st, RT_SGD), L, "stage %d updates its own weights once a step", st);
    }
    unload(&s);
  }
}

/* An embedding tied to the output projection: both end stages hold it;
   each sums its own part of the gradient over the microbatches, the last
   stage's sum goes to the first once a step and the whole gradient comes
   back once (the two messages of Megatron's all-reduce of the embedding's
   gradient), not a part each microbatch. */
Test(pipeline, tied_weight_gradient_once_a_step) {
  static const char *const tac[] = {
    "version 1\nmesh stage = 2\nuse \"pipeline\" as pp (axis = stage, microbatches = 4)\nschedule pp\n",
    /* with the batch split too: one all-reduce of the whole gradient over it, on the first stage */
    "version 1\nmesh stage = 2, batch = 2\nuse \"batch\" as bp (axis = batch)\n"
    "use \"pipeline\" as pp (axis = stage, microbatches = 4)\nschedule bp, pp\n",
  };
  for (int t = 0; t < 2; t++) {
    setup s;
    cr_assert(pipe_load(&s, "gpt_pp.cir", tac[t], "sgd(lr = 0.1)") == 0, "%s", diag_text(&s.d));
    int to0 = 0, to1 = 0, reduced[2] = {0, 0};
    for (int i = 0; i < s.prog.ninstrs; i++) {
      const rt_instr *x = &s.prog.instrs[i];
      if (x->in[0] < 0) continue;
      if (x->op == RT_SEND && s.prog.bufs[x->in[0]].nelem == 256 * 64) x->n2 == 0 ? to0++ : to1++;   /* the table's size */
      if (strncmp(s.prog.bufs[x->in[0]].name, "grad.wte", 8) != 0) continue;   /* its gradient or a part */
      for (int st = 0; st < 2; st++) reduced[st] += x->op == RT_ALL_REDUCE && rt_stage_runs(x, st);
    }
    cr_expect(to0 == 1 && to1 == 1, "plan %d: wte's gradient: %d sends to stage 0, %d to stage 1", t, to0, to1);
    cr_expect(reduced[0] == t && reduced[1] == 0, "plan %d: %d and %d all-reduces of wte's gradient", t, reduced[0], reduced[1]);
    cr_expect_eq(count_on(&s.prog, 0, RT_SGD) > 0 && count_on(&s.prog, 1, RT_SGD) > 0, 1);
    unload(&s);
  }
}

/* Under ZeRO on another axis each gradient is summed whole over the
   microbatches and reduce-scattered once a step (Megatron-LM's distributed
   optimizer), not a piece each microbatch: as many reduce-scatters with 4
   microbatches as with 1. */
Test(pipeline, zero_gradients_reduce_scattered_once_a_step) {
  int count[2][2];
  for (int t = 0; t < 2; t++) {
    char tac[400];
    snprintf(tac, sizeof tac, "version 1\nmesh stage = 2, batch = 2\nuse \"batch\" as bp (axis = batch)\n"
             "use \"zero\" as z (axis = batch, stage = 3)\nuse \"pipeline\" as pp (axis = stage, microbatches = %d)\n"
             "schedule bp, z, pp\n", t ? 4 : 1);
    setup s;
    cr_assert(pipe_load(&s, "gpt_pp.cir", tac, "sgd(lr = 0.1)") == 0, "%s", diag_text(&s.d));
    for (int st = 0; st < 2; st++) count[t][st] = count_on(&s.prog, st, RT_REDUCE_SCATTER);
    unload(&s);
  }
  for (int st = 0; st < 2; st++)
    cr_expect(count[0][st] > 0 && count[1][st] == count[0][st], "stage %d: %d reduce-scatters with 4 microbatches, %d with 1", st,
              count[1][st], count[0][st]);
}

/* The zero-bubble schedule runs the same work as 1F1B, reordered: a
   stage sends a microbatch's activation gradient back before it makes its
   weights' gradients (1F1B makes them first, and the stage before waits),
   and runs those later, where 1F1B's stages would wait. */
Test(pipeline, zero_bubble_sends_gradients_before_weights_gradients) {
  int at[2][2];                          /* order -> position of the first send back, of the weight's gradient */
  int ops[2][4][RT_NOPS];
  static const char *const order[2] = {"1f1b", "zb-h1"};
  for (int k = 0; k < 2; k++) {
    char tac[256];
    snprintf(tac, sizeof tac, "version 1\nmesh stage = 4\nuse \"pipeline\" as pp (axis = stage, microbatches = 8, order = \"%s\")\n"
             "schedule pp\n", order[k]);
    setup s;
    cr_assert(pipe_load(&s, "gpt_pp.cir", tac, "sgd(lr = 0.1)") == 0, "%s", diag_text(&s.d));
    at[k][0] = at[k][1] = -1;
    memset(ops[k], 0, sizeof ops[k]);
    for (int i = 0; i < s.prog.ninstrs; i++) {
      const rt_instr *x = &s.prog.instrs[i];
      for (int st = 0; st < 4; st++) ops[k][st][x->op] += rt_stage_runs(x, st);
      if (!rt_stage_runs(x, 3)) continue;
      if (x->op == RT_SEND && x->n2 == 2 && at[k][0] < 0) at[k][0] = i;
      if (x->op == RT_GEMM && !strcmp(s.prog.bufs[x->out].name, "grad.l3.mlp.w1") && at[k][1] < 0) at[k][1] = i;
    }
    unload(&s);
  }
  cr_expect(at[0][1] >= 0 && at[0][1] < at[0][0], "1F1B: the weight's gradient at %d, the send at %d", at[0][1], at[0][0]);
  cr_expect(at[1][0] >= 0 && at[1][0] < at[1][1], "zero-bubble: the send at %d, the weight's gradient at %d", at[1][0], at[1][1]);
  for (int st = 0; st < 4; st++)
    for (int op = 0; op < RT_NOPS; op++)
      cr_expect_eq(ops[0][st][op], ops[1][st][op], "stage %d: %d %s under 1F1B, %d under zero-bubble", st, ops[0][st][op],
                   rt_op_name((rt_op)op), ops[1][st][op]);
}

/* With the batch split beside the stages, each stage reduces its gradients
   over the batch after its last microbatch: the tiny ones (biases, gains)
   join buckets as without a pipeline, the updates moved after them all. */
Test(pipeline, stage_reductions_join_buckets) {
  setup s;
  cr_assert(pipe_load(&s, "gpt_pp.cir", "version 1\nmesh stage = 2, batch = 2\nuse \"batch\" as bp (axis = batch)\n"
                      "use \"pipeline\" as pp (axis = stage, microbatches = 4)\nschedule bp, pp\n", "adam(lr = 1e-3)") == 0,
            "%s", diag_text(&s.d));
  rt_prog prog;                          /* lowered as carve does: the tiny reductions joined (the setup keeps each alone) */
  lower_result lr;
  lower_opts lo = {0};
  cr_assert(lower_program_opts(s.g, s.p, &lo, &prog, &lr, &s.d) == 0, "%s", diag_text(&s.d));
  for (int st = 0; st < 2; st++) {
    int buckets = 0, reductions = 0, last_reduction = -1, first_update = -1;
    for (int i = 0; i < prog.ninstrs; i++) {
      const rt_instr *x = &prog.instrs[i];
      if (!rt_stage_runs(x, st)) continue;
      if (x->op == RT_ALL_REDUCE) {
        reductions++;
        buckets += x->src < 0;
        if (x->src >= 0 && !strcmp(s.g->vals[x->src]->name, "loss")) continue;
        last_reduction = i;
      }
      if (x->op == RT_ADAM && first_update < 0) first_update = i;
    }
    cr_expect(buckets > 0 && reductions < count_on(&prog, st, RT_ADAM), "stage %d: %d reductions (%d buckets) for %d updates", st,
              reductions, buckets, count_on(&prog, st, RT_ADAM));
    cr_expect(first_update > last_reduction, "stage %d: an update at %d before the reduction at %d", st, first_update, last_reduction);
  }
  lower_result_free(&lr);
  rt_prog_free(&prog);
  unload(&s);
}

/* Adds are taken into GEMMs within a stage (a bias filled before its
   GEMM, a residual added by the fill, summed gradients), never across
   two: the stages pass the same values as without the folds, and the tied
   embedding's scatter (first stage) does not add into the output
   projection's gradient (last stage). */
Test(pipeline, adds_folded_within_a_stage) {
  setup s;
  cr_assert(pipe_load(&s, "gpt_pp.cir", "version 1\nmesh stage = 2\nuse \"pipeline\" as pp (axis = stage, microbatches = 4)\n"
                      "schedule pp\n", "adam(lr = 1e-3)") == 0, "%s", diag_text(&s.d));
  int folded[2] = {0, 0}, sends[2] = {0, 0}, scatter_into = 0;
  for (int fold = 0; fold < 2; fold++) {
    rt_prog prog;
    lower_result lr;
    lower_opts lo = {0};
    lo.no_fold_adds = !fold;
    cr_assert(lower_program_opts(s.g, s.p, &lo, &prog, &lr, &s.d) == 0, "%s", diag_text(&s.d));
    for (int i = 0; i < prog.ninstrs; i++) {
      const rt_instr *x = &prog.instrs[i];
      folded[fold] += x->op == RT_GEMM && x->beta == 1.0f;
      sends[fold] += x->op == RT_SEND;
      if (fold) scatter_into += x->op == RT_SCATTER_ROWS && x->beta == 1.0f;
    }
    lower_result_free(&lr);
    rt_prog_free(&prog);
  }
  cr_expect(folded[1] > folded[0], "%d GEMMs add into their result with the folds, %d without", folded[1], folded[0]);
  cr_expect_eq(sends[1], sends[0], "%d transfers with the folds, %d without", sends[1], sends[0]);
  cr_expect_eq(scatter_into, 0, "the embedding's scatter adds into the last stage's product");
  unload(&s);
}

/* 1F1B keeps at most stages - s microbatches' activations on stage s;
   GPipe keeps every microbatch's until the backward begins. */
Test(pipeline, one_f_one_b_holds_fewer_activations) {
  size_t peak[2][2];
  const char *order[2] = {"gpipe", "1f1b"};
  for (int k = 0; k < 2; k++) {
    char tac[256];
    snprintf(tac, sizeof tac, "version 1\nmesh stage = 2\nuse \"pipeline\" as pp (axis = stage, microbatches = 8, order = \"%s\")\nschedule pp\n",
             order[k]);
    setup s;
    cr_assert(pipe_load(&s, "gpt_pp.cir", tac, "sgd(lr = 0.1)") == 0, "%s", diag_text(&s.d));
    for (int st = 0; st < 2; st++) {
      rt_prog q;
      rt_prog_copy_stage(&s.prog, st, &q);
      rt_memplan mp;
      rt_memplan_make(&q, &mp);
      peak[k][st] = mp.block;
      rt_memplan_free(&mp);
      rt_prog_free(&q);
    }
    unload(&s);
  }
  /* stage 0: 8 microbatches in flight against 2; the last stage runs each backward at once */
  cr_expect(peak[1][0] * 2 < peak[0][0], "stage 0: 1F1B %zu bytes of temporaries, GPipe %zu", peak[1][0], peak[0][0]);
  cr_expect(peak[1][1] * 2 < peak[0][1], "stage 1: 1F1B %zu bytes, GPipe %zu", peak[1][1], peak[0][1]);
}

/* Without at, the stages end where one value crosses, at the places that
   make the busiest stage least busy: on the 4-layer GPT over 4 stages, at
   the layers (not a layer and a half on the third stage, which squaring the
   distance to equal shares of the work chose, and the simulator found 10 %
   slower). */
/* The stages carve apply lists for the 4-layer GPT under tactic text tac. */
static char *stages_of(const char *tac) {
  setup s;
  cr_assert(pipe_load(&s, "gpt_pp.cir", tac, "sgd(lr = 0.1)") == 0, "%s", diag_text(&s.d));
  strbuf b;
  sb_init(&b);
  report_stages(&b, s.p);
  char *text = strdup(sb_str(&b));
  sb_free(&b);
  unload(&s);
  return text;
}

Test(pipeline, automatic_cuts_keep_the_busiest_stage_least_busy) {
  char *t = stages_of("version 1\nmesh stage = 4\nuse \"pipeline\" as pp (axis = stage, microbatches = 8)\nschedule pp\n");
  cr_expect(strstr(t, "ends at 'x1'") && strstr(t, "ends at 'x2'") && strstr(t, "ends at 'x3'"), "%s", t);
  free(t);
}

/* Stages are cut where one value crosses, the busiest as little busy as can be,
   or where the tactic says; a plan that splits the batch after the
   pipeline, or a cut the program cannot take, is a located error. */
Test(pipeline, cuts_and_errors) {
  char *t = stages_of("version 1\nmesh stage = 4\nuse \"pipeline\" as pp (axis = stage, microbatches = 2, at = [\"x1\", \"x2\", \"x3\"])\n"
                      "schedule pp\n");
  cr_expect(strstr(t, "stage 0: ") && strstr(t, "ends at 'x1'") && strstr(t, "ends at 'x3'"), "%s", t);
  free(t);
  setup s;
  static const struct { const char *tac, *says; } bad[] = {
    {"version 1\nmesh stage = 2, batch = 2\nuse \"batch\" as bp (axis = batch)\nuse \"pipeline\" as pp (axis = stage, microbatches = 2)\nschedule pp, bp\n",
     "t.tac:4:1: error: pipeline: input 'ids' is split over the microbatches before the other axes of its dim 0; schedule the pipeline after"},
    {"version 1\nmesh stage = 2\nuse \"pipeline\" as pp (axis = stage, at = [\"wte\"])\nschedule pp\n",
     "t.tac:3:42: error: pipeline: at: 'wte' is not a value of the program's ops"},
    {"version 1\nmesh stage = 3\nuse \"pipeline\" as pp (axis = stage, at = [\"x1\"])\nschedule pp\n",
     "t.tac:3:42: error: pipeline: at names the values that end each stage but the last: 2 of them"},
    {"version 1\nmesh stage = 2\nuse \"pipeline\" as pp (axis = stage, at = [\"xf\"])\nschedule pp\n", NULL},
    {"version 1\nmesh stage = 2\nuse \"pipeline\" as pp (axis = stage, microbatches = 0)\nschedule pp\n",
     "error: pipeline: microbatches must be a whole number from 1 to 4096"},
    {"version 1\nmesh stage = 2\nuse \"pipeline\" as pp (axis = stage, microbatches = \"4\")\nschedule pp\n",
     "t.tac:3:52: error: pipeline: microbatches must be a whole number from 1 to 4096"},
    {"version 1\nmesh stage = 2, batch = 2\nuse \"batch\" as bp (axis = batch)\nuse \"pipeline\" as pp (axis = stage, microbatches = 8)\n"
     "schedule bp, pp\n",
     "t.tac:4:52: error: pipeline: 8 microbatches do not divide the 4 rows of the batch a device holds ('ids', dim 0 of 8, split over "
     "other axes); give a number of microbatches that divides 4"},
    {"version 1\nmesh stage = 2\nuse \"pipeline\" as pp (axis = stage, order = \"zigzag\")\nschedule pp\n",
     "error: pipeline: unknown order 'zigzag'; use \"1f1b\", \"gpipe\", \"interleaved\" or \"zb-h1\""},
    {"version 1\nmesh stage = 2\nuse \"pipeline\" as pp (axis = stage, microbatches = 3, order = \"interleaved\")\nschedule pp\n",
     "error: pipeline: the interleaved schedule runs the microbatches in groups of one a stage: 3 microbatches do not divide among 2 stages"},
    {"version 1\nmesh stage = 2\nuse \"pipeline\" as pp (axis = stage, chunks = 2)\nschedule pp\n",
     "error: pipeline: chunks is the interleaved schedule's; give order = \"interleaved\" with it"},
    {"version 1\nmesh stage = 2, model = 2\nuse \"megatron\" as mp (axis = stage)\nuse \"pipeline\" as pp (axis = stage)\nschedule mp, pp\n",
     "error: pipeline: the stage axis splits"},
  };
  /* two parts of one stage adding to one gradient, run out of order by the
     interleaved schedule: refused (it hung, sending to itself) */
  cr_expect(pipe_load(&s, "fuzz/pipeline_interleaved_shared.cir",
                      "version 1\nmesh a = 2\nuse \"pipeline\" as pp (axis = a, microbatches = 4, order = \"interleaved\")\nschedule pp\n",
                      "sgd(lr = 0.1)") < 0 && strstr(diag_text(&s.d), "two of this stage's parts share it") &&
            strstr(diag_text(&s.d), "use order = \"1f1b\""), "%s", diag_text(&s.d));
  unload(&s);
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    int rc = pipe_load(&s, "gpt_pp.cir", bad[k].tac, "sgd(lr = 0.1)");
    if (bad[k].says) cr_expect(rc < 0 && strstr(diag_text(&s.d), bad[k].says), "case %zu: %s", k, diag_text(&s.d));
    else cr_expect(rc == 0, "case %zu: %s", k, diag_text(&s.d));    /* the last forward value may end a stage */
    unload(&s);
  }
}

/* ---- ring attention ---- */

/* Context parallelism over fused attention: each layer's keys and values go
   around the ring (P - 1 steps), again in the backward's recomputation, and
   once more with their gradients, which take one step more to get home:
   8 (P - 1) + 2 transfers a layer; nothing is gathered. */
Test(ring, transfers_per_layer) {
  for (int P = 2; P <= 4; P *= 2) {
    char tac[160];
    snprintf(tac, sizeof tac, "version 1\nmesh cp = %d\nuse \"context\" as cp (axis = cp)\nschedule cp\n", P);
    setup s;
    cr_assert(load_opt(&s, NULL, "gpt2_small.cir", tac, "sgd(lr = 0.1)", 1) == 0, "%s", diag_text(&s.d));
    cr_expect_eq(s.counts[RT_SEND], 2 * (8 * (P - 1) + 2), "cp = %d: %d sends", P, s.counts[RT_SEND]);
    cr_expect_eq(s.counts[RT_RECV], s.counts[RT_SEND]);
    cr_expect_eq(s.counts[RT_ALL_GATHER] + s.counts[RT_REDUCE_SCATTER], 0, "cp = %d: the keys gathered", P);
    cr_expect_eq(s.counts[RT_ATTN_BLOCK], 2 * 2 * P, "cp = %d: %d forward blocks", P, s.counts[RT_ATTN_BLOCK]);
    cr_expect_eq(s.counts[RT_ATTN_BLOCK_GRAD], 2 * P);
    cr_expect_eq(s.counts[RT_ATTENTION] + s.counts[RT_ATTENTION_GRAD], 0);
    unload(&s);
  }
}

/* The work of each device's ring steps under the causal mask: the scores
   its blocks compute, each placed as the executor places it for that
   device. Dealt in order, the last device computes every block of keys
   for its queries and the first one; dealt zig-zag (the default), every
   device computes the same, and all of them together what the order
   computes (the scores below the diagonal of each block pair, and the
   diagonal blocks whole). */
static void ring_work(const char *balance, int P, int64_t *work) {
  char tac[200];
  snprintf(tac, sizeof tac, "version 1\nmesh cp = %d\nuse \"context\" as cp (axis = cp, balance = \"%s\")\nschedule cp\n", P, balance);
  setup s;
  cr_assert(load_opt(&s, NULL, "../tests/data/gpt_s256.cir", tac, "sgd(lr = 0.1)", 1) == 0, "%s", diag_text(&s.d));
  for (int q = 0; q < P; q++) {
    work[q] = 0;
    for (int i = 0; i < s.prog.ninstrs; i++) {
      const rt_instr *x = &s.prog.instrs[i];
      if (x->op != RT_ATTN_BLOCK && x->op != RT_ATTN_BLOCK_GRAD) continue;
      rt_instr placed;
      cr_assert(rt_mesh_ring_block(&s.prog, x, q, &placed) == 0);
      cr_assert(!strcmp(balance, "zigzag") == !!(placed.mode & RT_ATTN_ZIGZAG));
      work[q] += rt_attn_block_scores(&placed);
    }
  }
  unload(&s);
}

Test(ring, zigzag_balances_the_causal_work) {
  for (int P = 2; P <= 4; P *= 2) {
    int64_t none[4], zz[4], sum_none = 0, sum_zz = 0;
    ring_work("none", P, none);
    ring_work("zigzag", P, zz);
    for (int q = 0; q < P; q++) {
      sum_none += none[q];
      sum_zz += zz[q];
      cr_expect_eq(zz[q], zz[0], "cp = %d: device %d computes %lld scores, device 0 %lld", P, q, (long long)zz[q], (long long)zz[0]);
    }
    cr_expect_eq(none[P - 1], P * none[0], "cp = %d, in order: the last device %lld, the first %lld", P, (long long)none[P - 1],
                 (long long)none[0]);
    /* the zig-zag pairs skip more of the masked half: no more work in all */
    cr_expect(sum_zz <= sum_none, "cp = %d: %lld scores zig-zag, %lld in order", P, (long long)sum_zz, (long long)sum_none);
  }
}

/* What the zig-zag order cannot do is one located error that says what to do */
Test(ring, zigzag_refusals) {
  static const struct { const char *tac, *says; } bad[] = {
    {"version 1\nmesh cp = 2\nuse \"context\" as cp (axis = cp, balance = \"zz\")\nschedule cp\n", "unknown balance 'zz'"},
    /* 32 positions over 32 devices: one each, which does not halve */
    {"version 1\nmesh cp = 32\nuse \"context\" as cp (axis = cp)\nschedule cp\n", "does not split into the 64 blocks"},
    /* the sequence split over cp and another axis */
    {"version 1\nmesh cp = 2, b = 2\nuse \"context\" as cp (axis = cp)\ntactic more {\n  shard input \"ids\" dim 1 on b\n}\n"
     "schedule cp, more\n", "split over 'cp' with another axis"},
    /* a table's rows over the zig-zag axis */
    {"version 1\nmesh cp = 2\nuse \"context\" as cp (axis = cp)\ntactic t {\n  shard param \"wte\" dim 0 on cp\n}\nschedule cp, t\n",
     "looks up a table whose rows are split over 'cp'"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    setup s;
    cr_expect(load_opt(&s, NULL, "gpt2_small.cir", bad[k].tac, "sgd(lr = 0.1)", 1) < 0 && strstr(diag_text(&s.d), bad[k].says) &&
              strstr(diag_text(&s.d), "balance"), "case %zu: %s", k, diag_text(&s.d));
    unload(&s);
  }
  /* fuzz_diff: a reshape that cuts the sequence into a dim of 2 (tests/data/fuzz/README) */
  setup z;
  cr_expect(load_opt(&z, NULL, "../tests/data/fuzz/zigzag_reshape.cir", "version 1\nmesh a = 2\nuse \"context\" as cp (axis = a)\n"
                     "tactic t {\n  shard value \"v1\" dim 0 on a\n}\nschedule cp, t\n", "sgd(lr = 0.1)", 0) < 0 &&
            strstr(diag_text(&z.d), "dim 1 of 'v1' (2) does not split into the 4 blocks"), "%s", diag_text(&z.d));
  unload(&z);
  /* fuzz_diff: a gradient whose rows (6) a reshape's all_to_all would deal in 4 blocks */
  cr_expect(load_opt(&z, "model diff {\n  param w0 : f32[6, 8] = normal(0.5)\n  param w1 : f32[48] = normal(0.5)\n"
                     "  v1 = reshape(w0, [48])\n  v3 = mul(v1, w1)\n  loss = mean(mul(v3, v3))\n  return loss\n}\n", NULL,
                     "version 1\nmesh a = 2\nuse \"context\" as cp (axis = a)\ntactic t {\n  shard param \"w1\" dim 0 on a\n"
                     "  shard param \"w0\" dim 1 on a\n}\nschedule cp, t\n", "sgd(lr = 0.1)", 0) < 0 &&
            strstr(diag_text(&z.d), "(6) does not split into the 4 blocks") && strstr(diag_text(&z.d), "m.cir:4:"), "%s", diag_text(&z.d));
  unload(&z);
  /* in order, the same plans load */
  setup s;
  cr_expect(load_opt(&s, NULL, "gpt2_small.cir", "version 1\nmesh cp = 32\nuse \"context\" as cp (axis = cp, balance = \"none\")\nschedule cp\n",
                     "sgd(lr = 0.1)", 1) == 0, "%s", diag_text(&s.d));
  unload(&s);
}

/*
** plans.h: a plan as text, for golden comparisons of the stdlib tactics.
** Each case loads a model, optionally turns it into a training step,
** applies a tactic file (with --mesh and --lenient as given) and lowers
** the result; the text lists the diagnostics' error and warning lines,
** the collective counts of the lowered program, the conflicts (sorted:
** the set matters, not the order they were found in) and the sharding
** and partial-sum axes of every value.
**
** tests/unit/make_golden_plans.c writes one file per case under
** tests/data/golden_plans/; tests/unit/test_lua.c compares against them.
** Header-only, like harness.h, so that both stay one file each.
*/
#ifndef tests_plans_h
#define tests_plans_h

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/drive/session.h"
#include "interp/lower/lower.h"
#include "util/strbuf.h"

typedef struct plan_case {
  char name[48];     /* tests/data/golden_plans/NAME.plan */
  char model[64];    /* paths under the source tree */
  char tac[64];
  char train[24];    /* "" for the forward program */
  char mesh[24];     /* --mesh, "" for the file's */
  int lenient;
} plan_case;

#define ADAM "adam(lr = 1e-3)"
#define SGD "sgd(lr = 0.1)"
#define GP "tests/data/golden_plans/"

/* Every examples/gpt2*.tac on its model, every examples/mlp*.tac on both MLPs,
** every tac file in tests/data, attn_reshape.cir under megatron, and the
** stdlib tactics' warnings and errors. */
static const plan_case plan_cases[] = {
  {"gpt2_small", "examples/gpt2_small.cir", "examples/gpt2_small.tac", ADAM, "", 0},
  {"gpt2_small_bp", "examples/gpt2_small.cir", "examples/gpt2_small_bp.tac", ADAM, "", 0},
  {"gpt2_small_bp_mp", "examples/gpt2_small.cir", "examples/gpt2_small_bp_mp.tac", ADAM, "", 0},
  {"gpt2_small_bp_mp_fwd", "examples/gpt2_small.cir", "examples/gpt2_small_bp_mp.tac", "", "", 0},
  {"gpt2_small_bp_mp_z1", "examples/gpt2_small.cir", "examples/gpt2_small_bp_mp_z1.tac", ADAM, "", 0},
  {"gpt2_small_bp_mp_z2", "examples/gpt2_small.cir", "examples/gpt2_small_bp_mp_z2.tac", ADAM, "", 0},
  {"gpt2_small_bp_mp_z3", "examples/gpt2_small.cir", "examples/gpt2_small_bp_mp_z3.tac", ADAM, "", 0},
  {"gpt2_small_bp_mp_z3_sgd", "examples/gpt2_small.cir", "examples/gpt2_small_bp_mp_z3.tac", SGD, "", 0},
  {"gpt2_small_bp_z3", "examples/gpt2_small.cir", "examples/gpt2_small_bp_z3.tac", ADAM, "", 0},
  {"gpt2_small_mp", "examples/gpt2_small.cir", "examples/gpt2_small_mp.tac", ADAM, "", 0},
  {"gpt2_small_mp_fwd", "examples/gpt2_small.cir", "examples/gpt2_small_mp.tac", "", "", 0},
  {"gpt2_small_mp8", "examples/gpt2_small.cir", "examples/gpt2_small_mp.tac", ADAM, "model = 8", 0},
  {"gpt2_small_4x2", "examples/gpt2_small.cir", "examples/gpt2_small.tac", ADAM, "batch = 4, model = 2", 0},
  {"gpt2", "examples/gpt2.cir", "examples/gpt2.tac", ADAM, "", 0},
  {"gpt2_bp", "examples/gpt2.cir", "examples/gpt2_bp.tac", ADAM, "", 0},
  {"gpt2_bp_mp", "examples/gpt2.cir", "examples/gpt2_bp_mp.tac", ADAM, "", 0},
  {"gpt2_bp_mp_z2", "examples/gpt2.cir", "examples/gpt2_bp_mp_z2.tac", ADAM, "", 0},
  {"gpt2_bp_mp_z3", "examples/gpt2.cir", "examples/gpt2_bp_mp_z3.tac", ADAM, "", 0},
  {"gpt2_mp", "examples/gpt2.cir", "examples/gpt2_mp.tac", ADAM, "", 0},
  {"gpt2_mp8", "examples/gpt2.cir", "examples/gpt2_mp.tac", ADAM, "model = 8", 0},
  {"gpt2_mp_fwd", "examples/gpt2.cir", "examples/gpt2_mp.tac", "", "", 0},
  {"mlp_bp", "examples/mlp.cir", "examples/mlp_bp.tac", SGD, "", 0},
  {"mlp_mp", "examples/mlp.cir", "examples/mlp_mp.tac", SGD, "", 0},
  {"mlp_mp_adam", "examples/mlp.cir", "examples/mlp_mp.tac", ADAM, "", 0},
  {"mlp_mp_fwd", "examples/mlp.cir", "examples/mlp_mp.tac", "", "", 0},
  {"mlp_small_bp", "examples/mlp_small.cir", "examples/mlp_bp.tac", SGD, "", 0},
  {"mlp_small_mp", "examples/mlp_small.cir", "examples/mlp_mp.tac", SGD, "", 0},
  {"mlp_small_mp_adam", "examples/mlp_small.cir", "examples/mlp_mp.tac", ADAM, "", 0},
  {"mlp_small_mp64", "examples/mlp_small.cir", "examples/mlp_mp.tac", SGD, "model = 64", 1},
  {"chain_rows", "tests/data/chain.cir", "tests/data/chain_rows.tac", "", "", 0},
  {"mlp_cols", "examples/mlp_small.cir", "tests/data/mlp_cols.tac", SGD, "", 0},
  {"attn_reshape_mp", "tests/data/attn_reshape.cir", "tests/data/mp2.tac", ADAM, "", 0},
  {"attn_reshape_mp_fwd", "tests/data/attn_reshape.cir", "tests/data/mp2.tac", "", "", 0},
  {"attn_reshape_mp4", "tests/data/attn_reshape.cir", "tests/data/mp2.tac", ADAM, "model = 4", 0},
  {"gpt2_small_mp2", "examples/gpt2_small.cir", "tests/data/mp2.tac", ADAM, "", 0},
  {"mlp_small_mp2", "examples/mlp_small.cir", "tests/data/mp2.tac", ADAM, "", 0},
  {"chain_mp_none", "tests/data/chain.cir", "tests/data/mp2.tac", "", "", 0},
  {"chain_mp_none_lenient", "tests/data/chain.cir", "tests/data/mp2.tac", "", "", 1},
  {"emb_gpt2_rows", "examples/gpt2.cir", GP "embedding.tac", ADAM, "", 0},
  {"emb_none", "examples/mlp_small.cir", GP "embedding.tac", ADAM, "", 0},
  {"emb_none_lenient", "examples/mlp_small.cir", GP "embedding.tac", ADAM, "", 1},
  {"emb_small", "examples/gpt2_small.cir", GP "embedding.tac", ADAM, "", 0},
  {"zero_fwd", "examples/mlp_small.cir", GP "zero3.tac", "", "", 0},
  {"zero3_mlp", "examples/mlp_small.cir", GP "zero3.tac", ADAM, "", 0},
  {"zero3_mlp_indivisible", "examples/mlp_small.cir", GP "zero3.tac", SGD, "batch = 3", 0},
  {"zero_stage4", "examples/mlp_small.cir", GP "zero4.tac", ADAM, "", 0},
  {"zero_no_stage", "examples/mlp_small.cir", GP "zero_nostage.tac", ADAM, "", 0},
  {"zero_no_axis", "examples/mlp_small.cir", GP "zero_noaxis.tac", ADAM, "", 0},
  {"zero_bad_axis", "examples/mlp_small.cir", GP "zero_badaxis.tac", ADAM, "", 0},
  {"zero_stage_name", "examples/mlp_small.cir", GP "zero_stagename.tac", ADAM, "", 0},
  {"megatron_no_axis", "examples/mlp_small.cir", GP "megatron_noaxis.tac", ADAM, "", 0},
  {"megatron_string_axis", "examples/mlp_small.cir", GP "megatron_straxis.tac", ADAM, "", 0},
};

#define NPLAN_CASES ((int)(sizeof plan_cases / sizeof plan_cases[0]))

static int plan_line_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The text of case c into out (plans differ only where the tactics do).
** Paths are written relative to the source tree srcdir. */
static inline void plan_text(const plan_case *c, const char *srcdir, strbuf *out) {
  char model[512], tac[512];
  snprintf(model, sizeof model, "%s/%s", srcdir, c->model);
  snprintf(tac, sizeof tac, "%s/%s", srcdir, c->tac);
  session s;
  session_init(&s);
  /* the goldens pin every value of the model as written: attention unfused
     (test_tactics.c checks that fusing keeps the collective counts) */
  session_opts o = {.model_path = model, .train = c->train[0] ? c->train : NULL, .tactic_path = tac, .no_fuse = 1};
  o.tac.mesh = c->mesh[0] ? c->mesh : NULL;
  o.tac.lenient = c->lenient;
  sb_printf(out, "# %s on %s%s%s%s%s%s\n", c->tac, c->model, c->train[0] ? ", --train " : "", c->train,
            c->mesh[0] ? ", --mesh '" : "", c->mesh, c->mesh[0] ? "'" : "");
  int rc = session_load(&s, &o);
  /* the error and warning lines, without the source tree's prefix */
  const char *t = diag_text(&s.diag);
  size_t pre = strlen(srcdir) + 1;
  while (*t) {
    const char *e = strchr(t, '\n');
    size_t n = e ? (size_t)(e - t) : strlen(t);
    if (memmem(t, n, ": error: ", 9) || memmem(t, n, ": warning: ", 11)) {
      const char *u = t;             /* the next line starts n on from t, prefix or not */
      size_t k = n;
      if (k > pre && !strncmp(u, srcdir, pre - 1) && u[pre - 1] == '/') { u += pre; k -= pre; }
      sb_printf(out, "diag %.*s\n", (int)k, u);
    }
    t += n + (e != NULL);
  }
  if (rc == 0 && s.plan) {
    rt_prog prog;
    lower_result lr;
    lower_opts lo = {0};
    lo.bucket_bytes = -1;             /* each reduction alone, as the plans were recorded */
    if (lower_program_opts(s.g, s.plan, &lo, &prog, &lr, &s.diag) == 0) {
      int counts[RT_NOPS] = {0};
      for (int i = 0; i < prog.ninstrs; i++) counts[prog.instrs[i].op]++;
      sb_printf(out, "collectives all_reduce %d all_gather %d reduce_scatter %d all_to_all %d\n", counts[RT_ALL_REDUCE],
                counts[RT_ALL_GATHER], counts[RT_REDUCE_SCATTER], counts[RT_ALL_TO_ALL]);
      lower_result_free(&lr);
      rt_prog_free(&prog);
    } else {
      sb_printf(out, "lowering failed\n");
    }
    const sh_plan *p = s.plan;
    char **lines = calloc((size_t)p->ncon + 1, sizeof *lines);
    for (int i = 0; i < p->ncon; i++) {
      const sh_conflict *k = &p->con[i];
      const char *op = k->op >= 0 ? s.g->vals[k->op]->name : "-";
      const char *m = arena_printf(&s.mem, "conflict %s %s %s %s by '%s': %s", s.g->vals[k->value]->name, op,
                                   k->axis >= 0 ? p->mesh.name[k->axis] : "-", k->from_tactic ? "tactic" : "propagation",
                                   k->tactic, k->message);
      lines[i] = (char *)m;
    }
    qsort(lines, (size_t)p->ncon, sizeof *lines, plan_line_cmp);
    for (int i = 0; i < p->ncon; i++) sb_printf(out, "%s\n", lines[i]);
    free(lines);
    for (int v = 0; v < s.g->nvals; v++) {
      if (s.g->vals[v]->kind == IR_CONST) continue;
      sb_printf(out, "value %s %s", s.g->vals[v]->name, shard_str(p, v, &s.mem));
      if (p->lay[v].partial) sb_printf(out, " partial %s", shard_axes_str(p, p->lay[v].partial, &s.mem));
      sb_printf(out, "\n");
    }
  }
  session_free(&s);
}

#endif

/*
** test_remat.c: activation recomputation (interp/train/remat.c). A step
** that recomputes what it would keep computes the same numbers, bit for
** bit (the same kernels on the same operands), over three Adam steps of
** the small GPT, fused attention or not; it needs less memory (cheap
** less than none, full less than cheap), recomputes no GEMM under
** `cheap`, and adds no collective under Megatron (full: at most one a
** block). remat = "GLOB" recomputes cheap's values and the GEMMs it
** names, one more GEMM a block for each MLP's first projection.
*/
#include "harness.h"
#include "interp/tactic/tactic.h"
#include "interp/train/train.h"
#include "runtime/plan.h"

#include <stdio.h>

#define STEPS 3

typedef struct step_run {
  hx h;
  float loss[STEPS];
  size_t block;                  /* the memory plan's block */
  int clones, gemms;             /* remat.* values; GEMM instructions */
} step_run;

static char *gpt_text(void) { return hx_slurp("examples/gpt2_small.cir"); }

static void run_steps(step_run *r, const char *text, const char *train, int fuse) {
  memset(r, 0, sizeof *r);
  hx *h = &r->h;
  cr_assert(hx_build(h, text) == 0, "%s", diag_text(&h->d));
  if (fuse) cr_assert_gt(ir_fuse_attention(h->g), 0);
  train_spec t;
  cr_assert(train_parse(&h->mem, train, &t, &h->d) == 0, "%s", diag_text(&h->d));
  cr_assert(train_build(h->g, &t, &h->d) == 0, "%s", diag_text(&h->d));
  for (int i = 0; i < h->g->nvals; i++) r->clones += strncmp(h->g->vals[i]->name, "remat.", 6) == 0;
  hx_lower(h);
  for (int i = 0; i < h->p.ninstrs; i++) r->gemms += h->p.instrs[i].op == RT_GEMM;
  rt_memplan m;
  rt_memplan_make(&h->p, &m);
  r->block = m.block;
  rt_memplan_free(&m);
  hx_init_rest(h, 50);
  char err[256];
  int loss = h->lr.buf_of[h->g->outputs[0]];
  for (int s = 0; s < STEPS; s++) {
    hx_run(h);
    r->loss[s] = ((float *)rt_exec_data(h->e, loss))[0];
    rt_exec_carry(h->e);
  }
  (void)err;
}

/* Every parameter and optimizer state of a equals b's, bit for bit. */
static void same_state(step_run *a, step_run *b, const char *what) {
  for (int s = 0; s < STEPS; s++)
    cr_expect(a->loss[s] == b->loss[s], "%s: step %d loss %.9g vs %.9g", what, s + 1, a->loss[s], b->loss[s]);
  int compared = 0;
  for (int i = 0; i < b->h.g->nvals; i++) {
    const ir_value *v = b->h.g->vals[i];
    if (v->kind != IR_PARAM && v->kind != IR_STATE) continue;
    int64_t n = hx_nelem(&b->h, v->name);
    cr_expect(memcmp(hx_get(&a->h, v->name), hx_get(&b->h, v->name), sizeof(float) * (size_t)n) == 0,
              "%s: %s differs after %d steps", what, v->name, STEPS);
    compared++;
  }
  cr_expect_gt(compared, 20);
}

static void policies(int fuse) {
  char *t = gpt_text();
  static step_run none, cheap, full, named;
  run_steps(&none, t, "adam(lr = 1e-3)", fuse);
  run_steps(&cheap, t, "adam(lr = 1e-3, remat = cheap)", fuse);
  run_steps(&full, t, "adam(lr = 1e-3, remat = full)", fuse);
  run_steps(&named, t, "adam(lr = 1e-3, remat = \"l*.h.matmul\")", fuse);
  cr_expect_eq(none.clones, 0);
  cr_expect_gt(cheap.clones, 0, "cheap recomputes the layernorms and gelus");
  cr_expect_gt(full.clones, cheap.clones);
  cr_expect_eq(cheap.gemms, none.gemms, "cheap recomputes no GEMM");
  cr_expect_gt(full.gemms, none.gemms, "full recomputes the blocks' projections");
  cr_expect_lt(cheap.block, none.block, "cheap: %zu B against %zu B", cheap.block, none.block);
  cr_expect_lt(full.block, cheap.block, "full: %zu B against %zu B", full.block, cheap.block);
  same_state(&cheap, &none, "cheap");
  same_state(&full, &none, "full");
  /* the small GPT has 2 blocks: each MLP's first projection once more */
  cr_expect_eq(named.gemms, none.gemms + 2, "named: %d GEMMs against %d", named.gemms, none.gemms);
  cr_expect_gt(named.clones, cheap.clones, "named recomputes the projections and what cheap could not without them");
  cr_expect_lt(named.block, cheap.block, "named: %zu B against cheap's %zu B", named.block, cheap.block);
  same_state(&named, &none, "named");
  hx_free(&named.h);
  hx_free(&none.h);
  hx_free(&cheap.h);
  hx_free(&full.h);
  free(t);
}

Test(remat, same_step_less_memory) { policies(0); }
Test(remat, same_step_less_memory_fused_attention) { policies(1); }

/* The collectives of the small GPT's step under batch and Megatron. */
static int collectives(const char *train) {
  char *text = gpt_text();
  hx h;
  cr_assert(hx_build(&h, text) == 0, "%s", diag_text(&h.d));
  ir_fuse_attention(h.g);
  train_spec t;
  cr_assert(train_parse(&h.mem, train, &t, &h.d) == 0);
  cr_assert(train_build(h.g, &t, &h.d) == 0, "%s", diag_text(&h.d));
  char path[512];
  snprintf(path, sizeof path, "%s/examples/gpt2_small_bp_mp.tac", SRCDIR);
  const diag_src *ts = diag_load_file(&h.mem, &h.d, path);
  tac_file *tf = tac_parse(&h.mem, &h.d, ts);
  cr_assert(tf, "%s", diag_text(&h.d));
  tactic_opts o = {0};
  sh_plan *plan = tactic_apply(h.g, tf, &o, &h.mem, &h.d);
  cr_assert(plan, "%s", diag_text(&h.d));
  rt_prog p;
  lower_result lr;
  cr_assert(lower_program(h.g, plan, &p, &lr, &h.d) == 0, "%s", diag_text(&h.d));
  int n = 0;
  for (int i = 0; i < p.ninstrs; i++) n += rt_is_collective((rt_op)p.instrs[i].op);
  lower_result_free(&lr);
  rt_prog_free(&p);
  shard_free(plan);
  hx_free(&h);
  free(text);
  return n;
}

/* cheap recomputes nothing that needs a collective; full recomputes a
** block's second half from its input where it dropped the cut between
** the two, and with it the row-parallel projection's all-reduce, as
** Megatron-LM's full recomputation does: at most one a block. */
Test(remat, collectives_under_megatron) {
  char *text = gpt_text();
  hx h;
  cr_assert(hx_build(&h, text) == 0, "%s", diag_text(&h.d));
  int layers = 0;                /* the blocks: one first layernorm each */
  for (int i = 0; i < h.g->nvals; i++) layers += h.g->vals[i]->kind == IR_PARAM && strstr(h.g->vals[i]->name, ".ln1.g") != NULL;
  hx_free(&h);
  free(text);
  cr_assert_gt(layers, 1);
  int n = collectives("adam(lr = 1e-3)");
  cr_expect_gt(n, 0);
  cr_expect_eq(collectives("adam(lr = 1e-3, remat = cheap)"), n);
  /* a column-parallel projection recomputed from its replicated input */
  cr_expect_eq(collectives("adam(lr = 1e-3, remat = \"l*.h.matmul\")"), n);
  int full = collectives("adam(lr = 1e-3, remat = full)");
  cr_expect(full >= n && full <= n + layers, "%d collectives against %d (%d blocks)", full, n, layers);
}

Test(remat, policy_is_read_and_checked) {
  arena a;
  arena_init(&a);
  diag d;
  diag_init(&d);
  train_spec t;
  cr_expect_eq(train_parse(&a, "sgd(lr = 0.1)", &t, &d), 0);
  cr_expect_eq(t.remat, REMAT_NONE);
  cr_expect_eq(train_parse(&a, "sgd(lr = 0.1, remat = \"full\")", &t, &d), 0);
  cr_expect_eq(t.remat, REMAT_FULL);
  cr_expect_eq(train_parse(&a, "adam(remat = cheap)", &t, &d), 0);
  cr_expect_eq(t.remat, REMAT_CHEAP);
  cr_expect_eq(train_parse(&a, "adam(remat = \"l*.h.matmul, l*.q\")", &t, &d), 0);
  cr_expect_eq(t.remat, REMAT_NAMED);
  cr_expect_str_eq(t.remat_names, "l*.h.matmul, l*.q");
  cr_expect_eq(train_parse(&a, "adam(remat = 2)", &t, &d), -1);
  cr_expect(strstr(diag_text(&d), "--train:1:14: error: remat is none, cheap, full or a string of value globs"), "%s", diag_text(&d));
  diag_clear(&d);
  cr_expect_eq(train_parse(&a, "adam(remat = \" , \")", &t, &d), -1);
  cr_expect(strstr(diag_text(&d), "--train:1:14: error: remat names no value"), "%s", diag_text(&d));
  cr_expect_eq(train_parse(&a, "adam(remat = fast)", &t, &d), -1);
  diag_free(&d);
  arena_free(&a);
}

/* A glob that names no forward value is a located error, not a silent
** no-op: the user meant to save memory. */
Test(remat, glob_naming_nothing_is_an_error) {
  char *text = gpt_text();
  hx h;
  cr_assert(hx_build(&h, text) == 0, "%s", diag_text(&h.d));
  train_spec t;
  cr_assert(train_parse(&h.mem, "adam(remat = \"l*.h.matmul, l*.mlp.hidden\")", &t, &h.d) == 0);
  cr_expect_eq(train_build(h.g, &t, &h.d), -1);
  cr_expect(strstr(diag_text(&h.d), "--train:1:14: error: remat: 'l*.mlp.hidden' names no value of the forward pass"),
            "%s", diag_text(&h.d));
  hx_free(&h);
  free(text);
}

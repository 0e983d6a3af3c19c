/*
** test_lmloss.c: a language model's loss without its logits
** (lw_fold_lm_loss in interp/lower/lmloss.c). The projection onto the
** classes, the cross-entropy's gradient (which writes the loss) and the
** two GEMMs of that gradient become one xent_proj that runs a chunk of
** rows at a time. Against the unfused program (lower_opts.no_fold_rows,
** itself checked against finite differences and PyTorch elsewhere): the
** same loss and gradients for tied and untied projections and for chunk
** sizes that split the rows evenly or not, the same bits with one chunk;
** the planned memory drops by the logits; a logits value something else
** reads stays unfused; a bad label is still an error; three Adam steps of
** the small GPT train the same.
*/
#include "harness.h"
#include "interp/drive/drive.h"
#include "interp/drive/session.h"
#include "runtime/plan.h"

/* 32 positions, 64 classes, width 8; the projection tied to the embedding */
static const char *const tied =
    "model t {\n"
    "  input ids : i32[4, 8]\n  input labels : i32[4, 8]\n"
    "  param wte : f32[64, 8] = normal(0.5)\n  param wh : f32[8, 8] = normal(0.4)\n"
    "  x = tanh(matmul(embedding(wte, ids), wh))\n"
    "  logits = einsum(\"bsd,vd->bsv\", x, wte)\n"
    "  loss = cross_entropy(logits, labels)\n  return loss\n}\n";

/* the projection a [width, classes] matrix of its own */
static const char *const untied =
    "model t {\n"
    "  input ids : i32[4, 8]\n  input labels : i32[4, 8]\n"
    "  param wte : f32[64, 8] = normal(0.5)\n  param wh : f32[8, 8] = normal(0.4)\n"
    "  param wo : f32[8, 64] = normal(0.5)\n"
    "  x = tanh(matmul(embedding(wte, ids), wh))\n"
    "  logits = matmul(x, wo)\n"
    "  loss = cross_entropy(logits, labels)\n  return loss\n}\n";

static const char *const outs[] = {"loss", "grad.wte", "grad.wh", "grad.wo"};

static void build(hx *h, const char *text) {
  cr_assert(hx_build(h, text) == 0, "%s", diag_text(&h->d));
  cr_assert(grad_build(h->g, &h->d) == 0, "%s", diag_text(&h->d));
  for (int i = 1; i < 4; i++) if (ir_lookup(h->g, outs[i])) hx_output(h, outs[i]);
}

/* chunk: lower_opts.loss_chunk_bytes; fold 0: unfused */
static void run(hx *h, const char *text, int64_t chunk, int fold) {
  build(h, text);
  lower_opts o = {0};
  o.no_fold_rows = !fold;
  o.loss_chunk_bytes = chunk;
  hx_lower_opts(h, &o);
  hx_init_rest(h, 64);
  hx_run(h);
}

static int count(const rt_prog *p, rt_op op) {
  int n = 0;
  for (int i = 0; i < p->ninstrs; i++) n += p->instrs[i].op == op;
  return n;
}

static const rt_instr *the(const rt_prog *p, rt_op op) {
  for (int i = 0; i < p->ninstrs; i++) if (p->instrs[i].op == op) return &p->instrs[i];
  return NULL;
}

Test(lmloss, one_instruction) {
  hx f, u;
  run(&f, tied, 1024, 1);            /* 4 rows of 64 floats a chunk: 8 chunks */
  run(&u, tied, 0, 0);
  cr_expect_eq(count(&f.p, RT_XENT_PROJ), 1);
  cr_expect_eq(count(&f.p, RT_XENT_GRAD) + count(&f.p, RT_XENT), 0, "no cross-entropy left beside it");
  cr_expect_eq(count(&f.p, RT_GEMM) + 3, count(&u.p, RT_GEMM), "its three GEMMs inside");
  const rt_instr *x = the(&f.p, RT_XENT_PROJ);
  cr_assert(x);
  cr_expect(x->outer == 32 && x->n == 64 && x->k == 8 && x->inner == 4 && x->transb == 1,
            "32 rows of 8 by 64 classes, 4 at a time, w [classes, k]: %lld %lld %lld %lld %d", (long long)x->outer,
            (long long)x->n, (long long)x->k, (long long)x->inner, x->transb);
  hx_free(&f);
  hx_free(&u);
}

/* loss and gradients against the unfused program; chunk 0 (one chunk
** here): the same bits */
static void same_as_unfused(const char *text, int64_t chunk, int64_t rows_at_a_time) {
  hx f, u;
  run(&f, text, chunk, 1);
  run(&u, text, 0, 0);
  const rt_instr *x = the(&f.p, RT_XENT_PROJ);
  cr_assert(x, "folded");
  cr_expect_eq(x->inner, rows_at_a_time, "%lld rows a chunk, wanted %lld", (long long)x->inner, (long long)rows_at_a_time);
  for (int i = 0; i < 4; i++) {
    if (!ir_lookup(f.g, outs[i])) continue;
    int64_t n = hx_nelem(&f, outs[i]);
    const float *a = hx_get(&f, outs[i]), *b = hx_get(&u, outs[i]);
    if (rows_at_a_time == 32)
      cr_expect(!memcmp(a, b, (size_t)n * sizeof(float)), "%s: one chunk, yet not the unfused bits", outs[i]);
    double e = hx_relerr(a, b, n, 1e-6);
    cr_expect(e < 1e-5, "%s: relative error %g against the unfused program (chunk %lld bytes)", outs[i], e, (long long)chunk);
  }
  hx_free(&f);
  hx_free(&u);
}

Test(lmloss, tied_projection_matches) {
  same_as_unfused(tied, 0, 32);
  same_as_unfused(tied, 1024, 4);
  same_as_unfused(tied, 700, 3);     /* 12 chunks wanted, 11 made: ten of 3 rows and one of 2 */
  same_as_unfused(tied, 4, 1);       /* a row at a time */
}

Test(lmloss, untied_projection_matches) {
  const char *text = untied;
  hx f;
  run(&f, text, 1024, 1);
  const rt_instr *x = the(&f.p, RT_XENT_PROJ);
  cr_assert(x);
  cr_expect_eq(x->transb, 0, "w is [k, classes]");
  hx_free(&f);
  same_as_unfused(text, 0, 32);
  same_as_unfused(text, 1024, 4);
  same_as_unfused(text, 700, 3);
}

/* the planner never holds the [32, 64] logits, only a chunk of them */
Test(lmloss, planned_memory_drops) {
  hx f, u;
  run(&f, tied, 1024, 1);
  run(&u, tied, 0, 0);
  rt_memplan mf, mu;
  rt_memplan_make(&f.p, &mf);
  rt_memplan_make(&u.p, &mu);
  int64_t logits = 32 * 64 * 4;
  cr_expect(mf.block + logits - 1024 - 128 <= mu.block,     /* 128: the planner's alignment of two places */
            "planned %lld bytes folded, %lld unfused: not the logits less a chunk",
            (long long)mf.block, (long long)mu.block);
  rt_memplan_free(&mf);
  rt_memplan_free(&mu);
  hx_free(&f);
  hx_free(&u);
}

Test(lmloss, logits_read_elsewhere_stay) {
  hx f;
  build(&f, tied);
  hx_output(&f, "logits");
  hx_lower(&f);
  cr_expect_eq(count(&f.p, RT_XENT_PROJ), 0, "an output's logits must exist whole");
  cr_expect_eq(count(&f.p, RT_XENT_GRAD), 1);
  hx_free(&f);
}

Test(lmloss, bad_label_is_an_error) {
  hx f;
  build(&f, tied);
  lower_opts o = {0};
  o.loss_chunk_bytes = 1024;
  hx_lower_opts(&f, &o);
  cr_assert_eq(count(&f.p, RT_XENT_PROJ), 1);
  int32_t lab[32];
  for (int i = 0; i < 32; i++) lab[i] = i % 64;
  lab[29] = 99;                       /* in the last chunk */
  hx_set(&f, "labels", lab);
  hx_init_rest(&f, 64);
  char err[256];
  cr_expect_neq(rt_exec_run(f.e, err, sizeof err), 0);
  cr_expect(strstr(err, "cross_entropy: label 99 out of range [0, 64)"), "got: %s", err);
  hx_free(&f);
}

/* examples/gpt2_small.cir under train, lowered twice: f with lf, u with lu */
static void small_gpt(session *s, const char *train, drive *f, const lower_opts *lf, drive *u, const lower_opts *lu) {
  char mp[512];
  snprintf(mp, sizeof mp, "%s/examples/gpt2_small.cir", SRCDIR);
  session_init(s);
  session_opts so = {mp, NULL, train, NULL, {0}};
  cr_assert(session_load(s, &so) == 0, "%s", diag_text(&s->diag));
  diag d;
  diag_init(&d);
  cr_assert(drive_lower_opts(f, s->g, s->plan, lf, &d) == 0, "%s", diag_text(&d));
  cr_assert(drive_lower_opts(u, s->g, s->plan, lu, &d) == 0, "%s", diag_text(&d));
  diag_free(&d);
}

/* examples/gpt2_small.cir (128 positions, 256 classes): Adam steps in 8
** chunks against unfused, the losses and every parameter after them */
Test(lmloss, small_gpt_trains_the_same) {
  session s;
  drive f, u;
  lower_opts lf = {0}, lu = {0};
  lf.loss_chunk_bytes = 16 * 256 * 4;
  lu.no_fold_rows = 1;
  small_gpt(&s, "adam(lr = 1e-3)", &f, &lf, &u, &lu);
  const rt_instr *x = the(&f.prog, RT_XENT_PROJ);
  cr_assert(x && x->inner == 16 && x->outer == 128, "the small GPT's loss in chunks of 16 rows");
  char err[256];
  cr_assert(drive_start(&f, rt_backend_cpu(), NULL, rt_world_single(), NULL, NULL, err, sizeof err) == 0, "%s", err);
  cr_assert(drive_start(&u, rt_backend_cpu(), NULL, rt_world_single(), NULL, NULL, err, sizeof err) == 0, "%s", err);
  for (int st = 0; st < 3; st++) {
    double a, b;
    cr_assert(drive_step(&f, &a, err, sizeof err) == 0, "%s", err);
    cr_assert(drive_step(&u, &b, err, sizeof err) == 0, "%s", err);
    cr_expect(fabs(a - b) <= 1e-6 * fabs(b) && b > 0, "step %d: loss %.9g in chunks, %.9g unfused", st + 1, a, b);
  }
  for (int i = 0; i < s.g->nvals; i++) {
    const ir_value *v = s.g->vals[i];
    if (v->kind != IR_PARAM) continue;
    float *a, *b;
    cr_assert(drive_gather(&f, i, (void **)&a, err, sizeof err) == 0, "%s", err);
    cr_assert(drive_gather(&u, i, (void **)&b, err, sizeof err) == 0, "%s", err);
    double e = hx_normerr(a, b, ir_nelem(&v->shape));
    cr_expect(e < 1e-5, "'%s' differs by %g after 3 steps", v->name, e);
    free(a);
    free(b);
  }
  drive_free(&f);
  drive_free(&u);
  session_free(&s);
}

/* Under remat = cheap the final layer norm is recomputed for dw's GEMM:
** the fused loss reads the kept one, and the recomputation goes. */
Test(lmloss, recomputed_input_under_remat) {
  session s;
  drive f, u;
  lower_opts lf = {0}, lu = {0};
  lu.loss_chunk_bytes = -1;
  small_gpt(&s, "adam(lr = 1e-3, remat = cheap)", &f, &lf, &u, &lu);
  cr_assert(ir_lookup(s.g, "remat.xf"), "cheap recomputes the final norm");
  cr_expect_eq(count(&f.prog, RT_XENT_PROJ), 1);
  int made = 0;
  for (int i = 0; i < f.prog.ninstrs; i++) made += !strcmp(f.prog.bufs[f.prog.instrs[i].out].name, "remat.xf");
  cr_expect_eq(made, 0, "remat.xf is no longer computed");
  cr_expect_eq(f.prog.ninstrs + 4, u.prog.ninstrs, "four instructions and the recomputation become one");
  drive_free(&f);
  drive_free(&u);
  session_free(&s);
}

/* Under batch parallelism (with Megatron beside it) each device's rows
** fuse; the loss, this device's partial sum, is all-reduced after the
** fused instruction writes it, and the planner places it from there. */
Test(lmloss, batch_parallel_rows) {
  char mp[512], tp[512];
  snprintf(mp, sizeof mp, "%s/examples/gpt2_small.cir", SRCDIR);
  snprintf(tp, sizeof tp, "%s/examples/gpt2_small_bp_mp.tac", SRCDIR);
  session s;
  session_init(&s);
  session_opts so = {mp, NULL, "adam(lr = 1e-3)", tp, {0}};
  so.tac.ranks = 4;
  cr_assert(session_load(&s, &so) == 0, "%s", diag_text(&s.diag));
  drive f;
  lower_opts lf = {0};
  diag d;
  diag_init(&d);
  cr_assert(drive_lower_opts(&f, s.g, s.plan, &lf, &d) == 0, "%s", diag_text(&d));
  diag_free(&d);
  int at = -1, reduced = -1;
  for (int i = 0; i < f.prog.ninstrs; i++) if (f.prog.instrs[i].op == RT_XENT_PROJ) at = i;
  cr_assert(at >= 0, "fused on a device of batch = 2, model = 2");
  const rt_instr *x = &f.prog.instrs[at];
  cr_expect_eq(x->outer, 64, "this device's half of the 128 rows");
  int loss = x->in[4];
  for (int i = 0; i < f.prog.ninstrs; i++)
    if (f.prog.instrs[i].op == RT_ALL_REDUCE && f.prog.instrs[i].in[0] == loss) reduced = i;
  cr_expect(reduced > at, "the loss is all-reduced (at %d) after xent_proj writes it (at %d)", reduced, at);
  rt_memplan m;
  rt_memplan_make(&f.prog, &m);
  cr_expect_eq(m.first_write[loss], at);
  rt_memplan_free(&m);
  drive_free(&f);
  session_free(&s);
}

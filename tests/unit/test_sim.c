/*
** test_sim.c: the simulator. Memory of parameters, gradients and
** optimizer state against counts worked out by hand from the model's
** shapes and each strategy's splits; the peak against what the runtime
** really holds; each collective's and GEMM's time against its formula;
** profiles read back what the writer wrote, and broken ones give located
** errors.
*/
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "interp/drive/drive.h"
#include "interp/drive/session.h"
#include "interp/sim/estimate.h"
#include "interp/sim/sim.h"
#include "runtime/kern_attn.h"
#include "runtime/comm_local.h"
#include "runtime/mesh.h"

static void load(session *s, const char *model, const char *tac, const char *train) {
  session_init(s);
  char mp[512], tp[512];
  snprintf(mp, sizeof mp, "%s/examples/%s", SRCDIR, model);
  snprintf(tp, sizeof tp, "%s/examples/%s", SRCDIR, tac ? tac : "");
  session_opts o = {mp, NULL, train, tac ? tp : NULL, {0}};
  cr_assert(session_load(s, &o) == 0, "%s", diag_text(&s->diag));
}

static const char test_profile[] =
  "device \"test\"\n"
  "memory 1GB\n"
  "bandwidth 100e9\n"
  "flops f32 = 1e12 bf16 = 4e12\n"
  "gemm 1e6 0.5\n"
  "gemm 1e9 1.0\n"
  "launch 2us\n"
  "link fast bandwidth = 50e9 latency = 5us\n"
  "link slow bandwidth = 5e9 latency = 20us\n";

static void profile(arena *a, sim_profile *p) {
  diag d;
  diag_init(&d);
  const diag_src *src = diag_src_string(a, "test.profile", test_profile, strlen(test_profile));
  cr_assert(sim_profile_parse(a, &d, src, p) == 0, "%s", diag_text(&d));
  diag_free(&d);
}

/* gpt2_small: d 64, 4 heads of 16, MLP 256, vocab 256, context 32, 2 layers.
** A layer holds ln1 (128), wq wk wv (3 x 4096), wo (4096), bo (64), ln2 (128),
** w1 (16384), b1 (256), w2 (16384), b2 (64): 49792 values, of which Megatron
** splits wq wk wv wo w1 b1 w2 (49408) and keeps 384 whole. Outside the
** layers: wte (16384), wpe (2048), lnf (128): 18560. So 118144 values in
** all; with model = m, 2 (49408 / m + 384) + 18560 on a device. Adam keeps
** two moments of each, as laid out, and one step counter (4 bytes). */
#define WHOLE 118144
#define MP(m) (2 * (49408 / (m) + 384) + 18560)

Test(sim, memory_closed_forms) {
  struct { const char *tac; double params, optimizer, grads; } cases[] = {
    {"gpt2_small_bp.tac", 4.0 * WHOLE, 8.0 * WHOLE + 4, 4.0 * WHOLE},                        /* batch = 4: all whole */
    {"gpt2_small_mp.tac", 4.0 * MP(4), 8.0 * MP(4) + 4, 4.0 * MP(4)},                        /* model = 4 */
    {"gpt2_small_bp_mp_z1.tac", 4.0 * MP(2), 4.0 * MP(2) + 4, 4.0 * MP(2)},                  /* + state over batch = 2 */
    {"gpt2_small_bp_mp_z2.tac", 4.0 * MP(2), 4.0 * MP(2) + 4, 2.0 * MP(2)},                  /* + gradients */
    {"gpt2_small_bp_mp_z3.tac", 2.0 * MP(2), 4.0 * MP(2) + 4, 2.0 * MP(2)},                  /* + parameters */
  };
  arena a;
  arena_init(&a);
  sim_profile prof;
  profile(&a, &prof);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    session s;
    load(&s, "gpt2_small.cir", cases[i].tac, "adam(lr = 1e-3)");
    sim_result r;
    cr_assert(sim_plan(s.g, s.plan, &prof, NULL, 0, 0, &a, &r, &s.diag) == 0, "%s", diag_text(&s.diag));
    cr_assert_eq(r.mem.params, cases[i].params, "%s: params %g, by hand %g", cases[i].tac, r.mem.params, cases[i].params);
    cr_assert_eq(r.mem.optimizer, cases[i].optimizer, "%s: optimizer %g, by hand %g", cases[i].tac, r.mem.optimizer, cases[i].optimizer);
    cr_assert_eq(r.mem.grads, cases[i].grads, "%s: grads %g, by hand %g", cases[i].tac, r.mem.grads, cases[i].grads);
    cr_assert(r.mem.peak >= r.mem.params + r.mem.optimizer + r.mem.block);
    sim_result_free(&r);
    session_free(&s);
  }
  arena_free(&a);
}

/* text into a new temporary file named from tmpl ("/tmp/NAMEXXXXXX"), which it fills in */
static void write_temp(char *tmpl, const char *text) {
  int fd = mkstemp(tmpl);
  cr_assert(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
}

/* A model written to a temporary file, loaded as a session. */
static void load_text(session *s, const char *text, const char *train) {
  char path[] = "/tmp/carve_sim_XXXXXX";
  write_temp(path, text);
  char named[64];
  snprintf(named, sizeof named, "%s.cir", path);
  rename(path, named);
  session_init(s);
  session_opts o = {named, NULL, train, NULL, {0}};
  int rc = session_load(s, &o);
  remove(named);
  cr_assert(rc == 0, "%s", diag_text(&s->diag));
}

/* A model (its text, or with model_path its file) and a tactic file's
** text, loaded as a session, with train (NULL: none). */
static void load_with_tac(session *s, const char *model, const char *model_path, const char *tac, const char *train) {
  char mp[] = "/tmp/carve_sim_model_XXXXXX", tp[] = "/tmp/carve_sim_tac_XXXXXX";
  if (!model_path) write_temp(mp, model);
  write_temp(tp, tac);
  session_init(s);
  session_opts o = {model_path ? model_path : mp, NULL, train, tp, {0}};
  int rc = session_load(s, &o);
  if (!model_path) remove(mp);
  remove(tp);
  cr_assert(rc == 0, "%s", diag_text(&s->diag));
}

/* A model and a tactic file written to temporary files, loaded as a session. */
static void load_files(session *s, const char *model, const char *tac) { load_with_tac(s, model, NULL, tac, NULL); }

/* bf16 values cost their own two bytes */
Test(sim, bf16_memory_is_half) {
  const char *text = "model m {\n input x : %s[64, 128]\n param w : %s[128, 256]\n y = matmul(x, w)\n loss = mean(y)\n return loss\n}\n";
  double params[2], inputs[2];
  arena a;
  arena_init(&a);
  sim_profile prof;
  profile(&a, &prof);
  for (int k = 0; k < 2; k++) {
    char buf[512];
    snprintf(buf, sizeof buf, text, k ? "bf16" : "f32", k ? "bf16" : "f32");
    session s;
    load_text(&s, buf, NULL);
    sim_result r;
    cr_assert(sim_plan(s.g, NULL, &prof, NULL, 0, 0, &a, &r, &s.diag) == 0, "%s", diag_text(&s.diag));
    params[k] = r.mem.params;
    inputs[k] = r.mem.inputs;
    sim_result_free(&r);
    session_free(&s);
  }
  arena_free(&a);
  cr_assert_eq(params[0], 4.0 * 128 * 256);
  cr_assert_eq(params[1], 2.0 * 128 * 256, "bf16 params: %g", params[1]);
  cr_assert_eq(inputs[1], 2.0 * 64 * 128);
}

/* Every collective and GEMM of a lowered program costs its formula. */
Test(sim, instruction_times_follow_the_formulas) {
  arena a;
  arena_init(&a);
  sim_profile prof;
  profile(&a, &prof);
  const char *tacs[] = {"gpt2_small_bp_mp_z3.tac", "gpt2_small.tac", NULL};
  int seen[SIM_NCOLL] = {0}, gemms = 0;
  for (int t = 0; t < 3; t++) {
    session s;
    if (tacs[t]) load(&s, "gpt2_small.cir", tacs[t], "adam(lr = 1e-3)");
    else load_files(&s, "model m {\n input x : f32[8, 4]\n h = exp(x)\n y = tanh(h)\n return y\n}\n",     /* a split moved by all_to_all */
                    "mesh batch = 2\ntactic t {\n shard input \"x\" dim 0 on batch\n replicate value \"h\" dim 0 on batch\n shard value \"h\" dim 1 on batch\n}\nschedule t\n");
    rt_prog p;
    lower_result lr;
    cr_assert(lower_program(s.g, s.plan, &p, &lr, &s.diag) == 0);
    sim_opts o = {&prof, 0, 0, {0}};
    /* batch on the slow link, model on the fast one */
    cr_assert(sim_map_links(&a, &s.diag, &prof, &p, tacs[t] ? "batch = slow, model = fast" : "batch = slow", &o) == 0, "%s", diag_text(&s.diag));
    for (int i = 0; i < p.ninstrs; i++) {
      const rt_instr *x = &p.instrs[i];
      double got = sim_instr_seconds(&p, i, &o), want;
      if (rt_is_collective((rt_op)x->op)) {
        int n = rt_mesh_group_size(&p, x->group);
        int slow = 0;
        for (int k = 0; k < p.groups[x->group].naxes; k++) slow |= !strcmp(p.axis_names[p.groups[x->group].axes[k]], "batch");
        double bw = slow ? 5e9 : 50e9, lat = slow ? 20e-6 : 5e-6;
        double in = 4.0 * (double)p.bufs[x->in[0]].nelem, out = 4.0 * (double)p.bufs[x->out].nelem;
        switch (x->op) {
        case RT_ALL_REDUCE: want = 2.0 * (n - 1) * lat + 2.0 * (n - 1) / n * out / bw; break;
        case RT_ALL_GATHER: want = (n - 1) * lat + (double)(n - 1) / n * out / bw; break;
        default: want = (n - 1) * lat + (double)(n - 1) / n * in / bw; break;    /* reduce_scatter, all_to_all: the whole input */
        }
        want += 2e-6;
        seen[x->op - RT_ALL_REDUCE]++;
      } else if (x->op == RT_GEMM) {
        double b = x->batch > 1 ? (double)x->batch : 1, flops = 2.0 * b * (double)x->m * (double)x->n * (double)x->k, f1 = flops / b;
        double eff = f1 <= 1e6 ? 0.5 : f1 >= 1e9 ? 1.0 : 0.5 + 0.5 * (log(f1) - log(1e6)) / (log(1e9) - log(1e6));
        want = 2e-6 + flops / (1e12 * eff);
        gemms++;
      } else continue;
      cr_assert(fabs(got - want) <= 1e-9 * want, "%s of '%s': %g s, the formula says %g s", rt_op_name((rt_op)x->op), p.bufs[x->out].name, got, want);
    }
    lower_result_free(&lr);
    rt_prog_free(&p);
    session_free(&s);
  }
  cr_assert(seen[0] && seen[1] && seen[2] && seen[3] && gemms, "every kind was checked (%d %d %d %d, %d GEMMs)", seen[0], seen[1], seen[2], seen[3], gemms);
  arena_free(&a);
}

/* The kernel's blocks of 64 queries against chunks of 128 keys (forward)
** or all the keys a block sees (gradient), counted by hand. */
Test(sim, attention_blocks_counted) {
  double sc, calls;
  rt_attention_blocks(32, 1, 0, &sc, &calls);          /* one block of 32 against its 32 keys */
  cr_assert(sc == 32 * 32 && calls == 2, "%g scores, %g calls", sc, calls);
  rt_attention_blocks(256, 1, 0, &sc, &calls);         /* 4 blocks seeing 64, 128, 192, 256 keys: 1, 1, 2, 2 chunks */
  cr_assert(sc == 64.0 * (64 + 128 + 192 + 256) && calls == 2 * (1 + 1 + 2 + 2), "%g scores, %g calls", sc, calls);
  rt_attention_blocks(256, 1, 1, &sc, &calls);         /* the gradient: five GEMMs a block */
  cr_assert(sc == 64.0 * (64 + 128 + 192 + 256) && calls == 5 * 4, "%g scores, %g calls", sc, calls);
  rt_attention_blocks(100, 0, 0, &sc, &calls);         /* not causal: blocks of 64 and 36, each against 100 keys in one chunk */
  cr_assert(sc == 100.0 * 100 && calls == 2 * 2, "%g scores, %g calls", sc, calls);
  rt_attention_blocks(200, 1, 0, &sc, &calls);         /* blocks of 64, 64, 64, 8 seeing 64, 128, 192, 200 keys */
  cr_assert(sc == 64.0 * (64 + 128 + 192) + 8 * 200 && calls == 2 * (1 + 1 + 2 + 2), "%g scores, %g calls", sc, calls);
  rt_attention_blocks(200, 1, 1, &sc, &calls);
  cr_assert(calls == 5 * 4, "%g calls", calls);
  rt_attention_blocks(1000, 0, 1, &sc, &calls);        /* 16 blocks of 64 (the last of 40) */
  cr_assert(sc == 1e6 && calls == 5 * 16, "%g scores, %g calls", sc, calls);
  rt_attention_blocks((int64_t)1 << 40, 1, 0, &sc, &calls);   /* no loop over 2^34 blocks: at once, and the triangle */
  cr_assert(fabs(sc / (0.5 * 0x1p80) - 1) < 1e-9 && fabs(calls / (0x1p80 / 128.0 / 64.0) - 1) < 1e-6, "%g scores, %g calls", sc, calls);
}

/* Attention on a profile that measured carve's kernel is costed by its
** blocks; on one that did not, by its FLOPs. The estimator, which the
** search and the REPL use, agrees with the simulator on both. gpt2_small:
** 16 slices (batch 4 x 4 heads) of 32 positions, heads of 16. */
Test(sim, attention_costed_by_its_blocks) {
  arena a;
  arena_init(&a);
  sim_profile prof;
  profile(&a, &prof);
  session s;             /* replicated on 2 devices: a plan for the estimator, every slice on each */
  load_with_tac(&s, NULL, SRCDIR "/examples/gpt2_small.cir", "version 1\nmesh model = 2\ntactic none { }\nschedule none\n",
                "adam(lr = 1e-3)");
  rt_prog p;
  lower_result lr;
  cr_assert(lower_program(s.g, s.plan, &p, &lr, &s.diag) == 0);
  sim_opts o = {&prof, 0, 0, {0}};
  for (int measured = 0; measured < 2; measured++) {
    if (measured) {
      prof.kernel_small = 65536; prof.kernel_large = 4194304;
      double *fw = prof.op_cost[RT_ATTENTION], *b = prof.op_cost[RT_ATTENTION_GRAD];
      fw[1] = fw[2] = 1e-9; fw[3] = 300e-9;
      b[1] = b[2] = 2e-9; b[3] = 100e-9;
    }
    estimator *e = est_new(s.plan, &o);
    int seen = 0;
    for (int i = 0; i < p.ninstrs; i++) {
      const rt_instr *x = &p.instrs[i];
      if (x->op != RT_ATTENTION && x->op != RT_ATTENTION_GRAD) continue;
      int grad = x->op == RT_ATTENTION_GRAD;
      cr_assert(x->outer == 16 && x->m == 32 && x->k == 16 && x->fn == 1);
      double want;
      if (measured)   /* 1024 scores a slice, 2 dk FLOPs a score per GEMM; 2 or 5 calls of 32768 FLOPs (efficiency 0.5) */
        want = 2e-6 + 16 * (grad ? 5 : 2) * 32768 / (1e12 * 0.5) + 16 * 1024 * (grad ? 2e-9 : 1e-9) + 16 * (grad ? 5 : 2) * (grad ? 100e-9 : 300e-9);
      else            /* 4 s^2 dk, halved, 2.5 times for the gradient, as 16 GEMMs of a sixteenth each */
        want = 2e-6 + (grad ? 2.5 : 1) * 0.5 * 4 * 16 * 32 * 32 * 16 / (1e12 * 0.5);
      double got = sim_instr_seconds(&p, i, &o);
      cr_assert(fabs(got - want) <= 1e-9 * want, "%s, %s profile: %g s, the formula says %g s", rt_op_name((rt_op)x->op),
                measured ? "a measured" : "a published", got, want);
      seen |= 1 << grad;
    }
    cr_assert_eq(seen, 3, "an attention and its gradient");
    int est = 0;
    for (int v = 0; v < s.g->nvals; v++) {
      const ir_value *iv = s.g->vals[v];
      if (iv->kind != IR_OP || (iv->op != IR_ATTENTION && iv->op != IR_ATTENTION_GRAD)) continue;
      int grad = iv->op == IR_ATTENTION_GRAD;
      double want = sim_attention_seconds(&o, 16, 32, 16, 1, grad, SIM_F32), got = est_op_seconds(e, v);
      cr_assert(fabs(got - want) <= 1e-9 * want, "estimator on '%s': %g s, the simulator %g s", iv->name, got, want);
      est++;
    }
    cr_assert(est >= 2, "the estimator saw the attentions (%d)", est);
    est_free(e);
  }
  lower_result_free(&lr);
  rt_prog_free(&p);
  session_free(&s);
  arena_free(&a);
}

/* Overlap never makes a step longer, nor shorter than its longer stream. */
Test(sim, overlap_bounds) {
  arena a;
  arena_init(&a);
  sim_profile prof;
  profile(&a, &prof);
  session s;
  load(&s, "gpt2_small.cir", "gpt2_small.tac", "adam(lr = 1e-3)");
  sim_result r0, r1;
  cr_assert(sim_plan(s.g, s.plan, &prof, "batch = slow", 0, 0, &a, &r0, &s.diag) == 0, "%s", diag_text(&s.diag));
  cr_assert(sim_plan(s.g, s.plan, &prof, "batch = slow", 1, 0, &a, &r1, &s.diag) == 0, "%s", diag_text(&s.diag));
  cr_assert_eq(r0.total, r0.compute + r0.communication);
  cr_assert(r1.total < r0.total, "overlap hid nothing: %g vs %g", r1.total, r0.total);
  cr_assert(r1.total >= r1.compute && r1.total >= r1.communication);
  sim_result_free(&r0);
  sim_result_free(&r1);
  session_free(&s);
  arena_free(&a);
}

/* The predicted peak is what the runtime holds: the same plan, the same sums. */
typedef struct peak_run { const session *s; rt_local *l; size_t peak[8]; char err[8][256]; } peak_run;

static int peak_device(int dev, void *arg) {
  peak_run *m = arg;
  drive r;
  diag d;
  diag_init(&d);
  int rc = drive_lower(&r, m->s->g, m->s->plan, &d);
  diag_free(&d);
  double loss;
  if (rc == 0) rc = drive_start(&r, rt_backend_cpu(), m->l ? rt_local_comm(m->l, dev) : NULL, m->l ? rt_local_world(m->l, dev) : rt_world_single(),
                                NULL, NULL, m->err[dev], sizeof m->err[dev]);
  for (int st = 0; st < 2 && rc == 0; st++) rc = drive_step(&r, &loss, m->err[dev], sizeof m->err[dev]);
  m->peak[dev] = rc == 0 ? rt_exec_peak(r.e) : 0;
  drive_free(&r);
  return rc;
}

Test(sim, peak_equals_the_runtime) {
  arena a;
  arena_init(&a);
  sim_profile prof;
  profile(&a, &prof);
  const char *tacs[] = {NULL, "gpt2_small_bp_mp.tac", "gpt2_small.tac"};
  for (int t = 0; t < 3; t++) {
    session s;
    load(&s, "gpt2_small.cir", tacs[t], "adam(lr = 1e-3)");
    sim_result r;
    cr_assert(sim_plan(s.g, s.plan, &prof, NULL, 0, 0, &a, &r, &s.diag) == 0, "%s", diag_text(&s.diag));
    peak_run m = {&s, NULL, {0}, {{0}}};
    drive first;
    int ndev = 1;
    if (s.plan) {
      diag d;
      diag_init(&d);
      cr_assert(drive_lower(&first, s.g, s.plan, &d) == 0);
      diag_free(&d);
      m.l = rt_local_new(&first.prog);
      ndev = rt_local_devices(m.l);
      cr_assert(rt_local_run(m.l, peak_device, &m) == 0, "%s", m.err[0]);
    } else cr_assert(peak_device(0, &m) == 0, "%s", m.err[0]);
    for (int dv = 0; dv < ndev; dv++) {
#if defined(__SANITIZE_ADDRESS__)
      /* under ASan every temporary is an allocation of its own: the live bytes, never more than the block */
      cr_assert((double)m.peak[dv] <= r.mem.peak, "device %d holds %zu, predicted %g", dv, m.peak[dv], r.mem.peak);
#else
      cr_assert_eq((double)m.peak[dv], r.mem.peak, "%s device %d holds %zu bytes, predicted %g", tacs[t] ? tacs[t] : "one device", dv, m.peak[dv], r.mem.peak);
#endif
    }
    if (m.l) { rt_local_free(m.l); drive_free(&first); }
    sim_result_free(&r);
    session_free(&s);
  }
  arena_free(&a);
}

/* ---- profiles ---- */

Test(sim, profile_round_trip) {
  arena a;
  arena_init(&a);
  sim_profile p, q;
  profile(&a, &p);
  p.op_cost[RT_SOFTMAX][0] = 2e-7; p.op_cost[RT_SOFTMAX][1] = 1e-9; p.op_cost[RT_SOFTMAX][2] = 2e-9; p.op_cost[RT_SOFTMAX][3] = 3e-8;
  p.ew_cost[RT_GELU][1] = 1.5e-9; p.ew_cost[RT_GELU][2] = 2.5e-9;
  p.kernel_small = 1000; p.kernel_large = 1e6;
  p.links[0].kind_bandwidth[2] = 7e9;
  p.node = 4;
  strbuf b;
  sb_init(&b);
  sim_profile_write(&b, &p, "# written by the test\n");
  diag d;
  diag_init(&d);
  const diag_src *src = diag_src_string(&a, "back.profile", sb_str(&b), b.n);
  cr_assert(sim_profile_parse(&a, &d, src, &q) == 0, "%s\n%s", diag_text(&d), sb_str(&b));
  cr_assert_str_eq(q.device, "test");
  cr_assert(q.memory == p.memory && q.bandwidth == p.bandwidth && q.launch == p.launch && q.node == 4);
  for (int t = 0; t < SIM_NDT; t++) cr_assert(fabs(q.flops[t] - p.flops[t]) <= 1e-5 * p.flops[t]);
  cr_assert_eq(q.ngemm, p.ngemm);
  for (int i = 0; i < p.ngemm; i++) cr_assert(fabs(q.gemm_eff[i] - p.gemm_eff[i]) < 1e-4);
  for (int k = 0; k < 4; k++) cr_assert(fabs(q.op_cost[RT_SOFTMAX][k] - p.op_cost[RT_SOFTMAX][k]) <= 1e-3 * p.op_cost[RT_SOFTMAX][k]);
  cr_assert(fabs(q.ew_cost[RT_GELU][2] - 2.5e-9) < 1e-12);
  cr_assert(q.nlinks == 2 && !strcmp(q.links[1].name, "slow") && q.links[0].kind_bandwidth[2] == 7e9);
  sb_free(&b);
  diag_free(&d);
  arena_free(&a);
}

/* What the reader accepts, the writer writes so that it reads back: gemm
** lines a hair apart stay apart, kernel_sizes keep their order, a tiny
** fraction stays above 0 (each once failed in fuzz_profile). */
Test(sim, profile_written_reads_back) {
  static const char text[] = "memory 1GB\nbandwidth 1e9\nflops f32 = 1e12\ngemm 1000000.1 2e-8\ngemm 1000000.2 0.5\n"
                             "kernel_sizes 1.5 1.6\nkernel gelu 0 1ns 1ns\n";
  arena a;
  arena_init(&a);
  diag d;
  diag_init(&d);
  sim_profile p, q;
  cr_assert(sim_profile_parse(&a, &d, diag_src_string(&a, "p.profile", text, strlen(text)), &p) == 0, "%s", diag_text(&d));
  strbuf b;
  sb_init(&b);
  sim_profile_write(&b, &p, NULL);
  cr_assert(sim_profile_parse(&a, &d, diag_src_string(&a, "back.profile", sb_str(&b), b.n), &q) == 0, "%s\n%s", diag_text(&d), sb_str(&b));
  cr_assert(q.ngemm == 2 && q.gemm_flops[0] == p.gemm_flops[0] && q.gemm_flops[1] == p.gemm_flops[1] && q.gemm_eff[0] > 0);
  cr_assert(q.kernel_small == 1.5 && q.kernel_large == 1.6);
  sb_free(&b);
  diag_free(&d);
  arena_free(&a);
}

Test(sim, profile_errors_are_located) {
  struct { const char *text, *expect; } cases[] = {
    {"memory 80GB\nflopz f32 = 1\n", "p.profile:2:1: error: unknown key 'flopz' (a profile has device, memory"},
    {"memory 80 GB\n", "p.profile:1:11: error: 'memory' takes one number (a unit goes right after its number, as in 80GB)"},
    {"memory 80XB\n", "p.profile:1:10: error: unknown unit 'XB'"},
    {"memory 80GB\nmemory 1GB\n", "p.profile:2:1: error: 'memory' is given twice"},
    {"memory -1GB\n", "p.profile:1:8: error: 'memory' is -1e+09 bytes, out of range: give 1 to 1e+18 bytes, as in 80GB"},
    {"launch 1e308\n", "p.profile:1:8: error: 'launch' is 1e+308 seconds, out of range: give 0 to 1 seconds, as in 5us"},
    {"memory 1e30\n", "p.profile:1:8: error: 'memory' is 1e+30 bytes, out of range"},
    {"bandwidth 1e-300\n", "p.profile:1:11: error: 'bandwidth' is 1e-300 bytes a second, out of range"},
    {"flops f32 = 67e12 bf16 = 1e-300\n", "p.profile:1:26: error: 'bf16' is 1e-300 FLOP/s, out of range: give 0, or 1 to 1e+19"},
    {"link fast bandwidth = 1e9 latency = 1e300\n", "p.profile:1:37: error: 'latency' is 1e+300 seconds, out of range"},
    {"gemm 1e300 0.5\n", "p.profile:1:6: error: 'gemm' is 1e+300 FLOPs, out of range"},
    {"kernel gelu 0 1ns 1e9\n", "p.profile:1:19: error: a kernel's cost is 1e+09 seconds, out of range"},
    {"flops f64 = 1e12\n", "p.profile:1:7: error: flops takes f32, tf32, bf16 and f16"},
    {"gemm 1e9 0.5\ngemm 1e6 0.4\n", "p.profile:2:6: error: gemm lines must go up in FLOPs"},
    {"link fast latency = 1us\n", "p.profile:1:1: error: link 'fast' needs a positive bandwidth"},
    {"link fast bandwidth = 1e9 speed = 2\n", "p.profile:1:27: error: link has no setting 'speed'"},
    {"kernel frobnicate 0 1ns 1ns\n", "p.profile:1:8: error: no kernel 'frobnicate'"},
    {"kernel attention 0 1ns 1ns -300ns\n", "p.profile:1:28: error: a kernel's cost is -3e-07 seconds, out of range: give 0 to 1"},
    {"kernel gelu -1ns 1ns 1ns\n", "p.profile:1:13: error: a kernel's cost is -1e-09 seconds, out of range"},
    {"kernel gelu 0 1ns 0\n", "p.profile:1:19: error: a kernel's costs per element must be positive"},
    {"node 4.4e24\n", "p.profile:1:6: error: 'node' is 4.4e+24 devices, out of range"},    /* found by fuzz_profile: no cast first */
    {"node 2.5\n", "p.profile:1:6: error: node takes a whole number of devices"},
    {"device \"unterminated\n", "p.profile:1:8: error: unterminated string"},
    {"memory 1GB\nbandwidth 1e9\n", "p.profile:1:1: error: the profile gives no f32 peak"},
    {"memory = 3\n", "p.profile:1:8: error: unexpected '=', expected a value or the end of the line"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    arena a;
    diag d;
    arena_init(&a);
    diag_init(&d);
    sim_profile p;
    const diag_src *src = diag_src_string(&a, "p.profile", cases[i].text, strlen(cases[i].text));
    cr_assert(sim_profile_parse(&a, &d, src, &p) < 0, "accepted: %s", cases[i].text);
    cr_assert_eq(d.nerrors, 1);
    cr_assert(!strncmp(diag_text(&d), cases[i].expect, strlen(cases[i].expect)), "for:\n%s\nwanted: %s\ngot:    %s", cases[i].text, cases[i].expect, diag_text(&d));
    diag_free(&d);
    arena_free(&a);
  }
}

/* Every shipped profile reads, and simulates the GPT example. */
Test(sim, shipped_profiles) {
  const char *names[] = {"a100-40g", "a100-80g", "h100-sxm", "h200", "tpu-v4", "tpu-v5p"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    arena a;
    arena_init(&a);
    session s;
    load(&s, "gpt2_small.cir", "gpt2_small.tac", "adam(lr = 1e-3)");
    sim_profile p;
    cr_assert(sim_profile_load(&a, &s.diag, names[i], SRCDIR "/profiles", &p) == 0, "%s", diag_text(&s.diag));
    sim_result r;
    cr_assert(sim_plan(s.g, s.plan, &p, NULL, 0, 0, &a, &r, &s.diag) == 0, "%s: %s", names[i], diag_text(&s.diag));
    cr_assert(r.total > 0 && r.mem.peak > 0 && r.communication > 0);
    sim_result_free(&r);
    session_free(&s);
    arena_free(&a);
  }
}

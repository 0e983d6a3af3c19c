/*
** test_export.c: carve export (interp/export) and the importer's reading
** of GSPMD mhlo.sharding strings (interp/front/hlo.c), on small inline
** programs.
*/
#include "harness.h"
#include "interp/export/export.h"
#include "interp/front/hlo.h"
#include "interp/ir/ops.h"
#include "lang/mlir.h"
#include "runtime/dtype.h"
#include "randmodel.h"

/* ---- mhlo.sharding ---- */

typedef struct imp {
  arena a;
  diag d;
  ir_graph *g;
  hlo_info info;
  char *tac;
} imp;

static int imp_build(imp *m, const char *text) {
  memset(m, 0, sizeof *m);
  arena_init(&m->a);
  diag_init(&m->d);
  const diag_src *src = diag_src_string(&m->a, "t.mlir", text, strlen(text));
  mlir_file *f = mlir_parse(&m->a, &m->d, src);
  if (!f) return -1;
  m->g = hlo_build(f, NULL, &m->info, &m->d);
  if (!m->g) return -1;
  m->tac = hlo_tactics(m->g, &m->info, &m->a);
  return 0;
}

static void imp_free(imp *m) {
  ir_graph_free(m->g);
  arena_free(&m->a);
  diag_free(&m->d);
}

/* @main(%a: 8x4 with sharding A, %b: 8x4 with sharding B) */
static char *two_args(char *buf, size_t n, const char *sa, const char *sb) {
  snprintf(buf, n,
           "func.func @main(%%a: tensor<8x4xf32> {mhlo.sharding = \"%s\"}, %%b: tensor<8x4xf32> {mhlo.sharding = \"%s\"}) -> tensor<8x4xf32> {\n"
           "  %%0 = stablehlo.add %%a, %%b : tensor<8x4xf32>\n  return %%0 : tensor<8x4xf32>\n}\n", sa, sb);
  return buf;
}

typedef struct shcase {
  char a[64], b[64];
  char want[256];          /* lines the tactic file must hold, '|' between them; "" for no tactic file */
} shcase;

static shcase sh_cases[] = {
  {"{devices=[1,2]<=[2]}", "{replicated}", "mesh _axis_0 = 2|shard param \"a\" dim 1 on _axis_0"},
  {"{devices=[2,1]0,1}", "{devices=[1,2]0,1}", "mesh _axis_0 = 2|shard param \"a\" dim 0 on _axis_0|shard param \"b\" dim 1 on _axis_0"},
  {"{devices=[2,2]<=[4]}", "{devices=[4,1]<=[4]}",
   "mesh _axis_0 = 2, _axis_1 = 2|shard param \"a\" dim 0 on _axis_0|shard param \"a\" dim 1 on _axis_1|"
   "shard param \"b\" dim 0 on _axis_0|shard param \"b\" dim 0 on _axis_1"},
  {"{devices=[1,2,2]<=[4] last_tile_dim_replicate}", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}",
   "mesh _axis_0 = 2, _axis_1 = 2|shard param \"a\" dim 1 on _axis_0|shard param \"b\" dim 0 on _axis_0"},
  {"{devices=[2,1,2]<=[4] last_tile_dim_replicate}", "{devices=[1,4]<=[4]}",
   "mesh _axis_0 = 2, _axis_1 = 2|shard param \"a\" dim 0 on _axis_0|shard param \"b\" dim 1 on _axis_0|shard param \"b\" dim 1 on _axis_1"},
  {"{replicated}", "{replicated}", ""},
};

ParameterizedTestParameters(export, mhlo_sharding) {
  return cr_make_param_array(shcase, sh_cases, sizeof sh_cases / sizeof sh_cases[0]);
}

ParameterizedTest(shcase *c, export, mhlo_sharding) {
  char buf[1024];
  imp m;
  int rc = imp_build(&m, two_args(buf, sizeof buf, c->a, c->b));
  cr_assert_eq(rc, 0, "%s", diag_text(&m.d));
  cr_assert_eq(m.d.nwarnings, 0, "%s", diag_text(&m.d));
  if (!c->want[0]) {
    cr_assert_null(m.tac, "%s", m.tac);
  } else {
    cr_assert(m.tac, "no tactic file for %s, %s", c->a, c->b);
    char want[256];
    snprintf(want, sizeof want, "%s", c->want);
    for (char *p = strtok(want, "|"); p; p = strtok(NULL, "|")) cr_expect(strstr(m.tac, p), "'%s' not in:\n%s", p, m.tac);
  }
  imp_free(&m);
}

typedef struct shbad {
  char s[64];
  int error;               /* 1: an error; 0: a warning and no split */
  char want[96];
} shbad;

static shbad sh_bad[] = {
  {"{devices=[2,1]1,0}", 0, "other than the mesh's"},
  {"{devices=[2,2]<=[2,2]T(1,0)}", 0, "other than the mesh's"},
  {"{maximal device=0}", 0, "maximal"},
  {"{manual}", 0, "manual"},
  {"{devices=[1,2,2]<=[4] last_tile_dims={manual}}", 0, "last_tile_dims"},
  {"{devices=[2}", 1, "expected the tile counts"},
  {"{devices=[2,1]<=[3]}", 1, "as many devices as the tiles"},
  {"{devices=[2,1]0}", 1, "one device per tile"},
  {"{devices=[2,1,1]<=[2]}", 1, "3 tile counts for a value of rank 2"},
  {"{replicated", 1, "expected '}'"},
  {"replicated", 1, "expected '{'"},
  {"{devices=[0,1]<=[0]}", 1, "positive"},
  {"{tiles}", 1, "expected 'replicated'"},
};

ParameterizedTestParameters(export, mhlo_sharding_refused) {
  return cr_make_param_array(shbad, sh_bad, sizeof sh_bad / sizeof sh_bad[0]);
}

ParameterizedTest(shbad *c, export, mhlo_sharding_refused) {
  char buf[1024];
  imp m;
  int rc = imp_build(&m, two_args(buf, sizeof buf, c->s, "{replicated}"));
  const char *text = diag_text(&m.d);
  if (c->error) {
    cr_assert_eq(rc, -1, "accepted %s", c->s);
    cr_expect(strstr(text, "error: mhlo.sharding"), "%s", text);
  } else {
    cr_assert_eq(rc, 0, "%s", text);
    cr_expect(strstr(text, "warning: mhlo.sharding"), "%s", text);
    cr_expect_null(m.tac, "%s", m.tac ? m.tac : "");
  }
  cr_expect(strstr(text, c->want), "'%s' not in: %s", c->want, text);
  cr_expect(strstr(text, "t.mlir:1:"), "not located: %s", text);
  imp_free(&m);
}

/* ---- export ---- */

static const char *small_model =
  "model small {\n"
  "  input x : f32[4, 8]\n"
  "  input y : i32[4]\n"
  "  param w : f32[8, 6] = normal(0.5)\n"
  "  param b : f32[6] = zeros\n"
  "  param g : f32[6] = ones\n"
  "  h = layernorm(add(matmul(x, w), b), g, b)\n"
  "  p = softmax(gelu(h))\n"
  "  loss = cross_entropy(p, y)\n"
  "  return loss\n"
  "}\n";

/* op counts of a graph, one per kind */
static void count_ops(const ir_graph *g, int *n) {
  memset(n, 0, sizeof(int) * IR_NOPS);
  for (int i = 0; i < g->nvals; i++) n[g->vals[i]->op]++;
}

typedef struct scratch { arena a; diag d; } scratch;
static void scratch_init(scratch *s) { arena_init(&s->a); diag_init(&s->d); }
static void scratch_free(scratch *s) { arena_free(&s->a); diag_free(&s->d); }

static ir_graph *reimport(arena *a, diag *d, const char *text) {
  const diag_src *src = diag_src_string(a, "e.mlir", text, strlen(text));
  mlir_file *f = mlir_parse(a, d, src);
  return f ? hlo_build(f, NULL, NULL, d) : NULL;
}

Test(export, module_arguments_and_results) {
  hx h;
  cr_assert_eq(hx_build(&h, small_model), 0, "%s", diag_text(&h.d));
  char *text = export_program(h.g, NULL, &h.mem, &h.d);
  cr_assert(text, "%s", diag_text(&h.d));
  cr_expect(strstr(text, "module @small attributes {mhlo.num_partitions = 1 : i32"), "%s", text);
  cr_expect(strstr(text, "func.func public @main(%arg0: tensor<4x8xf32> {carve.kind = \"input\"} loc(\"x\"), "
                         "%arg1: tensor<4xi32> {carve.kind = \"input\"} loc(\"y\"), "
                         "%arg2: tensor<8x6xf32> {carve.kind = \"param\", carve.init = \"normal(0.5)\"} loc(\"w\")"), "%s", text);
  cr_expect(strstr(text, ") -> (tensor<f32> {jax.result_info = \"loss\"}) {"), "%s", text);
  cr_expect(strstr(text, "stablehlo.dot_general %arg0, %arg2, contracting_dims = [1] x [0]"), "%s", text);
  cr_expect(strstr(text, "applies stablehlo.maximum across dimensions = [1]"), "%s", text);
  cr_expect(!strstr(text, "sdy."), "no plan, no shardings: %s", text);
  cr_expect(strstr(text, "    return %loss : tensor<f32>\n  }\n"), "%s", text);
  /* carve's composite ops kept whole, each with its decomposition beside */
  cr_expect(strstr(text, "\"stablehlo.composite\"(") && strstr(text, "name = \"carve.softmax\"") &&
            strstr(text, "name = \"carve.layernorm\"") && strstr(text, "composite_attributes = {dim = 1 : i64, eps = "), "%s", text);
  cr_expect(strstr(text, "  func.func private @carve.softmax.") && !strcmp(text + strlen(text) - 4, "  }\n}\n" + 2), "%s", text);
  /* carve reads back what it wrote: the same leaves, names and kinds */
  scratch t;
  scratch_init(&t);
  ir_graph *g2 = reimport(&t.a, &t.d, text);
  cr_assert(g2, "%s", diag_text(&t.d));
  static const char *const leaves[] = {"x", "y", "w", "b", "g"};
  for (int i = 0; i < 5; i++) {
    const ir_value *v1 = ir_lookup(h.g, leaves[i]), *v2 = ir_lookup(g2, leaves[i]);
    cr_assert(v2, "no %s", leaves[i]);
    cr_expect_eq(v1->kind, v2->kind, "%s", leaves[i]);
    cr_expect_eq(v1->init.kind, v2->init.kind, "%s", leaves[i]);
    cr_expect(ir_shape_eq(&v1->shape, &v2->shape) && v1->dtype == v2->dtype, "%s", leaves[i]);
  }
  cr_expect(ir_lookup(g2, "loss") && g2->nouts == 1 && g2->outputs[0] == ir_lookup(g2, "loss")->id);
  ir_graph_free(g2);
  scratch_free(&t);
  hx_free(&h);
}

/* ops the importer makes come back as themselves */
Test(export, imported_ops_round_trip) {
  static const char *prog =
    "func.func @main(%t: tensor<10x4xf32>, %i: tensor<3x1xi32>, %x: tensor<3x4xf32>) -> tensor<10x4xf32> {\n"
    "  %e = \"stablehlo.gather\"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
    "start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>}> : (tensor<10x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>\n"
    "  %m = stablehlo.multiply %e, %x : tensor<3x4xf32>\n"
    "  %c = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %z = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<10x4xf32>\n"
    "  %s = \"stablehlo.scatter\"(%z, %i, %m) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], "
    "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({\n"
    "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n    %r = stablehlo.add %a, %b : tensor<f32>\n    stablehlo.return %r : tensor<f32>\n"
    "  }) : (tensor<10x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<10x4xf32>\n"
    "  %d = stablehlo.dot_general %s, %x, contracting_dims = [1] x [1] : (tensor<10x4xf32>, tensor<3x4xf32>) -> tensor<10x3xf32>\n"
    "  %q = stablehlo.dot_general %d, %x, contracting_dims = [1] x [0] : (tensor<10x3xf32>, tensor<3x4xf32>) -> tensor<10x4xf32>\n"
    "  %k = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>\n"
    "  %kb = stablehlo.broadcast_in_dim %k, dims = [1] : (tensor<4xf32>) -> tensor<10x4xf32>\n"
    "  %o = stablehlo.add %q, %kb : tensor<10x4xf32>\n"
    "  return %o : tensor<10x4xf32>\n}\n";
  scratch t;
  scratch_init(&t);
  ir_graph *g1 = reimport(&t.a, &t.d, prog);
  cr_assert(g1, "%s", diag_text(&t.d));
  char *text = export_program(g1, NULL, &t.a, &t.d);
  cr_assert(text, "%s", diag_text(&t.d));
  ir_graph *g2 = reimport(&t.a, &t.d, text);
  cr_assert(g2, "%s\n%s", diag_text(&t.d), text);
  int n1[IR_NOPS], n2[IR_NOPS];
  count_ops(g1, n1);
  count_ops(g2, n2);
  for (int k = 1; k < IR_NOPS; k++)
    cr_expect_eq(n1[k], n2[k], "%s: %d ops, %d after the round trip\n%s", ir_opinfo_of((ir_opkind)k)->name, n1[k], n2[k], text);
  cr_expect(strstr(text, ", %arg1, %m) <{scatter_dimension_numbers"), "the scatter reads the ids as given: %s", text);
  ir_graph_free(g1);
  ir_graph_free(g2);
  scratch_free(&t);
}

/* ---- random models through StableHLO and back ----
** Each random model (randmodel.h), forward and as an SGD step, is
** exported, read back, and run on one device beside the original: every
** output (the loss, each new parameter and momentum buffer) must agree to
** float rounding. RANDOM_MODELS=N RANDOM_SEED=S try others. */

/* g lowered and run once, its leaves from their deterministic init (ids
** in [0, 2): every table and class count here has at least 2); each
** output copied into outs[k] (malloc'd) with its count in n[k] */
static void run_once(ir_graph *g, double **outs, int64_t *n, const char *what) {
  hx h;
  memset(&h, 0, sizeof h);
  arena_init(&h.mem);
  diag_init(&h.d);
  h.g = g;
  ir_link(h.g);
  int rc = lower_program_opts(h.g, NULL, NULL, &h.p, &h.lr, &h.d);
  cr_assert(rc == 0, "%s: lowering failed: %s", what, diag_text(&h.d));
  h.lowered = 1;
  h.e = rt_exec_new(&h.p, rt_backend_cpu(), NULL);
  hx_init_rest(&h, 2);
  char err[256];
  cr_assert(rt_exec_run(h.e, err, sizeof err) == 0, "%s: run failed: %s", what, err);
  for (int k = 0; k < g->nouts; k++) {
    const ir_value *v = g->vals[g->outputs[k]];
    n[k] = ir_nelem(&v->shape);
    outs[k] = malloc(sizeof(double) * (size_t)(n[k] + 1));
    int b = h.lr.buf_of[v->id];
    cr_assert(b >= 0 && (h.p.bufs[b].dtype == RT_F32 || h.p.bufs[b].dtype == RT_F64), "%s: output %d", what, k);
    for (int64_t i = 0; i < n[k]; i++) outs[k][i] = rt_load_f(h.p.bufs[b].dtype, rt_exec_data(h.e, b), i);
  }
  hx_free(&h);
}

/* count models from seed, in f32 or (f64) in f64 */
static void round_trips(int count, uint64_t seed, int f64) {
  int nmodels = rm_start(count, f64 ? 3 : 1, seed);
  for (int k = 0; k < nmodels; k++) {
    char *text = random_model();
    if (f64) rm_f64(text);
    if (getenv("RANDOM_ONLY") && atoi(getenv("RANDOM_ONLY")) != k) { free(text); continue; }
    if (getenv("RANDOM_ONLY")) fprintf(stderr, "%s", text);
    for (int step = 0; step < 2; step++) {
      char what[64];
      snprintf(what, sizeof what, "random %s model %d%s", f64 ? "f64" : "f32", k, step ? " (SGD step)" : "");
      hx h;
      cr_assert_eq(hx_build(&h, text), 0, "%s: %s\n%s", what, diag_text(&h.d), text);
      if (step) {
        train_spec t;
        cr_assert(train_parse(&h.mem, "sgd(lr = 0.05, momentum = 0.9)", &t, &h.d) == 0);
        cr_assert(train_build(h.g, &t, &h.d) == 0, "%s: %s\n%s", what, diag_text(&h.d), text);
      }
      char *mlir = export_program(h.g, NULL, &h.mem, &h.d);
      cr_assert(mlir, "%s: export failed: %s\n%s", what, diag_text(&h.d), text);
      arena a2;
      diag d2;
      arena_init(&a2);
      diag_init(&d2);
      ir_graph *g2 = reimport(&a2, &d2, mlir);
      cr_assert(g2, "%s: the export does not read back: %s\n%s", what, diag_text(&d2), mlir);
      int nouts = g2->nouts;
      cr_assert_eq(nouts, h.g->nouts, "%s", what);
      double *o1[64], *o2[64];
      int64_t n1[64], n2[64];
      cr_assert(h.g->nouts <= 64);
      int state[64];                     /* outputs that are optimizer state (a momentum buffer) */
      for (int i = 0; i < nouts; i++) {
        const ir_value *v = h.g->vals[h.g->outputs[i]];
        state[i] = v->carry >= 0 && h.g->vals[v->carry]->kind == IR_STATE;
      }
      run_once(h.g, o1, n1, what);
      h.g = NULL;                        /* run_once freed it */
      run_once(g2, o2, n2, what);
      for (int i = 0; i < nouts; i++) {
        cr_expect_eq(n1[i], n2[i], "%s: output %d", what, i);
        /* the new parameters show the gradients (lr 0.05); a momentum
           buffer alone may hold a gradient that is zero but for rounding
           (a layer norm's bias under a softmax over another dim cancels),
           which two spellings of the same step round differently: not
           compared. 1e-4: the export spells out softmax and layer norm (in
           f64 a millionth of that: every op computes in double both ways) */
        if (n1[i] == n2[i] && !state[i]) {
          double e = hx_normerr_d(o2[i], o1[i], n1[i]);
          cr_expect(e <= (f64 ? 1e-10 : 1e-4), "%s: output %d differs by %g after the round trip\n%s\n%s", what, i, e, text, mlir);
        }
        free(o1[i]);
        free(o2[i]);
      }
      arena_free(&a2);
      diag_free(&d2);
      hx_free(&h);
    }
    free(text);
  }
}

Test(export, random_models_round_trip) { round_trips(150, 0x5deece66dull, 0); }

/* f64 models through StableHLO and back (the export spells out softmax,
** layer norm, cross-entropy and attention in elementwise ops and dots) */
Test(export, random_models_f64_round_trip) { round_trips(50, 0xd1b54a32d192ed03ull, 1); }

/*
** test_partition.c: a partitioned training step equals the unpartitioned
** one. Each strategy's program runs on every device of its mesh (threads
** in this process, collectives in shared memory) for three Adam steps;
** the losses and every updated parameter, put back together from the
** devices' pieces, must match the one-device run to float rounding
** (relative error of the whole tensor, ||a - b|| / ||b||). Cases with a
** bucket size join the gradients' reductions into buckets (bucket.c):
** the same numbers, from fewer collectives.
*/
#include "harness.h"
#include "interp/drive/feed.h"
#include "interp/ir/ops.h"
#include "interp/tactic/tactic.h"
#include "runtime/comm_local.h"
#include "runtime/dtype.h"
#include "runtime/mesh.h"
#include "randmodel.h"

#include <stdio.h>

#define STEPS 3

typedef struct run {
  const ir_graph *g;
  const rt_prog *p;
  const lower_result *lr;
  rt_local *l;
  double loss[64][STEPS];
  double **full;         /* per value: the gathered final value of params and state */
  char err[64][256];
} run;

static int device(int dev, void *arg) {
  run *r = arg;
  const rt_comm *comm = r->l ? rt_local_comm(r->l, dev) : NULL;
  /* a pipeline stage runs its own instructions and holds its own values */
  int stage = rt_prog_stage(r->p, dev);
  rt_prog own;
  const rt_prog *p = r->p;
  if (p->stage_axis >= 0) { rt_prog_copy_stage(r->p, stage, &own); p = &own; }
  rt_exec *e = rt_exec_new(p, rt_backend_cpu(), comm);
  int rc = 0;
  for (int i = 0; i < r->g->nvals && !rc; i++) {
    const ir_value *v = r->g->vals[i];
    int b = r->lr->buf_of[i];
    if ((v->kind != IR_INPUT && v->kind != IR_PARAM && v->kind != IR_STATE) || b < 0 || !rt_stage_holds(p, stage, b)) continue;
    const rt_buf *rb = &r->p->bufs[b];
    int64_t zero[RT_MAXRANK] = {0}, whole = 1;
    for (int d = 0; d < rb->rank; d++) whole *= rb->global_shape[d];
    rt_init in;
    feed_init(r->g, v, &in);
    size_t es = rt_dtype_size(rb->dtype);
    char *all = calloc((size_t)whole + 1, es), *tmp = calloc((size_t)rb->nelem + 1, es);
    rt_init_block(&in, rb->dtype, rb->rank, rb->global_shape, zero, rb->global_shape, all, 1);
    for (int64_t k = 0; k < rb->nelem; k++)      /* this device's elements, wherever its piece lies */
      memcpy(tmp + (size_t)k * es, all + (size_t)rt_mesh_global_index(r->p, dev, b, k) * es, es);
    rc = rt_exec_set(e, b, tmp, (size_t)rb->nelem * es, r->err[dev], sizeof r->err[dev]);
    free(tmp);
    free(all);
  }
  int out = r->lr->buf_of[r->g->outputs[0]];
  for (int s = 0; s < STEPS && !rc; s++) {
    rc = rt_exec_run(e, r->err[dev], sizeof r->err[dev]);
    if (rc) break;
    r->loss[dev][s] = rt_load_f(r->p->bufs[out].dtype, rt_exec_data(e, out), 0);
    rt_exec_carry(e);
  }
  /* write this device's pieces of every parameter and state into the full arrays */
  for (int i = 0; i < r->g->nvals && !rc; i++) {
    const ir_value *v = r->g->vals[i];
    int b = r->lr->buf_of[i];
    if ((v->kind != IR_PARAM && v->kind != IR_STATE) || b < 0 || !rt_stage_holds(p, stage, b)) continue;
    int first = 0;               /* of a pipeline's, the first stage that holds it speaks (as drive_gather) */
    while (p->stage_axis >= 0 && first < 63 && !rt_stage_holds(p, first, b)) first++;
    if (p->stage_axis >= 0 && stage != first) continue;
    const rt_buf *rb = &r->p->bufs[b];
    const void *src = rt_exec_data(e, b);
    for (int64_t k = 0; k < rb->nelem; k++) r->full[i][rt_mesh_global_index(r->p, dev, b, k)] = rt_load_f(rb->dtype, src, k);
  }
  rt_exec_free(e);
  if (p != r->p) rt_prog_free(&own);
  return rc;
}

/* the collectives of p, and those reducing a bucket (no value of their own;
   a pipeline's sends and receives have none either) */
static int collectives(const rt_prog *p, int *buckets) {
  int n = 0;
  *buckets = 0;
  for (int i = 0; i < p->ninstrs; i++) {
    const rt_instr *x = &p->instrs[i];
    if (!rt_is_collective((rt_op)x->op)) continue;
    n++;
    *buckets += x->src < 0 && x->op != RT_SEND && x->op != RT_RECV;
  }
  return n;
}

/* Run the plan's program (plan NULL: one device); the program's collectives, and how many reduce buckets. */
static int one_run(const ir_graph *g, const sh_plan *plan, int64_t bucket, run *r, int *buckets, const char *what) {
  static rt_prog p;
  static lower_result lr;
  diag d;
  diag_init(&d);
  lower_opts lo = {0};
  lo.bucket_bytes = bucket;
  cr_assert(lower_program_opts(g, plan, &lo, &p, &lr, &d) == 0, "%s: %s", what, diag_text(&d));
  int ncoll = collectives(&p, buckets);
  r->g = g;
  r->p = &p;
  r->lr = &lr;
  r->full = calloc((size_t)g->nvals, sizeof(double *));
  for (int i = 0; i < g->nvals; i++)
    if (g->vals[i]->kind == IR_PARAM || g->vals[i]->kind == IR_STATE) r->full[i] = calloc((size_t)ir_nelem(&g->vals[i]->shape) + 1, sizeof(double));
  if (plan) {
    r->l = rt_local_new(&p);
    cr_assert(r->l);
    int rc = rt_local_run(r->l, device, r);
    for (int k = 0; k < rt_local_devices(r->l); k++) cr_assert(rc == 0, "%s: device %d: %s", what, k, r->err[k]);
    rt_local_free(r->l);
  } else {
    r->l = NULL;
    cr_assert(device(0, r) == 0, "%s: %s", what, r->err[0]);
  }
  lower_result_free(&lr);
  rt_prog_free(&p);
  diag_free(&d);
  return ncoll;
}

typedef struct pcase { char model[48]; char tactic[48]; char train[40]; int ndev; int64_t bucket; int fuse; } pcase;

static pcase pcases[] = {
  {"gpt2_small.cir", "gpt2_small_bp_mp.tac", "sgd(lr = 0.1)", 4},
  {"mlp_small.cir", "mlp_bp.tac", "sgd(lr = 0.1)", 2},
  {"mlp_small.cir", "mlp_mp.tac", "adam(lr = 1e-3)", 2},
  {"mlp_small.cir", "../tests/data/mlp_cols.tac", "sgd(lr = 0.1)", 2},
  {"../tests/data/attn_reshape.cir", "../tests/data/mp2.tac", "adam(lr = 1e-3)", 2},
  {"gpt2_small.cir", "gpt2_small_bp.tac", "adam(lr = 1e-3)", 4},
  {"gpt2_small.cir", "gpt2_small_mp.tac", "adam(lr = 1e-3)", 4},
  {"gpt2_small.cir", "gpt2_small_bp_mp.tac", "adam(lr = 1e-3)", 4},
  {"gpt2_small.cir", "gpt2_small_bp_mp_z2.tac", "adam(lr = 1e-3)", 4},
  {"gpt2_small.cir", "gpt2_small_bp_mp_z3.tac", "adam(lr = 1e-3)", 4},
  {"gpt2_small.cir", "gpt2_small.tac", "adam(lr = 1e-3)", 4},
  /* an axis leaving one dim for another with a second axis on the first */
  {"gpt2_small.cir", "../tests/data/axis_two_dims.tac", "adam(lr = 1e-3)", 4},
  /* a partial sum passed on, taking an axis from the contraction after it */
  {"gpt2_small.cir", "../tests/data/partial_heads.tac", "sgd(lr = 0.1)", 4},
  /* a reshape's group split finer than its leading dim */
  {"../tests/data/attn_reshape.cir", "../tests/data/reshape_group.tac", "adam(lr = 1e-3)", 8, 0, 1},
  /* buckets: all-reduces (bp), reduce-scatters (ZeRO 2 and 3), beside
     megatron's activations; 1 KiB holds few gradients, so most go alone */
  {"mlp_small.cir", "mlp_bp.tac", "sgd(lr = 0.1)", 2, 25 << 20},
  {"gpt2_small.cir", "gpt2_small_bp.tac", "adam(lr = 1e-3)", 4, 256 << 10},
  {"gpt2_small.cir", "gpt2_small_bp.tac", "sgd(lr = 0.1)", 4, 1 << 10},
  {"gpt2_small.cir", "gpt2_small_bp_mp_z1.tac", "adam(lr = 1e-3)", 4, 256 << 10},
  {"gpt2_small.cir", "gpt2_small_bp_mp_z2.tac", "adam(lr = 1e-3)", 4, 256 << 10},
  {"gpt2_small.cir", "gpt2_small_bp_z3.tac", "adam(lr = 1e-3)", 4, 64 << 10},
  /* fused attention, its transposes folded (lower/fold.c), heads split or not */
  {"gpt2_small.cir", "gpt2_small_bp_mp.tac", "adam(lr = 1e-3)", 4, 0, 1},
  {"gpt2_small.cir", "gpt2_small_mp.tac", "sgd(lr = 0.1)", 4, 0, 1},
  /* recomputing in the backward pass (train/remat.c) under the plans */
  {"gpt2_small.cir", "gpt2_small_bp_mp_z3.tac", "adam(lr = 1e-3, remat = full)", 4, 0, 1},
  {"gpt2_small.cir", "gpt2_small_bp_mp.tac", "adam(lr = 1e-3, remat = cheap)", 4, 0, 0},
  /* the vocabulary-parallel loss (the logits split by class: row statistics
     by two all-reduces, the loss a partial sum over the classes) on 2 and 4
     ranks, alone beside Megatron, with batch, with ZeRO-3, attention fused;
     and its gradient split while the logits are whole (statistics from them) */
  {"gpt2_small.cir", "../tests/data/mp_vocab.tac", "sgd(lr = 0.1)", 2},
  {"gpt2_small.cir", "../tests/data/mp_vocab.tac", "adam(lr = 1e-3)", 2},
  {"gpt2_small.cir", "../tests/data/mp_vocab4.tac", "sgd(lr = 0.1, momentum = 0.9)", 4},
  {"gpt2_small.cir", "../tests/data/mp_vocab4.tac", "adam(lr = 1e-3)", 4, 0, 1},
  {"gpt2_small.cir", "../tests/data/bp_mp_vocab.tac", "adam(lr = 1e-3)", 4},
  {"gpt2_small.cir", "../tests/data/bp_mp_vocab.tac", "sgd(lr = 0.1)", 4, 256 << 10},
  {"gpt2_small.cir", "gpt2_small.tac", "sgd(lr = 0.1)", 4},
  {"gpt2_small.cir", "gpt2_small.tac", "adam(lr = 1e-3, remat = full)", 4, 0, 1},
  {"gpt2_small.cir", "../tests/data/split_logits_grad.tac", "adam(lr = 1e-3)", 4},
  {"../tests/data/shifted_logits.cir", "../tests/data/shifted_logits.tac", "sgd(lr = 0.1)", 2},   /* the max matters */
  {"gpt2_small.cir", "../tests/data/keep_logits.tac", "adam(lr = 1e-3)", 4},
  /* sequence parallelism beside Megatron (activations gathered before the
     column-parallel GEMMs, reduce-scattered after the row-parallel ones),
     with batch, and with the vocabulary split 4 ways */
  {"gpt2_small.cir", "gpt2_small_mp_sp.tac", "adam(lr = 1e-3)", 2},
  {"gpt2_small.cir", "gpt2_small_mp_sp.tac", "sgd(lr = 0.1)", 2, 0, 1},
  {"gpt2_small.cir", "../tests/data/bp_mp_sp.tac", "adam(lr = 1e-3, remat = full)", 4},
  {"gpt2_small.cir", "../tests/data/mp_sp_vocab4.tac", "sgd(lr = 0.1, momentum = 0.9)", 4},
  {"../tests/data/gpt2_b8.cir", "gpt2_small_mp_sp.tac", "sgd(lr = 0.1, momentum = 0.9)", 2},   /* weight gradients by all-to-all */
  /* a GShard mixture of experts, experts and groups split on one axis */
  {"../tests/data/moe_gshard.cir", "../tests/data/moe_ep.tac", "adam(lr = 1e-3)", 4},
  /* the same, and one without groups, and one with its router in the
     program, under the stdlib's experts: dispatch and combine moved by
     all_to_all (groups) or reduce-scatter and all-gather (none) */
  {"../tests/data/moe_gshard.cir", "../tests/data/moe_experts.tac", "adam(lr = 1e-3)", 4},
  {"../tests/data/moe_switch.cir", "../tests/data/moe_experts.tac", "sgd(lr = 0.1, momentum = 0.9)", 4},
  {"../tests/data/moe_router.cir", "../tests/data/moe_experts.tac", "adam(lr = 1e-2)", 4},
  {"../tests/data/moe_router.cir", "../tests/data/moe_experts_mp.tac", "adam(lr = 1e-2)", 4},
  /* partial sums reduced where it is cheapest: where they fork (an RMS
     norm's backward as JAX spells it), before a broadcast */
  {"../tests/data/rmsnorm_jax.cir", "../tests/data/mp2.tac", "adam(lr = 1e-2)", 2},
  {"../tests/data/bcast_partial.cir", "../tests/data/bcast_partial.tac", "sgd(lr = 0.1)", 2},
  /* softmax and log_softmax over classes split by vocabulary */
  {"../tests/data/softmax_vocab.cir", "../tests/data/softmax_vocab.tac", "adam(lr = 1e-2)", 2},
  {"../tests/data/softmax_vocab.cir", "../tests/data/softmax_vocab4.tac", "sgd(lr = 0.1, momentum = 0.9)", 4},
  /* pipeline stages: a 4-layer GPT whose embedding is tied to its output
     projection (both stages hold it), 2 and 4 stages, 1F1B and GPipe, one
     microbatch and many, with batch, Megatron and ZeRO-3 on other axes;
     Adam in f64 (in f32 its first steps on zero biases turn rounding into
     whole updates: batch parallelism alone misses 1e-5 there too) */
  {"../tests/data/gpt_pp.cir", "../tests/data/pp2.tac", "sgd(lr = 0.1)", 2},
  {"../tests/data/gpt_pp_f64.cir", "../tests/data/pp2.tac", "adam(lr = 1e-3)", 2},
  {"../tests/data/gpt_pp.cir", "../tests/data/pp4_gpipe.tac", "sgd(lr = 0.1, momentum = 0.9)", 4},
  {"../tests/data/gpt_pp.cir", "../tests/data/pp2_one.tac", "sgd(lr = 0.1)", 2},
  {"../tests/data/gpt_pp_f64.cir", "../tests/data/pp_bp_mp.tac", "adam(lr = 1e-3)", 8},
  {"../tests/data/gpt_pp.cir", "../tests/data/pp_bp_z3.tac", "sgd(lr = 0.1, momentum = 0.9)", 4, 0, 1},
  {"../tests/data/gpt_pp_f64.cir", "../tests/data/pp_bp_z3.tac", "adam(lr = 1e-3)", 4},
  {"mlp_small.cir", "../tests/data/pp2.tac", "sgd(lr = 0.1)", 2},
  {"../tests/data/pp_bias_input.cir", "../tests/data/pp2.tac", "adam(lr = 1e-3)", 2},   /* an input kept whole on the microbatches */
  /* a stage's reductions after its last microbatch joined in buckets of 1 MiB (the updates moved out from between them) */
  {"../tests/data/gpt_pp_f64.cir", "../tests/data/pp_bp_mp.tac", "adam(lr = 1e-3)", 8, 1 << 20},
  {"../tests/data/gpt_pp.cir", "../tests/data/pp_bp_z3.tac", "sgd(lr = 0.1, momentum = 0.9)", 4, 1 << 20},
  {"../tests/data/gpt_pp_f64.cir", "../tests/data/pp_bp_z3_zb.tac", "adam(lr = 1e-3)", 4, 1 << 20},
  /* zero-bubble (ZB-H1): the weights' gradients apart, later */
  {"../tests/data/gpt_pp.cir", "../tests/data/pp4_zb.tac", "sgd(lr = 0.1, momentum = 0.9)", 4},
  {"../tests/data/gpt_pp_f64.cir", "../tests/data/pp4_zb.tac", "adam(lr = 1e-3)", 4},
  {"../tests/data/gpt_pp_f64.cir", "../tests/data/pp_bp_z3_zb.tac", "adam(lr = 1e-3)", 4},
  /* interleaved 1F1B: parts of the program on the stages in turn */
  {"../tests/data/gpt_pp.cir", "../tests/data/pp2_interleaved.tac", "sgd(lr = 0.1, momentum = 0.9)", 2},
  {"../tests/data/gpt_pp_f64.cir", "../tests/data/pp4_interleaved.tac", "adam(lr = 1e-3)", 4},
  /* ring attention: context parallelism over fused attention (the keys and
     values pass around the devices; the backward passes their gradients
     home), on 2 and 4 devices, with batch and Megatron on 8, and pipeline
     stages beside it */
  {"gpt2_small.cir", "../tests/data/cp2.tac", "adam(lr = 1e-3)", 2, 0, 1},
  {"gpt2_small.cir", "../tests/data/cp4.tac", "sgd(lr = 0.1, momentum = 0.9)", 4, 0, 1},
  {"gpt2_small.cir", "../tests/data/bp_mp_cp.tac", "adam(lr = 1e-3)", 8, 0, 1},
  {"../tests/data/gpt_s256.cir", "../tests/data/cp4.tac", "sgd(lr = 0.1)", 4, 0, 1},
  {"../tests/data/gpt_pp.cir", "../tests/data/pp_cp.tac", "sgd(lr = 0.1)", 4, 0, 1},
  /* context parallelism (attention as written), alone, and with batch and
     Megatron on 8 devices */
  {"gpt2_small.cir", "../tests/data/cp2.tac", "adam(lr = 1e-3)", 2},
  {"gpt2_small.cir", "../tests/data/cp4.tac", "sgd(lr = 0.1, momentum = 0.9)", 4},
  {"gpt2_small.cir", "../tests/data/bp_mp_cp.tac", "adam(lr = 1e-3)", 8},
  /* the sequence dealt zig-zag (the default above) through a whole table
     sliced to each device's two blocks, and through all_to_alls to the heads
     and back (context and Megatron on one axis); and dealt in order */
  {"gpt2_small.cir", "../tests/data/cp2_wpe_whole.tac", "sgd(lr = 0.1)", 2, 0, 1},
  {"gpt2_small.cir", "../tests/data/cp2_wpe_whole.tac", "sgd(lr = 0.1)", 2},
  {"gpt2_small.cir", "../tests/data/cp_mp_one_axis.tac", "adam(lr = 1e-3)", 2, 0, 1},
  {"gpt2_small.cir", "../tests/data/cp_mp_one_axis.tac", "adam(lr = 1e-3)", 2},
  {"gpt2_small.cir", "../tests/data/cp4_none.tac", "sgd(lr = 0.1)", 4, 0, 1},
  {"gpt2_small.cir", "../tests/data/cp4_none.tac", "sgd(lr = 0.1)", 4},
  /* found by random models (tests/data/fuzz/README) */
  {"../tests/data/fuzz/literal_piece.cir", "../tests/data/fuzz/literal_piece.tac", "sgd(lr = 0.1)", 4},
  {"../tests/data/fuzz/scalar_broadcast.cir", "../tests/data/fuzz/scalar_broadcast.tac", "sgd(lr = 0.1, momentum = 0.9)", 2},
  {"../tests/data/fuzz/partial_scalar.cir", "../tests/data/fuzz/partial_scalar.tac", "sgd(lr = 0.05, momentum = 0.9)", 2},
  {"../tests/data/fuzz/update_scalar.cir", "../tests/data/fuzz/update_scalar.tac", "sgd(lr = 0.05, momentum = 0.9)", 2},
  {"../tests/data/fuzz/update_scalar.cir", "../tests/data/fuzz/update_scalar.tac", "adam(lr = 0.05)", 2},
  {"../tests/data/fuzz/literal_partial.cir", "../tests/data/fuzz/literal_partial.tac", "adam(lr = 0.05)", 2},
  {"../tests/data/fuzz/bucket_accumulate.cir", "../tests/data/fuzz/bucket_accumulate.tac", "sgd(lr = 0.1)", 2},
  {"../tests/data/fuzz/zigzag_bucket.cir", "../tests/data/fuzz/zigzag_bucket.tac", "sgd(lr = 0.1)", 2},
  {"../tests/data/fuzz/pipeline_carry.cir", "../tests/data/fuzz/pipeline_carry.tac", "sgd(lr = 0.1)", 2},
  {"../tests/data/fuzz/pipeline_param_rows.cir", "../tests/data/fuzz/pipeline_param_rows.tac", "sgd(lr = 0.1)", 2},
  {"../tests/data/fuzz/pipeline_update_early.cir", "../tests/data/fuzz/pipeline_update_early.tac", "sgd(lr = 0.1)", 2},
  {"../tests/data/fuzz/pipeline_unhoisted_hang.cir", "../tests/data/fuzz/pipeline_unhoisted_hang.tac", "sgd(lr = 0.1)", 2},
  {"../tests/data/fuzz/pipeline_fold_late.cir", "../tests/data/fuzz/pipeline_fold_late.tac", "sgd(lr = 0.1)", 2},
  {"../tests/data/fuzz/pipeline_partial_write.cir", "../tests/data/fuzz/pipeline_partial_write.tac", "", 2},   /* forward */
  /* gather and scatter: rows by id, a point per row, a scatter-add into zeros */
  {"../tests/data/gather_scatter.cir", "../tests/data/gather_scatter_bp.tac", "sgd(lr = 0.1)", 4},
  {"../tests/data/gather_scatter.cir", "../tests/data/gather_scatter_mp.tac", "adam(lr = 1e-2)", 4},
  /* RMS norms: batch and Megatron; their rows and scales split */
  {"../tests/data/rmsnorm.cir", "../tests/data/rmsnorm_bp_mp.tac", "adam(lr = 1e-2)", 4},
  {"../tests/data/rmsnorm.cir", "../tests/data/rmsnorm_rows.tac", "sgd(lr = 0.1)", 4},
};

ParameterizedTestParameters(partition, equals_one_device) {
  return cr_make_param_array(pcase, pcases, sizeof pcases / sizeof pcases[0]);
}

/* The model at path (examples/ relative), attention fused or not, with its training step. */
static ir_graph *load_model(arena *mem, diag *d, const char *model, const char *train, int fuse) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/%s", SRCDIR, model);
  const diag_src *src = diag_load_file(mem, d, path);
  cr_assert(src);
  cir_file *f = cir_parse(mem, d, src);
  cr_assert(f, "%s", diag_text(d));
  ir_graph *g = build_model(f, NULL, d);
  cr_assert(g, "%s", diag_text(d));
  if (fuse) cr_assert_gt(ir_fuse_attention(g), 0, "%s has attention to fuse", model);
  if (!train[0]) { ir_link(g); return g; }     /* the forward program as it is */
  train_spec t;
  cr_assert(train_parse(mem, train, &t, d) == 0);
  cr_assert(train_build(g, &t, d) == 0, "%s", diag_text(d));
  return g;
}

/* Run g unpartitioned and under plan (with gradient buckets of bucket
** bytes, 0 none) for STEPS steps: the losses on every device and every
** parameter and state must equal one device's. what names the plan. */
static int skip_nonfinite, skipped_nonfinite;   /* random models: one that diverges on one device compares nothing */

static void equals_one(const ir_graph *g, const sh_plan *plan, int64_t bucket, const char *what) {
  int ndev = (int)shard_devices(plan);
  static run one, many;
  memset(&one, 0, sizeof one);
  memset(&many, 0, sizeof many);
  int nb, nb0;
  one_run(g, NULL, 0, &one, &nb, what);
  /* a step that diverges on one device (the loss growing tenfold, or past
     1e4), or whose loss collapses a thousandfold (a parameter stepping
     across zero: what is left is the difference of nearly equal numbers),
     amplifies rounding past any tolerance: nothing to compare */
  int diverges = 0;
  for (int s = 1; s < STEPS; s++)
    diverges |= !(isfinite(one.loss[0][s]) && fabs(one.loss[0][s]) < 1e4 && fabs(one.loss[0][s]) <= 10 * fabs(one.loss[0][0]) &&
                  fabs(one.loss[0][s]) >= 1e-3 * fabs(one.loss[0][0]));
  if (skip_nonfinite && diverges) {
    for (int i = 0; i < g->nvals; i++) free(one.full[i]);
    free(one.full);
    skipped_nonfinite++;
    return;
  }
  int ncoll = one_run(g, plan, bucket, &many, &nb, what);
  if (bucket) {                       /* fewer collectives than each gradient alone */
    static run alone;
    memset(&alone, 0, sizeof alone);
    int n0 = one_run(g, plan, -1, &alone, &nb0, what);
    cr_expect(nb > 0 && nb0 == 0 && ncoll < n0, "%s: %d collectives (%d buckets) against %d", what, ncoll, nb, n0);
    for (int i = 0; i < g->nvals; i++) {
      if (alone.full[i]) cr_expect(hx_normerr_d(many.full[i], alone.full[i], ir_nelem(&g->vals[i]->shape)) == 0,
                                  "%s: '%s' differs with buckets (the same sums)", what, g->vals[i]->name);
      free(alone.full[i]);
    }
    free(alone.full);
  }
  /* f64 models: every tolerance a millionth of f32's (their rounding is
     2e-9 of f32's; f32 arithmetic anywhere would leave 1e-7) */
  double sc = g->vals[g->outputs[0]]->dtype == IR_F64 ? 1e-6 : 1;
  for (int s = 0; s < STEPS; s++)
    for (int k = 0; k < ndev; k++) {
      double e = many.loss[k][s] == one.loss[0][s] ? 0 : fabs(many.loss[k][s] - one.loss[0][s]) / fabs(one.loss[0][s]);
      cr_expect(e <= 1e-5 * sc, "%s: step %d, device %d: loss %.17g vs %.17g on one device", what, s + 1, k, many.loss[k][s], one.loss[0][s]);
    }
  for (int i = 0; i < g->nvals; i++) {
    if (!one.full[i]) continue;
    /* parameters to 1e-5; optimizer state holds squared gradients, whose float
    ** rounding (partial sums added in another order) shows more: 1e-4 */
    int64_t n = ir_nelem(&g->vals[i]->shape);
    double e = hx_normerr_d(many.full[i], one.full[i], n);
    if (skip_nonfinite && g->vals[i]->kind == IR_STATE) {
      /* a random model's gradient may be zero but for rounding (a bias
         added along a softmax's dim, which the softmax cancels; a layer
         norm of a mean): measured against at least 1e-3 per element, not
         against that noise (an error that large moves the parameters) */
      double norm = 0;
      for (int64_t j = 0; j < n; j++) norm += one.full[i][j] * one.full[i][j];
      double floor = 1e-3 * sqrt((double)n);
      if (sqrt(norm) < floor) e = e * sqrt(norm) / floor;
    }
    /* (a random model's state: 1e-3, for rounding its gradients' cancellations amplify) */
    cr_expect(e <= sc * (g->vals[i]->kind == IR_PARAM ? 1e-5 : skip_nonfinite ? 1e-3 : 1e-4), "%s: '%s' after %d steps differs from one device by %g", what, g->vals[i]->name, STEPS, e);
    free(one.full[i]);
    free(many.full[i]);
  }
  free(one.full);
  free(many.full);
}

ParameterizedTest(pcase *c, partition, equals_one_device, .timeout = 300) {   /* (a deadlocked schedule fails, not hangs) */
  arena mem;
  arena_init(&mem);
  diag d;
  diag_init(&d);
  ir_graph *g = load_model(&mem, &d, c->model, c->train, c->fuse);
  char path[512];
  snprintf(path, sizeof path, "%s/examples/%s", SRCDIR, c->tactic);
  const diag_src *ts = diag_load_file(&mem, &d, path);
  tac_file *tf = tac_parse(&mem, &d, ts);
  cr_assert(tf, "%s", diag_text(&d));
  tactic_opts o = {0};
  sh_plan *plan = tactic_apply(g, tf, &o, &mem, &d);
  cr_assert(plan, "%s", diag_text(&d));
  cr_assert_eq(shard_devices(plan), c->ndev);
  char what[160];
  snprintf(what, sizeof what, "%s, %s, %s", c->model, c->tactic, c->train);
  equals_one(g, plan, c->bucket, what);
  shard_free(plan);
  ir_graph_free(g);
  diag_free(&d);
  arena_free(&mem);
}

/* Plans nobody wrote: random shard statements on the parameters and
** inputs of the small GPT, the small MLP and attention spelt with
** reshapes, on meshes of 2 x 2, 4 x 2 and 2 x 2 x 2 devices, any dim,
** any axis, in any order (the same
** parameter split on both axes, one axis moving a value's split from one
** dim to another), as the search may put together. Each one that applies
** runs equal to one device; some compose it with the library's batch,
** Megatron and ZeRO tactics, before or after. The same plans every run; RANDOM_PLANS=300
** RANDOM_SEED=12345 in the environment tries others (the search for bugs
** that found tests/data/partial_heads.tac). */
/* A tactic file's text applied to g: the plan, or NULL with the errors in d. */
static sh_plan *apply_text(ir_graph *g, const char *tac, arena *mem, diag *d) {
  tac_file *tf = tac_parse(mem, d, diag_src_string(mem, "random.tac", tac, strlen(tac)));
  cr_assert(tf, "%s", diag_text(d));
  tactic_opts o = {0};
  return tactic_apply(g, tf, &o, mem, d);
}


Test(partition, random_plans_equal_one_device) {
  static const struct { const char *model; int attention; } models[] = {
    {"gpt2_small.cir", 1}, {"mlp_small.cir", 0}, {"../tests/data/attn_reshape.cir", 1},
  };
  static const char *const axes[] = {"batch", "model", "seq"};
  const char *train[] = {"adam(lr = 1e-3)", "sgd(lr = 0.1)", "adam(lr = 1e-3, remat = cheap)", "sgd(lr = 0.1, remat = full)"};
  int applied = 0, tried = 0;
  int nplans = getenv("RANDOM_PLANS") ? atoi(getenv("RANDOM_PLANS")) : 24;
  if (getenv("RANDOM_SEED")) rng = strtoull(getenv("RANDOM_SEED"), NULL, 0);
  for (int k = 0; k < nplans; k++) {
    arena mem;
    arena_init(&mem);
    diag d;
    diag_init(&d);
    int m = k % 3;
    const char *tr = train[(k / 3) % 4];
    int fuse = models[m].attention && (k / 12) % 2;     /* attention fused or not */
    ir_graph *g = load_model(&mem, &d, models[m].model, tr, fuse);
    /* the parameters and inputs a statement may name */
    int leaves[256], nleaves = 0;
    for (int v = 0; v < g->nvals && nleaves < 256; v++) {
      const ir_value *x = g->vals[v];
      if ((x->kind == IR_PARAM || x->kind == IR_INPUT) && x->shape.rank > 0) leaves[nleaves++] = v;
    }
    cr_assert_gt(nleaves, 0);
    char tac[4096], sched[128] = "t";
    /* 4 devices, 8 on two axes, or 8 on three */
    static const char *const meshes[] = {"batch = 2, model = 2", "batch = 4, model = 2", "batch = 2, model = 2, seq = 2"};
    int mesh = k % 5 < 3 ? 0 : k % 5 == 3 ? 1 : 2, naxes = mesh == 2 ? 3 : 2;
    int n = snprintf(tac, sizeof tac, "version 1\nmesh %s\n", meshes[mesh]);
    /* the library's tactics, some of them, before or after t */
    static const char *const lib[][2] = {
      {"bp", "use \"batch\" as bp (axis = batch)"}, {"mp", "use \"megatron\" as mp (axis = model)"},
      {"z", "use \"zero\" as z (axis = batch, stage = 1)"}, {"z", "use \"zero\" as z (axis = batch, stage = 3)"},
    };
    for (int u = 0; u < 4; u++) {
      if (next() % 3 || (u == 3 && strstr(tac, " as z "))) continue;
      n += snprintf(tac + n, sizeof tac - (size_t)n, "%s\n", lib[u][1]);
      char s2[128];
      if (next() % 2) snprintf(s2, sizeof s2, "%s, %s", sched, lib[u][0]);
      else snprintf(s2, sizeof s2, "%s, %s", lib[u][0], sched);
      memcpy(sched, s2, sizeof sched);
    }
    n += snprintf(tac + n, sizeof tac - (size_t)n, "tactic t {\n");
    int stmts = 2 + (int)(next() % 5);
    for (int s = 0; s < stmts; s++) {
      const ir_value *x = g->vals[leaves[next() % (uint64_t)nleaves]];
      const char *glob = x->name;
      char pat[128];
      if (!strncmp(glob, "l0.", 3) && next() % 2) { snprintf(pat, sizeof pat, "l*.%s", glob + 3); glob = pat; }   /* every layer's */
      n += snprintf(tac + n, sizeof tac - (size_t)n, "  shard %s \"%s\" dim %d on %s\n", x->kind == IR_PARAM ? "param" : "input",
                    glob, (int)(next() % (uint64_t)x->shape.rank), axes[next() % (uint64_t)naxes]);
    }
    snprintf(tac + n, sizeof tac - (size_t)n, "}\nschedule %s\n", sched);
    tried++;
    sh_plan *plan = apply_text(g, tac, &mem, &d);
    if (plan) {                       /* else refused with a located error (a split that does not divide) */
      applied++;
      char what[4400];
      snprintf(what, sizeof what, "random plan %d (%s, %s, attention %s):\n%s", k, models[m].model, tr, fuse ? "fused" : "unfused", tac);
      equals_one(g, plan, 0, what);
      shard_free(plan);
    } else
      cr_expect(strstr(diag_text(&d), ".tac:") && strstr(diag_text(&d), ": error: "), "refused without a place: %s", diag_text(&d));   /* the plan's or the library's */
    ir_graph_free(g);
    diag_free(&d);
    arena_free(&mem);
  }
  cr_expect_geq(applied, tried * 2 / 3, "only %d of %d random plans applied: the test tests little", applied, tried);
}

/* ---- random models ----
** Models nobody wrote (randmodel.h). Random statements split parameters, inputs and op results on a random
** mesh, sometimes with the library's tactics, and the training step must
** run equal to one device (or be refused with a located error). The
** same models every run; RANDOM_MODELS=500 RANDOM_SEED=N tries others
** (the search that found tests/data/fuzz/). */

/* The model in text, loaded as load_model does (attention fused or not). */
static ir_graph *load_text(arena *mem, diag *d, const char *text, const char *train, int fuse) {
  cir_file *f = cir_parse(mem, d, diag_src_string(mem, "random.cir", text, strlen(text)));
  cr_assert(f, "%s\n%s", diag_text(d), text);
  ir_graph *g = build_model(f, NULL, d);
  cr_assert(g, "%s\n%s", diag_text(d), text);
  if (fuse) ir_fuse_attention(g);
  train_spec t;
  cr_assert(train_parse(mem, train, &t, d) == 0);
  cr_assert(train_build(g, &t, d) == 0, "%s\n%s", diag_text(d), text);
  return g;
}

/* count models from seed, in f32 or (f64) in f64 */
static void random_models(int count, uint64_t seed, int f64) {
  static const char *const meshes[] = {"a = 2, b = 2", "a = 4", "a = 2, b = 2", "a = 4, b = 2", "a = 2, b = 2, c = 2"};
  static const int naxes[] = {2, 1, 2, 2, 3};
  static const char *const axes[] = {"a", "b", "c"};
  /* SGD: a random model may leave a gradient that is zero but for rounding
     (a softmax over a broadcast dim), which Adam scales up to lr-sized steps */
  /* steps large enough that a gradient wrong by 1e-4 per element moves a
     parameter past 1e-5; the momentum buffers (the gradients) are
     compared as state too */
  static const char *const train[] = {"sgd(lr = 0.05)", "sgd(lr = 0.05, momentum = 0.9)", "sgd(lr = 0.05, momentum = 0.5, weight_decay = 0.1)",
                                      "sgd(lr = 0.05, momentum = 0.9, remat = cheap)", "sgd(lr = 0.05, momentum = 0.5, remat = full)"};
  int applied = 0, tried = 0;
  int nmodels = rm_start(count, f64 ? 4 : 1, seed);
  skip_nonfinite = 1;
  for (int k = 0; k < nmodels; k++) {
    char *text = random_model();
    if (f64) rm_f64(text);
    arena mem;
    arena_init(&mem);
    diag d;
    diag_init(&d);
    const char *tr = train[next() % 5];
    int fuse = next() % 2, mesh = (int)(next() % 5);
    ir_graph *g = load_text(&mem, &d, text, tr, fuse);
    int only = getenv("RANDOM_ONLY") ? atoi(getenv("RANDOM_ONLY")) : -1;
    /* statements on the model's own values: its parameters, inputs and op results */
    int cand[512], nc = 0;
    for (int v = 0; v < g->nvals && nc < 512; v++) {
      const ir_value *x = g->vals[v];
      if (x->shape.rank == 0) continue;
      if (x->kind == IR_PARAM || x->kind == IR_INPUT || (x->kind == IR_OP && x->name[0] == 'v' && x->name[1] != '.')) cand[nc++] = v;
    }
    char tac[4096], sched[64] = "t";
    int n = snprintf(tac, sizeof tac, "version 1\nmesh %s\n", meshes[mesh]);
    static const char *const lib[][2] = {{"bp", "use \"batch\" as bp (axis = %s)"}, {"mp", "use \"megatron\" as mp (axis = %s)"},
                                         {"z", "use \"zero\" as z (axis = %s, stage = %d)"}};
    for (int u = 0; u < 3; u++) {
      if (next() % (u == 1 ? 10 : 4)) continue;       /* megatron finds no MLP pair in most */
      n += snprintf(tac + n, sizeof tac - (size_t)n, lib[u][1], axes[next() % (uint64_t)naxes[mesh]], 1 + (int)(next() % 3));
      n += snprintf(tac + n, sizeof tac - (size_t)n, "\n");
      char s2[64];
      if (u < 2 && next() % 2) snprintf(s2, sizeof s2, "%s, %s", lib[u][0], sched);
      else snprintf(s2, sizeof s2, "%s, %s", sched, lib[u][0]);
      memcpy(sched, s2, sizeof sched);
    }
    n += snprintf(tac + n, sizeof tac - (size_t)n, "tactic t {\n");
    int stmts = 1 + (int)(next() % 6);
    for (int s = 0; s < stmts && nc > 0; s++) {
      const ir_value *x = g->vals[cand[next() % (uint64_t)nc]];
      const char *kind = x->kind == IR_PARAM ? "param" : x->kind == IR_INPUT ? "input" : "value";
      const char *ax = axes[next() % (uint64_t)naxes[mesh]];
      if (next() % 8 == 0) n += snprintf(tac + n, sizeof tac - (size_t)n, "  replicate %s \"%s\" on %s\n", kind, x->name, ax);
      else n += snprintf(tac + n, sizeof tac - (size_t)n, "  shard %s \"%s\" dim %d on %s\n", kind, x->name,
                         (int)(next() % (uint64_t)x->shape.rank), ax);
    }
    snprintf(tac + n, sizeof tac - (size_t)n, "}\nschedule %s\n", sched);
    tried++;
    sh_plan *plan = apply_text(g, tac, &mem, &d);
    if (plan && only >= 0 && k != only) {
      shard_free(plan);
    } else if (plan) {
      applied++;
      char *what = malloc(strlen(text) + strlen(tac) + 128);
      sprintf(what, "random %s model %d (%s, attention %s):\n%s%s", f64 ? "f64" : "f32", k, tr, fuse ? "fused" : "unfused", text, tac);
      equals_one(g, plan, 0, what);
      free(what);
      shard_free(plan);
    } else {
      cr_expect(strstr(diag_text(&d), ".tac:") && strstr(diag_text(&d), ": error: "), "refused without a place: %s", diag_text(&d));
      if (getenv("RANDOM_VERBOSE")) fprintf(stderr, "model %d refused: %.*s\n", k, (int)strcspn(diag_text(&d), "\n"), diag_text(&d));
    }
    ir_graph_free(g);
    diag_free(&d);
    arena_free(&mem);
    free(text);
  }
  if (getenv("RANDOM_VERBOSE")) fprintf(stderr, "random models: %d of %d plans applied, %d diverged or collapsed on one device\n", applied, tried, skipped_nonfinite);
  cr_expect_leq(skipped_nonfinite, applied / 10, "%d of %d random models diverge: the test tests little", skipped_nonfinite, applied);
  cr_expect_geq(applied, tried / 2, "only %d of %d random models' plans applied: the test tests little", applied, tried);
}

Test(partition, random_models_equal_one_device) { random_models(150, 0x2545f4914f6cdd1dull, 0); }

/* The same in f64, to a millionth of the tolerances: every op, collective
** and optimizer step of an f64 model computes in double on every device. */
Test(partition, random_models_f64_equal_one_device) { random_models(40, 0x9fb21c651e98df25ull, 1); }

/* The search (carve auto) on random models: what it finds applies, and
** the step runs equal to one device. RANDOM_MODELS and RANDOM_SEED as above. */
static void profiles(void) { setenv("CARVE_PROFILES", SRCDIR "/profiles", 1); }

Test(partition, random_models_auto_equal_one_device, .init = profiles, .timeout = 600) {
  static const char *const meshes[] = {"a = 2, b = 2", "a = 4", "a = 2, b = 2, c = 2"};
  static const char *const axes[] = {"[a, b]", "[a]", "[a, b, c]"};
  int nmodels = rm_start(24, 5, 0x61c8864680b583ebull);
  skip_nonfinite = 1;
  int applied = 0, split = 0;
  for (int k = 0; k < nmodels; k++) {
    char *text = random_model();
    arena mem;
    arena_init(&mem);
    diag d;
    diag_init(&d);
    int mesh = (int)(next() % 3);
    ir_graph *g = load_text(&mem, &d, text, next() % 2 ? "sgd(lr = 0.05, momentum = 0.9)" : "sgd(lr = 0.05)", (int)(next() % 2));
    char tac[256];
    /* (at this size splitting never pays in time: the memory objective splits) */
    snprintf(tac, sizeof tac, "version 1\nmesh %s\ntactic found = auto (axes = %s, budget = %d, objective = memory)\nschedule found\n",
             meshes[mesh], axes[mesh], 20 + (int)(next() % 80));
    sh_plan *plan = apply_text(g, tac, &mem, &d);
    cr_assert(plan, "random model %d: the search found nothing to apply: %s\n%s%s", k, diag_text(&d), text, tac);
    applied++;
    for (int v = 0; v < g->nvals; v++)
      for (int i = 0; i < g->vals[v]->shape.rank; i++) split += plan->lay[v].dim[i].n > 0;
    char *what = malloc(strlen(text) + strlen(tac) + 128);
    sprintf(what, "random model %d under the search:\n%s%s", k, text, tac);
    equals_one(g, plan, 0, what);
    free(what);
    shard_free(plan);
    ir_graph_free(g);
    diag_free(&d);
    arena_free(&mem);
    free(text);
  }
  if (getenv("RANDOM_VERBOSE")) fprintf(stderr, "random models under the search: %d applied, %d split dims, %d diverged on one device\n", applied, split, skipped_nonfinite);
  cr_expect_gt(split, applied, "the search split %d dims over %d models: the test tests little", split, applied);
}

/* ---- the partial-sum rule, op by op ----
** Every op of the language, with every operand position filled by every
** kind of value: a partial sum (a row-split product, before its all-reduce),
** a partial sum passed on by a linear op, a second partial sum over the same
** axis, one over another axis, a complete value, a literal, a boolean.
** Whether carve passes the sum on into the op or reduces it first is its
** own choice (partial.c); either way the training step must equal one
** device. Elementwise ops come from the op table itself, so a new one is
** tested the day it is added. */
static const char *const pkinds[] = {"p", "n", "q", "r", "c", "0.75", "m"};   /* P N Q R C L B */

/* the forms of the ops that are not plain elementwise calls: %1 %2 %3 are [4, 8] operands */
static const char *const pforms[] = {
  "sum(%1, dims = [1], keepdims = true)", "sum(%1, dims = [0])", "mean(%1, dims = [1])", "max(%1, dims = [1])",
  "min(%1, dims = [0], keepdims = true)", "softmax(%1, dim = 0)", "log_softmax(%1)", "reshape(%1, [8, 4])",
  "transpose(%1, [1, 0])", "broadcast(%1, [2, 4, 8])", "concat([%1, %2], dim = 1)", "concat([%1, %2, %3], dim = 0)",
  "slice(%1, 1, 2, 6)", "matmul(%1, transpose(%2, [1, 0]))", "einsum(\"ij,kj->ik\", %1, %2)", "einsum(\"ij,ij->j\", %1, %2)",
  "layernorm(%1, g, g)", "causal_mask(%1)", "convert(%1, dtype = f64)", "compare(%1, %2, \"lt\")",
  "attention(reshape(%1, [1, 1, 4, 8]), reshape(%2, [1, 1, 4, 8]), reshape(%3, [1, 1, 4, 8]), causal = true)",
  "gather(%1, ix, offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1, slice_sizes = [1, 8])",
  "gather(%1, ix, offset_dims = [], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1, slice_sizes = [1, 1], "
  "operand_batching_dims = [0], start_indices_batching_dims = [0])",
  "scatter(%1, ix, %2, update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1)",
};

/* the model with y = form (operands from kinds), its loss the sum of y's
** squares (and of g, so that ops without a gradient train something) */
static void partial_model(char *out, size_t n, const char *form, const int *kind) {
  char y[512];
  size_t k = 0;
  for (const char *s = form; *s && k + 16 < sizeof y; s++) {
    if (*s == '%' && s[1] >= '1' && s[1] <= '3') k += (size_t)snprintf(y + k, sizeof y - k, "%s", pkinds[kind[*++s - '1']]);
    else y[k++] = *s;
  }
  y[k] = 0;
  snprintf(out, n,
           "model partial {\n"
           "  param xa : f32[4, 16] = uniform(0.1, 0.3)\n  param xb : f32[4, 16] = uniform(0.1, 0.3)\n"
           "  param xc : f32[4, 16] = uniform(0.1, 0.3)\n  param wa : f32[16, 8] = uniform(0.1, 0.3)\n"
           "  param wb : f32[16, 8] = uniform(0.1, 0.3)\n  param wc : f32[16, 8] = uniform(0.1, 0.3)\n"
           "  param c : f32[4, 8] = uniform(0.2, 0.9)\n  param g : f32[8] = uniform(0.5, 1.5)\n  input ix : i32[4, 1]\n"
           "  p = matmul(xa, wa)\n  n = neg(p)\n  q = matmul(xb, wb)\n  r = matmul(xc, wc)\n"
           "  m = compare(c, 0.5, \"gt\")\n"
           "  y = %s\n  yf = convert(y, dtype = f32)\n  loss = add(sum(mul(yf, yf)), sum(g))\n  return loss\n}\n", y);
}

Test(partition, partial_sums_every_op_every_operand, .timeout = 600) {
  static const char tac[] = "version 1\nmesh a = 2, b = 2\n"
                            "tactic t {\n  shard param \"wa\" dim 0 on a\n  shard param \"wb\" dim 0 on a\n  shard param \"wc\" dim 0 on b\n}\n"
                            "schedule t\n";
  /* the forms: each elementwise op of the table, then the others */
  char forms[IR_NOPS + 32][256];
  int nforms = 0;
  for (int op = 1; op < IR_NOPS; op++) {
    const ir_opinfo *oi = ir_opinfo_of((ir_opkind)op);
    if (oi->flags & OPF_INTERNAL || !(oi->flags & (OPF_UNARY | OPF_BINARY | OPF_TERNARY))) continue;
    int arity = oi->flags & OPF_UNARY ? 1 : oi->flags & OPF_BINARY ? 2 : 3;
    int k = snprintf(forms[nforms], sizeof forms[0], "%s(%%1%s%s", oi->name, arity > 1 ? ", %2" : "", arity > 2 ? ", %3" : "");
    if (strstr(oi->sig, "dtype:t")) k += snprintf(forms[nforms] + k, sizeof forms[0] - (size_t)k, ", dtype = %s", op == IR_BITCAST ? "i32" : "f64");
    if (strstr(oi->sig, "dir:s")) k += snprintf(forms[nforms] + k, sizeof forms[0] - (size_t)k, ", \"gt\"");
    snprintf(forms[nforms] + k, sizeof forms[0] - (size_t)k, ")");
    nforms++;
  }
  for (size_t i = 0; i < sizeof pforms / sizeof pforms[0]; i++) snprintf(forms[nforms++], sizeof forms[0], "%s", pforms[i]);
  int nk = (int)(sizeof pkinds / sizeof pkinds[0]);
  int built = 0, passed_on = 0, literal_passed = 0;
  skip_nonfinite = 1;
  skipped_nonfinite = 0;
  for (int f = 0; f < nforms; f++) {
    int arity = strstr(forms[f], "%3") ? 3 : strstr(forms[f], "%2") ? 2 : 1;
    int combos = arity == 1 ? nk : arity == 2 ? nk * nk : nk * nk * nk;
    int form_built = 0;
    for (int cmb = 0; cmb < combos; cmb++) {
      int kind[3] = {cmb % nk, cmb / nk % nk, cmb / nk / nk % nk}, partial = 0;
      for (int i = 0; i < arity; i++) partial |= kind[i] <= 1;     /* p or n: at least one partial sum */
      if (!partial) continue;
      char text[2048];
      partial_model(text, sizeof text, forms[f], kind);
      arena mem;
      arena_init(&mem);
      diag d;
      diag_init(&d);
      cir_file *cf = cir_parse(&mem, &d, diag_src_string(&mem, "partial.cir", text, strlen(text)));
      cr_assert(cf, "%s\n%s", diag_text(&d), text);
      ir_graph *g = build_model(cf, NULL, &d);
      train_spec t;
      /* a form whose operand kinds do not type (a float where a boolean goes) is not a case */
      if (g && train_parse(&mem, "sgd(lr = 0.001, momentum = 0.9)", &t, &d) == 0 && train_build(g, &t, &d) == 0) {
        sh_plan *plan = apply_text(g, tac, &mem, &d);
        cr_assert(plan, "%s\n%s", diag_text(&d), text);
        built++;
        form_built = 1;
        /* what carve chose: the tested op takes a sum unreduced */
        const ir_value *y = ir_lookup(g, "y");
        for (int j = 0; y && j < y->nargs; j++)
          if (shard_keeps_partial(plan, y->args[j])) {
            passed_on++;
            for (int i = 0; i < y->nargs; i++) literal_passed += g->vals[y->args[i]]->kind == IR_CONST;
          }
        equals_one(g, plan, 0, text);
        shard_free(plan);
      }
      if (g) ir_graph_free(g);
      diag_free(&d);
      arena_free(&mem);
    }
    /* each float op types with some kinds (the integer-only ones with none) */
    const char *name = forms[f];
    int int_only = !strncmp(name, "popcnt(", 7) || !strncmp(name, "clz(", 4) || !strncmp(name, "not(", 4) || !strncmp(name, "and(", 4) ||
                   !strncmp(name, "or(", 3) || !strncmp(name, "xor(", 4) || !strncmp(name, "sh", 2);
    cr_expect(form_built || int_only, "no case of '%s' built: the test tests nothing of it", name);
  }
  if (getenv("RANDOM_VERBOSE")) fprintf(stderr, "partial sums: %d cases, %d passed on into the op (%d beside a literal), %d diverged\n", built, passed_on, literal_passed, skipped_nonfinite);
  cr_expect_gt(passed_on, 50, "only %d of %d cases pass a partial sum on: the test tests little", passed_on, built);
  cr_expect_leq(skipped_nonfinite, built / 20, "%d of %d cases diverge on one device", skipped_nonfinite, built);
  skip_nonfinite = 0;
}

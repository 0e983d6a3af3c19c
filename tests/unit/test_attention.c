/*
** test_attention.c: the fused attention op against attention as models
** write it (einsum, scale, causal_mask, softmax, einsum): which patterns
** the rewrite takes, and equal values and gradients of the fused and the
** unfused program, on sequence lengths that are not a multiple of the
** kernel's block of 64; and the transposes that frame attention between
** head-split projections, taken into its kernels (lower/fold.c) with the
** same numbers, bit for bit.
*/
#include "harness.h"

#include <stdio.h>

static int count_op(const ir_graph *g, ir_opkind op) {
  int n = 0;
  for (int i = 0; i < g->nvals; i++) n += g->vals[i]->kind == IR_OP && g->vals[i]->op == op;
  return n;
}

/* q, k, v params [b, h, s, d]; body computes out; loss = sum(out * cot) */
static char *model(int b, int h, int s, int d, const char *body) {
  char *t = malloc(4096);
  snprintf(t, 4096,
           "model t {\n"
           "  param q : f32[%d, %d, %d, %d] = normal(1)\n  param k : f32[%d, %d, %d, %d] = normal(1)\n"
           "  param v : f32[%d, %d, %d, %d] = normal(1)\n  input cot : f32[%d, %d, %d, %d]\n%s\n"
           "  loss = sum(mul(out, cot))\n  return loss\n}\n",
           b, h, s, d, b, h, s, d, b, h, s, d, b, h, s, d, body);
  return t;
}

#define CAUSAL "  sc = mul(einsum(\"bhqk,bhtk->bhqt\", q, k), 0.35)\n  p = softmax(causal_mask(sc))\n" \
               "  out = einsum(\"bhqt,bhtk->bhqk\", p, v)"
#define PLAIN  "  sc = mul(0.35, einsum(\"bhqk,bhtk->bhqt\", q, k))\n  p = softmax(sc)\n" \
               "  out = einsum(\"bhqt,bhtk->bhqk\", p, v)"
#define NOMUL  "  p = softmax(causal_mask(einsum(\"bhqk,bhtk->bhqt\", q, k)))\n" \
               "  out = einsum(\"bhqt,bhtk->bhqk\", p, v)"
/* PyTorch's spelling: q @ k^T, then @ v */
#define TORCH  "  sc = mul(matmul(q, transpose(k, [0, 1, 3, 2])), 0.35)\n  p = softmax(causal_mask(sc))\n" \
               "  out = matmul(p, v)"

static int fused_count(const char *text) {
  hx x;
  cr_assert(hx_build(&x, text) == 0, "%s", diag_text(&x.d));
  int n = ir_fuse_attention(x.g);
  cr_expect_eq(n, count_op(x.g, IR_ATTENTION));
  if (n) cr_expect_eq(count_op(x.g, IR_SOFTMAX), 0, "the scores and probabilities are gone");
  hx_free(&x);
  return n;
}

Test(fuse, patterns) {
  char *t;
  t = model(1, 2, 5, 3, CAUSAL); cr_expect_eq(fused_count(t), 1); free(t);
  t = model(1, 2, 5, 3, PLAIN); cr_expect_eq(fused_count(t), 1); free(t);
  t = model(1, 2, 5, 3, NOMUL); cr_expect_eq(fused_count(t), 1); free(t);
  t = model(1, 2, 5, 3, TORCH); cr_expect_eq(fused_count(t), 1); free(t);
  t = model(1, 2, 5, 3, "  p = softmax(matmul(q, transpose(k, [0, 1, 3, 2])))\n  out = matmul(p, v)");
  cr_expect_eq(fused_count(t), 1); free(t);
  /* k not transposed as a whole (the heads swapped with the positions): kept */
  t = model(1, 5, 5, 5, "  p = softmax(matmul(q, transpose(k, [0, 2, 3, 1])))\n  out = matmul(p, v)");
  cr_expect_eq(fused_count(t), 0); free(t);
  /* the transposed k read elsewhere too */
  t = model(1, 2, 5, 3, "  kt = transpose(k, [0, 1, 3, 2])\n  p = softmax(matmul(q, kt))\n  out = matmul(p, v)\n  out2 = sum(kt)");
  cr_expect_eq(fused_count(t), 0); free(t);
  /* the probabilities have another reader: kept as written */
  t = model(1, 2, 5, 3, CAUSAL "\n  out2 = sum(p)"); cr_expect_eq(fused_count(t), 0); free(t);
  /* scaled by a param, not a literal */
  t = model(1, 2, 5, 3, "  param a : f32[]\n  sc = mul(einsum(\"bhqk,bhtk->bhqt\", q, k), a)\n  p = softmax(sc)\n"
                        "  out = einsum(\"bhqt,bhtk->bhqk\", p, v)");
  cr_expect_eq(fused_count(t), 0); free(t);
  /* softmax over the queries, not the keys */
  t = model(1, 2, 5, 3, "  p = softmax(einsum(\"bhqk,bhtk->bhqt\", q, k), dim = 2)\n  out = einsum(\"bhqt,bhtk->bhqk\", p, v)");
  cr_expect_eq(fused_count(t), 0); free(t);
}

Test(fuse, attributes_and_printing) {
  char *t = model(1, 2, 5, 3, CAUSAL);
  hx x;
  cr_assert(hx_build(&x, t) == 0, "%s", diag_text(&x.d));
  cr_assert_eq(ir_fuse_attention(x.g), 1);
  ir_value *o = ir_lookup(x.g, "out");
  cr_assert(o && o->op == IR_ATTENTION);
  cr_expect(o->attr.causal);
  cr_expect_float_eq(o->attr.scale, 0.35, 1e-12);
  cr_expect_null(ir_lookup(x.g, "sc"));
  arena a;
  arena_init(&a);
  const char *txt = ir_print(x.g, &a);
  cr_expect(strstr(txt, "out = attention(q, k, v, causal = true, scale = 0.35)"), "%s", txt);   /* the shortest that reads back */
  arena_free(&a);
  hx_free(&x);
  free(t);
}

/* The program of text (fused or not) with its gradients, run once. */
static void run_one(hx *x, const char *text, int fuse) {
  cr_assert(hx_build(x, text) == 0, "%s", diag_text(&x->d));
  if (fuse) cr_assert_eq(ir_fuse_attention(x->g), 1);
  cr_assert(grad_build(x->g, &x->d) == 0, "%s", diag_text(&x->d));
  hx_output(x, "out");
  hx_output(x, "grad.q");
  hx_output(x, "grad.k");
  hx_output(x, "grad.v");
  hx_lower(x);
  hx_init_rest(x, 7);
  hx_run(x);
}

static void same_as_unfused(int b, int h, int s, int d, const char *body) {
  char *t = model(b, h, s, d, body);
  hx f, u;
  run_one(&f, t, 1);
  run_one(&u, t, 0);
  static const char *const names[] = {"loss", "out", "grad.q", "grad.k", "grad.v"};
  for (int i = 0; i < 5; i++) {
    int64_t n = hx_nelem(&u, names[i]);
    double e = hx_normerr(hx_get(&f, names[i]), hx_get(&u, names[i]), n);
    cr_expect(e < 1e-5, "s = %d: %s fused vs unfused: relative error %g", s, names[i], e);
  }
  hx_free(&f);
  hx_free(&u);
  free(t);
}

Test(fused, causal_s67) { same_as_unfused(2, 3, 67, 8, CAUSAL); }
Test(fused, full_s67) { same_as_unfused(2, 3, 67, 8, PLAIN); }
Test(fused, scale_one_s130) { same_as_unfused(1, 2, 130, 16, NOMUL); }
Test(fused, one_position) { same_as_unfused(1, 1, 1, 4, CAUSAL); }
Test(fused, block_multiple_s128) { same_as_unfused(1, 2, 128, 8, CAUSAL); }
Test(fused, full_s300) { same_as_unfused(1, 2, 300, 8, PLAIN); }   /* keys in three chunks, none masked */
Test(fused, torch_spelling_s67) { same_as_unfused(2, 3, 67, 8, TORCH); }

/* Projections make q, k, v [b, h, s, k] from x [b, s, d], and the result
** is merged back to [b, s, d]: the spelling of transformer models. */
static char *heads_model(int b, int s, int d, int h, int k, int causal) {
  char *t = malloc(4096);
  snprintf(t, 4096,
           "model t {\n"
           "  param x : f32[%d, %d, %d] = normal(1)\n"
           "  param wq : f32[%d, %d, %d] = normal(0.4)\n  param wk : f32[%d, %d, %d] = normal(0.4)\n"
           "  param wv : f32[%d, %d, %d] = normal(0.4)\n  param wo : f32[%d, %d, %d] = normal(0.4)\n"
           "  input cot : f32[%d, %d, %d]\n"
           "  q = einsum(\"bsd,dhk->bhsk\", x, wq)\n  k = einsum(\"bsd,dhk->bhsk\", x, wk)\n"
           "  v = einsum(\"bsd,dhk->bhsk\", x, wv)\n"
           "  s = mul(einsum(\"bhqk,bhtk->bhqt\", q, k), 0.5)\n  p = softmax(%s)\n"
           "  c = einsum(\"bhqt,bhtk->bhqk\", p, v)\n"
           "  out = einsum(\"bhqk,hkd->bqd\", c, wo)\n"
           "  loss = sum(mul(out, cot))\n  return loss\n}\n",
           b, s, d, d, h, k, d, h, k, d, h, k, h, k, d, b, s, d, causal ? "causal_mask(s)" : "s");
  return t;
}

static const char *const heads_outs[] = {"loss", "out", "grad.x", "grad.wq", "grad.wk", "grad.wv", "grad.wo"};

static void run_heads(hx *x, const char *text, int fuse, int fold) {
  cr_assert(hx_build(x, text) == 0, "%s", diag_text(&x->d));
  if (fuse) cr_assert_eq(ir_fuse_attention(x->g), 1);
  cr_assert(grad_build(x->g, &x->d) == 0, "%s", diag_text(&x->d));
  for (int i = 1; i < 7; i++) hx_output(x, heads_outs[i]);
  lower_opts o = {0};
  o.no_fold = !fold;
  hx_lower_opts(x, &o);
  hx_init_rest(x, 7);
  hx_run(x);
}

static int count_instr(const rt_prog *p, rt_op op, int *mode) {
  int n = 0;
  for (int i = 0; i < p->ninstrs; i++)
    if (p->instrs[i].op == op) { n++; if (mode) *mode = p->instrs[i].mode; }
  return n;
}

static void heads_fold(int b, int s, int d, int h, int k, int causal) {
  char *t = heads_model(b, s, d, h, k, causal);
  hx folded, kept, unfused;
  run_heads(&folded, t, 1, 1);
  run_heads(&kept, t, 1, 0);
  run_heads(&unfused, t, 0, 1);
  int fm = 0, gm = 0;
  cr_expect_eq(count_instr(&folded.p, RT_TRANSPOSE, NULL), 0, "every transpose folded");
  cr_expect_eq(count_instr(&folded.p, RT_ATTENTION, &fm), 1);
  cr_expect_eq(count_instr(&folded.p, RT_ATTENTION_GRAD, &gm), 1);
  if (h > 1) {       /* (one head: [b, 1, s, k] is [b, s, 1, k], no transposes to begin with) */
    cr_expect_gt(count_instr(&kept.p, RT_TRANSPOSE, NULL), 0, "lowering frames attention with transposes");
    cr_expect_eq(fm, RT_ATTN_BSHD_Q | RT_ATTN_BSHD_K | RT_ATTN_BSHD_V | RT_ATTN_BSHD_OUT);
    cr_expect_eq(gm, RT_ATTN_BSHD_Q | RT_ATTN_BSHD_K | RT_ATTN_BSHD_V | RT_ATTN_BSHD_DY | RT_ATTN_BSHD_OUT);
  }
  for (int i = 0; i < 7; i++) {
    int64_t n = hx_nelem(&kept, heads_outs[i]);
    const float *a = hx_get(&folded, heads_outs[i]), *c = hx_get(&kept, heads_outs[i]);
    cr_expect(memcmp(a, c, sizeof(float) * (size_t)n) == 0, "%s: folded differs from the transposed program", heads_outs[i]);
    double e = hx_normerr(a, hx_get(&unfused, heads_outs[i]), n);
    cr_expect(e < 1e-5, "%s fused vs unfused: relative error %g", heads_outs[i], e);
  }
  hx_free(&folded);
  hx_free(&kept);
  hx_free(&unfused);
  free(t);
}

Test(fold, heads_causal_s67) { heads_fold(2, 67, 12, 3, 4, 1); }
Test(fold, heads_full_s130) { heads_fold(1, 130, 8, 2, 4, 0); }
Test(fold, one_head) { heads_fold(2, 9, 6, 1, 6, 1); }

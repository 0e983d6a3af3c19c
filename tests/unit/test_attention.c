/*
** test_attention.c: the fused attention op against attention as models
** write it (einsum, scale, causal_mask, softmax, einsum): which patterns
** the rewrite takes, and equal values and gradients of the fused and the
** unfused program, on sequence lengths that are not a multiple of the
** kernel's block of 64.
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
  cr_expect(strstr(txt, "out = attention(q, k, v, causal = true, scale = 0.34999999999999998)"), "%s", txt);
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

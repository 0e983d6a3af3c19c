/*
** test_fold.c: adds taken into GEMMs (lw_fold_adds in interp/lower/fold.c).
** A bias added to a GEMM's product becomes a fill of the result that the
** GEMM then adds into (the fill adds a residual too when the sum is added
** to one); a sum of GEMM products (the gradient reaching x
** through three projections) becomes GEMMs adding into one buffer. The
** folded program must give the unfolded one's values and gradients (to
** rounding: BLAS adds its partial products in another order), have fewer
** adds, and leave alone a product something else reads.
*/
#include "harness.h"
#include "interp/train/train.h"

static const char *const model_text =
    "model t {\n"
    "  param x : f32[4, 6, 8] = normal(1)\n"
    "  param w1 : f32[8, 16] = normal(0.4)\n  param b1 : f32[16] = normal(0.5)\n"
    "  param w2 : f32[16, 8] = normal(0.4)\n  param b2 : f32[8] = normal(0.5)\n"
    "  param wq : f32[8, 8] = normal(0.4)\n  param wk : f32[8, 8] = normal(0.4)\n"
    "  param wv : f32[8, 8] = normal(0.4)\n"
    "  input cot : f32[4, 6, 8]\n"
    "  h = add(einsum(\"bsd,de->bse\", x, w1), b1)\n"
    "  y = add(einsum(\"bse,ed->bsd\", gelu(h), w2), b2)\n"
    "  r = add(x, y)\n"
    "  q = einsum(\"bsd,de->bse\", r, wq)\n  k = einsum(\"bsd,de->bse\", r, wk)\n"
    "  v = einsum(\"bsd,de->bse\", r, wv)\n"
    "  out = add(add(mul(q, k), v), r)\n"
    "  loss = sum(mul(out, cot))\n  return loss\n}\n";

static const char *const outs[] = {"loss", "out", "grad.x", "grad.w1", "grad.b1", "grad.w2",
                                   "grad.b2", "grad.wq", "grad.wk", "grad.wv"};
enum { NOUTS = sizeof outs / sizeof *outs };

static void run(hx *h, const char *text, int fold, const char *extra_output) {
  cr_assert(hx_build(h, text) == 0, "%s", diag_text(&h->d));
  cr_assert(grad_build(h->g, &h->d) == 0, "%s", diag_text(&h->d));
  for (int i = 1; i < NOUTS; i++) hx_output(h, outs[i]);
  if (extra_output) hx_output(h, extra_output);
  lower_opts o = {0};
  o.no_fold_adds = !fold;
  o.no_fuse_elementwise = 1;        /* (the adds left would join elementwise chains: counted apart here) */
  hx_lower_opts(h, &o);
  hx_init_rest(h, 7);
  hx_run(h);
}

static int count(const rt_prog *p, rt_op op, int fn, float beta) {
  int n = 0;
  for (int i = 0; i < p->ninstrs; i++) {
    const rt_instr *x = &p->instrs[i];
    n += x->op == op && (fn < 0 || x->fn == fn) && (beta < 0 || x->beta == beta);
  }
  return n;
}

Test(adds, folded_into_gemms) {
  hx f, u;
  run(&f, model_text, 1, NULL);
  run(&u, model_text, 0, NULL);
  int af = count(&f.p, RT_EW, RT_ADD, -1), au = count(&u.p, RT_EW, RT_ADD, -1);
  /* two bias adds, and the gradient of r summed from three projections and
  ** the residual: at least the two GEMM-on-GEMM sums go */
  cr_expect_leq(af + 4, au, "adds: %d folded, %d unfolded", af, au);
  /* h's bias: a fill; y's: a fill that adds the residual x, so r = x + y goes */
  cr_expect_eq(count(&f.p, RT_EW, RT_AFFINE, -1) - count(&u.p, RT_EW, RT_AFFINE, -1), 1, "one plain bias fill");
  int residual = 0;
  for (int i = 0; i + 1 < f.p.ninstrs; i++) {
    const rt_instr *x = &f.p.instrs[i], *g = &f.p.instrs[i + 1];
    residual += x->op == RT_EW && x->fn == RT_ADD && rt_ew_dense(x, 0) && !rt_ew_dense(x, 1) && g->op == RT_GEMM &&
                g->beta == 1.0f && g->out == x->out;
  }
  cr_expect_eq(residual, 1, "the residual added as the bias fills the sum, just before its GEMM");
  cr_expect_geq(count(&f.p, RT_GEMM, -1, 1.0f), 4, "GEMMs adding into their result");
  cr_expect_eq(count(&u.p, RT_GEMM, -1, 1.0f), 0);
  cr_expect_eq(count(&f.p, RT_GEMM, -1, -1), count(&u.p, RT_GEMM, -1, -1), "the same GEMMs");
  for (int i = 0; i < NOUTS; i++) {
    double e = hx_normerr(hx_get(&f, outs[i]), hx_get(&u, outs[i]), hx_nelem(&u, outs[i]));
    cr_expect(e < 1e-6, "%s folded vs unfolded: relative error %g", outs[i], e);
  }
  hx_free(&f);
  hx_free(&u);
}

/* A fill must come before the GEMM it feeds, and a GEMM must add into a
** buffer only after that buffer is written: each GEMM with beta 1 is
** preceded by a writer of its result. */
Test(adds, order_kept) {
  hx f;
  run(&f, model_text, 1, NULL);
  for (int i = 0; i < f.p.ninstrs; i++) {
    const rt_instr *g = &f.p.instrs[i];
    if (g->op != RT_GEMM || g->beta != 1.0f) continue;
    int written = 0;
    for (int j = 0; j < i; j++) written |= f.p.instrs[j].out == g->out;
    cr_expect(written, "instruction %d adds into buffer %d before anything writes it", i, g->out);
  }
  hx_free(&f);
}

/* A product something else reads (here the caller: h is an output) keeps
** its own buffer, and its add stays. */
Test(adds, product_read_elsewhere_stays) {
  static const char *const text =
      "model t {\n"
      "  param x : f32[3, 5] = normal(1)\n  param w : f32[5, 4] = normal(0.4)\n"
      "  param b : f32[4] = normal(0.5)\n"
      "  p = einsum(\"sd,de->se\", x, w)\n  h = add(p, b)\n"
      "  loss = sum(mul(h, h))\n  return loss\n}\n";
  hx f;
  cr_assert(hx_build(&f, text) == 0, "%s", diag_text(&f.d));
  hx_output(&f, "p");
  hx_output(&f, "h");
  hx_lower(&f);
  cr_expect_eq(count(&f.p, RT_GEMM, -1, 1.0f), 0, "p is an output: the GEMM writes it alone");
  cr_expect_eq(count(&f.p, RT_EW, RT_ADD, -1), 1);
  hx_init_rest(&f, 7);
  hx_run(&f);
  const float *p = hx_get(&f, "p"), *h = hx_get(&f, "h"), *b = hx_get(&f, "b");
  for (int i = 0; i < 12; i++) cr_expect_eq(h[i], p[i] + b[i % 4], "h[%d]", i);
  hx_free(&f);
}

/* A tied embedding: the table's gradient is the output projection's GEMM
** plus the scatter of the embedding's; the scatter adds into the GEMM's
** result instead of into zeros. */
Test(adds, scatter_into_gemm) {
  static const char *const text =
      "model t {\n"
      "  param table : f32[10, 6] = normal(0.5)\n  input ids : i32[2, 4]\n  input cot : f32[2, 4, 10]\n"
      "  logits = einsum(\"bsd,vd->bsv\", embedding(table, ids), table)\n"
      "  loss = sum(mul(logits, cot))\n  return loss\n}\n";
  hx r[2];
  for (int fold = 0; fold < 2; fold++) {
    cr_assert(hx_build(&r[fold], text) == 0, "%s", diag_text(&r[fold].d));
    cr_assert(grad_build(r[fold].g, &r[fold].d) == 0, "%s", diag_text(&r[fold].d));
    hx_output(&r[fold], "grad.table");
    lower_opts o = {0};
    o.no_fold_adds = !fold;
    hx_lower_opts(&r[fold], &o);
    hx_init_rest(&r[fold], 10);
    hx_run(&r[fold]);
  }
  cr_expect_eq(count(&r[1].p, RT_SCATTER_ROWS, -1, 1.0f), 1, "the scatter adds into the GEMM's result");
  cr_expect_eq(count(&r[1].p, RT_EW, RT_ADD, -1) + 1, count(&r[0].p, RT_EW, RT_ADD, -1));
  double e = hx_normerr(hx_get(&r[1], "grad.table"), hx_get(&r[0], "grad.table"), 60);
  cr_expect(e < 1e-6, "grad.table folded vs unfolded: relative error %g", e);
  hx_free(&r[0]);
  hx_free(&r[1]);
}

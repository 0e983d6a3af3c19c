/*
** test_normgrad.c: a layer norm's gamma gradient as one instruction
** (lw_fold_norm_grads in interp/lower/normgrad.c). The gradient of each
** layernorm with a gamma, sum over rows of dy * xhat, lowers to layernorm,
** mul and reduce_sum over the whole activation; folded, it is one
** layernorm_grad in mode RT_LN_GAMMA. The folded program must compute the
** same bits (the kernel adds the same products in the same order), have
** one such instruction per layer norm and two fewer over the activation,
** and leave alone an xhat something else reads.
*/
#include "harness.h"
#include "interp/train/train.h"

#include <string.h>

/* two layer norms, rows of different widths, one of them [2, 3, 40] so
** that rows span two leading dims */
static const char *const model_text =
    "model t {\n"
    "  param x : f32[2, 3, 40] = normal(1)\n"
    "  param g1 : f32[40] = normal(1)\n  param b1 : f32[40] = normal(0.5)\n"
    "  param w : f32[40, 24] = normal(0.3)\n"
    "  param g2 : f32[24] = normal(1)\n  param b2 : f32[24] = normal(0.5)\n"
    "  input cot : f32[2, 3, 24]\n"
    "  a = layernorm(x, g1, b1)\n"
    "  h = gelu(einsum(\"bsd,de->bse\", a, w))\n"
    "  m = layernorm(h, g2, b2)\n"
    "  loss = sum(mul(m, cot))\n  return loss\n}\n";

static const char *const outs[] = {"grad.x", "grad.g1", "grad.b1", "grad.w", "grad.g2", "grad.b2"};
enum { NOUTS = sizeof outs / sizeof *outs };

static void run(hx *h, const char *text, int fold) {
  cr_assert(hx_build(h, text) == 0, "%s", diag_text(&h->d));
  cr_assert(grad_build(h->g, &h->d) == 0, "%s", diag_text(&h->d));
  for (int i = 0; i < NOUTS; i++) hx_output(h, outs[i]);
  lower_opts o = {0};
  o.no_fold_rows = !fold;
  o.no_fuse_elementwise = 1;         /* (fuse.c would take the muls and sums counted here) */
  hx_lower_opts(h, &o);
  hx_init_rest(h, 7);
  hx_run(h);
}

static int count(const rt_prog *p, rt_op op, int fn, int mode) {
  int n = 0;
  for (int i = 0; i < p->ninstrs; i++) {
    const rt_instr *x = &p->instrs[i];
    n += x->op == op && (fn < 0 || x->fn == fn) && (mode < 0 || x->mode == mode);
  }
  return n;
}

Test(norms, gamma_gradient_folded) {
  hx f, u;
  run(&f, model_text, 1);
  run(&u, model_text, 0);
  cr_expect_eq(count(&f.p, RT_LAYERNORM_GRAD, -1, RT_LN_GAMMA), 2, "one gamma gradient per layer norm");
  cr_expect_eq(count(&u.p, RT_LAYERNORM_GRAD, -1, RT_LN_GAMMA), 0);
  cr_expect_eq(count(&f.p, RT_LAYERNORM, -1, -1) + 2, count(&u.p, RT_LAYERNORM, -1, -1), "xhat no longer recomputed");
  cr_expect_eq(count(&f.p, RT_EW, RT_MUL, -1) + 2, count(&u.p, RT_EW, RT_MUL, -1), "nor multiplied by dy");
  int sums = 0;                      /* bias gradients taken by the ew before them (biasgrad.c) */
  for (int i = 0; i < f.p.ninstrs; i++) sums += f.p.instrs[i].op == RT_EW && f.p.instrs[i].in[3] >= 0;
  cr_expect_eq(count(&f.p, RT_REDUCE, -1, -1) + 2 + sums, count(&u.p, RT_REDUCE, -1, -1), "nor summed apart");
  cr_expect_eq(f.p.ninstrs + 4 + sums, u.p.ninstrs, "%d instructions folded, %d unfolded", f.p.ninstrs, u.p.ninstrs);
  for (int i = 0; i < NOUTS; i++) {
    int64_t n = hx_nelem(&u, outs[i]);
    cr_expect(!memcmp(hx_get(&f, outs[i]), hx_get(&u, outs[i]), (size_t)n * sizeof(float)),
              "%s: the folded program's bits differ from the unfolded one's", outs[i]);
  }
  hx_free(&f);
  hx_free(&u);
}

/* gamma's gradient against a sum computed here: m = layernorm(h, g2, b2)
** and loss = sum(m * cot), so grad.g2[c] = sum over rows of cot * xhat(h). */
Test(norms, gamma_gradient_value) {
  hx f;
  cr_assert(hx_build(&f, model_text) == 0, "%s", diag_text(&f.d));
  cr_assert(grad_build(f.g, &f.d) == 0, "%s", diag_text(&f.d));
  hx_output(&f, "h");
  hx_output(&f, "grad.g2");
  hx_lower(&f);
  cr_expect_eq(count(&f.p, RT_LAYERNORM_GRAD, -1, RT_LN_GAMMA), 2);
  hx_init_rest(&f, 7);
  hx_run(&f);
  const float *h = hx_get(&f, "h"), *cot = hx_get(&f, "cot"), *gg = hx_get(&f, "grad.g2");
  for (int j = 0; j < 24; j++) {
    double want = 0;
    for (int r = 0; r < 6; r++) {
      const float *hr = h + r * 24;
      double mu = 0, var = 0;
      for (int k = 0; k < 24; k++) mu += hr[k] / 24.0;
      for (int k = 0; k < 24; k++) var += (hr[k] - mu) * (hr[k] - mu) / 24.0;
      want += cot[r * 24 + j] * (hr[j] - mu) / sqrt(var + 1e-5);
    }
    cr_expect(fabs(gg[j] - want) <= 1e-5 * (1 + fabs(want)), "grad.g2[%d] = %g, want %g", j, gg[j], want);
  }
  hx_free(&f);
}

/* An xhat something else reads (an output here) stays: that layer norm's
** three instructions are left alone, the other one's fold. */
Test(norms, xhat_read_elsewhere_stays) {
  hx f;
  cr_assert(hx_build(&f, model_text) == 0, "%s", diag_text(&f.d));
  cr_assert(grad_build(f.g, &f.d) == 0, "%s", diag_text(&f.d));
  cr_assert(ir_lookup(f.g, "bwd.m.xhat"), "the gradient's xhat of m is named bwd.m.xhat");
  hx_output(&f, "bwd.m.xhat");
  hx_output(&f, "grad.g2");
  hx_lower(&f);
  cr_expect_eq(count(&f.p, RT_LAYERNORM_GRAD, -1, RT_LN_GAMMA), 1);
  hx_free(&f);
}

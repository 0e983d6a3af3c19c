/*
** test_train_step.c: every optimizer on small losses of every shape kind
** (elementwise products with an input, a parameter squared, sums, means,
** scalars, broadcasts). The lowering folds literal scalings into the
** update; whatever it folds, the step must lower (no "read before it is
** computed") and new.w must be the optimizer's formula applied to the
** gradient that a separate, unfolded program computes.
*/
#include "harness.h"
#include "interp/train/train.h"

#include <math.h>
#include <stdio.h>

typedef struct loss_case { char name[32]; char body[200]; char wshape[16]; } loss_case;

static loss_case cases[] = {
  {"mean_mul_input", "input x : f32[4, 3]\n param w : f32[4, 3]\n loss = mean(mul(x, w))", "[4, 3]"},
  {"sum_mul_input", "input x : f32[4, 3]\n param w : f32[4, 3]\n loss = sum(mul(x, w))", "[4, 3]"},
  {"mul_w_w_sum", "param w : f32[4, 3]\n loss = sum(mul(w, w))", "[4, 3]"},
  {"mul_w_w_mean", "param w : f32[4, 3]\n loss = mean(mul(w, w))", "[4, 3]"},
  {"scalar_square", "param w : f32[]\n loss = mul(w, w)", "[]"},
  {"scalar_times_two", "param w : f32[]\n loss = mul(w, 2)", "[]"},
  {"scalar_sum", "param w : f32[]\n loss = sum(mul(w, 3))", "[]"},
  {"scaled_twice", "param w : f32[5]\n loss = mean(mul(mul(w, 2), 3))", "[5]"},
  {"div_literal", "param w : f32[5]\n loss = sum(div(w, 4))", "[5]"},
  {"broadcast_row", "input x : f32[4, 3]\n param w : f32[3]\n loss = mean(mul(x, w))", "[3]"},
  {"sub_literal", "param w : f32[6]\n loss = mean(mul(sub(w, 1), sub(w, 1)))", "[6]"},
  {"tanh_mean", "input x : f32[2, 3]\n param w : f32[3]\n loss = mean(tanh(mul(x, w)))", "[3]"},
};

typedef struct optim_case { char text[64]; } optim_case;
static optim_case optims[] = {
  {"sgd(lr = 0.1)"}, {"sgd(lr = 0.1, momentum = 0.9)"}, {"sgd(lr = 0.1, weight_decay = 0.01)"},
  {"adam(lr = 0.1)"}, {"adam(lr = 0.05, weight_decay = 0.1)"}, {"adamw(lr = 0.05, weight_decay = 0.5)"},
};

typedef struct pair { loss_case l; optim_case o; } pair;

ParameterizedTestParameters(train_step, every_optimizer) {
  static pair p[sizeof cases / sizeof cases[0] * sizeof optims / sizeof optims[0]];
  size_t n = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (size_t j = 0; j < sizeof optims / sizeof optims[0]; j++) p[n++] = (pair){cases[i], optims[j]};
  return cr_make_param_array(pair, p, n);
}

static void model_text(char *buf, size_t n, const loss_case *l) {
  snprintf(buf, n, "model t {\n %s\n return loss\n}\n", l->body);
}

/* parameters of a useful size: the default init (0.02) gives tiny steps */
static void widen(hx *h) {
  for (int i = 0; i < h->g->nvals; i++)
    if (h->g->vals[i]->kind == IR_PARAM) h->g->vals[i]->init.a = 0.5;
}

/* w and grad.w from a program with nothing folded into an update */
static void reference(const loss_case *l, float *w, float *gw, int64_t *n) {
  char src[512];
  model_text(src, sizeof src, l);
  hx h;
  cr_assert(hx_build(&h, src) == 0, "%s", diag_text(&h.d));
  widen(&h);
  cr_assert(grad_build(h.g, &h.d) == 0, "%s", diag_text(&h.d));
  hx_output(&h, "grad.w");
  hx_lower(&h);
  hx_init_rest(&h, 7);
  hx_run(&h);
  *n = hx_nelem(&h, "w");
  memcpy(w, hx_get(&h, "w"), sizeof(float) * (size_t)*n);
  memcpy(gw, hx_get(&h, "grad.w"), sizeof(float) * (size_t)*n);
  hx_free(&h);
}

ParameterizedTest(pair *p, train_step, every_optimizer) {
  float w[64], gw[64];
  int64_t n = 0;
  reference(&p->l, w, gw, &n);
  char src[512];
  model_text(src, sizeof src, &p->l);
  hx h;
  cr_assert(hx_build(&h, src) == 0, "%s", diag_text(&h.d));
  widen(&h);
  train_spec t;
  cr_assert(train_parse(&h.mem, p->o.text, &t, &h.d) == 0, "%s", diag_text(&h.d));
  cr_assert(train_build(h.g, &t, &h.d) == 0, "%s: %s", p->l.name, diag_text(&h.d));
  ir_link(h.g);
  int rc = lower_program(h.g, NULL, &h.p, &h.lr, &h.d);
  cr_assert(rc == 0, "%s with %s: %s", p->l.name, p->o.text, diag_text(&h.d));
  h.lowered = 1;
  h.e = rt_exec_new(&h.p, rt_backend_cpu(), NULL);
  hx_init_rest(&h, 7);
  hx_run(&h);
  int b = hx_buf(&h, "new.w");
  cr_assert(b >= 0);
  const float *nw = rt_exec_data(h.e, b);
  cr_assert(nw);
  for (int64_t k = 0; k < n; k++) {
    double g = gw[k] + (t.kind == TRAIN_ADAMW ? 0 : t.weight_decay) * w[k], want;
    if (t.kind == TRAIN_SGD) want = w[k] - t.lr * g;     /* the first step: the momentum buffer is g */
    else if (t.kind == TRAIN_ADAMW) want = w[k] * (1 - t.lr * t.weight_decay) - t.lr * g / (fabs(g) + t.eps);
    else want = w[k] - t.lr * g / (fabs(g) + t.eps);     /* Adam's first step, bias-corrected */
    cr_expect(fabs(nw[k] - want) <= 1e-5 * fmax(1, fabs(want)), "%s with %s: new.w[%lld] = %.7g, wanted %.7g",
              p->l.name, p->o.text, (long long)k, nw[k], want);
  }
  hx_free(&h);
}

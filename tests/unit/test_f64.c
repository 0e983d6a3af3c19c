/*
** test_f64.c: an f64 model is computed in double throughout. Each of
** carve's composite ops (softmax, log-softmax, layer norm, cross-entropy,
** the causal mask, attention, the gradients of max and the embedding, a
** mean) is checked, value and gradients, against the same function
** written with elementwise ops, sums and GEMMs, which run through other
** kernels (kern_any.c's f64 loops, BLAS's dgemm): they must agree to
** 1e-12, where f32 arithmetic anywhere on the way would leave 1e-8 to
** 1e-7. The loss is sum(out * cot), so every parameter's gradient is a
** vector-Jacobian product with a dense cotangent.
*/
#include "harness.h"

typedef struct fcase {
  char name[24];
  char decls[200];     /* params and inputs; cot : f64 of out's shape is added */
  char fused[160];     /* out = ... with the composite op */
  char plain[400];     /* the same out from elementwise ops, reductions and GEMMs */
  char grads[40];      /* the parameters whose gradients are compared, space-separated */
  int ids;             /* ids and labels are drawn from [0, ids) */
} fcase;

#define X "param x : f64[4, 6]\n"
#define EXPX "  e = exp(x)\n  z = sum(e, dims = [1], keepdims = true)\n"
#define QKV "param q : f64[2, 2, 5, 3]\n param k : f64[2, 2, 5, 3]\n param v : f64[2, 2, 5, 3]\n"
/* attention written out: scores of q and k scaled by 0.35, their softmax
** over the keys the input mask M allows (tri: on and below the diagonal;
** all: every key), times v */
#define ATTN(M) "  s = mul(einsum(\"bhqd,bhkd->bhqk\", q, k), 0.35)\n  e = mul(exp(s), " M ")\n" \
                "  p = div(e, sum(e, dims = [3], keepdims = true))\n  out = einsum(\"bhqk,bhkd->bhqd\", p, v)\n"

static fcase cases[] = {
  {"softmax", X, "softmax(x)", EXPX "  out = div(e, z)\n", "x", 1},
  {"log_softmax", X, "log_softmax(x)", EXPX "  out = sub(x, log(z))\n", "x", 1},
  {"layernorm", X " param g : f64[6]\n param b : f64[6]\n", "layernorm(x, g, b)",
   "  mu = mean(x, dims = [1], keepdims = true)\n  d = sub(x, mu)\n"
   "  var = mean(mul(d, d), dims = [1], keepdims = true)\n  out = add(mul(mul(d, rsqrt(add(var, 0.00001))), g), b)\n",
   "x g b", 1},
  {"rmsnorm", X " param g : f64[6]\n", "rmsnorm(x, g, eps = 0.001)",
   "  ms = mean(mul(x, x), dims = [1], keepdims = true)\n  out = mul(div(x, sqrt(add(ms, 0.001))), g)\n", "x g", 1},
  {"rmsnorm_first_dim", X " param g : f64[4]\n", "rmsnorm(x, g, dim = 0)",
   "  ms = mean(mul(x, x), dims = [0], keepdims = true)\n  out = mul(mul(x, rsqrt(add(ms, 0.00001))), reshape(g, [4, 1]))\n", "x g", 1},
  {"cross_entropy", X " input labels : i32[4]\n input onehot : f64[4, 6]\n", "reshape(cross_entropy(x, labels), [1])",
   EXPX "  lp = sub(x, log(z))\n  out = reshape(mean(neg(sum(mul(lp, onehot), dims = [1]))), [1])\n", "x", 6},
  {"causal_softmax", "param x : f64[2, 5, 5]\n input tri : f64[2, 5, 5]\n", "softmax(causal_mask(x))",
   "  e = mul(exp(x), tri)\n  out = div(e, sum(e, dims = [2], keepdims = true))\n", "x", 1},
  {"attention_causal", QKV " input tri : f64[2, 2, 5, 5]\n", "attention(q, k, v, causal = true, scale = 0.35)",
   ATTN("tri"), "q k v", 1},
  {"attention", QKV " input all : f64[2, 2, 5, 5]\n", "attention(q, k, v, causal = false, scale = 0.35)",
   ATTN("all"), "q k v", 1},
  {"embedding", "param t : f64[7, 3]\n input ids : i32[9]\n input onehot : f64[9, 7]\n", "embedding(t, ids)",
   "  out = matmul(onehot, t)\n", "t", 7},
  {"mean", "param x : f64[4, 3, 5]\n", "mean(x, dims = [1])", "  out = div(sum(x, dims = [1]), 3.0)\n", "x", 1},
};

ParameterizedTestParameters(f64, composite_equals_plain) {
  return cr_make_param_array(fcase, cases, sizeof cases / sizeof cases[0]);
}

/* 1 where the key may be seen: on and below the diagonal of [.., s, s] (or everywhere) */
static void mask(double *m, int64_t n, int64_t s, int causal) {
  for (int64_t i = 0; i < n; i++) m[i] = !causal || (i % s) <= (i / s) % s;
}

static void one_hot(double *oh, const int32_t *ids, int64_t rows, int64_t width) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < width; c++) oh[r * width + c] = ids[r] == c;
}

/* Builds and runs case c's model with out = expr (an expression, or a block
** of statements ending in out); its output and each gradient are copied
** into vals (malloc'd, in the order out, then the grads). */
static void run_case(const fcase *c, const char *body, int is_expr, double **vals, int64_t *counts) {
  char src[4096];
  snprintf(src, sizeof src, "model f {\n %s", c->decls);
  int64_t outn = 0;
  hx h;
  /* cot has out's shape: build once without it to learn the shape */
  char probe[4096];
  snprintf(probe, sizeof probe, "%s%s%s\n  return out\n}\n", src, is_expr ? "  out = " : "", body);
  cr_assert(hx_build(&h, probe) == 0, "%s\n%s", probe, diag_text(&h.d) ? diag_text(&h.d) : "");
  const ir_value *o = ir_lookup(h.g, "out");
  char shape[64] = "";
  for (int i = 0; i < o->shape.rank; i++)
    snprintf(shape + strlen(shape), sizeof shape - strlen(shape), i ? ", %lld" : "%lld", (long long)o->shape.d[i]);
  outn = ir_nelem(&o->shape);
  hx_free(&h);
  snprintf(src + strlen(src), sizeof src - strlen(src), " input cot : f64[%s]\n%s%s\n  loss = sum(mul(out, cot))\n  return loss\n}\n",
           shape, is_expr ? "  out = " : "", body);
  cr_assert(hx_build(&h, src) == 0, "%s\n%s", src, diag_text(&h.d) ? diag_text(&h.d) : "");
  cr_assert(grad_build(h.g, &h.d) == 0, "%s", diag_text(&h.d) ? diag_text(&h.d) : "");
  hx_output(&h, "out");
  char names[40], gname[16];
  snprintf(names, sizeof names, "%s", c->grads);
  for (char *p = strtok(names, " "); p; p = strtok(NULL, " ")) {
    snprintf(gname, sizeof gname, "grad.%s", p);
    hx_output(&h, gname);
  }
  hx_lower(&h);
  ir_value *ids = ir_lookup(h.g, "labels") ? ir_lookup(h.g, "labels") : ir_lookup(h.g, "ids");
  hx_init_rest(&h, c->ids);   /* every other input and param by its name's seed */
  if (ir_lookup(h.g, "onehot")) {
    const ir_value *oh = ir_lookup(h.g, "onehot");
    double *m = malloc(sizeof(double) * (size_t)ir_nelem(&oh->shape));
    one_hot(m, (const int32_t *)hx_get(&h, ids->name), oh->shape.d[0], oh->shape.d[1]);
    hx_set(&h, "onehot", m);
    free(m);
  }
  const char *masks[2] = {"tri", "all"};
  for (int k = 0; k < 2; k++) {
    const ir_value *t = ir_lookup(h.g, masks[k]);
    if (!t) continue;
    double *m = malloc(sizeof(double) * (size_t)ir_nelem(&t->shape));
    mask(m, ir_nelem(&t->shape), t->shape.d[t->shape.rank - 1], k == 0);
    hx_set(&h, masks[k], m);
    free(m);
  }
  hx_run(&h);
  int k = 0;
  vals[k] = malloc(sizeof(double) * (size_t)outn);
  memcpy(vals[k], hx_get(&h, "out"), sizeof(double) * (size_t)outn);
  counts[k++] = outn;
  snprintf(names, sizeof names, "%s", c->grads);
  for (char *p = strtok(names, " "); p; p = strtok(NULL, " ")) {
    snprintf(gname, sizeof gname, "grad.%s", p);
    counts[k] = hx_nelem(&h, gname);
    vals[k] = malloc(sizeof(double) * (size_t)counts[k]);
    memcpy(vals[k], hx_get(&h, gname), sizeof(double) * (size_t)counts[k]);
    k++;
  }
  hx_free(&h);
}

/* max |a - b| / max(|b|, 1e-3 of the largest |b|) */
static double relerr(const double *a, const double *b, int64_t n) {
  double big = 0, worst = 0;
  for (int64_t i = 0; i < n; i++) big = fmax(big, fabs(b[i]));
  for (int64_t i = 0; i < n; i++) {
    double e = fabs(a[i] - b[i]) / fmax(fabs(b[i]), 1e-3 * big);
    worst = e != e ? INFINITY : fmax(worst, e);
  }
  return worst;
}

ParameterizedTest(fcase *c, f64, composite_equals_plain) {
  double *fused[4] = {0}, *plain[4] = {0};
  int64_t nf[4], np[4];
  run_case(c, c->fused, 1, fused, nf);
  run_case(c, c->plain, 0, plain, np);
  int n = 1;
  for (const char *p = c->grads; *p; p++) n += *p == ' ';
  n++;
  for (int k = 0; k < n; k++) {
    cr_assert_eq(nf[k], np[k]);
    double e = relerr(fused[k], plain[k], nf[k]);
    cr_expect(e <= 1e-12, "%s: %s differs from the plain f64 computation by %g (relative)", c->name,
              k == 0 ? "the output" : "a gradient", e);
    free(fused[k]);
    free(plain[k]);
  }
}

/* max's gradient goes to the one largest element: a near tie at 1e-12 is
** no tie in f64 (in f32 the two would share it). */
Test(f64, max_gradient_is_not_shared_by_a_near_tie) {
  hx h;
  cr_assert(hx_build(&h, "model m {\n param x : f64[2, 3]\n loss = sum(max(x, dims = [1]))\n return loss\n}\n") == 0);
  cr_assert(grad_build(h.g, &h.d) == 0, "%s", diag_text(&h.d) ? diag_text(&h.d) : "");
  hx_output(&h, "grad.x");
  hx_lower(&h);
  double x[6] = {1.0, 1.0 + 1e-12, 0.5, 2.0, -1.0, 2.0};    /* row 2: an exact tie, shared */
  hx_set(&h, "x", x);
  hx_run(&h);
  const double *g = (const double *)hx_get(&h, "grad.x"), want[6] = {0, 1, 0, 0.5, 0, 0.5};
  for (int i = 0; i < 6; i++) cr_expect_eq(g[i], want[i], "grad.x[%d] = %.17g, want %g", i, g[i], want[i]);
  hx_free(&h);
}

/* cross_entropy's value in f64 equals log-sum-exp minus the label's logit,
** computed here in long double, to 1e-15. */
Test(f64, cross_entropy_value_to_the_last_bits) {
  hx h;
  cr_assert(hx_build(&h, "model m {\n param x : f64[3, 5]\n input y : i32[3]\n loss = cross_entropy(x, y)\n return loss\n}\n") == 0);
  hx_lower(&h);
  double x[15];
  for (int i = 0; i < 15; i++) x[i] = 0.1 * i + 1e-9 * i * i;
  int32_t y[3] = {4, 0, 2};
  hx_set(&h, "x", x);
  hx_set(&h, "y", y);
  hx_run(&h);
  long double want = 0;
  for (int r = 0; r < 3; r++) {
    long double s = 0;
    for (int c = 0; c < 5; c++) s += expl((long double)x[r * 5 + c]);
    want += logl(s) - x[r * 5 + y[r]];
  }
  want /= 3;
  double got = *(const double *)hx_get(&h, "loss");
  cr_expect(fabsl(got - want) <= 1e-15L * fabsl(want), "loss %.17g, want %.17Lg", got, want);
  hx_free(&h);
}

/*
** test_grad.c: autodiff checked against finite differences, op by op and
** on the whole small GPT. The loss is sum(out * cot) with a fixed random
** cotangent, so every element of every gradient matters.
*/
#include "harness.h"
#include "randmodel.h"
#include "interp/front/hlo.h"

#include <stdio.h>

/* Central differences on up to `samples` elements of every param. Normal
** inits are widened to `std`: with the tiny default (0.02) a step h would
** be as large as the values themselves. */
static int64_t fd_ids = 7;     /* ids and labels lie in [0, fd_ids) */

static void fd_check_std(const char *src, int samples, double h, double tol, double std) {
  hx hh, *x = &hh;
  cr_assert(hx_build(x, src) == 0, "%s", diag_text(&x->d) ? diag_text(&x->d) : "");
  for (int i = 0; i < x->g->nvals; i++)
    if (x->g->vals[i]->kind == IR_PARAM && x->g->vals[i]->init.kind == INIT_NORMAL) x->g->vals[i]->init.a = std;
  cr_assert(grad_build(x->g, &x->d) == 0, "%s", diag_text(&x->d) ? diag_text(&x->d) : "");
  int nv = x->g->nvals;
  for (int i = 0; i < nv; i++)
    if (x->g->vals[i]->kind == IR_PARAM) {
      char nm[256];
      snprintf(nm, sizeof nm, "grad.%s", x->g->vals[i]->name);
      if (x->g->vals[i]->nusers == 0 && !ir_lookup(x->g, nm)) continue;   /* declared, never read */
      hx_output(x, nm);
    }
  hx_lower(x);
  hx_init_rest(x, fd_ids);
  hx_run(x);
  const char *lossname = x->g->vals[x->g->outputs[0]]->name;
  /* every analytic gradient first: the perturbed runs below overwrite them */
  float **an = calloc((size_t)nv, sizeof *an);
  for (int i = 0; i < nv; i++) {
    ir_value *p = x->g->vals[i];
    if (p->kind != IR_PARAM || p->nusers == 0) continue;
    char gn[256];
    snprintf(gn, sizeof gn, "grad.%s", p->name);
    int64_t n = ir_nelem(&p->shape);
    an[i] = malloc(sizeof(float) * (size_t)n);
    memcpy(an[i], hx_get(x, gn), sizeof(float) * (size_t)n);
  }
  int checked = 0;
  for (int i = 0; i < nv; i++) {
    ir_value *p = x->g->vals[i];
    if (!an[i]) continue;
    int64_t n = ir_nelem(&p->shape);
    double scale = 0;
    for (int64_t k = 0; k < n; k++) scale = fmax(scale, fabs(an[i][k]));
    float *w = hx_get(x, p->name);
    for (int s = 0; s < samples && s < n; s++) {
      int64_t k = n <= samples ? s : (int64_t)((uint64_t)(s * 2654435761u + 17) % (uint64_t)n);
      float keep = w[k];
      /* at h, and where the loss curves too much for that step (a layer
         norm of a small vector, a product of large values) at h / 4 and
         h / 16: each time the error of central differences falls 16
         times and float32's noise grows 4 */
      double fd = 0, err = INFINITY, bound = 0;
      for (double st = h; st >= h / 16 && err > bound; st /= 4) {
        w[k] = keep + (float)st; hx_run(x); double lp = hx_get(x, lossname)[0];
        w[k] = keep - (float)st; hx_run(x); double lm = hx_get(x, lossname)[0];
        w[k] = keep;
        fd = (lp - lm) / (2 * st);
        err = fabs(fd - an[i][k]);
        double noise = 16 * 6e-8 * fabs(lp + lm) / (2 * st);   /* what float32 losses can resolve */
        bound = tol * fmax(fabs(an[i][k]), 0.1 * fmax(scale, 1e-2)) + noise;
      }
      cr_expect(err <= bound, "d loss / d %s[%lld]: autodiff %.6g, finite differences %.6g", p->name, (long long)k, an[i][k], fd);
      checked++;
    }
    free(an[i]);
  }
  free(an);
  cr_assert(checked > 0);
  hx_free(x);
}

static void fd_check(const char *src, int samples, double h, double tol) { fd_check_std(src, samples, h, tol, 1.0); }

#define M(body) "model t {\n" body "\n  loss = sum(mul(out, cot))\n  return loss\n}\n"

Test(grad, concat_and_slice) {
  fd_check(M("param a : f32[3, 2]\n param b : f32[3, 4]\n input cot : f32[3, 3]\n"
             " c = concat([a, b], 1)\n out = slice(c, 1, 2, 5)"), 20, 1e-2, 2e-2);
}
Test(grad, broadcast_and_transpose) {
  fd_check(M("param a : f32[3, 1]\n input cot : f32[4, 3, 2]\n"
             " b = broadcast(a, [2, 3, 4])\n out = transpose(b, [2, 1, 0])"), 20, 1e-2, 2e-2);
}
Test(grad, maximum_minimum_broadcast) {
  fd_check(M("param a : f32[3, 4]\n param b : f32[4]\n input cot : f32[3, 4]\n"
             " out = add(maximum(a, b), minimum(mul(a, 2), b))"), 20, 1e-3, 2e-2);
}
Test(grad, layernorm_first_dim) {
  fd_check(M("param x : f32[5, 3]\n param g : f32[5]\n param b : f32[5]\n input cot : f32[5, 3]\n"
             " out = layernorm(x, g, b, dim = 0)"), 20, 1e-2, 2e-2);
}
Test(grad, rmsnorm_both_dims) {
  fd_check(M("param x : f32[5, 3]\n param g : f32[5]\n param h : f32[3]\n input cot : f32[5, 3]\n"
             " out = add(rmsnorm(x, g, dim = 0), rmsnorm(x, h, eps = 0.01))"), 20, 1e-2, 2e-2);
}
Test(grad, softmax_middle_dim) {
  fd_check(M("param x : f32[2, 4, 3]\n input cot : f32[2, 4, 3]\n"
             " out = add(softmax(x, dim = 1), log_softmax(x, dim = 0))"), 24, 1e-2, 2e-2);
}
Test(grad, max_over_split_dims) {
  fd_check(M("param x : f32[3, 4, 5]\n input cot : f32[4]\n out = max(x, dims = [0, 2])"), 30, 1e-3, 2e-2);
}
Test(grad, mean_and_sum_keepdims) {
  fd_check(M("param x : f32[3, 4, 5]\n input cot : f32[3, 1, 5]\n"
             " out = add(mean(x, dims = [1], keepdims = true), sum(x, dims = [-2], keepdims = true))"), 20, 1e-2, 2e-2);
}
Test(grad, einsum_transposed_result) {
  fd_check(M("param a : f32[3, 4]\n param b : f32[4, 5]\n input cot : f32[5, 3]\n"
             " out = einsum(\"ij,jk->ki\", a, b)"), 20, 1e-2, 2e-2);
}
Test(grad, einsum_summed_label) {
  fd_check(M("param a : f32[3, 4]\n param b : f32[2, 4]\n input cot : f32[3]\n"
             " out = einsum(\"ab,cb->a\", a, b)"), 20, 1e-2, 2e-2);
}
Test(grad, matmul_broadcast_batch) {
  fd_check(M("param a : f32[1, 3, 4]\n param b : f32[2, 4, 5]\n input cot : f32[2, 3, 5]\n"
             " out = matmul(a, b)"), 24, 1e-2, 2e-2);
}
Test(grad, matmul_shared_weight) {
  fd_check(M("param x : f32[2, 3, 4]\n param w : f32[4, 4]\n input cot : f32[2, 3, 4]\n"
             " h = matmul(x, w)\n out = matmul(tanh(h), w)"), 24, 1e-2, 2e-2);
}
Test(grad, unary_chain) {
  fd_check(M("param x : f32[12] = uniform(0.5, 2)\n input cot : f32[12]\n"
             " out = add(div(sqrt(x), add(exp(neg(x)), 1)), add(rsqrt(x), mul(log(x), sigmoid(x))))"), 12, 1e-3, 2e-2);
}
/* the ops StableHLO import brought (abs, power, select on a comparison,
** convert between floats, min over dims): their gradients as the others' */
Test(grad, abs_and_power) {
  fd_check(M("param x : f32[12] = uniform(0.5, 2)\n param e : f32[12] = uniform(0.5, 2)\n input cot : f32[12]\n"
             " out = add(abs(neg(x)), power(x, e))"), 24, 1e-3, 2e-2);
}
Test(grad, select_on_comparison) {
  fd_check(M("param a : f32[3, 4]\n param b : f32[3, 4]\n input cot : f32[3, 4]\n"
             " out = select(compare(a, b, \"gt\"), mul(a, a), tanh(b))"), 24, 1e-3, 2e-2);
}
Test(grad, convert_between_floats) {
  fd_check(M("param x : f32[3, 4]\n input cot : f32[3, 4]\n"
             " out = convert(mul(convert(x, f64), convert(x, f64)), f32)"), 12, 1e-2, 2e-2);
}
/* the math of JAX programs: erf (chlo.erf), log1p and expm1 (softplus,
** elu), sin and cos (rotary embeddings); floor's gradient is zero */
Test(grad, jax_math) {
  fd_check(M("param x : f32[12] = uniform(-0.9, 2)\n input cot : f32[12]\n"
             " out = add(add(erf(x), log1p(x)), add(expm1(mul(x, 0.5)), add(mul(sin(x), cos(mul(x, 3.0))), floor(x))))"),
           12, 1e-3, 2e-2);
}
/* tan, cbrt, remainder (JAX's rule: db = -dy trunc(a / b)), atan2, erfc */
Test(grad, more_jax_math) {
  fd_check(M("param x : f32[12] = uniform(0.3, 1.2)\n param y : f32[12] = uniform(0.5, 2)\n input cot : f32[12]\n"
             " out = add(add(tan(x), cbrt(y)), add(rem(y, x), add(atan2(x, neg(y)), erfc(x))))"), 12, 1e-3, 2e-2);
}
Test(grad, min_over_dims) {
  fd_check(M("param x : f32[3, 4, 5]\n input cot : f32[4]\n out = min(x, dims = [0, 2])"), 30, 1e-3, 2e-2);
}

typedef struct act { char op[96]; } act;
static act acts[] = {{"gelu(x)"}, {"gelu_tanh(x)"}, {"silu(x)"}, {"tanh(x)"}, {"relu(x)"}, {"sigmoid(x)"}, {"exp(x)"}, {"neg(x)"},
                     {"add(gelu(x), gelu_tanh(x))"}, {"add(silu(x), relu(x))"}, {"add(add(gelu(x), silu(x)), relu(x))"},
                     {"add(add(gelu(x), gelu_tanh(x)), add(silu(x), add(tanh(x), relu(x))))"}};
ParameterizedTestParameters(grad, activation) { return cr_make_param_array(act, acts, sizeof acts / sizeof acts[0]); }
ParameterizedTest(act *a, grad, activation) {
  char src[512];
  snprintf(src, sizeof src, M("param x : f32[16] = uniform(-2, 2)\n input cot : f32[16]\n out = %s"), a->op);
  fd_check(src, 16, 1e-3, 2e-2);
}

Test(grad, embedding_tied_with_output) {
  fd_check("model t {\n param wte : f32[7, 4]\n input ids : i32[2, 3]\n input labels : i32[2, 3]\n"
           " e = embedding(wte, ids)\n logits = einsum(\"bsd,vd->bsv\", tanh(e), wte)\n"
           " loss = cross_entropy(logits, labels)\n return loss\n}\n", 28, 1e-2, 2e-2);
}
Test(grad, causal_attention) {
  fd_check(M("param q : f32[2, 4, 3]\n param k : f32[2, 4, 3]\n input cot : f32[2, 4, 4]\n"
             " out = softmax(causal_mask(einsum(\"bqd,btd->bqt\", q, k)))"), 24, 1e-2, 2e-2);
}
Test(grad, reshape_and_division_by_param) {
  fd_check(M("param a : f32[2, 6]\n param b : f32[3, 4] = uniform(1, 2)\n input cot : f32[3, 4]\n"
             " out = div(reshape(a, [3, 4]), b)"), 24, 1e-2, 2e-2);
}

Test(grad, small_gpt_whole_model) {
  char *src = hx_slurp("examples/gpt2_small.cir");
  /* wider inits make every path matter (attention is not uniform) */
  fd_check_std(src, 4, 1e-2, 3e-2, 0.3);
  free(src);
}
Test(grad, shared_input_two_users) {
  fd_check(M("param x : f32[16] = uniform(-2, 2)\n input cot : f32[16]\n out = add(tanh(x), sigmoid(x))"), 16, 1e-3, 2e-2);
}
Test(grad, fused_attention_causal) {
  fd_check(M("param q : f32[1, 2, 5, 3]\n param k : f32[1, 2, 5, 3]\n param v : f32[1, 2, 5, 3]\n input cot : f32[1, 2, 5, 3]\n"
             " out = attention(q, k, v, causal = true, scale = 0.5)"), 30, 1e-2, 2e-2);
}
Test(grad, fused_attention_full_default_scale) {
  fd_check(M("param q : f32[2, 1, 4, 3]\n param k : f32[2, 1, 4, 3]\n param v : f32[2, 1, 4, 3]\n input cot : f32[2, 1, 4, 3]\n"
             " out = attention(q, k, v, causal = false)"), 24, 1e-2, 2e-2);
}
Test(grad, fused_attention_shared_operand) {
  fd_check(M("param x : f32[1, 2, 6, 4]\n input cot : f32[1, 2, 6, 4]\n out = attention(x, x, x)"), 24, 1e-2, 2e-2);
}

/* Random smooth models (randmodel.h: no relu, abs, maximum, minimum, max,
** min or select, whose kinks finite differences cannot see past), 4
** elements of every parameter each. RANDOM_MODELS and RANDOM_SEED try
** others. */
Test(grad, random_models) {
  int nmodels = rm_start(60, 1, 0xd1b54a32d192ed03ull);
  rm_smooth = 1;
  fd_ids = 2;                   /* every table and class count is 2 or more */
  for (int k = 0; k < nmodels; k++) {
    char *text = random_model();
    if (!getenv("RANDOM_ONLY") || atoi(getenv("RANDOM_ONLY")) == k) {
      cr_log_info("random model %d:\n%s", k, text);
      fd_check_std(text, 4, 1e-2, 2e-2, 0.5);
    }
    free(text);
  }
}

/* StableHLO's windowed ops as carve imports them (slices, concatenations,
** einsums, reshapes): the program's own loss, sum(f(params) * cot), with
** every argument a parameter */
/* An imported program's model text (its arguments are params). */
static char *import_text(arena *a, const char *mlir) {
  char path[] = "/tmp/carve_grad_XXXXXX.mlir";
  int fd = mkstemps(path, 5);
  cr_assert(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs(mlir, f);
  fclose(f);
  diag d;
  diag_init(&d);
  char *cir = NULL, *tac = NULL;
  hlo_opts o = {0};
  int rc = hlo_import(a, &d, path, &o, &cir, &tac);
  remove(path);
  cr_assert(rc == 0, "%s", diag_text(&d) ? diag_text(&d) : "");
  diag_free(&d);
  return cir;
}
static void fd_check_mlir(const char *mlir, int samples) {
  arena a;
  arena_init(&a);
  fd_check(import_text(&a, mlir), samples, 1e-2, 2e-2);
  arena_free(&a);
}
Test(grad, imported_convolutions) {
  /* Flax's stride-2 'SAME' convolution, then a grouped one in PyTorch's layout with a dilated kernel */
  fd_check_mlir(
    "func.func @main(%x: tensor<2x7x6x2xf32>, %k: tensor<3x3x2x4xf32>, %k2: tensor<4x2x2x2xf32>, %cot: tensor<2x4x4x2xf32>) -> tensor<f32> {\n"
    "  %y = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], "
    "pad = [[1, 1], [0, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} "
    ": (tensor<2x7x6x2xf32>, tensor<3x3x2x4xf32>) -> tensor<2x4x3x4xf32>\n"
    "  %t = stablehlo.tanh %y : tensor<2x4x3x4xf32>\n"
    "  %z = stablehlo.convolution(%t, %k2) dim_numbers = [b, 0, 1, f]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], "
    "pad = [[1, 1], [0, 0]], rhs_dilate = [2, 1]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} "
    ": (tensor<2x4x3x4xf32>, tensor<4x2x2x2xf32>) -> tensor<2x4x4x2xf32>\n"
    "  %p = stablehlo.multiply %z, %cot : tensor<2x4x4x2xf32>\n"
    "  %c = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %s = stablehlo.reduce(%p init: %c) applies stablehlo.add across dimensions = [0, 1, 2, 3] : (tensor<2x4x4x2xf32>, tensor<f32>) -> tensor<f32>\n"
    "  return %s : tensor<f32>\n}\n", 24);
}
Test(grad, imported_pooling_and_transposed_convolution) {
  /* max pool 2x2 stride 2, a 'SAME' sum pool, a transposed convolution (input dilation), a strided slice and interior padding */
  fd_check_mlir(
    "func.func @main(%x: tensor<1x6x4x2xf32>, %k: tensor<2x2x2x3xf32>, %cot: tensor<1x4x4x3xf32>) -> tensor<f32> {\n"
    "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
    "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %m = \"stablehlo.reduce_window\"(%x, %ninf) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({\n"
    "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n    %r = stablehlo.maximum %a, %b : tensor<f32>\n    stablehlo.return %r : tensor<f32>\n"
    "  }) : (tensor<1x6x4x2xf32>, tensor<f32>) -> tensor<1x3x2x2xf32>\n"
    "  %s = \"stablehlo.reduce_window\"(%m, %zero) <{padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, "
    "window_dimensions = array<i64: 1, 3, 3, 1>}> ({\n"
    "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n    %r = stablehlo.add %a, %b : tensor<f32>\n    stablehlo.return %r : tensor<f32>\n"
    "  }) : (tensor<1x3x2x2xf32>, tensor<f32>) -> tensor<1x3x2x2xf32>\n"
    "  %u = stablehlo.convolution(%s, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], "
    "pad = [[1, 1], [1, 1]], lhs_dilate = [2, 2], reverse = [true, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} "
    ": (tensor<1x3x2x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x6x4x3xf32>\n"
    "  %v = stablehlo.slice %u [0:1, 0:6:2, 0:4, 0:3] : (tensor<1x6x4x3xf32>) -> tensor<1x3x4x3xf32>\n"
    "  %w = stablehlo.pad %v, %zero, low = [0, 0, 0, 0], high = [0, 0, 0, 0], interior = [0, 0, 0, 0] : (tensor<1x3x4x3xf32>, tensor<f32>) -> tensor<1x3x4x3xf32>\n"
    "  %w2 = stablehlo.pad %w, %zero, low = [0, 0, 0, 0], high = [0, -1, 0, 0], interior = [0, 1, 0, 0] : (tensor<1x3x4x3xf32>, tensor<f32>) -> tensor<1x4x4x3xf32>\n"
    "  %p = stablehlo.multiply %w2, %cot : tensor<1x4x4x3xf32>\n"
    "  %t = stablehlo.reduce(%p init: %zero) applies stablehlo.add across dimensions = [0, 1, 2, 3] : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<f32>\n"
    "  return %t : tensor<f32>\n}\n", 24);
}
Test(grad, imported_cond_at_run_time) {
  /* lax.cond on a predicate computed from the parameters: both branches run, select takes one; the
     gradient flows into the branch taken (which one depends on the seed: each is checked by one of the two) */
  for (int flip = 0; flip < 2; flip++) {
    char src[2048];
    snprintf(src, sizeof src,
      "func.func @main(%%x: tensor<6xf32>, %%cot: tensor<6xf32>) -> tensor<f32> {\n"
      "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %%s = stablehlo.reduce(%%x init: %%z) applies stablehlo.add across dimensions = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<f32>\n"
      "  %%p = stablehlo.compare  %s, %%s, %%z,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "  %%r = \"stablehlo.if\"(%%p) ({\n    %%a = stablehlo.multiply %%x, %%x : tensor<6xf32>\n    stablehlo.return %%a : tensor<6xf32>\n"
      "  }, {\n    %%a = stablehlo.sine %%x : tensor<6xf32>\n    stablehlo.return %%a : tensor<6xf32>\n  }) : (tensor<i1>) -> tensor<6xf32>\n"
      "  %%m = stablehlo.multiply %%r, %%cot : tensor<6xf32>\n"
      "  %%t = stablehlo.reduce(%%m init: %%z) applies stablehlo.add across dimensions = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<f32>\n"
      "  return %%t : tensor<f32>\n}\n", flip ? "LE" : "GT");
    fd_check_mlir(src, 12);
  }
}
Test(grad, imported_variadic_reduce) {
  /* jnp.max with its argmax, as a reduce of (value, index) pairs with JAX's region: the gradient
     reaches the maximum of each row through the region's selects; and a product reduction */
  fd_check_mlir(
    "func.func @main(%x: tensor<3x5xf32>, %cot: tensor<3xf32>) -> tensor<f32> {\n"
    "  %iota = stablehlo.iota dim = 1 : tensor<3x5xi32>\n"
    "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r:2 = stablehlo.reduce(%x init: %ninf), (%iota init: %c0) across dimensions = [1] : "
    "(tensor<3x5xf32>, tensor<3x5xi32>, tensor<f32>, tensor<i32>) -> (tensor<3xf32>, tensor<3xi32>)\n"
    "   reducer(%a: tensor<f32>, %c: tensor<f32>) (%b: tensor<i32>, %d: tensor<i32>)  {\n"
    "    %4 = stablehlo.compare  GT, %a, %c,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
    "    %7 = stablehlo.compare  EQ, %a, %c,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
    "    %8 = stablehlo.compare  LT, %b, %d,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    %9 = stablehlo.and %7, %8 : tensor<i1>\n"
    "    %10 = stablehlo.or %4, %9 : tensor<i1>\n"
    "    %11 = stablehlo.select %4, %a, %c : tensor<i1>, tensor<f32>\n"
    "    %12 = stablehlo.select %10, %b, %d : tensor<i1>, tensor<i32>\n"
    "    stablehlo.return %11, %12 : tensor<f32>, tensor<i32>\n"
    "  }\n"
    "  %one = stablehlo.constant dense<1.0> : tensor<f32>\n"
    "  %p = stablehlo.reduce(%x init: %one) applies stablehlo.multiply across dimensions = [1] : (tensor<3x5xf32>, tensor<f32>) -> tensor<3xf32>\n"
    "  %s = stablehlo.add %r#0, %p : tensor<3xf32>\n"
    "  %m = stablehlo.multiply %s, %cot : tensor<3xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %t = stablehlo.reduce(%m init: %z) applies stablehlo.add across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>\n"
    "  return %t : tensor<f32>\n}\n", 15);
}
/* gather and scatter-add, each the other's adjoint, with windows, batching
** dims, clamped starts, elements outside the operand, repeated indices
** (whose contributions add up) and indices with and without a vector dim */
Test(grad, gather_rows_windows_and_batching) {
  fd_ids = 3;     /* indices in [0, 3): a window of 2 from 3 or 4 fits or is clamped */
  fd_check(M("param x : f32[4, 3, 3]\n input i : i32[6, 2]\n input j : i32[3, 2]\n input cot : f32[6, 2, 3]\n input cot2 : f32[3, 4, 1]\n"
             " rows = gather(x, i, offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0, 1], index_vector_dim = 1,\n"
             "               slice_sizes = [1, 2, 3])\n"
             " pts = gather(x, j, offset_dims = [1, 2], collapsed_slice_dims = [1], start_index_map = [1, 2], index_vector_dim = 1,\n"
             "              slice_sizes = [4, 1, 1], operand_batching_dims = [], start_indices_batching_dims = [])\n"
             " out = add(sum(mul(pts, cot2)), mul(rows, cot))"), 60, 1e-2, 2e-2);
  fd_ids = 7;
}
Test(grad, gather_with_batching_dims) {
  fd_ids = 5;     /* take_along_axis: [4, 6] by [4, 1] labels, batched along dim 0 */
  fd_check(M("param x : f32[4, 6]\n input lab : i32[4, 1, 1]\n input cot : f32[4, 1]\n"
             " out = gather(x, lab, offset_dims = [], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 2,\n"
             "              slice_sizes = [1, 1], operand_batching_dims = [0], start_indices_batching_dims = [0])"), 24, 1e-2, 2e-2);
  fd_ids = 7;
}
Test(grad, scatter_add_operand_and_updates) {
  fd_ids = 9;     /* starts in [0, 9) into 6 rows: some updates fall outside and are skipped */
  fd_check(M("param x : f32[6, 3]\n param u : f32[5, 3]\n input i : i32[5]\n input cot : f32[6, 3]\n"
             " out = scatter(mul(x, x), i, mul(u, u), update_window_dims = [1], inserted_window_dims = [0],\n"
             "               scatter_dims_to_operand_dims = [0], index_vector_dim = 1)"), 40, 1e-2, 2e-2);
  fd_ids = 7;
}

Test(grad, imported_take_along_axis) {
  /* optax's softmax cross-entropy with integer labels: log-probabilities picked by take_along_axis (a
     gather with batching dims); the labels are a constant here, so every float argument is a parameter */
  fd_check_mlir(
    "func.func @main(%x: tensor<4x6xf32>) -> tensor<f32> {\n"
    "  %lab = stablehlo.constant dense<[[[5]], [[0]], [[2]], [[2]]]> : tensor<4x1x1xi32>\n"
    "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>\n"
    "  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<4xf32>) -> tensor<4x6xf32>\n"
    "  %d = stablehlo.subtract %x, %mb : tensor<4x6xf32>\n"
    "  %e = stablehlo.exponential %d : tensor<4x6xf32>\n"
    "  %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>\n"
    "  %l = stablehlo.log %s : tensor<4xf32>\n"
    "  %lb = stablehlo.broadcast_in_dim %l, dims = [0] : (tensor<4xf32>) -> tensor<4x6xf32>\n"
    "  %lp = stablehlo.subtract %d, %lb : tensor<4x6xf32>\n"
    "  %g = \"stablehlo.gather\"(%lp, %lab) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], "
    "start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, "
    "slice_sizes = array<i64: 1, 1>}> : (tensor<4x6xf32>, tensor<4x1x1xi32>) -> tensor<4x1xf32>\n"
    "  %t = stablehlo.reduce(%g init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x1xf32>, tensor<f32>) -> tensor<f32>\n"
    "  %n = stablehlo.negate %t : tensor<f32>\n"
    "  return %n : tensor<f32>\n}\n", 24);
}
Test(grad, imported_top_k_and_sort) {
  /* lax.top_k (a bitonic network of selects): the gradient reaches the k largest of each row; and a
     sorted copy of the row (jnp.sort) weighted by position */
  fd_check_mlir(
    "func.func @main(%x: tensor<2x6xf32>, %cot: tensor<2x3xf32>, %w: tensor<2x6xf32>) -> tensor<f32> {\n"
    "  %t:2 = chlo.top_k(%x, k = 3) : tensor<2x6xf32> -> (tensor<2x3xf32>, tensor<2x3xi32>)\n"
    "  %m = stablehlo.multiply %t#0, %cot : tensor<2x3xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %a = stablehlo.reduce(%m init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<f32>\n"
    "  %s = \"stablehlo.sort\"(%x) <{dimension = 1 : i64}> ({\n"
    "  ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n"
    "    %c = stablehlo.compare  LT, %p, %q,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
    "    stablehlo.return %c : tensor<i1>\n"
    "  }) : (tensor<2x6xf32>) -> tensor<2x6xf32>\n"
    "  %sw = stablehlo.multiply %s, %w : tensor<2x6xf32>\n"
    "  %b = stablehlo.reduce(%sw init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x6xf32>, tensor<f32>) -> tensor<f32>\n"
    "  %r = stablehlo.add %a, %b : tensor<f32>\n"
    "  return %r : tensor<f32>\n}\n", 12);
}
Test(grad, imported_special_functions) {
  /* chlo.erf_inv (its Newton steps on erf and on log erfc), lgamma and
     digamma (Lanczos's series, and the reflection below 1/2 at negative
     arguments): the derivative of what carve writes is the function's */
  fd_check_mlir(
    "func.func @main(%x: tensor<6xf32>, %y: tensor<6xf32>) -> tensor<f32> {\n"
    "  %t = stablehlo.tanh %x : tensor<6xf32>\n"
    "  %u = stablehlo.tanh %y : tensor<6xf32>\n"
    "  %c9 = stablehlo.constant dense<0.9> : tensor<6xf32>\n"
    "  %c09 = stablehlo.constant dense<0.09> : tensor<6xf32>\n"
    "  %c3 = stablehlo.constant dense<0.3> : tensor<6xf32>\n"
    "  %ch = stablehlo.constant dense<-0.5> : tensor<6xf32>\n"
    "  %c4 = stablehlo.constant dense<0.4> : tensor<6xf32>\n"
    "  %tail0 = stablehlo.multiply %u, %c09 : tensor<6xf32>\n"
    "  %tail = stablehlo.add %tail0, %c9 : tensor<6xf32>\n"
    "  %sq = stablehlo.multiply %x, %x : tensor<6xf32>\n"
    "  %pos = stablehlo.add %sq, %c3 : tensor<6xf32>\n"
    "  %neg0 = stablehlo.multiply %u, %c4 : tensor<6xf32>\n"
    "  %neg = stablehlo.add %neg0, %ch : tensor<6xf32>\n"
    "  %a = chlo.erf_inv %t : tensor<6xf32> -> tensor<6xf32>\n"
    "  %b = chlo.erf_inv %tail : tensor<6xf32> -> tensor<6xf32>\n"
    "  %c = chlo.lgamma %pos : tensor<6xf32> -> tensor<6xf32>\n"
    "  %d = chlo.lgamma %neg : tensor<6xf32> -> tensor<6xf32>\n"
    "  %e = chlo.digamma %pos : tensor<6xf32> -> tensor<6xf32>\n"
    "  %f = chlo.digamma %neg : tensor<6xf32> -> tensor<6xf32>\n"
    "  %s1 = stablehlo.multiply %a, %b : tensor<6xf32>\n"
    "  %s2 = stablehlo.add %c, %d : tensor<6xf32>\n"
    "  %s3 = stablehlo.multiply %e, %f : tensor<6xf32>\n"
    "  %s4 = stablehlo.add %s1, %s2 : tensor<6xf32>\n"
    "  %s5 = stablehlo.add %s4, %s3 : tensor<6xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %r = stablehlo.reduce(%s5 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<f32>\n"
    "  return %r : tensor<f32>\n}\n", 12);
}
Test(grad, imported_reduce_precision_passes_the_gradient) {
  /* JAX's rule, d reduce_precision(x) = dx: finite differences would see
     the rounding's steps, so the gradient is compared with the cotangent */
  arena a;
  arena_init(&a);
  hx hh, *x = &hh;
  cr_assert(hx_build(x, import_text(&a,
    "func.func @main(%x: tensor<8xf32>, %cot: tensor<8xf32>) -> tensor<f32> {\n"
    "  %r = stablehlo.reduce_precision %x, format = e5m2 : tensor<8xf32>\n"
    "  %p = stablehlo.multiply %r, %cot : tensor<8xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %s = stablehlo.reduce(%p init: %z) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>\n"
    "  return %s : tensor<f32>\n}\n")) == 0, "%s", diag_text(&x->d) ? diag_text(&x->d) : "");
  for (int i = 0; i < x->g->nvals; i++)
    if (x->g->vals[i]->kind == IR_PARAM && x->g->vals[i]->init.kind == INIT_NORMAL) x->g->vals[i]->init.a = 1.0;
  cr_assert(grad_build(x->g, &x->d) == 0, "%s", diag_text(&x->d) ? diag_text(&x->d) : "");
  hx_output(x, "grad.x");
  hx_output(x, "grad.cot");
  hx_lower(x);
  hx_init_rest(x, fd_ids);
  hx_run(x);
  const float *gx = hx_get(x, "grad.x"), *gc = hx_get(x, "grad.cot"), *cot = hx_get(x, "cot"), *xv = hx_get(x, "x");
  int rounded = 0;
  for (int k = 0; k < 8; k++) {
    cr_expect(gx[k] == cot[k], "d loss / d x[%d] = %g, not the cotangent %g", k, gx[k], cot[k]);
    rounded += gc[k] != xv[k];     /* the values are rounded to 2 mantissa bits: d loss / d cot is r, not x */
  }
  cr_expect(rounded > 0, "reduce_precision to e5m2 left all 8 values as they were");
  hx_free(x);
  arena_free(&a);
}
Test(grad, imported_chlo_functions) {
  /* chlo.sinh, cosh, atan, asin, acos, asinh, acosh, atanh as carve writes them (in f64, rounded back) */
  fd_check_mlir(
    "func.func @main(%x: tensor<6xf32>, %y: tensor<6xf32>) -> tensor<f32> {\n"
    "  %a = chlo.sinh %x : tensor<6xf32> -> tensor<6xf32>\n"
    "  %b = chlo.cosh %x : tensor<6xf32> -> tensor<6xf32>\n"
    "  %t = stablehlo.tanh %y : tensor<6xf32>\n"
    "  %c = chlo.asin %t : tensor<6xf32> -> tensor<6xf32>\n"
    "  %d = chlo.acos %t : tensor<6xf32> -> tensor<6xf32>\n"
    "  %e = chlo.atanh %t : tensor<6xf32> -> tensor<6xf32>\n"
    "  %f = chlo.asinh %x : tensor<6xf32> -> tensor<6xf32>\n"
    "  %g = chlo.atan %x : tensor<6xf32> -> tensor<6xf32>\n"
    "  %sq = stablehlo.multiply %x, %x : tensor<6xf32>\n"
    "  %two = stablehlo.constant dense<2.0> : tensor<6xf32>\n"
    "  %p = stablehlo.add %sq, %two : tensor<6xf32>\n"
    "  %h = chlo.acosh %p : tensor<6xf32> -> tensor<6xf32>\n"
    "  %s1 = stablehlo.add %a, %b : tensor<6xf32>\n"
    "  %s2 = stablehlo.multiply %c, %d : tensor<6xf32>\n"
    "  %s3 = stablehlo.add %e, %f : tensor<6xf32>\n"
    "  %s4 = stablehlo.multiply %g, %h : tensor<6xf32>\n"
    "  %s5 = stablehlo.add %s1, %s2 : tensor<6xf32>\n"
    "  %s6 = stablehlo.add %s3, %s4 : tensor<6xf32>\n"
    "  %s7 = stablehlo.add %s5, %s6 : tensor<6xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %r = stablehlo.reduce(%s7 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<f32>\n"
    "  return %r : tensor<f32>\n}\n", 12);
}

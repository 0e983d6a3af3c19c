/*
** test_golden.c: every op's output and gradients against PyTorch.
** For a case, inputs CASE.in0.. become params (so autodiff computes their
** gradients), the loss is sum(out * CASE.cot), and carve's out and
** grad.inK must equal CASE.out and CASE.gradK.
*/
#include "harness.h"
#include "runtime/safet.h"

#include <stdio.h>

#define GOLDEN SRCDIR "/tests/data/golden_ops.safetensors"

typedef struct gcase { char name[32]; char expr[96]; double tol; } gcase;

static gcase cases[] = {
  {"add", "add(in0, in1)", 1e-5}, {"sub", "sub(in0, in1)", 1e-5}, {"mul", "mul(in0, in1)", 1e-5},
  {"div", "div(in0, in1)", 1e-5}, {"maximum", "maximum(in0, in1)", 1e-5}, {"minimum", "minimum(in0, in1)", 1e-5},
  {"neg", "neg(in0)", 1e-5}, {"exp", "exp(in0)", 1e-4}, {"log", "log(in0)", 1e-4}, {"sqrt", "sqrt(in0)", 1e-5},
  {"rsqrt", "rsqrt(in0)", 1e-4}, {"tanh", "tanh(in0)", 1e-5}, {"relu", "relu(in0)", 1e-5},
  {"sigmoid", "sigmoid(in0)", 1e-5}, {"silu", "silu(in0)", 1e-5}, {"gelu", "gelu(in0)", 1e-5},
  {"gelu_tanh", "gelu_tanh(in0)", 1e-4}, {"matmul", "matmul(in0, in1)", 1e-5},
  {"matmul_batched", "matmul(in0, in1)", 1e-5},
  {"einsum_qkv", "einsum(\"bsd,dhk->bhsk\", in0, in1)", 1e-5},
  {"einsum_scores", "einsum(\"bhqk,bhtk->bhqt\", in0, in1)", 1e-5},
  {"sum_dims1", "sum(in0, dims = [1])", 1e-5}, {"sum_all", "sum(in0)", 1e-5},
  {"mean_dims02_keep", "mean(in0, dims = [0, 2], keepdims = true)", 1e-5},
  {"max_dims1", "max(in0, dims = [1])", 1e-5}, {"softmax", "softmax(in0)", 1e-5},
  {"log_softmax", "log_softmax(in0)", 1e-5}, {"layernorm", "layernorm(in0, in1, in2)", 1e-4},
  {"causal_mask_softmax", "softmax(causal_mask(in0))", 1e-5},
  {"transpose_201", "transpose(in0, [2, 0, 1])", 1e-6}, {"reshape_split", "reshape(in0, [2, 3, 2, 2])", 1e-6},
  {"embedding", "embedding(in0, in1)", 1e-6}, {"cross_entropy", "cross_entropy(in0, in1)", 1e-5},
};

ParameterizedTestParameters(golden, op) {
  return cr_make_param_array(gcase, cases, sizeof cases / sizeof cases[0]);
}

static void decl(char *buf, size_t n, const st_tensor *t, const char *as, int scalar) {
  size_t k = strlen(buf);
  int isint = t->dtype == ST_I32;
  k += (size_t)snprintf(buf + k, n - k, "  %s %s : %s[", isint || !strcmp(as, "cot") ? "input" : "param", as, isint ? "i32" : "f32");
  for (int i = 0; i < t->rank && !scalar; i++) k += (size_t)snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)t->shape[i]);
  snprintf(buf + k, n - k, "]\n");
}

ParameterizedTest(gcase *c, golden, op) {
  char err[256], name[64], src[2048] = "model golden {\n";
  st_file *f = st_open(GOLDEN, err, sizeof err);
  cr_assert(f, "%s", err);
  snprintf(name, sizeof name, "%s.out", c->name);
  const st_tensor *out = st_find(f, name);
  cr_assert(out, "golden file lacks %s", name);
  int scalar_out = !strcmp(c->name, "cross_entropy") || !strcmp(c->name, "sum_all");
  int nin = 0;
  for (; nin < 4; nin++) {
    snprintf(name, sizeof name, "%s.in%d", c->name, nin);
    const st_tensor *t = st_find(f, name);
    if (!t) break;
    char as[8];
    snprintf(as, sizeof as, "in%d", nin);
    decl(src, sizeof src, t, as, 0);
  }
  snprintf(name, sizeof name, "%s.cot", c->name);
  decl(src, sizeof src, st_find(f, name), "cot", scalar_out);
  snprintf(src + strlen(src), sizeof src - strlen(src), "  out = %s\n  loss = sum(mul(out, cot))\n  return loss\n}\n", c->expr);
  hx h;
  cr_assert(hx_build(&h, src) == 0, "%s\n%s", src, diag_text(&h.d) ? diag_text(&h.d) : "");
  cr_assert(grad_build(h.g, &h.d) == 0, "%s", diag_text(&h.d) ? diag_text(&h.d) : "");
  hx_output(&h, "out");
  for (int k = 0; k < nin; k++) {
    snprintf(name, sizeof name, "in%d", k);
    if (ir_lookup(h.g, name)->kind == IR_PARAM) { snprintf(name, sizeof name, "grad.in%d", k); hx_output(&h, name); }
  }
  hx_lower(&h);
  for (int k = 0; k <= nin; k++) {
    char gname[64], as[8];
    if (k == nin) { snprintf(gname, sizeof gname, "%s.cot", c->name); snprintf(as, sizeof as, "cot"); }
    else { snprintf(gname, sizeof gname, "%s.in%d", c->name, k); snprintf(as, sizeof as, "in%d", k); }
    hx_set(&h, as, st_find(f, gname)->data);
  }
  hx_run(&h);
  double e = hx_relerr(hx_get(&h, "out"), (const float *)out->data, hx_nelem(&h, "out"), 1e-3);
  cr_expect(e <= c->tol, "%s: output differs from PyTorch by %g (relative)", c->name, e);
  for (int k = 0; k < nin; k++) {
    snprintf(name, sizeof name, "%s.grad%d", c->name, k);
    const st_tensor *gt = st_find(f, name);
    if (!gt) continue;
    char gn[16];
    snprintf(gn, sizeof gn, "grad.in%d", k);
    cr_assert_eq(hx_nelem(&h, gn), (int64_t)(gt->nbytes / 4));
    e = hx_relerr(hx_get(&h, gn), (const float *)gt->data, hx_nelem(&h, gn), 1e-3);
    cr_expect(e <= c->tol, "%s: gradient of input %d differs from PyTorch by %g (relative)", c->name, k, e);
  }
  hx_free(&h);
  st_close(f);
}

/* Adam's first three steps, bias-corrected, as torch.optim.Adam computes them. */
Test(golden, adam_three_steps) {
  char err[256];
  st_file *f = st_open(GOLDEN, err, sizeof err);
  cr_assert(f, "%s", err);
  hx h;
  cr_assert(hx_build(&h, "model a {\n param p : f32[4, 3]\n input g : f32[4, 3]\n loss = sum(mul(p, g))\n return loss\n}\n") == 0);
  train_spec t;
  cr_assert(train_parse(&h.mem, "adam(lr = 1e-2)", &t, &h.d) == 0);
  cr_assert(train_build(h.g, &t, &h.d) == 0, "%s", diag_text(&h.d) ? diag_text(&h.d) : "");
  hx_lower(&h);
  hx_set(&h, "p", st_find(f, "adam.p0")->data);
  hx_init_rest(&h, 1);
  for (int s = 1; s <= 3; s++) {
    char nm[32];
    snprintf(nm, sizeof nm, "adam.g%d", s);
    hx_set(&h, "g", st_find(f, nm)->data);
    hx_run(&h);
    rt_exec_carry(h.e);
    snprintf(nm, sizeof nm, "adam.p%d", s);
    double e = hx_relerr(hx_get(&h, "p"), (const float *)st_find(f, nm)->data, 12, 1e-3);
    cr_expect(e <= 1e-5, "step %d: parameters differ from torch.optim.Adam by %g", s, e);
  }
  cr_expect(hx_relerr(hx_get(&h, "adam.m.p"), (const float *)st_find(f, "adam.m3")->data, 12, 1e-3) <= 1e-5);
  cr_expect(hx_relerr(hx_get(&h, "adam.v.p"), (const float *)st_find(f, "adam.v3")->data, 12, 1e-3) <= 1e-5);
  hx_free(&h);
  st_close(f);
}

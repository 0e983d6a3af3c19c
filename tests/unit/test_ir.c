/*
** test_ir.c: building the IR: shape rules and their messages, repeat
** expansion, generated names, the printer's round trip, training steps.
*/
#include "harness.h"

#include <stdio.h>

typedef struct bad { char body[400]; char expect[160]; } bad;

/* Each body is a model's statements; expect is a substring of the first line. */
static bad bads[] = {
  {"input a : f32[2, 3]\n input b : f32[4, 5]\n y = matmul(a, b)", "4:6: error: matmul: inner dims differ (3 vs 4)"},
  {"input a : f32[2, 3]\n input b : f32[3, 2]\n y = add(a, b)", "add: shapes [2, 3] and [3, 2] do not broadcast"},
  {"input a : f32[2, 3]\n y = einsum(\"ab,bc->ac\", a, a)", "einsum: label 'b' is 3 in one place and 2 in 'a'"},
  {"input a : f32[2, 3]\n y = einsum(\"abc,bc->a\", a, a)", "einsum: operand 1 ('a') has rank 2 but the spec \"abc,bc->a\" gives it 3 labels"},
  {"input a : f32[2, 3]\n y = einsum(\"ab,bc->az\", a, a)", "result label 'z' appears in no operand"},
  {"input a : f32[2, 3]\n y = einsum(\"aa,bc->a\", a, a)", "label 'a' repeats in the first operand"},
  {"input a : f32[2, 3]\n y = sum(a, dims = [2])", "sum: dim 2 is out of range for rank 2 (use -2..1)"},
  {"input a : f32[2, 3]\n y = sum(a, dims = [0, -2])", "sum: dim 0 is listed twice"},
  {"input a : f32[2, 3]\n y = reshape(a, [4, 2])", "reshape: 'a' has 6 elements ([2, 3]) but the target [4, 2] has 8"},
  {"input a : f32[2, 3]\n y = transpose(a, [0, 0])", "transpose: axis 0 appears twice in the permutation"},
  {"input a : f32[2, 3]\n y = transpose(a, [1, 0, 2])", "transpose: the permutation has 3 entries but 'a' has rank 2"},
  {"input a : f32[2, 3]\n y = slice(a, 1, 2, 5)", "slice: [2, 5) is not a non-empty range inside dim 1 of 'a' (size 3)"},
  {"input a : f32[2, 3]\n input b : f32[2, 4]\n y = concat([a, b], 0)", "concat: 'a' [2, 3] and 'b' [2, 4] differ in dim 1"},
  {"input t : f32[10, 4]\n input ids : f32[3]\n y = embedding(t, ids)", "embedding: the ids 'ids' must be i32, not f32"},
  {"input z : f32[2, 10]\n input y : i32[3]\n l = cross_entropy(z, y)", "cross_entropy: labels 'y' have shape [3] but logits [2, 10] want [2]"},
  {"input x : f32[2, 8]\n param g : f32[4]\n param b : f32[8]\n y = layernorm(x, g, b)", "layernorm: gamma 'g' has shape [4] but must be [8]"},
  {"input x : f32[8]\n y = causal_mask(x)", "causal_mask: 'x' has shape [8]; it needs rank >= 2"},
  {"input x : f32[8]\n y = softmax(x, dim = 1)", "softmax: dim 1 is out of range for rank 1"},
  {"input x : i32[8]\n y = exp(x)", "exp: operand 1 ('x') is i32; this op needs floating-point values"},
  {"input x : f32[8]\n y = sofmax(x)", "unknown op 'sofmax'; did you mean 'softmax'?"},
  {"input x : f32[8]\n y = reduce_sum(x)", "unknown op 'reduce_sum'; did you mean 'sum'?"},
  {"input x : f32[8]\n y = frobnicate(x)", "unknown op 'frobnicate' (carve check --help lists the ops)"},
  {"input x : f32[8]\n y = softmax(x, axis = 0)", "softmax has no argument 'axis'; it takes softmax(x, dim = ..)"},
  {"input x : f32[8]\n y = slice(x, 0, 1)", "slice: missing argument 'end'"},
  {"input x : f32[8]\n y = exp(z)", "unknown value 'z'; values must be defined before use"},
  {"input x : f32[8]\n x = exp(x)", "'x' is already defined; each name is assigned once"},
  {"input x : q8[8]", "unknown type 'q8'; use f32, bf16, f16, f64, i64, i32, i16, i8, ui32, ui16, ui8 or i1"},
  {"input x : f32[4294967296, 4294967296]", "'x' would have more than 2^62 elements"},
  {"param x : f32[8] = normal(-1)", "normal(std): std must be a non-negative number"},
  {"param x : f32[8] = gaussian(1)", "unknown initializer; use normal(std), zeros, ones or uniform(lo, hi)"},
  {"input x : f32[8]\n repeat i in 0..2 {\n y{i+j} = exp(x)\n }", "'j' in a name template is not a repeat index here"},
  {"input x : f32[8]\n y{i} = exp(x)", "templates only work inside repeat blocks"},
  {"input x : f32[8]\n y = exp(x)\n return y, y", "'y' is returned twice"},
  {"input x : f32[2, 3]\n y = matmul(x, [1, 2])", "a list is not a value here"},
  {"input x : f32[2, 3]\n y = x", "the right side of 'y = ...' must be an op call"},
};

ParameterizedTestParameters(ir, shape_errors) {
  return cr_make_param_array(bad, bads, sizeof bads / sizeof bads[0]);
}

ParameterizedTest(bad *b, ir, shape_errors) {
  char src[800];
  int has_ret = strstr(b->body, "return") != NULL;
  snprintf(src, sizeof src, "model m {\n %s\n%s}\n", b->body, has_ret ? "" : " return x\n");
  hx h;
  int rc = hx_build(&h, src);
  cr_assert(rc < 0, "accepted:\n%s", src);
  cr_assert(diag_text(&h.d) && strstr(diag_text(&h.d), b->expect), "for:\n%s\nwanted '%s' in:\n%s", src, b->expect, diag_text(&h.d) ? diag_text(&h.d) : "(nothing)");
  cr_assert(!strncmp(diag_text(&h.d), "test.cir:", 9), "the first line must be located: %s", diag_text(&h.d));
  hx_free(&h);
}

/* an empty dim is kept (StableHLO programs have them, import -o writes them), with a warning naming it */
Test(ir, an_empty_dim_is_named_in_a_warning) {
  hx h;
  cr_assert(hx_build(&h, "model m {\n input x : f32[4, 4, 0]\n y = tanh(x)\n return y\n}\n") == 0, "%s", diag_text(&h.d));
  cr_assert(strstr(diag_text(&h.d), "test.cir:2:22: warning: dimension 2 of 'x' is empty (size 0)"), "%s", diag_text(&h.d));
  cr_assert_eq(ir_nelem(&ir_lookup(h.g, "y")->shape), 0);
  hx_free(&h);
}

Test(ir, repeat_expands_templates_and_names_nested_calls) {
  hx h;
  cr_assert(hx_build(&h, "model m {\n input x0 : f32[4, 8]\n repeat i in 0..3 {\n param w{i} : f32[8, 8]\n"
                         "  x{i+1} = tanh(add(matmul(x{i}, w{i}), 1))\n }\n loss = sum(x3)\n return loss\n}\n") == 0,
            "%s", diag_text(&h.d));
  cr_assert(ir_lookup(h.g, "w2") && ir_lookup(h.g, "x3"));
  cr_assert(!ir_lookup(h.g, "w3"));
  ir_value *m = ir_lookup(h.g, "x2.matmul");
  cr_assert(m && m->op == IR_MATMUL, "nested calls are named after their statement");
  cr_assert(ir_lookup(h.g, "x2.add"));
  cr_assert_eq(ir_lookup(h.g, "x2")->op, IR_TANH);
  int line, col;
  diag_linecol(m->at.src, m->at.off, &line, &col);
  cr_assert_eq(line, 5, "the generated value keeps the place of its call");
  hx_free(&h);
}

Test(ir, attributes_are_normalized) {
  hx h;
  cr_assert(hx_build(&h, "model m {\n input x : f32[2, 3, 4]\n a = sum(x, dims = [-1, 0])\n b = softmax(x)\n c = reshape(x, [-1, 4])\n return a, b, c\n}\n") == 0);
  ir_value *a = ir_lookup(h.g, "a"), *b = ir_lookup(h.g, "b"), *c = ir_lookup(h.g, "c");
  cr_assert_eq(a->attr.ndims, 2);
  cr_assert_eq(a->attr.dims[0], 0);
  cr_assert_eq(a->attr.dims[1], 2);
  cr_assert_eq(a->shape.rank, 1);
  cr_assert_eq(a->shape.d[0], 3);
  cr_assert_eq(b->attr.dim, 2);
  cr_assert_eq(c->shape.d[0], 6);
  hx_free(&h);
}


/* print(build(text)) parses back to a graph that prints the same, value for value */
static void round_trip(const char *text, const char *train) {
  hx a, b;
  cr_assert(hx_build(&a, text) == 0, "%s", diag_text(&a.d));
  if (train) {
    train_spec t;
    cr_assert(train_parse(&a.mem, train, &t, &a.d) == 0);
    cr_assert(train_build(a.g, &t, &a.d) == 0, "%s", diag_text(&a.d));
  }
  arena m;
  arena_init(&m);
  char *p1 = ir_print(a.g, &m);
  cr_assert(hx_build(&b, p1) == 0, "printed text does not parse back:\n%s", diag_text(&b.d));
  char *p2 = ir_print(b.g, &m);
  cr_assert_str_eq(p1, p2);
  int nops = 0;
  for (int i = 0; i < a.g->nvals; i++) {
    ir_value *x = a.g->vals[i];
    if (x->kind == IR_CONST) continue;
    ir_value *y = ir_lookup(b.g, x->name);
    cr_assert(y, "'%s' lost in the round trip", x->name);
    cr_assert_eq(x->op, y->op);
    cr_assert(ir_shape_eq(&x->shape, &y->shape));
    cr_assert_eq(x->dtype, y->dtype);
    cr_assert_eq(x->nargs, y->nargs);
    for (int k = 0; k < x->nargs; k++) {
      ir_value *xa = a.g->vals[x->args[k]], *ya = b.g->vals[y->args[k]];
      if (xa->kind == IR_CONST) cr_assert_eq(xa->attr.scalar, ya->attr.scalar);
      else cr_assert_str_eq(xa->name, ya->name);
    }
    nops += x->kind == IR_OP;
  }
  cr_assert(nops > 0);
  arena_free(&m);
  hx_free(&a);
  hx_free(&b);
}

Test(ir, round_trip_examples) {
  const char *ex[] = {"mlp.cir", "mlp_small.cir", "gpt2_small.cir", "gpt2.cir"};
  for (size_t i = 0; i < sizeof ex / sizeof *ex; i++) {
    char rel[256];
    snprintf(rel, sizeof rel, "examples/%s", ex[i]);
    char *t = hx_slurp(rel);
    round_trip(t, NULL);
    free(t);
  }
}

Test(ir, round_trip_training_step_ops) {
  char *t = hx_slurp("examples/gpt2_small.cir");
  /* states print as params; the backward ops (internal ops included) must parse back */
  hx a;
  cr_assert(hx_build(&a, t) == 0);
  cr_assert(grad_build(a.g, &a.d) == 0, "%s", diag_text(&a.d));
  arena m;
  arena_init(&m);
  char *p1 = ir_print(a.g, &m);
  hx b;
  cr_assert(hx_build(&b, p1) == 0, "%s", diag_text(&b.d));
  cr_assert_str_eq(p1, ir_print(b.g, &m));
  arena_free(&m);
  hx_free(&a);
  hx_free(&b);
  free(t);
}

Test(ir, adam_step_names) {
  hx h;
  cr_assert(hx_build(&h, "model m {\n param w : f32[4, 4]\n input x : f32[2, 4]\n loss = sum(matmul(x, w))\n return loss\n}\n") == 0);
  train_spec t;
  cr_assert(train_parse(&h.mem, "adam(lr = 1e-3, beta2 = 0.99)", &t, &h.d) == 0);
  cr_assert(train_build(h.g, &t, &h.d) == 0, "%s", diag_text(&h.d));
  const char *names[] = {"grad.w", "adam.m.w", "adam.v.w", "new.w", "new.adam.m.w", "new.adam.v.w", "adam.step", "new.adam.step"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) cr_assert(ir_lookup(h.g, names[i]), "missing %s", names[i]);
  cr_assert_eq(ir_lookup(h.g, "grad.w")->role, ROLE_GRAD);
  cr_assert_eq(ir_lookup(h.g, "adam.m.w")->kind, IR_STATE);
  cr_assert_str_eq(h.g->vals[h.g->outputs[0]]->name, "loss");
  cr_assert_eq(ir_lookup(h.g, "new.w")->carry, ir_lookup(h.g, "w")->id);
  cr_assert_eq(ir_lookup(h.g, "new.adam.v.w")->carry, ir_lookup(h.g, "adam.v.w")->id);
  hx_free(&h);
}

Test(ir, train_errors) {
  typedef struct { const char *model, *train, *expect; } te;
  te cases[] = {
    {"model m {\n input x : f32[4]\n param w : f32[4]\n y = mul(x, w)\n return y\n}\n", "sgd(lr = 0.1)", "needs a scalar f32 or f64 loss; 'y' is f32[4]"},
    {"model m {\n input x : bf16[4]\n param w : bf16[4]\n y = sum(mul(x, w))\n return y\n}\n", "sgd(lr = 0.1)",
     "needs an f32 or f64 loss; 'y' is bf16 (return an f32 one, 'y32 = convert(y, f32)'"},
    {"model m {\n input x : f32[4]\n loss = sum(x)\n return loss\n}\n", "sgd(lr = 0.1)", "has no param to train"},
    {"model m {\n input x : f32[4]\n param w : f32[4]\n loss = sum(x)\n return loss\n}\n", "sgd(lr = 0.1)", "does not depend on any param"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    hx h;
    cr_assert(hx_build(&h, cases[i].model) == 0);
    train_spec t;
    int rc = train_parse(&h.mem, cases[i].train, &t, &h.d);
    if (rc == 0) rc = train_build(h.g, &t, &h.d);
    cr_assert(rc < 0, "case %zu accepted", i);
    cr_assert(strstr(diag_text(&h.d), cases[i].expect), "wanted '%s' in: %s", cases[i].expect, diag_text(&h.d));
    hx_free(&h);
  }
}

/* --train is read by the tactic language: each mistake is one located error
** with the option's text and a caret under the place. */
Test(ir, train_option_errors_have_a_caret) {
  typedef struct { const char *train, *expect; } te;
  te cases[] = {
    {"adam(lr = 1e-3, beta9 = 2)", "--train:1:17: error: adam has no argument beta9 (lr, beta1, beta2, eps, weight_decay, remat, precision, loss_scale)\n"
                                   "  adam(lr = 1e-3, beta9 = 2)\n                  ^\n"},
    {"adagrad(lr = 1)", "--train:1:1: error: unknown optimizer 'adagrad'; use sgd(lr = 0.01, momentum = 0.9), adam(lr = 1e-3) or adamw(lr = 3e-4, weight_decay = 0.1)\n"},
    {"adam(lr = 1, beta1 = 1.5)", "--train:1:22: error: beta1 must be in [0, 1)\n  adam(lr = 1, beta1 = 1.5)\n                       ^\n"},
    {"sgd(rate = 1)", "--train:1:5: error: sgd has no argument rate (lr, momentum, weight_decay, remat, precision, loss_scale)\n"},
    {"sgd(lr = -1)", "--train:1:10: error: lr must be positive\n"},
    {"sgd(lr = \"a\")", "--train:1:10: error: lr takes a number, as in sgd(lr = 0.01, momentum = 0.9)\n"},
    {"adam(lr = 1e-3, lr = 2)", "--train:1:17: error: argument 'lr' is given twice\n"},
    {"adam(lr = 1e-3", "--train:1:15: error: unexpected end of input, expected ')' to close the arguments\n"},
    {"adam(lr = 0x10)", "--train:1:11: error: hexadecimal numbers are not taken"},
    {"sgd lr", "--train:1:5: error: unexpected 'lr', expected '(' or end of input\n"},
    {"sgd(momentum = 1)", "--train:1:16: error: momentum must be in [0, 1)\n"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    arena a;
    diag d;
    arena_init(&a);
    diag_init(&d);
    train_spec t;
    cr_assert(train_parse(&a, cases[i].train, &t, &d) < 0, "'%s' accepted", cases[i].train);
    cr_assert_eq(d.nerrors, 1, "%s", diag_text(&d));
    cr_assert(!strncmp(diag_text(&d), cases[i].expect, strlen(cases[i].expect)), "for %s wanted:\n%s\ngot:\n%s", cases[i].train, cases[i].expect, diag_text(&d));
    diag_free(&d);
    arena_free(&a);
  }
  /* torch.optim's defaults where a setting is left out */
  arena a;
  diag d;
  arena_init(&a);
  diag_init(&d);
  train_spec t;
  cr_assert(train_parse(&a, "adam", &t, &d) == 0, "%s", diag_text(&d));
  cr_assert(t.kind == TRAIN_ADAM && t.lr == 1e-3 && t.beta1 == 0.9 && t.beta2 == 0.999 && t.eps == 1e-8 && t.weight_decay == 0);
  cr_assert(train_parse(&a, "sgd(lr = 0.5, momentum = 0.9, weight_decay = 1e-4)", &t, &d) == 0, "%s", diag_text(&d));
  cr_assert(t.kind == TRAIN_SGD && t.lr == 0.5 && t.momentum == 0.9 && t.weight_decay == 1e-4);
  diag_free(&d);
  arena_free(&a);
}

Test(ir, model_selection) {
  hx h;
  const char *two = "model a {\n input x : f32[2]\n return x\n}\nmodel b {\n input x : f32[3]\n return x\n}\n";
  cr_assert(hx_build(&h, two) < 0);
  cr_assert(strstr(diag_text(&h.d), "has 2 models (a, b); pick one with --model NAME"), "%s", diag_text(&h.d));
  hx_free(&h);
  arena m;
  arena_init(&m);
  diag d;
  diag_init(&d);
  cir_file *f = cir_parse(&m, &d, diag_src_string(&m, "two.cir", two, strlen(two)));
  cr_assert(f);
  ir_graph *g = build_model(f, "b", &d);
  cr_assert(g && ir_lookup(g, "x")->shape.d[0] == 3);
  ir_graph_free(g);
  cr_assert_null(build_model(f, "c", &d));
  cr_assert(strstr(diag_text(&d), "has no model 'c' (it has: a, b)"));
  diag_free(&d);
  arena_free(&m);
}

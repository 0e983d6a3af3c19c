/*
** test_pipeline_fuzz.c: broken inputs of every kind go through the whole
** pipeline (parse, build, autodiff, tactics, propagation, lowering) and
** end either in a program or in exactly one first error that names its
** place. Nothing may crash, hang or leak (the suite also runs under ASan).
** Mutations are deterministic: the same inputs every run.
*/
#include "harness.h"
#include "interp/tactic/tactic.h"

#include <stdio.h>

static uint64_t rng = 88172645463325252ull;
static int n_ok, n_failed;     /* both must happen, or the mutations test nothing */
static uint64_t next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }


static const char *pieces[] = {
  "0", "1", "-1", "3", "7", "4096", "99999999999", "1e9", "0.5", "[", "]", "(", ")", "{", "}", ",", "=",
  "x", "w", "l{i}", "{i+1}", "dims = [0]", "dim = -1", "keepdims = true", "repeat i in 0..3 {", "param q : f32[2]",
  "input ids : i32[4, 32]", "\"ab,bc->ac\"", "matmul(", "einsum(\"bsd,dhk->bhsk\", ", "sum(", "softmax(", "reshape(x, [-1])",
  "transpose(x, [1, 0])", "slice(x, 0, 1, 2)", "concat([x, x], 0)", "embedding(", "cross_entropy(", "layernorm(",
  "shard", "replicate", "param", "params", "value \"*\"", "dim 0", "dim largest", "on batch", "on model", "mesh model = 3",
  "schedule", "use \"zero\" as z (axis = batch, stage = 4)", "tactic t { }", "\n", " ", "#", "\x01", "\xff"
};

/* A copy of text with a few random edits: a piece inserted, a span cut, a line doubled. */
static char *mutate(const char *text) {
  size_t n = strlen(text), cap = n * 2 + 4096;
  char *s = malloc(cap);
  memcpy(s, text, n + 1);
  int edits = 1 + (int)(next() % 3);
  for (int e = 0; e < edits; e++) {
    size_t at = n ? next() % n : 0;
    switch (next() % 4) {
    case 0: {                                            /* insert a piece */
      const char *p = pieces[next() % (sizeof pieces / sizeof *pieces)];
      size_t k = strlen(p);
      if (n + k + 1 >= cap) break;
      memmove(s + at + k, s + at, n - at + 1);
      memcpy(s + at, p, k);
      n += k;
      break;
    }
    case 1: {                                            /* cut a span */
      size_t k = 1 + next() % 12;
      if (at + k > n) k = n - at;
      memmove(s + at, s + at + k, n - at - k + 1);
      n -= k;
      break;
    }
    case 2: {                                            /* double the line holding at */
      size_t b = at, en = at;
      while (b > 0 && s[b - 1] != '\n') b--;
      while (en < n && s[en] != '\n') en++;
      size_t k = en - b + 1;
      if (n + k + 1 >= cap || en >= n) break;
      memmove(s + en + 1 + k - 1, s + en + 1 - 1 + 1, n - en);
      memmove(s + en + 1, s + b, k - 1);
      s[en + k] = '\n';
      n += k;
      s[n] = 0;
      break;
    }
    default:                                             /* change one digit */
      for (size_t i = at; i < n; i++)
        if (s[i] >= '0' && s[i] <= '9') { s[i] = (char)('0' + next() % 10); break; }
    }
  }
  s[n] = 0;
  return s;
}

/* Every stage either succeeds or leaves one located first error. */
static void pipeline(const char *model, const char *tactics, const char *train) {
  arena m;
  arena_init(&m);
  diag d;
  diag_init(&d);
  ir_graph *g = NULL;
  sh_plan *p = NULL;
  int ok = 0;
  cir_file *f = cir_parse(&m, &d, diag_src_string(&m, "m.cir", model, strlen(model)));
  if (f && (g = build_model(f, NULL, &d))) {
    train_spec t;
    int trained = !train || (train_parse(&m, train, &t, &d) == 0 && train_build(g, &t, &d) == 0);
    if (trained && tactics) {
      tac_file *tf = tac_parse(&m, &d, diag_src_string(&m, "t.tac", tactics, strlen(tactics)));
      tactic_opts o = {0};
      if (tf) p = tactic_apply(g, tf, &o, &m, &d);
      trained = p != NULL;
    }
    if (trained) {
      rt_prog prog;
      lower_result lr;
      if (lower_program(g, p, &prog, &lr, &d) == 0) { ok = 1; lower_result_free(&lr); rt_prog_free(&prog); }
    }
  }
  if (ok) n_ok++; else n_failed++;
  if (!ok) {
    cr_assert(d.nerrors >= 1 && diag_text(&d), "a failure without a message for:\n%s\n%s", model, tactics ? tactics : "");
    cr_assert(!strncmp(diag_text(&d), "m.cir:", 6) || !strncmp(diag_text(&d), "t.tac:", 6) || !strncmp(diag_text(&d), "carve: error:", 13),
              "the first line must name its place: %.200s", diag_text(&d));
    cr_assert(strstr(diag_text(&d), "internal error") == NULL, "an internal error: %s\nfor:\n%s\n%s", diag_text(&d), model, tactics ? tactics : "");
  }
  shard_free(p);
  ir_graph_free(g);
  diag_free(&d);
  arena_free(&m);
}

Test(pipeline_fuzz, mutated_models, .timeout = 240) {
  const char *files[] = {"examples/mlp_small.cir", "examples/gpt2_small.cir", "tests/data/chain.cir"};
  for (size_t fi = 0; fi < sizeof files / sizeof *files; fi++) {
    char *text = hx_slurp(files[fi]);
    for (int i = 0; i < 150; i++) {
      char *s = mutate(text);
      pipeline(s, NULL, i % 2 ? "adam(lr = 1e-3)" : NULL);
      free(s);
    }
    free(text);
  }
  cr_log_info("mutated models: %d built, %d refused", n_ok, n_failed);
  cr_assert(n_ok > 10 && n_failed > 100, "mutations: %d built, %d refused", n_ok, n_failed);
}

Test(pipeline_fuzz, mutated_tactics, .timeout = 240) {
  const char *tacs[] = {"examples/gpt2_small.tac", "examples/gpt2_small_bp_mp_z2.tac", "examples/gpt2_small_bp.tac"};
  char *model = hx_slurp("examples/gpt2_small.cir");
  for (size_t ti = 0; ti < sizeof tacs / sizeof *tacs; ti++) {
    char *text = hx_slurp(tacs[ti]);
    for (int i = 0; i < 60; i++) {
      char *s = mutate(text);
      pipeline(model, s, "adam(lr = 1e-3)");
      free(s);
    }
    free(text);
  }
  free(model);
  cr_log_info("mutated tactics: %d applied, %d refused", n_ok, n_failed);
  cr_assert(n_ok > 10 && n_failed > 30, "mutations: %d applied, %d refused", n_ok, n_failed);
}

Test(pipeline_fuzz, binary_garbage) {
  for (int i = 0; i < 200; i++) {
    char buf[300];
    size_t n = 1 + next() % (sizeof buf - 1);
    for (size_t k = 0; k < n; k++) buf[k] = (char)(next() & 0xff);
    buf[n - 1] = 0;
    pipeline(buf, NULL, NULL);
    pipeline("model m {\n input x : f32[8, 4]\n return x\n}\n", buf, NULL);
  }
}

Test(pipeline_fuzz, runaway_repeat_is_refused) {
  hx h;
  int rc = hx_build(&h, "model m {\n repeat i in 0..100000 {\n repeat j in 0..100000 {\n param p{i}.{j} : f32[2]\n }\n }\n input x : f32[2]\n return x\n}\n");
  cr_assert(rc < 0);
  cr_assert(strstr(diag_text(&h.d), "more than 4000000 values"), "%s", diag_text(&h.d));
  hx_free(&h);
}

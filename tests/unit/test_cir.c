/*
** test_cir.c: the model-file parser (lang/cir_*): trees, offsets, error
** messages with their places, bounded nesting, garbage input, and the
** syntax cases of the tests/errors corpus.
*/
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lang/cir.h"
#include "parsetest.h"

static arena A;
static diag D;

static void setup(void) { arena_init(&A); diag_init(&D); }
static void teardown(void) { diag_free(&D); arena_free(&A); }

TestSuite(cir, .init = setup, .fini = teardown);

static const diag_src *src_of(const char *text, size_t len) {
  return diag_src_string(&A, "t.cir", text, len);
}

static cir_file *parse(const char *text) {
  return cir_parse(&A, &D, src_of(text, strlen(text)));
}

/* Parse text that must be valid. */
static cir_file *ok(const char *text) {
  cir_file *f = parse(text);
  cr_assert_not_null(f, "parse failed:\n%s", diag_text(&D) ? diag_text(&D) : "(no message)");
  cr_assert_eq(D.nerrors, 0);
  return f;
}

static const char *first_line(void) { return pt_first_line(&D); }

/* ---- trees ---- */

static const char mlp_text[] =
  "# two-layer MLP\n"
  "model mlp {\n"
  "  input x  : f32[2048, 768]\n"
  "  param w1 : f32[768, 3072]\n"
  "  param w2 : f32[3072, 768] = normal(0.02)\n"
  "  param b1 : f32[3072] = zeros\n"
  "  h    = gelu(add(matmul(x, w1), b1))\n"
  "  loss = mean(mul(h, h))\n"
  "  return loss\n"
  "}\n";

Test(cir, mlp_tree) {
  cir_file *f = ok(mlp_text);
  cr_assert_eq(f->nmodels, 1);
  cr_assert_eq(f->version, 0);
  cir_model *m = f->models[0];
  cr_assert_str_eq(m->name, "mlp");
  ASSERT_AT(f, m->off, 2, 1);
  cr_assert_eq(m->nstmts, 7);

  cir_stmt *s = m->stmts[0];
  cr_assert_eq(s->kind, CIR_INPUT);
  cr_assert_str_eq(s->name, "x");
  ASSERT_AT(f, s->off, 3, 3);
  ASSERT_AT(f, s->name_off, 3, 9);
  cr_assert_str_eq(s->type.dtype, "f32");
  ASSERT_AT(f, s->type.off, 3, 14);
  cr_assert_eq(s->type.rank, 2);
  cr_assert_eq(s->type.dims[0], 2048);
  cr_assert_eq(s->type.dims[1], 768);
  ASSERT_AT(f, s->type.dim_off[1], 3, 24);

  s = m->stmts[1];
  cr_assert_eq(s->kind, CIR_PARAM);
  cr_assert_null(s->init);

  s = m->stmts[2];
  cr_assert_eq(s->kind, CIR_PARAM);
  cr_assert_str_eq(s->name, "w2");
  cr_assert_not_null(s->init);
  cr_assert_eq(s->init->kind, CIR_CALL);
  cr_assert_str_eq(s->init->text, "normal");
  cr_assert_eq(s->init->nargs, 1);
  cr_assert_eq(s->init->args[0]->kind, CIR_NUM);
  cr_assert_eq(s->init->args[0]->is_int, 0);
  cr_assert_float_eq(s->init->args[0]->num, 0.02, 1e-15);

  s = m->stmts[3];
  cr_assert_eq(s->init->kind, CIR_NAME);
  cr_assert_str_eq(s->init->text, "zeros");

  s = m->stmts[4];
  cr_assert_eq(s->kind, CIR_ASSIGN);
  cr_assert_str_eq(s->name, "h");
  cir_expr *e = s->value;              /* gelu(add(matmul(x, w1), b1)) */
  cr_assert_eq(e->kind, CIR_CALL);
  cr_assert_str_eq(e->text, "gelu");
  ASSERT_AT(f, e->off, 7, 10);
  cr_assert_eq(e->nargs, 1);
  e = e->args[0];
  cr_assert_str_eq(e->text, "add");
  ASSERT_AT(f, e->off, 7, 15);
  cr_assert_eq(e->nargs, 2);
  cr_assert_eq(e->args[0]->kind, CIR_CALL);
  cr_assert_str_eq(e->args[0]->text, "matmul");
  cr_assert_eq(e->args[0]->nargs, 2);
  cr_assert_eq(e->args[0]->args[1]->kind, CIR_NAME);
  cr_assert_str_eq(e->args[0]->args[1]->text, "w1");
  ASSERT_AT(f, e->args[0]->args[1]->off, 7, 29);
  cr_assert_str_eq(e->args[1]->text, "b1");

  s = m->stmts[6];
  cr_assert_eq(s->kind, CIR_RETURN);
  ASSERT_AT(f, s->off, 9, 3);
  cr_assert_eq(s->nrets, 1);
  cr_assert_str_eq(s->rets[0]->text, "loss");
}

Test(cir, names_are_interned) {
  cir_file *f = ok("model m { input x : f32[2] y = add(x, x) return y }");
  cir_stmt **st = f->models[0]->stmts;
  cr_assert_eq(st[1]->value->args[0]->text, st[0]->name);
  cr_assert_eq(st[1]->value->args[1]->text, st[0]->name);
  cr_assert_eq(st[2]->rets[0]->text, st[1]->name);
  cr_assert_eq(st[0]->name, arena_intern_cstr(&A, "x"));
}

Test(cir, several_models_and_version) {
  cir_file *f = ok("version 1\n"
                   "model a { input x : f32[2] return x }\n"
                   "model b{\n  return y\n}\n"
                   "model c {}\n");
  cr_assert_eq(f->version, 1);
  ASSERT_AT(f, f->version_off, 1, 1);
  cr_assert_eq(f->nmodels, 3);
  cr_assert_str_eq(f->models[0]->name, "a");
  cr_assert_str_eq(f->models[1]->name, "b");      /* "b{" then a newline: a block brace */
  cr_assert_eq(f->models[1]->nstmts, 1);
  cr_assert_str_eq(f->models[2]->name, "c");
  cr_assert_eq(f->models[2]->nstmts, 0);
  ASSERT_AT(f, f->models[1]->off, 3, 1);
}

Test(cir, glued_block_brace) {
  cir_file *f = ok("model mlp{ return x }");
  cr_assert_str_eq(f->models[0]->name, "mlp");
  f = ok("model m { repeat i in 0..3{ x = y } }");
  cr_assert_eq(f->models[0]->stmts[0]->kind, CIR_REPEAT);
  cr_assert_eq(f->models[0]->stmts[0]->hi, 3);
}

Test(cir, scalar_type) {
  cir_file *f = ok("model m { param s : f32[] = ones input t : bf16[1] }");
  cir_stmt *s = f->models[0]->stmts[0];
  cr_assert_eq(s->type.rank, 0);
  cr_assert_str_eq(s->type.dtype, "f32");
  cr_assert_str_eq(s->init->text, "ones");
  cr_assert_str_eq(f->models[0]->stmts[1]->type.dtype, "bf16");
  cr_assert_eq(f->models[0]->stmts[1]->type.dims[0], 1);
}

Test(cir, dotted_and_templated_names) {
  cir_file *f = ok("model m {\n"
                   "  repeat i in 0..12 {\n"
                   "    l{i}.w1 = matmul(h{i}, l{i}.attn.wq)\n"
                   "    h{i+1} = add(h{i}, x{i-1})\n"
                   "    blk{i}.{j} = f(a{i * 2})\n"
                   "  }\n"
                   "  return l0.attn.wq\n"
                   "}\n");
  cir_stmt *r = f->models[0]->stmts[0];
  cr_assert_eq(r->nbody, 3);
  cr_assert_str_eq(r->body[0]->name, "l{i}.w1");
  cr_assert_str_eq(r->body[0]->value->args[0]->text, "h{i}");
  cr_assert_str_eq(r->body[0]->value->args[1]->text, "l{i}.attn.wq");
  cr_assert_str_eq(r->body[1]->name, "h{i+1}");
  cr_assert_str_eq(r->body[1]->value->args[1]->text, "x{i-1}");
  cr_assert_str_eq(r->body[2]->name, "blk{i}.{j}");
  cr_assert_str_eq(r->body[2]->value->args[0]->text, "a{i * 2}");
  cr_assert_str_eq(f->models[0]->stmts[1]->rets[0]->text, "l0.attn.wq");
}

Test(cir, repeat_nesting) {
  cir_file *f = ok("model m {\n"
                   "  repeat i in 0..12 {\n"
                   "    repeat j in 2..4 {\n"
                   "      x{i}.{j} = y\n"
                   "    }\n"
                   "    z{i} = w\n"
                   "  }\n"
                   "  return z11\n"
                   "}\n");
  cir_stmt *r = f->models[0]->stmts[0];
  cr_assert_eq(r->kind, CIR_REPEAT);
  cr_assert_str_eq(r->name, "i");
  ASSERT_AT(f, r->off, 2, 3);
  ASSERT_AT(f, r->name_off, 2, 10);
  cr_assert_eq(r->lo, 0);
  cr_assert_eq(r->hi, 12);
  cr_assert_eq(r->nbody, 2);
  cir_stmt *in = r->body[0];
  cr_assert_eq(in->kind, CIR_REPEAT);
  cr_assert_str_eq(in->name, "j");
  cr_assert_eq(in->lo, 2);
  cr_assert_eq(in->hi, 4);
  cr_assert_eq(in->nbody, 1);
  cr_assert_str_eq(in->body[0]->name, "x{i}.{j}");
  cr_assert_eq(r->body[1]->kind, CIR_ASSIGN);
}

Test(cir, literals) {
  cir_file *f = ok("model m { y = f(1, -1, 1e-3, 0.02, -2.5, 7E+2, 3., 9223372036854775807) }");
  cir_expr *c = f->models[0]->stmts[0]->value;
  cr_assert_eq(c->nargs, 8);
  cir_expr **a = c->args;
  for (int i = 0; i < 8; i++) cr_assert_eq(a[i]->kind, CIR_NUM);
  cr_assert(a[0]->is_int && a[0]->inum == 1 && a[0]->num == 1.0);
  cr_assert(a[1]->is_int && a[1]->inum == -1 && a[1]->num == -1.0);
  ASSERT_AT(f, a[1]->off, 1, 20);                 /* at the '-' */
  cr_assert(!a[2]->is_int);
  cr_assert_float_eq(a[2]->num, 1e-3, 1e-18);
  cr_assert_float_eq(a[3]->num, 0.02, 1e-17);
  cr_assert_float_eq(a[4]->num, -2.5, 0);
  cr_assert(!a[4]->is_int);
  cr_assert_float_eq(a[5]->num, 700.0, 0);
  cr_assert(!a[5]->is_int);
  cr_assert_float_eq(a[6]->num, 3.0, 0);
  cr_assert(!a[6]->is_int);
  cr_assert(a[7]->is_int && a[7]->inum == INT64_MAX);
}

Test(cir, range_is_not_a_float) {
  cir_file *f = ok("model m { repeat i in 0..12 { } repeat k in 3 .. 5 { } }");
  cr_assert_eq(f->models[0]->stmts[0]->lo, 0);
  cr_assert_eq(f->models[0]->stmts[0]->hi, 12);
  cr_assert_eq(f->models[0]->stmts[1]->lo, 3);
  cr_assert_eq(f->models[0]->stmts[1]->hi, 5);
}

Test(cir, strings_and_einsum) {
  cir_file *f = ok("model m { y = einsum(\"bsd,dhk->bshk\", a, b) z = f(\"q\\\"x\\\\\") }");
  cir_expr *c = f->models[0]->stmts[0]->value;
  cr_assert_str_eq(c->text, "einsum");
  cr_assert_eq(c->nargs, 3);
  cr_assert_eq(c->args[0]->kind, CIR_STR);
  cr_assert_str_eq(c->args[0]->text, "bsd,dhk->bshk");
  ASSERT_AT(f, c->args[0]->off, 1, 22);           /* at the opening quote */
  cir_expr *s = f->models[0]->stmts[1]->value->args[0];
  cr_assert_str_eq(s->text, "q\"x\\");
}

Test(cir, lists_and_keyword_attrs) {
  cir_file *f = ok("model m {\n"
                   "  y = sum(x, dims = [1], keepdims = true)\n"
                   "  z = transpose(x, [0, 2])\n"
                   "  e = concat([], [[1], []], dim = -1)\n"
                   "}\n");
  cir_expr *c = f->models[0]->stmts[0]->value;
  cr_assert_eq(c->nargs, 1);
  cr_assert_eq(c->nattrs, 2);
  cr_assert_str_eq(c->attrs[0].key, "dims");
  ASSERT_AT(f, c->attrs[0].off, 2, 14);
  cr_assert_eq(c->attrs[0].val->kind, CIR_LIST);
  ASSERT_AT(f, c->attrs[0].val->off, 2, 21);
  cr_assert_eq(c->attrs[0].val->nargs, 1);
  cr_assert_eq(c->attrs[0].val->args[0]->inum, 1);
  cr_assert_str_eq(c->attrs[1].key, "keepdims");
  cr_assert_eq(c->attrs[1].val->kind, CIR_NAME);
  cr_assert_str_eq(c->attrs[1].val->text, "true");

  c = f->models[0]->stmts[1]->value;
  cr_assert_eq(c->nargs, 2);
  cr_assert_eq(c->nattrs, 0);
  cir_expr *l = c->args[1];
  cr_assert_eq(l->kind, CIR_LIST);
  cr_assert_eq(l->nargs, 2);
  cr_assert_eq(l->args[0]->inum, 0);
  cr_assert_eq(l->args[1]->inum, 2);

  c = f->models[0]->stmts[2]->value;
  cr_assert_eq(c->nargs, 2);
  cr_assert_eq(c->args[0]->kind, CIR_LIST);
  cr_assert_eq(c->args[0]->nargs, 0);
  cr_assert_eq(c->args[1]->nargs, 2);
  cr_assert_eq(c->args[1]->args[0]->kind, CIR_LIST);
  cr_assert_eq(c->args[1]->args[1]->nargs, 0);
  cr_assert_eq(c->attrs[0].val->inum, -1);
}

Test(cir, calls_without_args_and_multi_return) {
  cir_file *f = ok("model m { y = f() return y, x, 1 }");
  cir_expr *c = f->models[0]->stmts[0]->value;
  cr_assert_eq(c->kind, CIR_CALL);
  cr_assert_eq(c->nargs, 0);
  cr_assert_eq(c->nattrs, 0);
  cr_assert_eq(f->models[0]->stmts[1]->nrets, 3);
  cr_assert_eq(f->models[0]->stmts[1]->rets[2]->kind, CIR_NUM);
}

Test(cir, keywords_inside_names) {
  cir_file *f = ok("model m { input.x = models input input_ids : i32[4] return in.put }");
  cir_stmt **st = f->models[0]->stmts;
  cr_assert_str_eq(st[0]->name, "input.x");
  cr_assert_str_eq(st[0]->value->text, "models");
  cr_assert_str_eq(st[1]->name, "input_ids");
  cr_assert_eq(st[1]->kind, CIR_INPUT);
  cr_assert_str_eq(st[2]->rets[0]->text, "in.put");
}

Test(cir, comments_and_crlf) {
  cir_file *f = ok("# head\r\nmodel m { # a comment { ( [\r\n  return x # tail\r\n}\r\n# end");
  cr_assert_eq(f->models[0]->nstmts, 1);
}

/* ---- errors ---- */

typedef struct err_case {
  char text[200];
  char first[160];       /* expected first line, without "t.cir:" */
  char note[80];         /* expected note line (second rendered message) or "" */
} err_case;

static err_case err_cases[] = {
  {"", "1:1: error: no model in file", ""},
  {"# nothing\n\n", "1:1: error: no model in file", ""},
  {"version 1\n", "1:1: error: no model in file", ""},
  {"model m {\n  x = f(a))\n}\n", "2:11: error: unexpected ')', expected '}' to close model 'm'", "1:9: note: '{' opened here"},
  {"model m { x = f(a }", "1:19: error: unexpected '}', expected ')' to close the call of 'f'", "1:16: note: '(' opened here"},
  {"model m { x = [a, b) }", "1:20: error: unexpected ')', expected ']' to close the list", "1:15: note: '[' opened here"},
  {"model mlp {\n  x = y\n", "1:11: error: unclosed '{' opened here: expected '}' to close model 'mlp' before the end of the input",
   "2:8: note: the '}' is missing here, or earlier"},
  {"model m {\n  h = matmul(x, w\n  y = mean(h)\n}\n", "2:13: error: unclosed '(' opened here: expected ')' to close the call of 'matmul' before 'y' on line 3",
   "2:18: note: the ')' is missing here at the end of line 2, or earlier"},
  {"model m {\n  input x : f32[4, 8\n  param w : f32[8]\n}\n", "2:16: error: unclosed '[' opened here: expected ']' to close the shape before 'param' on line 3",
   "2:21: note: the ']' is missing here at the end of line 2, or earlier"},
  {"model m {\n repeat i in 0..2 {\n", "2:19: error: unclosed '{' opened here: expected '}' to close repeat 'i' before the end of the input",
   "2:20: note: the '}' is missing here, or earlier"},
  {"model m { x = f(g(a, ", "1:22: error: unexpected end of input, expected an expression", "1:18: note: '(' opened here"},
  {"model m { input x : f32[2, 3", "1:29: error: unexpected end of input, expected ']' to close the shape", "1:24: note: '[' opened here"},
  {"model m { } }", "1:13: error: unexpected '}': there is no open '{' to close", ""},
  {"model m { x = f(a b) }", "1:19: error: unexpected 'b', expected ',' or ')'", ""},
  {"model m { x = f(a,) }", "1:19: error: unexpected ')', expected an expression", ""},
  {"model m { x = }", "1:15: error: unexpected '}', expected an expression", ""},
  {"model m { x f(a) }", "1:13: error: unexpected 'f', expected '='", ""},
  {"model { }", "1:7: error: unexpected '{', expected the model's name", ""},
  {"model", "1:6: error: unexpected end of input, expected the model's name", ""},
  {"input x : f32[2]", "1:1: error: unexpected 'input' outside a model", ""},
  {"model m { input x f32[2] }", "1:19: error: unexpected 'f32', expected ':'", ""},
  {"model m { input x : [2] }", "1:21: error: unexpected '[', expected a type such as f32[8, 16]", ""},
  {"model m { input x : f32 }", "1:25: error: unexpected '}', expected '[' and the shape (f32[] for a scalar)", ""},
  {"model m { input x : f32[-3] }", "1:25: error: dimension must be non-negative", ""},
  {"model m { input x : f32[2.5] }", "1:25: error: dimension must be an integer", ""},
  {"model m { input x : f32[4611686018427387905] }", "1:25: error: dimension too large", ""},
  {"model m { input x : f32[4611686018427387904] }", "", ""},          /* 2^62 itself is fine */
  {"model m { x = f(99999999999999999999) }", "1:17: error: number too large", ""},
  {"model m { x = f(1e999) }", "1:17: error: number too large", ""},
  {"model m { x = f(\"abc) }", "1:17: error: unterminated string", ""},
  {"model m { x = f(\"ab\nc\") }", "1:17: error: unterminated string: a string must end on the line", ""},
  {"model m { x = f(\"a\\nb\") }", "1:19: error: unknown escape in string", ""},
  {"model m { x = a $ b }", "1:17: error: unexpected character '$'", ""},
  {"model m { x = a \x01 }", "1:17: error: unexpected character '\\x01'", ""},
  {"model m { x = \xc3\xa9 }", "1:15: error: unexpected character '\\xc3' (only ASCII", ""},
  {"# caf\xc3\xa9\nmodel m { x = \"\xc3\xa9\" }", "", ""},   /* non-ASCII in comments and strings is fine */
  {"model m { x = .5 }", "1:15: error: a number must start with a digit: write 0.5", ""},
  {"model m { x = 1; }", "1:16: error: unexpected ';'", ""},
  {"model m { x = f(in) }", "1:17: error: unexpected 'in': it is a keyword", ""},
  {"model m { repeat = f(x) }", "1:18: error: unexpected '=', expected the name of the repeat variable", ""},
  {"model m { repeat i in 0..n { } }", "1:26: error: unexpected 'n', expected an integer", ""},
  {"model m { repeat i in 4..2 { } }", "1:23: error: repeat range 4..2 runs backwards", ""},
  {"model m { repeat l{i} in 0..2 { } }", "1:18: error: the repeat variable must be a plain name", ""},
  {"model m{i} { }", "1:7: error: a model name cannot carry an index template", ""},
  {"model m { x = f(a = 1, b) }", "1:24: error: positional argument after keyword argument 'a'", ""},
  {"model m { x = f(a = 1, a = 2) }", "1:24: error: keyword argument 'a' given twice to 'f'", "1:17: note: first given here"},
  {"version 2\nmodel m { }", "1:9: error: this file needs model-language version 2", ""},
  {"version 0\nmodel m { }", "1:9: error: model-language versions start at 1", ""},
  {"model m { }\nversion 1", "2:1: error: unexpected 'version': it may only start the file", ""},
  {"model m { x = - y }", "1:17: error: unexpected 'y', expected a number", ""},
  {"model m { x = f(a{ i }) }", "1:18: error: unexpected '{', expected ',' or ')'", ""},   /* blank after '{': not a template */
  {"model m { x = f(a{i) }", "1:18: error: unexpected '{', expected ',' or ')'", ""},     /* no '}': not a template */
  {"model a {\n  x = y\nmodel b { }", "1:9: error: unclosed '{' opened here: expected '}' to close model 'a' before 'model' on line 3",
   "2:8: note: the '}' is missing here at the end of line 2, or earlier"},
  {"model m { return }", "1:18: error: unexpected '}', expected an expression", ""},
};

ParameterizedTestParameters(cir, errors) {
  return cr_make_param_array(err_case, err_cases, sizeof err_cases / sizeof err_cases[0]);
}

ParameterizedTest(err_case *c, cir, errors) {
  pt_error_case(parse(c->text), &D, "t.cir", c->text, c->first, c->note);
}

/* A NUL inside the text is an error, not the end of input. */
Test(cir, embedded_nul) {
  static const char text[] = "model m { x = a \0 }";
  cir_file *f = cir_parse(&A, &D, src_of(text, sizeof text - 1));
  cr_assert_null(f);
  cr_assert_str_eq(first_line(), "t.cir:1:17: error: unexpected character '\\x00' (is this a binary file?)");
  static const char text2[] = "model m { x = \"a\0\" }";
  f = cir_parse(&A, &D, src_of(text2, sizeof text2 - 1));
  cr_assert_null(f);
  cr_assert_eq(D.nerrors, 2);
}

/* ---- bounded nesting ---- */

Test(cir, deep_nesting_5000) {
  const char *units[][2] = {{"f(", ")"}, {"[", "]"}, {"f(a, k = ", ")"}, {"[1, ", "]"}};
  for (int u = 0; u < 4; u++) {
    char *s = pt_repeat("model m { x = ", units[u][0], 5000, "1", units[u][1], " }");
    cir_file *f = parse(s);
    free(s);
    cr_assert_null(f);
    cr_assert_not_null(strstr(first_line(), "error: nesting deeper than 256 levels"), "%s", first_line());
    diag_clear(&D);
  }
  /* unclosed, too */
  char *s = pt_repeat("model m { x = ", "f(", 5000, "", "", "");
  cr_assert_null(parse(s));
  free(s);
  cr_assert_not_null(strstr(first_line(), "nesting deeper than 256 levels"));
}

Test(cir, nesting_up_to_the_limit) {
  /* the model's '{' is one level: 255 more are fine, 256 are not */
  const char *units[][2] = {{"f(", ")"}, {"[", "]"}, {"f(a, k = ", ")"}, {"[1, ", "]"}};
  for (int u = 0; u < 4; u++) {
    char *s = pt_repeat("model m { x = ", units[u][0], 255, "1", units[u][1], " }");
    cr_assert_not_null(parse(s), "%s", diag_text(&D));
    free(s);
    s = pt_repeat("model m { x = ", units[u][0], 256, "1", units[u][1], " }");
    cr_assert_null(parse(s));
    free(s);
    diag_clear(&D);
  }
  char *s = pt_repeat("model m {\n", "repeat i in 0..2 {\n", 255, "x = 1\n", "}\n", "}\n");
  cir_file *f = parse(s);
  free(s);
  cr_assert_not_null(f, "%s", diag_text(&D));
  cr_assert_eq(f->models[0]->stmts[0]->kind, CIR_REPEAT);
}

/* ---- garbage never crashes ---- */

static void parse_garbage(const char *buf, size_t n) {
  arena a;
  diag d;
  arena_init(&a);
  diag_init(&d);
  cir_file *f = cir_parse(&a, &d, diag_src_string(&a, "g.cir", buf, n));
  if (!f) {
    cr_assert_eq(d.nerrors, 1);
    cr_assert(strncmp(diag_text(&d), "g.cir:", 6) == 0, "%s", diag_text(&d));
  } else {
    cr_assert_eq(d.nerrors, 0);
    cr_assert_gt(f->nmodels, 0);
  }
  diag_free(&d);
  arena_free(&a);
}

Test(cir, random_bytes) {
  pt_random_bytes(parse_garbage);
}

/* Bytes drawn from the language's own alphabet reach deeper into the grammar. */
Test(cir, random_tokens) {
  static const char *const pieces[] = {
    "model ", "m ", "{", "}", "(", ")", "[", "]", "input ", "param ", "return ", "repeat ",
    " in ", "0..3", "..", "x", "l{i}.w", "f32", ":", ",", "=", "-", "1", "2.5", "1e-3",
    "\"s\"", "\n", " ", "# c\n", "version ", "{i", "\"", "\\",
  };
  static const char *const heads[] = {"", "model m { "};
  pt_random_tokens(parse_garbage, 400, pieces, sizeof pieces / sizeof pieces[0], heads, 2);
}

Test(cir, mutated_model) {
  pt_mutated(parse_garbage, 400, mlp_text, sizeof mlp_text - 1, NULL);
}

/* ---- the tests/errors corpus: files marked "# stage: syntax" ---- */

static const void *parse_tree(arena *a, diag *d, const diag_src *src) {
  return cir_parse(a, d, src);
}

Test(cir, error_corpus) {
  int nsyntax = pt_error_corpus(".cir", parse_tree, 0);
  cr_assert_geq(nsyntax, 14, "only %d syntax cases in tests/errors", nsyntax);
}

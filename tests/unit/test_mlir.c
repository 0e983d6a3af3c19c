/*
** test_mlir.c: the StableHLO/MHLO reader (lang/mlir_*): the four real
** model files and the Shardy tests (op counts established with grep, see
** the comments), trees of every syntactic form they hold, locations,
** error messages with their places, bounded nesting, big and garbage
** inputs, mutations of the real files, and the tests/errors/mlir corpus.
*/
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "lang/mlir.h"
#include "parsetest.h"

static arena A;
static diag D;

static void setup(void) { arena_init(&A); diag_init(&D); }
static void teardown(void) { diag_free(&D); arena_free(&A); }

TestSuite(mlir, .init = setup, .fini = teardown);

static mlir_file *parse_n(const char *text, size_t len) {
  return mlir_parse(&A, &D, diag_src_string(&A, "t.mlir", text, len));
}

static mlir_file *parse(const char *text) { return parse_n(text, strlen(text)); }

/* Parse text that must be valid. */
static mlir_file *ok(const char *text) {
  mlir_file *f = parse(text);
  cr_assert_not_null(f, "parse failed:\n%s\n%s", text, diag_text(&D));
  cr_assert_eq(D.nerrors, 0);
  return f;
}

static const char *first_line(void) { return pt_first_line(&D); }

/* ---- walking trees ---- */

typedef struct opcount { const char *name; int n; } opcount;
typedef struct counts { opcount v[64]; int n, total; } counts;

static void count_region(const mlir_region *r, counts *c);

static void count_op(const mlir_op *o, counts *c) {
  if (o->func) {
    if (o->func->body) count_region(o->func->body, c);
    return;
  }
  int i = 0;
  while (i < c->n && c->v[i].name != o->name) i++;
  if (i == c->n) {
    cr_assert_lt(c->n, 64);
    c->v[c->n++] = (opcount){o->name, 0};
  }
  c->v[i].n++;
  c->total++;
  for (int k = 0; k < o->nregions; k++) count_region(o->regions[k], c);
}

static void count_region(const mlir_region *r, counts *c) {
  cr_assert_gt(r->nblocks, 0);
  for (int b = 0; b < r->nblocks; b++)
    for (int i = 0; i < r->blocks[b]->nops; i++) count_op(r->blocks[b]->ops[i], c);
}

/* Every op of every function of every module, by name. */
static counts count_file(const mlir_file *f) {
  counts c;
  memset(&c, 0, sizeof c);
  for (int m = 0; m < f->nmodules; m++) {
    const mlir_module *mo = f->modules[m];
    for (int i = 0; i < mo->nfuncs; i++)
      if (mo->funcs[i]->body) count_region(mo->funcs[i]->body, &c);
    for (int i = 0; i < mo->nops; i++) count_op(mo->ops[i], &c);
  }
  return c;
}

static int count_of(const counts *c, const char *name) {
  for (int i = 0; i < c->n; i++)
    if (strcmp(c->v[i].name, name) == 0) return c->v[i].n;
  return 0;
}

/* The counts must be exactly want (name, n pairs), and nothing else. */
static void assert_counts(const counts *c, const opcount *want, int nwant) {
  int total = 0;
  for (int i = 0; i < nwant; i++) {
    cr_expect_eq(count_of(c, want[i].name), want[i].n, "%s: %d ops, wanted %d", want[i].name,
                 count_of(c, want[i].name), want[i].n);
    total += want[i].n;
  }
  for (int i = 0; i < c->n; i++) {
    int known = 0;
    for (int k = 0; k < nwant; k++) known |= strcmp(c->v[i].name, want[k].name) == 0;
    cr_expect(known, "unexpected op %s (%d of them)", c->v[i].name, c->v[i].n);
  }
  cr_assert_eq(c->total, total, "%d ops, wanted %d", c->total, total);
}

/* How many compact reduces apply op (the "applies stablehlo.add" words). */
static int applies_in_region(const mlir_region *r, const char *op);
static int applies_in_op(const mlir_op *o, const char *op) {
  int n = 0;
  for (int i = 0; i + 1 < o->nitems; i++) {
    const mlir_attr *a = o->items[i].val, *b = o->items[i + 1].val;
    if (!o->items[i].key && a->kind == MLIR_A_WORD && strcmp(a->text, "applies") == 0 &&
        b->kind == MLIR_A_WORD && strcmp(b->text, op) == 0)
      n++;
  }
  for (int k = 0; k < o->nregions; k++) n += applies_in_region(o->regions[k], op);
  return n;
}
static int applies_in_region(const mlir_region *r, const char *op) {
  int n = 0;
  for (int b = 0; b < r->nblocks; b++)
    for (int i = 0; i < r->blocks[b]->nops; i++) n += applies_in_op(r->blocks[b]->ops[i], op);
  return n;
}
static int applies(const mlir_file *f, const char *op) {
  int n = 0;
  for (int m = 0; m < f->nmodules; m++)
    for (int i = 0; i < f->modules[m]->nfuncs; i++)
      if (f->modules[m]->funcs[i]->body) n += applies_in_region(f->modules[m]->funcs[i]->body, op);
  return n;
}

static const mlir_func *func_named(const mlir_module *m, const char *name) {
  for (int i = 0; i < m->nfuncs; i++)
    if (strcmp(m->funcs[i]->name, name) == 0) return m->funcs[i];
  cr_assert_fail("no function @%s", name);
  return NULL;
}

/* The i-th op of a function's entry block. */
static const mlir_op *op_at(const mlir_func *f, int i) {
  cr_assert_not_null(f->body);
  cr_assert_lt(i, f->body->blocks[0]->nops, "@%s has %d ops", f->name, f->body->blocks[0]->nops);
  return f->body->blocks[0]->ops[i];
}

/* The first op of the first function. */
static const mlir_op *first_op(const mlir_file *f) {
  cr_assert_gt(f->nmodules, 0);
  cr_assert_gt(f->modules[0]->nfuncs, 0);
  return op_at(f->modules[0]->funcs[0], 0);
}

/* ---- rendering attributes and types, to compare with text ---- */

typedef struct rbuf { char s[4096]; size_t n; } rbuf;

static void rput(rbuf *b, const char *s) {
  size_t l = strlen(s);
  if (b->n + l >= sizeof b->s) l = sizeof b->s - 1 - b->n;
  memcpy(b->s + b->n, s, l);
  b->n += l;
  b->s[b->n] = 0;
}

static void rattr(rbuf *b, const mlir_attr *a);

static void rtype(rbuf *b, const mlir_type *t) {
  char n[32];
  switch (t->kind) {
  case MLIR_T_SCALAR: rput(b, t->name); break;
  case MLIR_T_TENSOR:
    rput(b, t->name);
    rput(b, "<");
    if (t->rank < 0) rput(b, "*x");
    for (int i = 0; i < t->rank; i++) {
      if (t->dims[i] == MLIR_DYN) snprintf(n, sizeof n, "?x");
      else snprintf(n, sizeof n, "%lldx", (long long)t->dims[i]);
      rput(b, n);
    }
    rtype(b, t->elem);
    if (t->encoding) { rput(b, ", "); rattr(b, t->encoding); }
    rput(b, ">");
    break;
  case MLIR_T_COMPLEX: rput(b, "complex<"); rtype(b, t->elem); rput(b, ">"); break;
  case MLIR_T_TUPLE:
    rput(b, "tuple<");
    for (int i = 0; i < t->nelems; i++) { if (i) rput(b, ", "); rtype(b, t->elems[i]); }
    rput(b, ">");
    break;
  case MLIR_T_OTHER: rput(b, t->name); if (t->body) rattr(b, t->body); break;
  }
}

static void ritems(rbuf *b, const mlir_attr *a, const char *open, const char *close) {
  rput(b, open);
  for (int i = 0; i < a->nitems; i++) {
    if (i) rput(b, a->kind == MLIR_A_SEQ ? " " : ", ");
    if (a->items[i].key) {
      char sep[3] = {a->items[i].sep, 0};
      rput(b, a->items[i].key);
      rput(b, sep);
    }
    rattr(b, a->items[i].val);
  }
  rput(b, close);
}

/* Close to the source text, with the kinds that are not visible there spelled out. */
static void rattr(rbuf *b, const mlir_attr *a) {
  char n[64];
  switch (a->kind) {
  case MLIR_A_INT:
    if (a->is_hex) snprintf(n, sizeof n, "0x%llX", (unsigned long long)a->i);
    else snprintf(n, sizeof n, "%lld", (long long)a->i);
    rput(b, n);
    break;
  case MLIR_A_FLOAT: snprintf(n, sizeof n, "%g", a->f); rput(b, n); break;
  case MLIR_A_BOOL: rput(b, a->i ? "true" : "false"); break;
  case MLIR_A_UNIT: rput(b, "unit"); break;
  case MLIR_A_STRING: rput(b, "\""); rput(b, a->text); rput(b, "\""); break;
  case MLIR_A_WORD: rput(b, a->text); break;
  case MLIR_A_SYMBOL: rput(b, "@"); rput(b, a->text); break;
  case MLIR_A_VALUE:
    rput(b, a->text);
    if (a->i >= 0) { snprintf(n, sizeof n, "#%lld", (long long)a->i); rput(b, n); }
    break;
  case MLIR_A_TYPE: rput(b, "type "); rtype(b, a->type); break;
  case MLIR_A_LIST: ritems(b, a, "[", "]"); break;
  case MLIR_A_DICT: ritems(b, a, "{", "}"); break;
  case MLIR_A_GROUP: ritems(b, a, "(", ")"); break;
  case MLIR_A_ANGLE: ritems(b, a, "<", ">"); break;
  case MLIR_A_DIALECT: rput(b, a->text); if (a->nitems) ritems(b, a, "<", ">"); break;
  case MLIR_A_DENSE: ritems(b, a, "dense<", ">"); break;
  case MLIR_A_DENSE_RESOURCE: rput(b, "dense_resource<"); rput(b, a->text); rput(b, ">"); break;
  case MLIR_A_ARRAY: rput(b, "array<"); rtype(b, a->type); ritems(b, a, ": ", ">"); break;
  case MLIR_A_RANGE: ritems(b, a, "range(", ")"); break;
  case MLIR_A_CROSS:
    ritems(b, a, "cross(", ")");
    if (a->out) { rput(b, " -> "); rattr(b, a->out); }
    break;
  case MLIR_A_ARROW: ritems(b, a, "(", ") -> "); rattr(b, a->out); break;
  case MLIR_A_SEQ: ritems(b, a, "seq(", ")"); break;
  }
  if (a->type && a->kind != MLIR_A_TYPE && a->kind != MLIR_A_ARRAY) {
    rput(b, " : ");
    rtype(b, a->type);
  }
}

static const char *attr_text(const mlir_attr *a) {
  static rbuf b;
  b.n = 0;
  b.s[0] = 0;
  rattr(&b, a);
  return b.s;
}

static const char *type_text(const mlir_type *t) {
  static rbuf b;
  b.n = 0;
  b.s[0] = 0;
  rtype(&b, t);
  return b.s;
}

/* A pretty op's items as text: "%a | dims=[0, 1]". */
static const char *items_text(const mlir_op *o) {
  static rbuf b;
  b.n = 0;
  b.s[0] = 0;
  for (int i = 0; i < o->nitems; i++) {
    if (i) rput(&b, " | ");
    if (o->items[i].key) {
      char sep[3] = {o->items[i].sep, 0};
      rput(&b, o->items[i].key);
      rput(&b, sep);
    }
    rattr(&b, o->items[i].val);
  }
  return b.s;
}

/* The signature as text: "tensor<4xf32>" or "(tensor<4xf32>, tensor<f32>) -> (tensor<f32>)". */
static const char *sig_text(const mlir_op *o) {
  static rbuf b;
  b.n = 0;
  b.s[0] = 0;
  if (o->sig.arrow) rput(&b, "(");
  for (int i = 0; i < o->sig.nins; i++) { if (i) rput(&b, ", "); rtype(&b, o->sig.ins[i]); }
  if (o->sig.arrow) {
    rput(&b, ") -> (");
    for (int i = 0; i < o->sig.nouts; i++) { if (i) rput(&b, ", "); rtype(&b, o->sig.outs[i]); }
    rput(&b, ")");
  }
  return b.s;
}

static const char *operands_text(const mlir_op *o) {
  static rbuf b;
  b.n = 0;
  b.s[0] = 0;
  for (int i = 0; i < o->noperands; i++) {
    if (i) rput(&b, ", ");
    rattr(&b, o->operands[i]);
  }
  return b.s;
}

/* ---- the real files (shared/third_party beside the checkout) ---- */

#define THIRD_PARTY SRCDIR "/../shared/third_party"

static const diag_src *load_real(const char *rel) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", THIRD_PARTY, rel);
  struct stat st;
  if (stat(path, &st) != 0)
    cr_skip_test("%s is absent: the shared/ folder beside the checkout holds the real model files", path);
  const diag_src *s = diag_load_file(&A, &D, path);
  cr_assert_not_null(s, "%s", diag_text(&D));
  return s;
}

static mlir_file *parse_real(const char *rel) {
  const diag_src *s = load_real(rel);
  mlir_file *f = mlir_parse(&A, &D, s);
  cr_assert_not_null(f, "%s:\n%s", rel, diag_text(&D));
  cr_assert_eq(D.nerrors, 0);
  return f;
}

/*
** Expected op counts. Obtained outside this parser, with
**   grep -v '^ *[/][/]' FILE | grep -oE '^ *(%[^ ]+ = )?"?[a-z_]+([.][a-z_]+)?' \
**     | sed -E 's/^ *(%[^ ]+ = )?"?//' | sort | uniq -c
** (the name at the start of each op line, region bodies included; minus
** the module and func.func lines), and cross-checked against
** grep -o 'stablehlo\.[a-z_]*' FILE | sort | uniq -c, whose counts also hold
** the 'applies stablehlo.X' of compact reduces and the #stablehlo.gather<
** attributes (checked below: raw count = ops + applies + attributes), and
** against the op frequencies in shared/reference/stablehlo.md.
*/
static const opcount chess_ops[] = {
  {"stablehlo.broadcast_in_dim", 225}, {"stablehlo.dot_general", 73}, {"stablehlo.add", 55},
  {"stablehlo.multiply", 53}, {"stablehlo.reduce", 37}, {"stablehlo.divide", 36},
  {"stablehlo.reshape", 32}, {"stablehlo.subtract", 29}, {"call", 28}, {"stablehlo.rsqrt", 17},
  {"stablehlo.constant", 16}, {"stablehlo.convert", 12}, {"stablehlo.exponential", 10},
  {"stablehlo.sqrt", 9}, {"stablehlo.maximum", 9}, {"stablehlo.transpose", 8}, {"return", 6},
  {"stablehlo.select", 3}, {"stablehlo.compare", 3}, {"stablehlo.gather", 2}, {"stablehlo.slice", 1},
  {"stablehlo.negate", 1}, {"stablehlo.log", 1}, {"stablehlo.iota", 1}, {"stablehlo.concatenate", 1},
};

static const opcount bert_ops[] = {
  {"stablehlo.broadcast_in_dim", 778}, {"stablehlo.multiply", 608}, {"stablehlo.add", 422},
  {"stablehlo.reshape", 265}, {"stablehlo.transpose", 157}, {"stablehlo.dot_general", 97},
  {"stablehlo.compare", 77}, {"stablehlo.subtract", 67}, {"stablehlo.reduce", 66},
  {"stablehlo.constant", 65}, {"stablehlo.divide", 63}, {"stablehlo.select", 61}, {"call", 45},
  {"stablehlo.rsqrt", 25}, {"stablehlo.not", 24}, {"stablehlo.negate", 24},
  {"stablehlo.exponential", 24}, {"stablehlo.abs", 24}, {"stablehlo.maximum", 12},
  {"stablehlo.gather", 9}, {"return", 9}, {"stablehlo.concatenate", 6}, {"stablehlo.convert", 4},
  {"stablehlo.and", 3}, {"stablehlo.slice", 2}, {"stablehlo.tanh", 1},
};

static const opcount llama_ops[] = {
  {"stablehlo.reshape", 19}, {"stablehlo.broadcast_in_dim", 14}, {"stablehlo.transpose", 9},
  {"sdy.constant", 9}, {"stablehlo.multiply", 6}, {"stablehlo.dot_general", 6},
  {"stablehlo.convert", 6}, {"stablehlo.slice", 4}, {"stablehlo.reduce", 3}, {"stablehlo.add", 3},
  {"stablehlo.select", 2}, {"stablehlo.not", 2}, {"stablehlo.negate", 2},
  {"stablehlo.concatenate", 2}, {"stablehlo.subtract", 1}, {"stablehlo.return", 1},
  {"stablehlo.or", 1}, {"stablehlo.exponential", 1}, {"stablehlo.divide", 1},
  {"stablehlo.compare", 1}, {"return", 1},
};

/* The commented-out mhlo.custom_call line of the file is not an op. */
static const opcount nanogpt_ops[] = {
  {"mhlo.multiply", 183}, {"mhlo.reshape", 143}, {"mhlo.add", 123}, {"mhlo.transpose", 98},
  {"mhlo.broadcast_in_dim", 93}, {"mhlo.return", 86}, {"mhlo.reduce", 84}, {"mhlo.subtract", 52},
  {"mhlo.dot", 50}, {"mhlo.dot_general", 24}, {"mhlo.constant", 19}, {"tensor.insert_slice", 18},
  {"mhlo.divide", 13}, {"mhlo.select", 8}, {"mhlo.power", 6}, {"mhlo.scatter", 2},
  {"mhlo.compare", 2}, {"mhlo.exponential", 1}, {"func.return", 1},
};

#define NWANT(x) ((int)(sizeof x / sizeof x[0]))

/* Every argument of f: tensor type, and the mhlo.sharding string when sharded. */
static int count_sharded(const mlir_func *f, const char *sharding) {
  int n = 0;
  for (int i = 0; i < f->nargs; i++) {
    const mlir_attr *s = mlir_attr_get(f->args[i].attrs, "mhlo.sharding");
    if (s) {
      cr_assert_eq(s->kind, MLIR_A_STRING);
      cr_assert_str_eq(s->text, sharding);
      n++;
    }
  }
  return n;
}

Test(mlir, real_searchless_chess) {
  mlir_file *f = parse_real("stablehlo-models/stablehlo-exports/searchless_chess_9m.mlir");
  cr_assert_eq(f->nmodules, 1);
  const mlir_module *m = f->modules[0];
  cr_assert_str_eq(m->name, "jit_predict_sequence");
  cr_assert_eq(m->implicit, 0);
  cr_assert_str_eq(attr_text(m->attrs), "{jax.uses_shape_polymorphism=false, "
                   "mhlo.num_partitions=1 : i32, mhlo.num_replicas=1 : i32}");
  /* grep -c 'func.func' FILE: 6 */
  cr_assert_eq(m->nfuncs, 6);
  static const char *const names[] = {"main", "apply_fn", "_var", "_where", "silu", "log_softmax"};
  for (int i = 0; i < 6; i++) cr_assert_str_eq(m->funcs[i]->name, names[i]);
  const mlir_func *main_fn = m->funcs[0];
  cr_assert_str_eq(main_fn->visibility, "public");
  cr_assert_str_eq(m->funcs[1]->visibility, "private");
  /* grep -m1 'func.func public @main' FILE | grep -o '%arg[0-9]*:' | wc -l: 95 */
  cr_assert_eq(main_fn->nargs, 95);
  cr_assert_eq(count_sharded(main_fn, "{replicated}"), 94);
  cr_assert_str_eq(main_fn->args[0].name, "%arg0");
  cr_assert_str_eq(type_text(main_fn->args[0].type), "tensor<1968x256xf32>");
  cr_assert_str_eq(type_text(main_fn->args[94].type), "tensor<33x79xi32>");
  cr_assert_null(main_fn->args[94].attrs);
  cr_assert_eq(main_fn->nresults, 1);
  cr_assert_str_eq(type_text(main_fn->results[0].type), "tensor<33x79x128xf32>");
  cr_assert_str_eq(attr_text(main_fn->results[0].attrs), "{jax.result_info=\"\"}");
  cr_assert_eq(func_named(m, "_where")->nargs, 3);
  cr_assert_eq(func_named(m, "apply_fn")->nargs, 95);

  counts c = count_file(f);
  assert_counts(&c, chess_ops, NWANT(chess_ops));
  cr_assert_eq(c.total, 668);     /* the reference note's 674 less the 6 func.func */
  /* grep -o 'stablehlo\.[a-z_]*': add 83 = 55 ops + 28 applies; maximum 18 = 9 + 9 */
  cr_assert_eq(applies(f, "stablehlo.add"), 28);
  cr_assert_eq(applies(f, "stablehlo.maximum"), 9);
  cr_assert_eq(f->naliases, 0);

  /* the first ops of main and apply_fn */
  const mlir_op *call = op_at(main_fn, 0);
  cr_assert_str_eq(call->name, "call");
  cr_assert_eq(call->noperands, 95);
  cr_assert_eq(call->items[0].val->kind, MLIR_A_SYMBOL);
  cr_assert_eq(call->items[0].val->text, m->funcs[1]->name);   /* interned: compare pointers */
  cr_assert_str_eq(op_at(main_fn, 1)->name, "return");
  const mlir_op *cst = op_at(m->funcs[1], 0);
  cr_assert_str_eq(cst->results[0].name, "%cst");
  cr_assert_str_eq(items_text(cst), "dense<0xFF800000>");
  cr_assert_str_eq(sig_text(cst), "tensor<f32>");
}

Test(mlir, real_pt_bert) {
  mlir_file *f = parse_real("stablehlo-models/stablehlo-exports/pt_bert.mlir");
  const mlir_module *m = f->modules[0];
  cr_assert_str_eq(m->name, "jit_func");
  cr_assert_eq(m->nfuncs, 9);
  const mlir_func *main_fn = m->funcs[0];
  /* grep -m1 'func.func public @main' FILE | grep -o '%arg[0-9]*:' | wc -l: 203, 200 with mhlo.sharding */
  cr_assert_eq(main_fn->nargs, 203);
  cr_assert_eq(count_sharded(main_fn, "{replicated}"), 200);
  cr_assert_eq(main_fn->nresults, 2);
  cr_assert_str_eq(type_text(main_fn->results[0].type), "tensor<1x7x768xf32>");
  cr_assert_str_eq(type_text(main_fn->results[1].type), "tensor<1x768xf32>");
  cr_assert_str_eq(attr_text(main_fn->results[0].attrs), "{jax.result_info=\"[0]\"}");
  cr_assert_str_eq(attr_text(main_fn->results[1].attrs), "{jax.result_info=\"[1]\"}");
  counts c = count_file(f);
  assert_counts(&c, bert_ops, NWANT(bert_ops));
  cr_assert_eq(c.total, 2938);    /* the reference note's 2,947 less the 9 func.func */
  /* raw grep counts: add 461 = 422 + 39, maximum 24 = 12 + 12, or 12 = 0 + 12, and 6 = 3 + 3 */
  cr_assert_eq(applies(f, "stablehlo.add"), 39);
  cr_assert_eq(applies(f, "stablehlo.maximum"), 12);
  cr_assert_eq(applies(f, "stablehlo.or"), 12);
  cr_assert_eq(applies(f, "stablehlo.and"), 3);
}

Test(mlir, real_llama_attention_with_shardy) {
  mlir_file *f = parse_real("stablehlo-models/tt-mlir/sdy_llama_attn_prefill_manual.mlir");
  const mlir_module *m = f->modules[0];
  cr_assert_str_eq(m->name, "SyncTensorsGraph.164");
  cr_assert_str_eq(attr_text(m->attrs), "{mhlo.cross_program_prefetches=[], mhlo.input_output_alias=[], "
                   "mhlo.is_dynamic=false, mhlo.use_auto_spmd_partitioning=false}");
  cr_assert_eq(m->nmeshes, 1);
  cr_assert_str_eq(m->meshes[0]->name, "mesh");
  cr_assert_eq(m->meshes[0]->naxes, 1);
  cr_assert_str_eq(m->meshes[0]->axes[0].name, "_axis_0");
  cr_assert_eq(m->meshes[0]->axes[0].size, 2);
  cr_assert_null(mlir_loc_text(&A, m->meshes[0]->op->loc));     /* loc(#loc), #loc = loc(unknown) */
  cr_assert_eq(m->nfuncs, 1);
  const mlir_func *fn = m->funcs[0];
  /* grep -o '%arg[0-9]*: tensor<[^>]*>' on the func.func line: 8 arguments, 8 sdy.sharding = */
  cr_assert_eq(fn->nargs, 8);
  for (int i = 0; i < 8; i++) cr_assert_not_null(mlir_attr_get(fn->args[i].attrs, "sdy.sharding"));
  cr_assert_str_eq(attr_text(mlir_attr_get(fn->args[0].attrs, "sdy.sharding")),
                   "#sdy.sharding<@mesh, [{}, {\"_axis_0\"}]>");
  cr_assert_str_eq(mlir_loc_text(&A, fn->args[0].loc), "p0.1");
  cr_assert_str_eq(type_text(fn->args[7].type), "tensor<2048x2048xbf16>");
  cr_assert_str_eq(type_text(fn->results[0].type), "tensor<1x1024x2048xbf16>");
  /* grep -c '^#loc' FILE: 96 */
  cr_assert_eq(f->naliases, 96);
  counts c = count_file(f);
  assert_counts(&c, llama_ops, NWANT(llama_ops));
  cr_assert_eq(c.total, 94);

  /* %12 = stablehlo.reshape ... loc(#loc10), and at the end #loc10 = loc("reshape.74") */
  const mlir_op *r = NULL;
  const mlir_block *body = fn->body->blocks[0];
  for (int i = 0; i < body->nops && !r; i++)
    if (body->ops[i]->nresults && strcmp(body->ops[i]->results[0].name, "%12") == 0) r = body->ops[i];
  cr_assert_not_null(r);
  cr_assert_str_eq(r->name, "stablehlo.reshape");
  cr_assert_eq(r->loc->kind, MLIR_L_ALIAS);
  cr_assert_str_eq(r->loc->text, "#loc10");
  cr_assert_str_eq(mlir_loc_text(&A, r->loc), "reshape.74");
  ASSERT_AT(f, r->off, 28, 5);

  /* the reduce in region form: reducer(%arg8: tensor<i1> loc("reduce.144"), ...) { ... } loc(#loc61) */
  const mlir_op *red = NULL;
  for (int i = 0; i < body->nops && !red; i++)
    if (body->ops[i]->nregions) red = body->ops[i];
  cr_assert_not_null(red);
  cr_assert_str_eq(red->name, "stablehlo.reduce");
  cr_assert_str_eq(items_text(red), "(seq(%62 init:%10)) | across | dimensions=[3]");
  cr_assert_str_eq(operands_text(red), "%62, %10");
  cr_assert_eq(red->nregions, 1);
  const mlir_region *rg = red->regions[0];
  cr_assert_str_eq(rg->label, "reducer");
  cr_assert_eq(rg->blocks[0]->nargs, 2);
  cr_assert_str_eq(rg->blocks[0]->args[1].name, "%arg9");
  cr_assert_str_eq(mlir_loc_text(&A, rg->blocks[0]->args[1].loc), "reduce.144");
  cr_assert_eq(rg->blocks[0]->nops, 5);
  cr_assert_str_eq(rg->blocks[0]->ops[4]->name, "stablehlo.return");
  cr_assert_str_eq(mlir_loc_text(&A, red->loc), "reduce.144");
}

Test(mlir, real_nanogpt_backward_generic_mhlo) {
  mlir_file *f = parse_real("stablehlo-models/byteir/NanoGPT_BW_input.mlir");
  cr_assert_eq(f->nmodules, 1);
  const mlir_module *m = f->modules[0];
  cr_assert_eq(m->generic, 1);
  cr_assert_null(m->name);
  cr_assert_str_eq(attr_text(m->attrs), "{torch.debug_module_name=\"GraphModule\"}");
  cr_assert_eq(m->nfuncs, 1);
  const mlir_func *fn = m->funcs[0];
  cr_assert_eq(fn->generic, 1);
  cr_assert_str_eq(fn->name, "forward");
  cr_assert_null(fn->attrs);      /* function_type and sym_name were read from it */
  /* grep -o '%arg[0-9]*: ' on the ^bb0 line: 188 arguments; the function_type's results: 77 */
  cr_assert_eq(fn->nargs, 188);
  cr_assert_eq(fn->nresults, 77);
  cr_assert_str_eq(type_text(fn->args[3].type), "tensor<1x1x256x256xi1>");
  cr_assert_str_eq(type_text(fn->results[0].type), "tensor<65x384xf32>");
  cr_assert_str_eq(fn->body->blocks[0]->label, "^bb0");
  counts c = count_file(f);
  assert_counts(&c, nanogpt_ops, NWANT(nanogpt_ops));
  cr_assert_eq(c.total, 1006);

  const mlir_op *o = op_at(fn, 0);     /* "mhlo.constant"() {value = dense<0.000000e+00> : tensor<256x384xf32>} */
  cr_assert(o->generic);
  cr_assert_str_eq(o->name, "mhlo.constant");
  cr_assert_eq(o->noperands, 0);
  cr_assert_str_eq(attr_text(mlir_op_attr(o, "value")), "dense<0> : tensor<256x384xf32>");
  cr_assert_str_eq(sig_text(o), "() -> (tensor<256x384xf32>)");
  const mlir_op *red = NULL;
  for (int i = 0; i < fn->body->blocks[0]->nops && !red; i++)
    if (strcmp(op_at(fn, i)->name, "mhlo.reduce") == 0) red = op_at(fn, i);
  cr_assert_not_null(red);
  cr_assert_eq(red->nregions, 1);
  cr_assert_null(red->regions[0]->label);
  cr_assert_eq(red->regions[0]->nblocks, 1);
  cr_assert_eq(red->regions[0]->blocks[0]->nargs, 2);
  cr_assert_str_eq(attr_text(mlir_op_attr(red, "dimensions")), "dense<1> : tensor<1xi64>");
}

Test(mlir, shardy_tests) {
  mlir_file *f = parse_real("shardy-tests/propagation/basic_propagation_conservative.mlir");
  /* five '// -----' chunks, each a mesh and a function, read as one implicit module */
  cr_assert_eq(f->nmodules, 1);
  const mlir_module *m = f->modules[0];
  cr_assert(m->implicit);
  cr_assert_eq(m->nmeshes, 5);
  cr_assert_eq(m->nfuncs, 5);
  cr_assert_str_eq(m->meshes[2]->name, "mesh_a_2_b_8");
  cr_assert_eq(m->meshes[2]->axes[1].size, 8);
  const mlir_op *sl = op_at(m->funcs[4], 0);
  cr_assert_str_eq(items_text(sl), "%arg0 | [range(0, 32), range(1, 2), range(4, 8, 2)]");

  f = parse_real("shardy-tests/propagation/basic_propagation_keep_sharding_rules.mlir");
  const mlir_op *add = op_at(f->modules[0]->funcs[0], 1);
  cr_assert_str_eq(attr_text(mlir_op_attr(add, "sdy.sharding_rule")),
                   "#sdy.op_sharding_rule<seq(([ij, k], [ij, k]) -> ([ij, k]) {i=4, j=2, k=8})>");

  f = parse_real("shardy-tests/export/insert_explicit_reshards/broadcast_in_dim.mlir");
  const mlir_func *fn = f->modules[0]->funcs[1];
  cr_assert_str_eq(attr_text(fn->results[0].attrs),
                   "{sdy.sharding=#sdy.sharding<@mesh, [{}, {\"x\"}, {}, {}, {}, {\"y\"}]>}");
  cr_assert_str_eq(attr_text(mlir_op_attr(op_at(fn, 0), "sdy.sharding")),
                   "#sdy.sharding_per_value<[<@mesh, [{}, {\"x\"}, {}, {}, {}, {\"y\"}]>]>");
}

/* ---- modules and functions ---- */

Test(mlir, module_and_function_headers) {
  mlir_file *f = ok(
    "// a JAX module\n"
    "module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32} {\n"
    "  func.func public @main(%arg0: tensor<2x3xf32> {jax.arg_info = \"x\", mhlo.sharding = \"{replicated}\"},\n"
    "                         %arg1: tensor<i32>) -> (tensor<2x3xf32> {jax.result_info = \"\"}, tensor<f32>) {\n"
    "    %0 = call @helper(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
    "    %cst = stablehlo.constant dense<1.0> : tensor<f32>\n"
    "    return %0, %cst : tensor<2x3xf32>, tensor<f32>\n"
    "  }\n"
    "  func.func private @helper(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {noinline} {\n"
    "    func.return %arg0 : tensor<2x3xf32>\n"
    "  }\n"
    "  func.func private @decl(tensor<4xf32>, tensor<f32> {foo}) -> tensor<4xf32>\n"
    "}\n");
  cr_assert_eq(f->nmodules, 1);
  const mlir_module *m = f->modules[0];
  cr_assert_str_eq(m->name, "jit_f");
  ASSERT_AT(f, m->off, 2, 1);
  cr_assert_eq(m->attrs->kind, MLIR_A_DICT);
  const mlir_attr *np = mlir_attr_get(m->attrs, "mhlo.num_partitions");
  cr_assert_eq(np->kind, MLIR_A_INT);
  cr_assert_eq(np->i, 1);
  cr_assert_str_eq(type_text(np->type), "i32");
  cr_assert_eq(mlir_attr_get(m->attrs, "jax.uses_shape_polymorphism")->kind, MLIR_A_BOOL);
  cr_assert_eq(m->nfuncs, 3);

  const mlir_func *fn = m->funcs[0];
  cr_assert_str_eq(fn->name, "main");
  ASSERT_AT(f, fn->off, 3, 3);
  ASSERT_AT(f, fn->name_off, 3, 20);
  cr_assert_str_eq(fn->visibility, "public");
  cr_assert_eq(fn->nargs, 2);
  cr_assert_str_eq(fn->args[0].name, "%arg0");
  ASSERT_AT(f, fn->args[1].off, 4, 26);
  const mlir_type *t = fn->args[0].type;
  cr_assert_eq(t->kind, MLIR_T_TENSOR);
  cr_assert_str_eq(t->name, "tensor");
  cr_assert_eq(t->rank, 2);
  cr_assert_eq(t->dims[0], 2);
  cr_assert_eq(t->dims[1], 3);
  ASSERT_AT(f, t->dim_off[1], 3, 42);
  cr_assert_eq(t->elem->kind, MLIR_T_SCALAR);
  cr_assert_str_eq(t->elem->name, "f32");
  cr_assert_str_eq(mlir_attr_get(fn->args[0].attrs, "jax.arg_info")->text, "x");
  cr_assert_eq(fn->args[1].type->rank, 0);
  cr_assert_null(fn->args[1].attrs);
  cr_assert_eq(fn->nresults, 2);
  cr_assert_str_eq(mlir_attr_get(fn->results[0].attrs, "jax.result_info")->text, "");
  cr_assert_str_eq(type_text(fn->results[1].type), "tensor<f32>");
  cr_assert_null(fn->results[1].attrs);
  cr_assert_eq(fn->body->nblocks, 1);
  cr_assert_null(fn->body->blocks[0]->label);
  cr_assert_eq(fn->body->blocks[0]->nops, 3);

  const mlir_op *call = op_at(fn, 0);
  cr_assert_str_eq(call->name, "call");
  cr_assert_str_eq(items_text(call), "@helper | (%arg0)");
  cr_assert_str_eq(operands_text(call), "%arg0");
  cr_assert_eq(call->operands[0]->text, fn->args[0].name);    /* interned */
  cr_assert_str_eq(sig_text(call), "(tensor<2x3xf32>) -> (tensor<2x3xf32>)");
  const mlir_op *ret = op_at(fn, 2);
  cr_assert_str_eq(ret->name, "return");
  cr_assert_str_eq(operands_text(ret), "%0, %cst");
  cr_assert_str_eq(sig_text(ret), "tensor<2x3xf32>, tensor<f32>");
  cr_assert_eq(ret->operands[1]->text, op_at(fn, 1)->results[0].name);

  const mlir_func *h = m->funcs[1];
  cr_assert_str_eq(h->visibility, "private");
  cr_assert_eq(mlir_attr_get(h->attrs, "noinline")->kind, MLIR_A_UNIT);
  cr_assert_str_eq(op_at(h, 0)->name, "func.return");
  const mlir_func *d = m->funcs[2];
  cr_assert_null(d->body);
  cr_assert_eq(d->nargs, 2);
  cr_assert_null(d->args[0].name);
  cr_assert_eq(mlir_attr_get(d->args[1].attrs, "foo")->kind, MLIR_A_UNIT);
}

Test(mlir, functions_without_module) {
  mlir_file *f = ok("func.func @f() {\n  return\n}\nfunc @g(%x: tensor<f32>) -> tensor<f32> {\n"
                    "  return %x : tensor<f32>\n}\n");
  cr_assert_eq(f->nmodules, 1);
  cr_assert(f->modules[0]->implicit);
  cr_assert_null(f->modules[0]->name);
  cr_assert_eq(f->modules[0]->nfuncs, 2);
  cr_assert_eq(f->modules[0]->funcs[0]->nargs, 0);
  cr_assert_eq(f->modules[0]->funcs[0]->nresults, 0);
  const mlir_op *r = op_at(f->modules[0]->funcs[0], 0);
  cr_assert_str_eq(r->name, "return");
  cr_assert_eq(r->nitems, 0);
  cr_assert_eq(r->sig.has, 0);
  cr_assert_str_eq(f->modules[0]->funcs[1]->name, "g");
  cr_assert_null(f->modules[0]->funcs[1]->visibility);
}

Test(mlir, generic_module_and_function) {
  mlir_file *f = ok(
    "\"builtin.module\"() ({\n"
    "  \"func.func\"() ({\n"
    "  ^bb0(%arg0: tensor<4xf32>, %arg1: tensor<f32>):\n"
    "    %0 = \"mhlo.reduce\"(%arg0, %arg1) ({\n"
    "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
    "      %s = \"mhlo.add\"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
    "      \"mhlo.return\"(%s) : (tensor<f32>) -> ()\n"
    "    }) {dimensions = dense<0> : tensor<1xi64>} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
    "    \"func.return\"(%0) : (tensor<f32>) -> ()\n"
    "  }) {function_type = (tensor<4xf32>, tensor<f32>) -> tensor<f32>, sym_name = \"sum\", "
    "sym_visibility = \"private\", arg_attrs = [{a = 1}, {}], other = 2} : () -> ()\n"
    "  \"func.func\"() <{function_type = () -> (), sym_name = \"empty\"}> ({\n"
    "    \"func.return\"() : () -> ()\n"
    "  }) : () -> ()\n"
    "}) {sym_name = \"m\", torch.debug_module_name = \"G\"} : () -> ()\n");
  cr_assert_eq(f->nmodules, 1);
  const mlir_module *m = f->modules[0];
  cr_assert(m->generic);
  cr_assert_str_eq(m->name, "m");
  cr_assert_str_eq(attr_text(m->attrs), "{torch.debug_module_name=\"G\"}");
  cr_assert_eq(m->nfuncs, 2);
  const mlir_func *fn = m->funcs[0];
  cr_assert(fn->generic);
  cr_assert_str_eq(fn->name, "sum");
  cr_assert_str_eq(fn->visibility, "private");
  cr_assert_eq(fn->nargs, 2);
  cr_assert_str_eq(fn->args[1].name, "%arg1");
  cr_assert_str_eq(attr_text(fn->args[0].attrs), "{a=1}");
  cr_assert_eq(fn->nresults, 1);
  cr_assert_str_eq(type_text(fn->results[0].type), "tensor<f32>");
  cr_assert_str_eq(attr_text(fn->attrs), "{other=2}");
  cr_assert_str_eq(fn->body->blocks[0]->label, "^bb0");
  const mlir_op *red = op_at(fn, 0);
  cr_assert(red->generic);
  cr_assert_str_eq(red->name, "mhlo.reduce");
  cr_assert_str_eq(operands_text(red), "%arg0, %arg1");
  cr_assert_eq(red->nitems, 0);
  cr_assert_eq(red->nregions, 1);
  const mlir_block *b = red->regions[0]->blocks[0];
  cr_assert_eq(red->regions[0]->nblocks, 1);
  cr_assert_str_eq(b->label, "^bb0");
  cr_assert_eq(b->nargs, 2);
  cr_assert_str_eq(b->args[0].name, "%a");
  cr_assert_eq(b->nops, 2);
  cr_assert_str_eq(b->ops[1]->name, "mhlo.return");
  cr_assert_str_eq(sig_text(b->ops[1]), "(tensor<f32>) -> ()");
  cr_assert_str_eq(attr_text(red->attrs), "{dimensions=dense<0> : tensor<1xi64>}");
  cr_assert_str_eq(sig_text(red), "(tensor<4xf32>, tensor<f32>) -> (tensor<f32>)");
  const mlir_func *e = m->funcs[1];
  cr_assert_str_eq(e->name, "empty");
  cr_assert_eq(e->nargs, 0);
  cr_assert_eq(e->nresults, 0);
  cr_assert_null(e->attrs);
  cr_assert_not_null(e->body);

  /* a declaration: an empty region; its arguments come from function_type */
  f = ok("\"func.func\"() <{function_type = (tensor<4xf32>, f32) -> tensor<f32>, sym_name = \"ext\", "
         "sym_visibility = \"private\"}> ({\n}) : () -> ()\n");
  e = f->modules[0]->funcs[0];
  cr_assert(f->modules[0]->implicit);
  cr_assert_null(e->body);
  cr_assert_eq(e->nargs, 2);
  cr_assert_null(e->args[0].name);
  cr_assert_str_eq(type_text(e->args[1].type), "f32");
  cr_assert_str_eq(type_text(e->results[0].type), "tensor<f32>");
}

/* ---- pretty ops: every form of the real files ---- */

static const mlir_op *one_op(const char *op_line) {
  static char text[4096];
  snprintf(text, sizeof text, "func.func @f() {\n  %s\n}\n", op_line);
  mlir_file *f = ok(text);
  return first_op(f);
}

typedef struct pretty_case {
  char line[400];
  char name[40];
  char items[300];       /* items_text */
  char operands[100];    /* operands_text */
  char sig[200];         /* sig_text */
} pretty_case;

static pretty_case pretty_cases[] = {
  {"%0 = stablehlo.add %a, %b : tensor<4xf32>", "stablehlo.add", "%a | %b", "%a, %b", "tensor<4xf32>"},
  {"%1 = stablehlo.broadcast_in_dim %x, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3x4xf32>",
   "stablehlo.broadcast_in_dim", "%x | dims=[0, 1]", "%x", "(tensor<2x3xf32>) -> (tensor<2x3x4xf32>)"},
  {"%1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<33x79x1xf32>",
   "stablehlo.broadcast_in_dim", "%0 | dims=[]", "%0", "(tensor<f32>) -> (tensor<33x79x1xf32>)"},
  {"%5 = stablehlo.compare  LT, %3, %4,  SIGNED : (tensor<33x79xi32>, tensor<33x79xi32>) -> tensor<33x79xi1>",
   "stablehlo.compare", "LT | %3 | %4 | SIGNED", "%3, %4",
   "(tensor<33x79xi32>, tensor<33x79xi32>) -> (tensor<33x79xi1>)"},
  {"%5 = stablehlo.compare  EQ, %a, %b : (tensor<f64>, tensor<f64>) -> tensor<i1>",
   "stablehlo.compare", "EQ | %a | %b", "%a, %b", "(tensor<f64>, tensor<f64>) -> (tensor<i1>)"},
  {"%3 = stablehlo.slice %2 [0:33, 0:79] : (tensor<33x80xi32>) -> tensor<33x79xi32>",
   "stablehlo.slice", "%2 | [range(0, 33), range(0, 79)]", "%2", "(tensor<33x80xi32>) -> (tensor<33x79xi32>)"},
  {"%3 = stablehlo.slice %2 [0:32, 1:2, 4:8:2] : (tensor<32x4x8xf32>) -> tensor<32x1x2xf32>",
   "stablehlo.slice", "%2 | [range(0, 32), range(1, 2), range(4, 8, 2)]", "%2",
   "(tensor<32x4x8xf32>) -> (tensor<32x1x2xf32>)"},
  {"%68 = stablehlo.transpose %67, dims = [0, 3, 1, 2] : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>",
   "stablehlo.transpose", "%67 | dims=[0, 3, 1, 2]", "%67", "(tensor<1x2x3x4xf32>) -> (tensor<1x4x2x3xf32>)"},
  {"%15 = stablehlo.iota dim = 0 : tensor<79xi32>", "stablehlo.iota", "dim=0", "", "tensor<79xi32>"},
  {"%2 = stablehlo.concatenate %1, %arg94, dim = 1 : (tensor<33x1xi32>, tensor<33x79xi32>) -> tensor<33x80xi32>",
   "stablehlo.concatenate", "%1 | %arg94 | dim=1", "%1, %arg94",
   "(tensor<33x1xi32>, tensor<33x79xi32>) -> (tensor<33x80xi32>)"},
  {"%26 = stablehlo.reduce(%25 init: %cst_3) applies stablehlo.add across dimensions = [2] : "
   "(tensor<3x4x5xf32>, tensor<f32>) -> tensor<3x4xf32>",
   "stablehlo.reduce", "(seq(%25 init:%cst_3)) | applies | stablehlo.add | across | dimensions=[2]",
   "%25, %cst_3", "(tensor<3x4x5xf32>, tensor<f32>) -> (tensor<3x4xf32>)"},
  {"%44 = stablehlo.dot_general %43, %arg62, contracting_dims = [2] x [0] : "
   "(tensor<3x7x8xf32>, tensor<8x8xf32>) -> tensor<3x7x8xf32>",
   "stablehlo.dot_general", "%43 | %arg62 | contracting_dims=cross([2], [0])", "%43, %arg62",
   "(tensor<3x7x8xf32>, tensor<8x8xf32>) -> (tensor<3x7x8xf32>)"},
  {"%50 = stablehlo.dot_general %47, %48, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], "
   "precision = [DEFAULT, DEFAULT] : (tensor<2x3x4x5xf32>, tensor<2x6x4x5xf32>) -> tensor<2x4x3x6xf32>",
   "stablehlo.dot_general",
   "%47 | %48 | batching_dims=cross([0, 2], [0, 2]) | contracting_dims=cross([3], [3]) | precision=[DEFAULT, DEFAULT]",
   "%47, %48", "(tensor<2x3x4x5xf32>, tensor<2x6x4x5xf32>) -> (tensor<2x4x3x6xf32>)"},
  {"%1 = stablehlo.convert %0 : (tensor<33x1xui8>) -> tensor<33x1xi32>", "stablehlo.convert", "%0", "%0",
   "(tensor<33x1xui8>) -> (tensor<33x1xi32>)"},
  {"%12 = stablehlo.convert %11 : tensor<f32>", "stablehlo.convert", "%11", "%11", "tensor<f32>"},
  {"%8 = stablehlo.select %5, %7, %3 : tensor<33x79xi1>, tensor<33x79xi32>", "stablehlo.select", "%5 | %7 | %3",
   "%5, %7, %3", "tensor<33x79xi1>, tensor<33x79xi32>"},
  {"%cst = stablehlo.constant dense<0xFF800000> : tensor<f32>", "stablehlo.constant", "dense<0xFF800000>", "",
   "tensor<f32>"},
  {"%cst_2 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>", "stablehlo.constant", "dense<1e-05>", "",
   "tensor<f32>"},
  {"%c = stablehlo.constant dense<[[1, 2], [3, -4]]> : tensor<2x2xi32>", "stablehlo.constant",
   "dense<[[1, 2], [3, -4]]>", "", "tensor<2x2xi32>"},
  {"%c = stablehlo.constant dense<\"0x0000803F00000040\"> : tensor<2xf32>", "stablehlo.constant",
   "dense<\"0x0000803F00000040\">", "", "tensor<2xf32>"},
  {"%c = stablehlo.constant dense_resource<__elided__> : tensor<7x7x3x64xf32>", "stablehlo.constant",
   "dense_resource<__elided__>", "", "tensor<7x7x3x64xf32>"},
  {"%c = stablehlo.constant dense<true> : tensor<i1>", "stablehlo.constant", "dense<true>", "", "tensor<i1>"},
  {"%c = stablehlo.constant dense<(1.0, -2.0)> : tensor<complex<f32>>", "stablehlo.constant",
   "dense<(1, -2)>", "", "tensor<complex<f32>>"},
  {"%0 = sdy.constant dense<0.000000e+00> : tensor<f32> loc(#l)", "sdy.constant", "dense<0>", "",
   "tensor<f32>"},
  {"%0:2 = call @two(%a) : (tensor<f32>) -> (tensor<f32>, tensor<i32>)", "call", "@two | (%a)", "%a",
   "(tensor<f32>) -> (tensor<f32>, tensor<i32>)"},
  {"%1 = stablehlo.add %0#0, %0#1 : tensor<f32>", "stablehlo.add", "%0#0 | %0#1", "%0#0, %0#1", "tensor<f32>"},
  {"%1 = sdy.sharding_constraint %0 <@mesh, [{\"x\"}, {}]> : tensor<8x8xf32>", "sdy.sharding_constraint",
   "%0 | <@mesh, [{\"x\"}, {}]>", "%0", "tensor<8x8xf32>"},
  {"%1 = sdy.reshard %arg0 <@mesh, [{}, {\"x\", ?}]> : tensor<8x8xf32>", "sdy.reshard",
   "%arg0 | <@mesh, [{}, {\"x\", ?}]>", "%arg0", "tensor<8x8xf32>"},
  {"%0 = stablehlo.custom_call @Sharding(%arg0) {backend_config = \"\", mhlo.sharding = \"{devices=[1,2]<=[2]}\"} "
   ": (tensor<8x4xf32>) -> tensor<8x4xf32>", "stablehlo.custom_call", "@Sharding | (%arg0)", "%arg0",
   "(tensor<8x4xf32>) -> (tensor<8x4xf32>)"},
  {"stablehlo.custom_call @check.expect_close(%4, %1) {has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> ()",
   "stablehlo.custom_call", "@check.expect_close | (%4, %1)", "%4, %1", "(tensor<4xf32>, tensor<4xf32>) -> ()"},
  {"%2 = chlo.erf %0 : tensor<20xf32> -> tensor<20xf32>", "chlo.erf", "%0", "%0",
   "(tensor<20xf32>) -> (tensor<20xf32>)"},
  {"%7 = stablehlo.dynamic_slice %0#0, %6, sizes = [1] : (tensor<3xbf16>, tensor<i64>) -> tensor<1xbf16>",
   "stablehlo.dynamic_slice", "%0#0 | %6 | sizes=[1]", "%0#0, %6", "(tensor<3xbf16>, tensor<i64>) -> (tensor<1xbf16>)"},
  {"%25 = stablehlo.pad %18, %24, low = [0, 0], high = [0, 1], interior = [0, 0] : "
   "(tensor<2x2xf32>, tensor<f32>) -> tensor<2x3xf32>", "stablehlo.pad",
   "%18 | %24 | low=[0, 0] | high=[0, 1] | interior=[0, 0]", "%18, %24",
   "(tensor<2x2xf32>, tensor<f32>) -> (tensor<2x3xf32>)"},
  {"%c = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
   "window = {stride = [1, 1], pad = [[0, 0], [1, 1]], rhs_dilate = [1, 1]} "
   "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
   "(tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32>", "stablehlo.convolution",
   "(%arg0, %arg1) | dim_numbers=cross([b, 0, 1, f], [0, 1, i, o]) -> [b, 0, 1, f] | "
   "window={stride=[1, 1], pad=[[0, 0], [1, 1]], rhs_dilate=[1, 1]}", "%arg0, %arg1",
   "(tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> (tensor<1x8x8x4xf32>)"},
  {"%r = \"stablehlo.gather\"(%arg0, %9) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], "
   "collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 256>}> "
   ": (tensor<1968x256xf32>, tensor<33x79x1xi32>) -> tensor<33x79x256xf32>",
   "stablehlo.gather", "", "%arg0, %9", "(tensor<1968x256xf32>, tensor<33x79x1xi32>) -> (tensor<33x79x256xf32>)"},
};

ParameterizedTestParameters(mlir, pretty_forms) {
  return cr_make_param_array(pretty_case, pretty_cases, sizeof pretty_cases / sizeof pretty_cases[0]);
}

ParameterizedTest(pretty_case *c, mlir, pretty_forms) {
  char text[4096];
  snprintf(text, sizeof text, "func.func @f() {\n  %s\n}\n#l = loc(unknown)\n", c->line);
  mlir_file *f = ok(text);
  const mlir_op *o = first_op(f);
  cr_assert_str_eq(o->name, c->name);
  cr_assert_str_eq(items_text(o), c->items);
  cr_assert_str_eq(operands_text(o), c->operands);
  cr_assert_str_eq(sig_text(o), c->sig);
  cr_assert(o->sig.has);
  ASSERT_AT(f, o->off, 2, 3);
}

Test(mlir, results) {
  const mlir_op *o = one_op("%0:2, %x = stablehlo.foo %a : tensor<f32>");
  cr_assert_eq(o->nresults, 2);
  cr_assert_str_eq(o->results[0].name, "%0");
  cr_assert_eq(o->results[0].count, 2);
  cr_assert_str_eq(o->results[1].name, "%x");
  cr_assert_eq(o->results[1].count, 1);
  o = one_op("stablehlo.return %9, %10 : tensor<f32>, tensor<i32>");
  cr_assert_eq(o->nresults, 0);
  cr_assert_eq(o->off, o->name_off);
  cr_assert_str_eq(sig_text(o), "tensor<f32>, tensor<i32>");
}

Test(mlir, reduce_region_form_and_while) {
  mlir_file *f = ok(
    "func.func @f(%x: tensor<4x8xf32>, %c: tensor<f32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.reduce(%x init: %c) across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>\n"
    "   reducer(%a: tensor<f32>, %b: tensor<f32>)  {\n"
    "    %s = stablehlo.add %a, %b : tensor<f32>\n"
    "    stablehlo.return %s : tensor<f32>\n"
    "  }\n"
    "  %1:2 = stablehlo.reduce(%x init: %c), (%x init: %c) across dimensions = [0] : "
    "(tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>)\n"
    "   reducer(%a: tensor<f32>, %c2: tensor<f32>) (%b: tensor<f32>, %d: tensor<f32>)  {\n"
    "    stablehlo.return %a, %b : tensor<f32>, tensor<f32>\n"
    "  }\n"
    "  %2:2 = stablehlo.while(%iterArg = %c, %iterArg_1 = %x) : tensor<f32>, tensor<4x8xf32>\n"
    "   cond {\n"
    "    %p = stablehlo.compare  LT, %iterArg, %iterArg,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
    "    stablehlo.return %p : tensor<i1>\n"
    "  } do {\n"
    "    stablehlo.return %iterArg, %iterArg_1 : tensor<f32>, tensor<4x8xf32>\n"
    "  }\n"
    "  return %0 : tensor<4xf32>\n"
    "}\n");
  const mlir_func *fn = f->modules[0]->funcs[0];
  cr_assert_eq(fn->body->blocks[0]->nops, 4);
  const mlir_op *r = op_at(fn, 0);
  cr_assert_str_eq(items_text(r), "(seq(%x init:%c)) | across | dimensions=[1]");
  cr_assert_eq(r->nregions, 1);
  cr_assert_str_eq(r->regions[0]->label, "reducer");
  ASSERT_AT(f, r->regions[0]->off, 3, 4);
  const mlir_block *b = r->regions[0]->blocks[0];
  cr_assert_eq(b->nargs, 2);
  cr_assert_str_eq(b->args[1].name, "%b");
  cr_assert_str_eq(type_text(b->args[1].type), "tensor<f32>");
  cr_assert_eq(b->nops, 2);
  cr_assert_str_eq(b->ops[0]->name, "stablehlo.add");

  r = op_at(fn, 1);
  cr_assert_str_eq(items_text(r), "(seq(%x init:%c)) | (seq(%x init:%c)) | across | dimensions=[0]");
  cr_assert_str_eq(operands_text(r), "%x, %c, %x, %c");
  cr_assert_eq(r->regions[0]->blocks[0]->nargs, 4);
  cr_assert_str_eq(r->regions[0]->blocks[0]->args[2].name, "%b");

  const mlir_op *w = op_at(fn, 2);
  cr_assert_str_eq(w->name, "stablehlo.while");
  cr_assert_str_eq(items_text(w), "(%iterArg=%c, %iterArg_1=%x)");
  cr_assert_str_eq(operands_text(w), "%c, %x");
  cr_assert_eq(w->nregions, 2);
  cr_assert_str_eq(w->regions[0]->label, "cond");
  cr_assert_str_eq(w->regions[1]->label, "do");
  cr_assert_eq(w->regions[0]->blocks[0]->nops, 2);
  cr_assert_eq(w->regions[1]->blocks[0]->nops, 1);
}

Test(mlir, op_attribute_dictionaries) {
  const mlir_op *o = one_op(
    "%16 = stablehlo.transpose %15, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, "
    "xla_shape = \"bf16[2048,2048]{0,1}\"} : (tensor<4x2xbf16>) -> tensor<2x4xbf16>");
  cr_assert_str_eq(items_text(o), "%15 | dims=[1, 0]");
  cr_assert_str_eq(attr_text(o->attrs), "{result_layout=dense<[0, 1]> : tensor<2xindex>, "
                   "xla_shape=\"bf16[2048,2048]{0,1}\"}");
  o = one_op("%54 = stablehlo.dot_general %32, %53, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] "
             "{mhlo.frontend_attributes = {grad_x = \"false\", grad_y = \"false\"}} : "
             "(tensor<1x2x3x4xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x3x3xf32>");
  const mlir_attr *fa = mlir_op_attr(o, "mhlo.frontend_attributes");
  cr_assert_eq(fa->kind, MLIR_A_DICT);
  cr_assert_str_eq(mlir_attr_get(fa, "grad_y")->text, "false");
  const mlir_item *cd = mlir_op_item(o, "contracting_dims");
  cr_assert_not_null(cd);
  cr_assert_eq(cd->sep, '=');
  cr_assert_eq(cd->val->kind, MLIR_A_CROSS);
  cr_assert_eq(cd->val->items[1].val->items[0].val->i, 2);
  cr_assert_null(mlir_op_item(o, "nothing"));
}

/* ---- types ---- */

Test(mlir, types) {
  mlir_file *f = ok(
    "func.func @f(%a: tensor<f32>, %b: tensor<1x7xi1>, %c: tensor<?x4xbf16>, %d: tensor<*xf32>,\n"
    "             %e: tensor<2xcomplex<f64>>, %g: tuple<tensor<f32>, i32>, %h: !stablehlo.token,\n"
    "             %i: tensor<4xf32, #sdy.sharding<@mesh, [{\"x\"}]>>, %j: tensor<3xui32>, %k: tensor<2xsi8>,\n"
    "             %l: tensor<5xf8E4M3FN>, %m: index, %n: !quant.uniform<i8:f32, 0.1:128>, %o: tensor<0x0xf16>)\n"
    "    -> (tensor<f64>, tensor<ui8>) {\n"
    "  %0:2 = stablehlo.foo %a : (tensor<f32>) -> (tensor<f64>, tensor<ui8>)\n"
    "  return %0#0, %0#1 : tensor<f64>, tensor<ui8>\n"
    "}\n");
  const mlir_func *fn = f->modules[0]->funcs[0];
  cr_assert_eq(fn->nargs, 14);
  const mlir_type *t = fn->args[0].type;
  cr_assert_eq(t->kind, MLIR_T_TENSOR);
  cr_assert_eq(t->rank, 0);
  cr_assert_str_eq(t->elem->name, "f32");
  ASSERT_AT(f, t->off, 1, 18);
  ASSERT_AT(f, t->elem->off, 1, 25);
  cr_assert_eq(t->end - t->off, 11);
  t = fn->args[1].type;
  cr_assert_eq(t->rank, 2);
  cr_assert_eq(t->dims[0], 1);
  cr_assert_eq(t->dims[1], 7);
  cr_assert_str_eq(t->elem->name, "i1");
  t = fn->args[2].type;
  cr_assert_eq(t->dims[0], MLIR_DYN);
  cr_assert_eq(t->dims[1], 4);
  cr_assert_str_eq(t->elem->name, "bf16");
  cr_assert_eq(fn->args[3].type->rank, -1);
  t = fn->args[4].type;
  cr_assert_eq(t->elem->kind, MLIR_T_COMPLEX);
  cr_assert_str_eq(t->elem->elem->name, "f64");
  t = fn->args[5].type;
  cr_assert_eq(t->kind, MLIR_T_TUPLE);
  cr_assert_eq(t->nelems, 2);
  cr_assert_str_eq(type_text(t), "tuple<tensor<f32>, i32>");
  t = fn->args[6].type;
  cr_assert_eq(t->kind, MLIR_T_OTHER);
  cr_assert_str_eq(t->name, "!stablehlo.token");
  cr_assert_null(t->body);
  t = fn->args[7].type;
  cr_assert_str_eq(attr_text(t->encoding), "#sdy.sharding<@mesh, [{\"x\"}]>");
  cr_assert_str_eq(fn->args[8].type->elem->name, "ui32");
  cr_assert_str_eq(fn->args[9].type->elem->name, "si8");
  cr_assert_str_eq(fn->args[10].type->elem->name, "f8E4M3FN");
  cr_assert_eq(fn->args[11].type->kind, MLIR_T_SCALAR);
  cr_assert_str_eq(fn->args[11].type->name, "index");
  t = fn->args[12].type;
  cr_assert_str_eq(t->name, "!quant.uniform");
  cr_assert_str_eq(attr_text(t->body), "<i8:type f32, range(0.1, 128)>");
  t = fn->args[13].type;
  cr_assert_eq(t->rank, 2);
  cr_assert_eq(t->dims[0], 0);
  cr_assert_eq(fn->nresults, 2);
  const mlir_op *o = op_at(fn, 0);
  cr_assert_eq(o->sig.arrow, 1);
  cr_assert_eq(o->sig.nins, 1);
  cr_assert_eq(o->sig.nouts, 2);
  cr_assert_str_eq(o->sig.outs[1]->elem->name, "ui8");
}

Test(mlir, dimension_limits) {
  cr_assert_not_null(parse("func.func @f(%a: tensor<4611686018427387904xf32>)"));
  cr_assert_null(parse("func.func @f(%a: tensor<4611686018427387905xf32>)"));
  cr_assert_str_eq(first_line(), "t.mlir:1:25: error: dimension too large (the limit is 2^62)");
}

/* ---- attributes ---- */

static const mlir_attr *attr_of(const char *dict_text, const char *key) {
  static char text[4096];
  snprintf(text, sizeof text, "module attributes %s {\n}\n", dict_text);
  mlir_file *f = ok(text);
  const mlir_attr *a = mlir_attr_get(f->modules[0]->attrs, key);
  cr_assert_not_null(a, "no %s in %s", key, dict_text);
  return a;
}

typedef struct attr_case {
  char dict[300];
  char key[40];
  int kind;
  char text[300];        /* attr_text */
} attr_case;

static attr_case attr_cases[] = {
  {"{a = 42}", "a", MLIR_A_INT, "42"},
  {"{a = -7}", "a", MLIR_A_INT, "-7"},
  {"{a = 1 : i32}", "a", MLIR_A_INT, "1 : i32"},
  {"{a = -1.000000e+00}", "a", MLIR_A_FLOAT, "-1"},
  {"{a = 9.99999974E-6 : f32}", "a", MLIR_A_FLOAT, "1e-05 : f32"},
  {"{a = 0x7FC00000 : f32}", "a", MLIR_A_INT, "0x7FC00000 : f32"},
  {"{a = 0xFFF0000000000000}", "a", MLIR_A_INT, "0xFFF0000000000000"},
  {"{a = true, b = false}", "b", MLIR_A_BOOL, "false"},
  {"{a = unit}", "a", MLIR_A_UNIT, "unit"},
  {"{a, b = 1}", "a", MLIR_A_UNIT, "unit"},
  {"{a = \"s\"}", "a", MLIR_A_STRING, "\"s\""},
  {"{a = \"#sdy.sharding<@mesh, [{\\22x\\22}, {}]>\"}", "a", MLIR_A_STRING, "\"#sdy.sharding<@mesh, [{\"x\"}, {}]>\""},
  {"{mhlo.sharding = \"{replicated}\"}", "mhlo.sharding", MLIR_A_STRING, "\"{replicated}\""},
  {"{a = LT}", "a", MLIR_A_WORD, "LT"},
  {"{a = [DEFAULT, DEFAULT]}", "a", MLIR_A_LIST, "[DEFAULT, DEFAULT]"},
  {"{a = @main}", "a", MLIR_A_SYMBOL, "@main"},
  {"{a = @\"odd name\"}", "a", MLIR_A_SYMBOL, "@odd name"},
  {"{a = @outer::@inner}", "a", MLIR_A_SYMBOL, "@outer::@inner"},
  {"{a = [0, 1]}", "a", MLIR_A_LIST, "[0, 1]"},
  {"{a = []}", "a", MLIR_A_LIST, "[]"},
  {"{a = {b = 1, c = \"s\"}}", "a", MLIR_A_DICT, "{b=1, c=\"s\"}"},
  {"{a = dense<1.0> : tensor<f32>}", "a", MLIR_A_DENSE, "dense<1> : tensor<f32>"},
  {"{a = dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>}", "a", MLIR_A_DENSE, "dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>"},
  {"{a = dense<\"0x0000803F\"> : tensor<1xf32>}", "a", MLIR_A_DENSE, "dense<\"0x0000803F\"> : tensor<1xf32>"},
  {"{a = dense<0xFF800000> : tensor<f32>}", "a", MLIR_A_DENSE, "dense<0xFF800000> : tensor<f32>"},
  {"{a = dense<> : tensor<0xf32>}", "a", MLIR_A_DENSE, "dense<> : tensor<0xf32>"},
  {"{a = dense_resource<__elided__> : tensor<3xf32>}", "a", MLIR_A_DENSE_RESOURCE,
   "dense_resource<__elided__> : tensor<3xf32>"},
  {"{a = array<i64: 1, 256>}", "a", MLIR_A_ARRAY, "array<i64: 1, 256>"},
  {"{a = array<i64>}", "a", MLIR_A_ARRAY, "array<i64: >"},
  {"{a = #stablehlo<comparison_direction LT>}", "a", MLIR_A_DIALECT, "#stablehlo<seq(comparison_direction LT)>"},
  {"{a = #mhlo<comparison_type SIGNED>}", "a", MLIR_A_DIALECT, "#mhlo<seq(comparison_type SIGNED)>"},
  {"{a = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_contracting_dimensions = [1]>}", "a", MLIR_A_DIALECT,
   "#stablehlo.dot<lhs_batching_dimensions=[0], rhs_contracting_dimensions=[1]>"},
  {"{a = #sdy.sharding<@mesh, [{\"x\"}, {}]>}", "a", MLIR_A_DIALECT, "#sdy.sharding<@mesh, [{\"x\"}, {}]>"},
  {"{a = #sdy.sharding_per_value<[<@mesh, [{\"a\", ?}, {?}]>]>}", "a", MLIR_A_DIALECT,
   "#sdy.sharding_per_value<[<@mesh, [{\"a\", ?}, {?}]>]>"},
  {"{a = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=8}>}", "a", MLIR_A_DIALECT,
   "#sdy.op_sharding_rule<seq(([i, j], [i, j]) -> ([i, j]) {i=8, j=8})>"},
  {"{a = #loc3}", "a", MLIR_A_DIALECT, "#loc3"},
  {"{a = (tensor<4xf32>, f32) -> (tensor<f32>, i1)}", "a", MLIR_A_ARROW,
   "(type tensor<4xf32>, type f32) -> (type tensor<f32>, type i1)"},
  {"{a = () -> ()}", "a", MLIR_A_ARROW, "() -> ()"},
  {"{a = tensor<2x?xf32>}", "a", MLIR_A_TYPE, "type tensor<2x?xf32>"},
  {"{a = !stablehlo.token}", "a", MLIR_A_TYPE, "type !stablehlo.token"},
  {"{\"quoted key\" = 1}", "quoted key", MLIR_A_INT, "1"},
  {"{a = affine_map<(d0) -> (d0)>}", "a", MLIR_A_SEQ, "seq(affine_map <(d0) -> (d0)>)"},
  {"{a = #stablehlo.result_accuracy<atol = 0.000000e+00, mode = #stablehlo.result_accuracy_mode<DEFAULT>>}", "a",
   MLIR_A_DIALECT, "#stablehlo.result_accuracy<atol=0, mode=#stablehlo.result_accuracy_mode<DEFAULT>>"},
  {"{a = strided<[1], offset: ?>}", "a", MLIR_A_SEQ, "seq(strided <[1], offset:?>)"},
};

ParameterizedTestParameters(mlir, attributes) {
  return cr_make_param_array(attr_case, attr_cases, sizeof attr_cases / sizeof attr_cases[0]);
}

ParameterizedTest(attr_case *c, mlir, attributes) {
  const mlir_attr *a = attr_of(c->dict, c->key);
  cr_assert_eq((int)a->kind, c->kind, "%s: kind %d, wanted %d", c->dict, a->kind, c->kind);
  cr_assert_str_eq(attr_text(a), c->text);
}

Test(mlir, attribute_details) {
  const mlir_attr *a = attr_of("{a = 0xFFF0000000000000 : f64}", "a");
  cr_assert(a->is_hex);
  cr_assert_eq((uint64_t)a->i, 0xFFF0000000000000ull);
  cr_assert_str_eq(a->type->name, "f64");
  a = attr_of("{a = 9.99999974E-6}", "a");
  cr_assert_float_eq(a->f, 9.99999974e-6, 1e-18);
  a = attr_of("{a = 12}", "a");
  cr_assert_float_eq(a->f, 12.0, 0);
  a = attr_of("{a = \"tab\\tnl\\nq\\\"bs\\\\nul\\00x\"}", "a");
  cr_assert_eq(a->len, 17);
  cr_assert(memcmp(a->text, "tab\tnl\nq\"bs\\nul\0x", 18) == 0);
  a = attr_of("{a = \"caf\xc3\xa9 \xe2\x82\xac\"}", "a");
  cr_assert_str_eq(a->text, "caf\xc3\xa9 \xe2\x82\xac");
  a = attr_of("{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], "
              "start_index_map = [0], index_vector_dim = 2>}", "dimension_numbers");
  cr_assert_eq(a->nitems, 4);
  cr_assert_str_eq(a->text, "#stablehlo.gather");
  cr_assert_str_eq(attr_text(mlir_attr_get(a, "offset_dims")), "[2]");
  cr_assert_eq(mlir_attr_get(a, "index_vector_dim")->i, 2);
  cr_assert_null(mlir_attr_get(a, "slice_sizes"));
  a = attr_of("{a = array<i64: 1, 256>}", "a");
  cr_assert_str_eq(a->type->name, "i64");
  cr_assert_eq(a->nitems, 2);
  cr_assert_eq(a->items[1].val->i, 256);
  a = attr_of("{a = dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>}", "a");
  cr_assert_eq(a->nitems, 1);
  const mlir_attr *lit = a->items[0].val;
  cr_assert_eq(lit->kind, MLIR_A_LIST);
  cr_assert_eq(lit->nitems, 2);
  cr_assert_eq(lit->items[1].val->items[0].val->i, 3);
  cr_assert_eq(a->type->rank, 2);
  /* spans */
  mlir_file *f = ok("module attributes {k = dense<[1, 2]> : tensor<2xi32>} {\n}\n");
  a = mlir_attr_get(f->modules[0]->attrs, "k");
  cr_assert_eq(a->off, 23);
  cr_assert_eq(a->end - a->off, (uint32_t)strlen("dense<[1, 2]> : tensor<2xi32>"));
  cr_assert_eq(f->modules[0]->attrs->items[0].key_off, 19);
}

/* ---- sdy meshes ---- */

Test(mlir, meshes) {
  mlir_file *f = ok("sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
                    "sdy.mesh @old = <\"a\"=8>\n"
                    "sdy.mesh @ids = <[\"x\"=2], device_ids=[1, 0]>\n"
                    "sdy.mesh @empty = <[]>\n"
                    "module @m {\n  sdy.mesh @inner = <[\"_axis_0\"=2]> loc(#loc)\n}\n"
                    "#loc = loc(unknown)\n");
  cr_assert_eq(f->nmodules, 2);
  const mlir_module *top = f->modules[0];
  cr_assert(top->implicit);
  cr_assert_eq(top->nmeshes, 4);
  const mlir_mesh *m = top->meshes[0];
  cr_assert_str_eq(m->name, "mesh");
  cr_assert_eq(m->naxes, 2);
  cr_assert_str_eq(m->axes[1].name, "y");
  cr_assert_eq(m->axes[1].size, 4);
  ASSERT_AT(f, m->axes[1].off, 1, 27);
  cr_assert_null(m->device_ids);
  m = top->meshes[1];
  cr_assert_str_eq(m->name, "old");
  cr_assert_eq(m->naxes, 1);
  cr_assert_eq(m->axes[0].size, 8);
  m = top->meshes[2];
  cr_assert_str_eq(attr_text(m->device_ids), "[1, 0]");
  cr_assert_eq(top->meshes[3]->naxes, 0);
  cr_assert_eq(f->modules[1]->nmeshes, 1);
  cr_assert_str_eq(f->modules[1]->meshes[0]->axes[0].name, "_axis_0");
  cr_assert_eq(top->nops, 0);
}

/* ---- locations ---- */

Test(mlir, locations) {
  mlir_file *f = ok(
    "#loc1 = loc(\"model.py\":12:5)\n"
    "module @m {\n"
    "  func.func @f(%a: tensor<f32> loc(\"p0\"), %b: tensor<f32> loc(#loc2)) -> tensor<f32> {\n"
    "    %0 = stablehlo.add %a, %b : tensor<f32> loc(#loc1)\n"
    "    %1 = stablehlo.add %0, %b : tensor<f32> loc(\"jit(f)/add\"(\"other.py\":3:1))\n"
    "    %2 = stablehlo.add %1, %b : tensor<f32> loc(#loc4)\n"
    "    %3 = stablehlo.add %2, %b : tensor<f32> loc(#loc5)\n"
    "    %4 = stablehlo.add %3, %b : tensor<f32> loc(fused[\"a\", #loc1])\n"
    "    %5 = stablehlo.add %4, %b : tensor<f32> loc(#loc)\n"
    "    %6 = stablehlo.add %5, %b : tensor<f32> loc(#loc6)\n"
    "    %7 = stablehlo.add %6, %b : tensor<f32> loc(fused<\"meta\">[#loc, #loc2])\n"
    "    %8 = stablehlo.add %7, %b : tensor<f32>\n"
    "    return %8 : tensor<f32> loc(#loc3)\n"
    "  } loc(#loc3)\n"
    "} loc(#loc)\n"
    "#loc = loc(unknown)\n"
    "#loc2 = loc(\"name only\")\n"
    "#loc3 = loc(#loc1)\n"
    "#loc4 = loc(callsite(#loc2 at #loc1))\n"
    "#loc5 = loc(callsite(\"inner\" at \"lib.py\":7:9))\n"
    "#loc6 = loc(\"n\"(#loc7))\n"
    "#loc7 = loc(#loc5)\n");
  cr_assert_eq(f->naliases, 8);
  cr_assert_str_eq(f->aliases[0].name, "#loc1");
  cr_assert_eq(f->aliases[0].loc->kind, MLIR_L_FILE);
  cr_assert_str_eq(f->aliases[0].loc->text, "model.py");
  cr_assert_eq(f->aliases[0].loc->line, 12);
  cr_assert_eq(f->aliases[0].loc->col, 5);
  cr_assert_eq(mlir_alias_find(f, "#loc4")->loc->kind, MLIR_L_CALLSITE);
  cr_assert_null(mlir_alias_find(f, "#loc99"));
  const mlir_module *m = f->modules[0];
  cr_assert_null(mlir_loc_text(&A, m->loc));
  const mlir_func *fn = m->funcs[0];
  cr_assert_str_eq(mlir_loc_text(&A, fn->loc), "model.py:12:5");
  cr_assert_str_eq(mlir_loc_text(&A, fn->args[0].loc), "p0");
  cr_assert_str_eq(mlir_loc_text(&A, fn->args[1].loc), "name only");
  static const char *const want[] = {
    "model.py:12:5", "other.py:3:1", "model.py:12:5", "lib.py:7:9", "model.py:12:5", NULL, "lib.py:7:9",
    "name only", NULL,
  };
  for (int i = 0; i < 9; i++) {
    const char *got = mlir_loc_text(&A, op_at(fn, i)->loc);
    if (want[i]) cr_assert_str_eq(got, want[i], "op %d: %s", i, got ? got : "NULL");
    else cr_assert_null(got, "op %d: %s", i, got);
  }
  const mlir_loc *l = op_at(fn, 1)->loc;
  cr_assert_eq(l->kind, MLIR_L_NAME);
  cr_assert_str_eq(l->text, "jit(f)/add");
  cr_assert_eq(l->child->kind, MLIR_L_FILE);
  l = op_at(fn, 3)->loc;
  cr_assert_eq(l->kind, MLIR_L_ALIAS);
  cr_assert_eq(l->child, mlir_alias_find(f, "#loc5")->loc);
  cr_assert_eq(l->child->kind, MLIR_L_CALLSITE);
  cr_assert_str_eq(l->child->child->text, "inner");
  cr_assert_str_eq(l->child->caller->text, "lib.py");
  l = op_at(fn, 7)->loc;
  cr_assert_eq(l->kind, MLIR_L_FUSED);
  cr_assert_eq(l->nlocs, 2);
  cr_assert_str_eq(attr_text(l->meta), "<\"meta\">");
  cr_assert_null(op_at(fn, 8)->loc);
  ASSERT_AT(f, op_at(fn, 0)->loc->off, 4, 49);
}

/* MLIR's ranges (as jax.jit(..).lower(..).as_text(debug_info=True) prints
** them) in every place a location goes: the start of the range is the place. */
Test(mlir, location_ranges) {
  mlir_file *f = ok(
    "#loc1 = loc(\"model.py\":32:18 to :33)\n"
    "#loc2 = loc(\"model.py\":3:1 to 4:9)\n"
    "#loc3 = loc(\"model.py\":7)\n"
    "module @m {\n"
    "  func.func @f(%a: tensor<f32> loc(\"x\"(\"a.py\":1:2 to :5))) -> tensor<f32> {\n"
    "    %0 = stablehlo.add %a, %a : tensor<f32> loc(#loc4)\n"
    "    %1 = stablehlo.add %0, %a : tensor<f32> loc(callsite(\"f\"(\"c.py\":5:1 to 6:2) at \"b.py\":3:4 to :9))\n"
    "    %2 = stablehlo.add %1, %a : tensor<f32> loc(callsite(#loc3 at \"b.py\":3:4 to 8:1))\n"
    "    %3 = stablehlo.add %2, %a : tensor<f32> loc(fused<\"x\">[\"d.py\":1:1 to :3, #loc3])\n"
    "    %4 = stablehlo.add %3, %a : tensor<f32> loc(fused[#loc2, \"e.py\":2])\n"
    "    return %4 : tensor<f32> loc(#loc2)\n"
    "  } loc(#loc1)\n"
    "} loc(#loc)\n"
    "#loc = loc(unknown)\n"
    "#loc4 = loc(\"jit(f)/add\"(#loc1))\n");
  const mlir_loc *l = mlir_alias_find(f, "#loc1")->loc;
  cr_assert_eq(l->kind, MLIR_L_FILE);
  cr_assert(l->line == 32 && l->col == 18 && l->end_line == 32 && l->end_col == 33);
  l = mlir_alias_find(f, "#loc2")->loc;
  cr_assert(l->line == 3 && l->col == 1 && l->end_line == 4 && l->end_col == 9);
  l = mlir_alias_find(f, "#loc3")->loc;
  cr_assert(l->line == 7 && l->col == 0 && l->end_line == 0);
  const mlir_func *fn = f->modules[0]->funcs[0];
  cr_assert_str_eq(mlir_loc_text(&A, fn->loc), "model.py:32:18");
  cr_assert_str_eq(mlir_loc_text(&A, fn->args[0].loc), "a.py:1:2");
  static const char *const want[] = {"model.py:32:18", "c.py:5:1", "model.py:7", "d.py:1:1", "model.py:3:1"};
  for (int i = 0; i < 5; i++) cr_assert_str_eq(mlir_loc_text(&A, op_at(fn, i)->loc), want[i], "op %d", i);
}

/* ---- comments, resources, spacing ---- */

Test(mlir, comments_resources_and_crlf) {
  mlir_file *f = ok("// RUN: opt %s | FileCheck %s\r\n"
                    "module { // { ( [ < unbalanced in a comment\r\n"
                    "  func.func @f() -> tensor<2xf32> {   // caf\xc3\xa9\r\n"
                    "    %c = stablehlo.constant dense_resource<blob1> : tensor<2xf32>\r\n"
                    "    return %c : tensor<2xf32>\r\n"
                    "  }\r\n"
                    "}\r\n"
                    "// -----\r\n"
                    "{-#\r\n  dialect_resources: {\r\n    builtin: {\r\n      blob1: \"0x040000000000803F00000040\"\r\n"
                    "    }\r\n  }\r\n#-}\r\n");
  cr_assert_eq(f->nmodules, 1);
  cr_assert_gt(f->resources_end, f->resources_off);
  ASSERT_AT(f, f->resources_off, 9, 1);
  cr_assert_eq(f->src->text[f->resources_end - 1], '}');
  cr_assert_str_eq(items_text(first_op(f)), "dense_resource<blob1>");
}

Test(mlir, names_are_interned) {
  mlir_file *f = ok("func.func @f(%x: tensor<f32>) -> tensor<f32> {\n"
                    "  %0 = stablehlo.add %x, %x : tensor<f32>\n"
                    "  %1 = stablehlo.add %0, %x : tensor<f32>\n"
                    "  return %1 : tensor<f32>\n}\n");
  const mlir_func *fn = f->modules[0]->funcs[0];
  const mlir_op *a = op_at(fn, 0), *b = op_at(fn, 1);
  cr_assert_eq(a->name, b->name);
  cr_assert_eq(a->name, arena_intern_cstr(&A, "stablehlo.add"));
  cr_assert_eq(a->operands[0]->text, fn->args[0].name);
  cr_assert_eq(b->operands[0]->text, a->results[0].name);
  cr_assert_eq(a->sig.ins[0]->elem->name, fn->args[0].type->elem->name);
}

/* ---- errors ---- */

typedef struct err_case {
  char text[300];
  char first[200];       /* expected first line, without "t.mlir:" */
  char note[80];         /* expected note line (second rendered message) or "" */
} err_case;

static err_case err_cases[] = {
  {"", "1:1: error: no module or function in file; an MLIR file holds 'module { ... }' or func.func", ""},
  {"// nothing\n#loc = loc(unknown)\n", "1:1: error: no module or function in file", ""},
  {"module {", "1:9: error: unexpected end of input, expected '}' to close the module", "1:8: note: '{' opened here"},
  {"module @m {\n  func.func @f() {\n    return\n  }\n", "5:1: error: unexpected end of input, expected '}' to close module @m",
   "1:11: note: '{' opened here"},
  {"func.func @f() {\n  return\n", "3:1: error: unexpected end of input, expected '}' to close function @f",
   "1:16: note: '{' opened here"},
  {"func.func @f(%a: tensor<4x", "1:27: error: unexpected end of input, expected an element type such as f32",
   "1:24: note: '<' opened here"},
  {"func.func @f(%a: tensor<4xf32>", "1:31: error: unexpected end of input, expected ')' to close the arguments of @f",
   "1:13: note: '(' opened here"},
  {"func.func @f(%a: tensor<4xf32) {}", "1:30: error: unexpected ')', expected '>' to close 'tensor<'",
   "1:24: note: '<' opened here"},
  {"func.func @f() -> tensor<f32 {}", "1:30: error: unexpected '{', expected ',' or '>'", ""},
  {"func.func @f() { %0 = stablehlo.add %a, %b : tensor<4xf32>> }",
   "1:59: error: unexpected '>', expected '}' to close function @f", "1:16: note: '{' opened here"},
  {"func.func @f() { } }", "1:20: error: unexpected '}': there is no open '{' to close", ""},
  {"func.func @f() { } >", "1:20: error: unexpected '>': there is no open '<' to close", ""},
  {"func.func @f() { %0 = stablehlo.add %a, %b : tensor<4xf32>] }",
   "1:59: error: unexpected ']', expected '}' to close function @f", "1:16: note: '{' opened here"},
  {"func.func @f() {\n  %0 = stablehlo.add %a, %a\n  return %0 : tensor<f32>\n}",
   "3:3: error: unexpected 'return', expected ':' and the types of 'stablehlo.add'", ""},
  {"func.func @f() { %0 = stablehlo.add %a %b : tensor<f32> }",
   "1:40: error: unexpected '%b', expected ',' or ':' and the types of 'stablehlo.add'", ""},
  {"func.func @f() { %0 = stablehlo.add %a, %b",
   "1:43: error: unexpected end of input, expected '}' to close function @f", "1:16: note: '{' opened here"},
  {"func.func @f() { \"mhlo.add\"(%a, %b) }", "1:37: error: unexpected '}', expected ':', '(', '{' or '<'", ""},
  {"func.func @f() { %0 = = }", "1:23: error: unexpected '=', expected an op name such as stablehlo.add or \"mhlo.add\"", ""},
  {"func.func @f() { %0 = stablehlo.add %a, : tensor<f32> }", "1:41: error: unexpected ':', expected an operand or attribute", ""},
  {"module attributes {a = } {}", "1:24: error: unexpected '}', expected an attribute", ""},
  {"module attributes {a = 1, } {}", "1:27: error: unexpected '}', expected an attribute", ""},
  {"func.func @f() -> { }", "1:19: error: unexpected '{', expected a type or '('", ""},
  {"func.func @f(%a: tensor<3xq7>) {}", "1:27: error: unexpected 'q7', expected an element type such as f32", ""},
  {"func.func @f(%a: tensor<3x>) {}", "1:27: error: unexpected '>', expected an element type such as f32", ""},
  {"func.func @f(%a: tensor<x3xf32>) {}",
   "1:25: error: unexpected 'x3xf32', expected dimensions such as 4x8x or an element type such as f32", ""},
  {"func.func @f(%a: tensor<99999999999999999999xf32>) {}", "1:25: error: number too large (integers must fit in 64 bits)", ""},
  {"func.func @f() { %0 = stablehlo.broadcast_in_dim %x, dims = [0, 1) : (tensor<f32>) -> tensor<f32> }",
   "1:66: error: unexpected ')', expected ']' to close the list", "1:61: note: '[' opened here"},
  {"func.func @f() { %0 = stablehlo.constant dense<foo> : tensor<f32> }",
   "1:48: error: unexpected 'foo' in dense<...>, expected numbers, true or false, lists of them, or a hex string "
   "such as \"0x0000803F\"", ""},
  {"func.func @f() { %0 = stablehlo.constant dense<[1, @x]> : tensor<2xf32> }",
   "1:52: error: unexpected '@x' in dense<...>", ""},
  {"func.func @f() { %0 = stablehlo.constant dense<99999999999999999999> : tensor<i64> }",
   "1:48: error: number too large (integers must fit in 64 bits)", ""},
  {"func.func @f() { %0 = stablehlo.constant dense<1e999> : tensor<f64> }",
   "1:48: error: number too large (beyond the range of a double)", ""},
  {"func.func @f() { %0 = stablehlo.constant dense<0x1FFFFFFFFFFFFFFFF> : tensor<i64> }",
   "1:48: error: hexadecimal number too large (at most 64 bits, 16 digits)", ""},
  {"func.func @f() { %0 = stablehlo.constant dense<0x00000000000000000000000000000001> : tensor<i64> }", "", ""},
  {"func.func @f() { %0 = stablehlo.constant dense<.5> : tensor<f64> }",
   "1:48: error: a number must start with a digit: write 0.5", ""},
  {"func.func @f() { %0 = stablehlo.constant dense<\"abc> : tensor<i64> }",
   "1:48: error: unterminated string: end of input inside it", ""},
  {"func.func @f() { %0 = stablehlo.constant dense<\"ab\nc\"> : tensor<i64> }",
   "1:48: error: unterminated string: a string must end on the line where it starts", ""},
  {"func.func @f() { %0 = stablehlo.constant dense<\"a\\qb\"> : tensor<i64> }",
   "1:50: error: unknown escape in string; only \\\", \\\\, \\n, \\t and \\XX (two hex digits) may follow a backslash", ""},
  {"func.func @f() { %0 = stablehlo.constant dense<\"a\\4\"> : tensor<i64> }", "1:50: error: unknown escape in string", ""},
  {"module attributes {a = \"caf\xe9\"} {}", "1:28: error: invalid UTF-8 in string (byte \\xe9); write other bytes as \\XX escapes", ""},
  {"module attributes {a = \"\xed\xa0\x80\"} {}", "1:25: error: invalid UTF-8 in string (byte \\xed)", ""},
  {"module attributes {a = \"\xc0\xaf\"} {}", "1:25: error: invalid UTF-8 in string (byte \\xc0)", ""},
  {"module attributes {a = \"\\FF\\00\"} {}", "", ""},
  {"func.func @f() { %0 = stablehlo.add %a, $b : tensor<f32> }", "1:41: error: unexpected character '$'", ""},
  {"func.func @f() { %0 = stablehlo.add %a, %b : tensor<4xf32> \xc3\xa9 }",
   "1:60: error: unexpected character '\\xc3' (only ASCII is allowed outside comments and strings)", ""},
  {"func.func @f() { \x01 }", "1:18: error: unexpected character '\\x01'", ""},
  {"func.func @f() { % = stablehlo.add }", "1:18: error: '%' must be followed by a name, as in %0 or %arg0", ""},
  {"func.func @ () {}", "1:11: error: '@' must be followed by a name, as in @main", ""},
  {"func.func secret @f() {}",
   "1:11: error: unexpected 'secret', expected public, private or nested, or the function's name", ""},
  {"func.func @f() { return } loc(somewhere)",
   "1:31: error: unexpected 'somewhere' in a location, expected unknown, a string, #alias, fused[...] or callsite(...)", ""},
  {"func.func @f() { return } loc(callsite(\"a\" in \"b\"))", "1:44: error: unexpected 'in' in a location, expected at", ""},
  {"func.func @f() { return } loc(\"a\":1:2 to)", "1:41: error: unexpected ')', expected ':' or an integer", ""},
  {"func.func @f() { return } loc(fused[\"a\", \"a\":1:2 to 3])", "1:54: error: unexpected ']', expected ':'", ""},
  {"func.func @f() { return } loc(callsite(\"a\" at \"b\":1:2 to :c))", "1:59: error: unexpected 'c', expected an integer", ""},
  {"func.func @f() { return } loc(\"a\":1:2 to :3 to :4)", "1:45: error: unexpected 'to', expected ')'", ""},
  {"func.func @f() { %0:0 = call @g() : () -> () }", "1:21: error: a result count must be between 1 and 65536", ""},
  {"func.func @f() { %0#1 = call @g() : () -> () }", "1:18: error: a result name cannot carry '#1'", ""},
  {"func.func @f() { module {} }", "1:18: error: unexpected 'module': a module may only be at the top of the file", ""},
  {"func.func @f(%a: tensor<4xf32>) { reducer(%a) { } }",
   "1:35: error: unexpected 'reducer', expected an operation, '}' or a block label such as ^bb0", ""},
  {"sdy.mesh @m = <[\"x\"=0]>", "1:17: error: a mesh axis is written \"name\"=size with a size of at least 1", ""},
  {"sdy.mesh foo", "1:1: error: sdy.mesh needs a name and axes, as in sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>", ""},
  {"#loc1 = loc(\"a\")\n#loc1 = loc(\"b\")\nfunc.func @f() {}", "2:1: error: alias '#loc1' is defined twice",
   "1:1: note: first defined here"},
  {"#map = 3\nfunc.func @f() { return loc(#map) }", "2:29: error: '#map' is not a location", "1:1: note: defined here"},
  {"func.func @f() { return loc(#l9) }", "1:29: error: undefined location alias '#l9'", ""},
  {"func.func @f() { return loc(#a) }\n#a = loc(#b)\n#b = loc(#a)", "2:1: error: location alias '#a' refers to itself", ""},
  {"\"func.func\"() ({}) : () -> ()", "1:1: error: a generic func.func needs sym_name = \"name\"", ""},
  {"\"func.func\"() ({}) {sym_name = \"f\"} : () -> ()",
   "1:1: error: a generic func.func needs function_type = (argument types) -> (result types)", ""},
  {"\"func.func\"() ({}) {sym_name = \"f\", function_type = (tensor<f32>) -> ()} : () -> ()", "", ""},
  {"\"func.func\"() ({ \"func.return\"() : () -> () }) {sym_name = \"f\", function_type = (tensor<f32>) -> ()} : () -> ()",
   "1:81: error: function_type of @f has 1 argument types but its body's first block takes 0 arguments", ""},
  {"\"builtin.module\"() ({}, {}) : () -> ()", "1:1: error: a builtin.module has one region of one block", ""},
  {"{-# dialect_resources: {", "1:1: error: unterminated resource section: '{-#' without its '#-}'", ""},
  {"func.func @f() { %0 = stablehlo.foo %a {x = [1, 2} : tensor<f32> }",
   "1:50: error: unexpected '}', expected ']' to close the list", "1:45: note: '[' opened here"},
  {"func.func @f() { %0 = \"x\"(%a) ({ \"y\"() : () -> () ) : (tensor<f32>) -> tensor<f32> }",
   "1:51: error: unexpected ')', expected '}' to close the region of 'x'", "1:32: note: '{' opened here"},
  {"func.func @f() { %0 = \"x\"(%a) ({ \"y\"() : () -> () }",
   "1:52: error: unexpected end of input, expected ')' to close the regions of 'x'", "1:31: note: '(' opened here"},
  {"func.func @f() { %0 = stablehlo.r(%a init: %b) across dimensions = [0] : (tensor<f32>) -> tensor<f32>\n"
   " reducer(%x: tensor<f32>) { stablehlo.return %x : tensor<f32> \n}",
   "3:2: error: unexpected end of input, expected '}' to close function @f", "1:16: note: '{' opened here"},
  {"func.func @f() { %0 = stablehlo.r(%a init: %b) across dimensions = [0] : (tensor<f32>) -> tensor<f32>\n"
   " reducer(%x: tensor<f32>) { stablehlo.return %x : tensor<f32> ",
   "2:63: error: unexpected end of input, expected '}' to close region 'reducer'", "2:27: note: '{' opened here"},
  {"module attributes {a = #stablehlo.gather<offset_dims = [2], x = 1} {}",
   "1:66: error: unexpected '}', expected '>' to close '#stablehlo.gather<'", "1:41: note: '<' opened here"},
  {"module attributes {a = dense<[1, 2]} {}", "1:36: error: unexpected '}', expected '>' to close 'dense<'",
   "1:29: note: '<' opened here"},
  {"module attributes {a = array<i64: 1, 2} {}", "1:39: error: unexpected '}', expected '>' to close 'array<'",
   "1:29: note: '<' opened here"},
  {"module attributes {a = <[1]} {}", "1:28: error: unexpected '}', expected '>' to close the '<'",
   "1:24: note: '<' opened here"},
  {"module attributes {a = [1, 2} {}", "1:29: error: unexpected '}', expected ']' to close the list",
   "1:24: note: '[' opened here"},
  {"module attributes {a = 1 : } {}", "1:28: error: unexpected '}', expected a type or an integer", ""},
  {"module attributes {a = 1 b = 2} {}", "1:28: error: unexpected '=', expected an attribute, ',', ':' or '}'", ""},
};

ParameterizedTestParameters(mlir, errors) {
  return cr_make_param_array(err_case, err_cases, sizeof err_cases / sizeof err_cases[0]);
}

ParameterizedTest(err_case *c, mlir, errors) {
  pt_error_case(parse(c->text), &D, "t.mlir", c->text, c->first, c->note);
}

/* A NUL inside the text is an error, not the end of input. */
Test(mlir, embedded_nul) {
  static const char text[] = "func.func @f() {\n  return \0 }";
  cr_assert_null(parse_n(text, sizeof text - 1));
  cr_assert_str_eq(first_line(), "t.mlir:2:10: error: unexpected character '\\x00' (is this a binary file?)");
  cr_assert_eq(D.nerrors, 1);
  diag_clear(&D);
  static const char text2[] = "module attributes {a = \"x\0\"} {}";
  cr_assert_null(parse_n(text2, sizeof text2 - 1));
  cr_assert_str_eq(first_line(), "t.mlir:1:26: error: unexpected character '\\x00' in string (is this a binary file?)");
  diag_clear(&D);
  static const char text3[] = "func.func @f() { } // \0 in a comment";
  cr_assert_null(parse_n(text3, sizeof text3 - 1));
  cr_assert_str_eq(first_line(), "t.mlir:1:23: error: unexpected character '\\x00' (is this a binary file?)");
}

/* ---- the tests/errors/mlir corpus: "// expect: LINE:COL: error: ..." ---- */

Test(mlir, error_corpus) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/tests/errors/mlir", SRCDIR);
  DIR *dp = opendir(dir);
  cr_assert_not_null(dp, "cannot open %s", dir);
  int n = 0;
  struct dirent *de;
  while ((de = readdir(dp))) {
    size_t nl = strlen(de->d_name);
    if (nl < 6 || strcmp(de->d_name + nl - 5, ".mlir") != 0) continue;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    arena a;
    diag d;
    arena_init(&a);
    diag_init(&d);
    diag_src *whole = diag_load_file(&a, &d, path);
    cr_assert_not_null(whole, "%s", diag_text(&d));
    const diag_src *src = diag_src_string(&a, de->d_name, whole->text, whole->len);   /* named as carve would */
    const char *k = "// expect: ";
    cr_assert(strncmp(src->text, k, strlen(k)) == 0, "%s: the first line must be '// expect: ...'", de->d_name);
    const char *e = src->text + strlen(k);
    size_t el = strcspn(e, "\n");
    cr_assert(strncmp(e + el, "\n// stage: syntax\n", 18) == 0, "%s: the second line must be '// stage: syntax'",
              de->d_name);
    char want[1200];
    snprintf(want, sizeof want, "%s:%.*s", de->d_name, (int)el, e);
    mlir_file *f = mlir_parse(&a, &d, src);
    cr_assert_null(f, "%s parsed without error", de->d_name);
    cr_assert_eq(d.nerrors, 1, "%s: %d errors", de->d_name, d.nerrors);
    cr_assert_str_eq(pt_first_line(&d), want, "%s\nwanted: %s\ngot:    %s", de->d_name, want, pt_first_line(&d));
    cr_assert_not_null(strstr(diag_text(&d), "^\n"));
    diag_free(&d);
    arena_free(&a);
    n++;
  }
  closedir(dp);
  cr_assert_geq(n, 20, "only %d files in tests/errors/mlir", n);
}

Test(mlir, alias_cycles) {
  cr_assert_null(parse("#a = loc(fused[#b, \"x\"])\n#b = loc(callsite(#c at #a))\n#c = loc(\"z\")\n"
                       "func.func @f() { return loc(#a) }"));
  cr_assert_str_eq(first_line(), "t.mlir:1:1: error: location alias '#a' refers to itself");
  diag_clear(&D);
  /* a long chain is fine, and resolved in linear time */
  size_t cap = 40 * 20000 + 100, n = 0;
  char *s = malloc(cap);
  n += (size_t)sprintf(s + n, "func.func @f() { return loc(#l0) }\n");
  for (int i = 0; i < 20000; i++) n += (size_t)sprintf(s + n, "#l%d = loc(#l%d)\n", i, i + 1);
  n += (size_t)sprintf(s + n, "#l20000 = loc(\"end.py\":1:2)\n");
  mlir_file *f = parse_n(s, n);
  free(s);
  cr_assert_not_null(f, "%s", diag_text(&D));
  cr_assert_str_eq(mlir_loc_text(&A, f->aliases[0].loc), "end.py:1:2");
}

/* ---- bounded nesting ---- */

Test(mlir, deep_nesting_5000) {
  const char *units[][2] = {
    {"[", "]"}, {"(", ")"}, {"{b = ", "}"}, {"<", ">"}, {"#d<", ">"}, {"[1, ", "]"}, {"dense<[", "]>"},
  };
  for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
    char *s = pt_repeat("module attributes {a = ", units[u][0], 5000, "1", units[u][1], "} {}");
    mlir_file *f = parse(s);
    free(s);
    cr_assert_null(f);
    cr_assert_not_null(strstr(first_line(), "error: nesting deeper than 256 levels"), "%zu: %s", u, first_line());
    cr_assert_eq(D.nerrors, 1);
    diag_clear(&D);
  }
  /* types and regions */
  char *s = pt_repeat("func.func @f(%a: ", "tensor<2x", 5000, "f32", ">", ") {}");
  cr_assert_null(parse(s));
  free(s);
  cr_assert_not_null(strstr(first_line(), "nesting deeper than 256 levels"), "%s", first_line());
  diag_clear(&D);
  s = pt_repeat("func.func @f() {\n", "\"x\"() ({\n", 3000, "", "}) : () -> ()\n", "}\n");
  cr_assert_null(parse(s));
  free(s);
  cr_assert_not_null(strstr(first_line(), "nesting deeper than 256 levels"), "%s", first_line());
  diag_clear(&D);
  /* unclosed, too */
  s = pt_repeat("module attributes {a = ", "[", 5000, "", "", "");
  cr_assert_null(parse(s));
  free(s);
  cr_assert_not_null(strstr(first_line(), "nesting deeper than 256 levels"));
  diag_clear(&D);
  /* right-nested without brackets: (a) -> (b) -> (c) -> ... */
  s = pt_repeat("module attributes {a = ", "() -> ", 20000, "()", "", "} {}");
  cr_assert_null(parse(s));
  free(s);
  cr_assert_not_null(strstr(first_line(), "nesting deeper than the parser allows"), "%s", first_line());
  cr_assert_eq(D.nerrors, 1);
}

Test(mlir, nesting_up_to_the_limit) {
  /* the attribute dictionary's '{' is one level: 255 more are fine, 256 are not */
  const char *units[][2] = {{"[", "]"}, {"(", ")"}, {"<", ">"}, {"{b = ", "}"}, {"[1, ", "]"}};
  for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
    char *s = pt_repeat("module attributes {a = ", units[u][0], 255, "1", units[u][1], "} {}");
    cr_assert_not_null(parse(s), "%zu: %s", u, diag_text(&D));
    free(s);
    s = pt_repeat("module attributes {a = ", units[u][0], 256, "1", units[u][1], "} {}");
    cr_assert_null(parse(s));
    free(s);
    diag_clear(&D);
  }
  /* regions: the function's '{' then ({ per op, two levels each */
  char *s = pt_repeat("func.func @f() {\n", "\"x\"() ({\n", 127, "", "}) : () -> ()\n", "}\n");
  mlir_file *f = parse(s);
  free(s);
  cr_assert_not_null(f, "%s", diag_text(&D));
  counts c = count_file(f);
  cr_assert_eq(c.total, 127);
}

/* ---- big inputs ---- */

Test(mlir, ten_megabytes) {
  size_t big = 10u << 20;
  /* a 10 MB hex constant parses; its string is kept as written, "0x" and the digits */
  char *s = malloc(big + 200);
  size_t n = (size_t)sprintf(s, "func.func @f() -> tensor<%zuxf32> {\n  %%c = stablehlo.constant dense<\"0x", big / 8);
  for (size_t i = 0; i < big; i++) s[n++] = "0123456789ABCDEF"[i % 16];
  n += (size_t)sprintf(s + n, "\"> : tensor<%zuxf32>\n  return %%c : tensor<%zuxf32>\n}\n", big / 8, big / 8);
  mlir_file *f = parse_n(s, n);
  cr_assert_not_null(f, "%s", diag_text(&D));
  const mlir_attr *d = first_op(f)->items[0].val;
  cr_assert_eq(d->kind, MLIR_A_DENSE);
  cr_assert_eq(d->items[0].val->len, big + 2);
  /* 10 MB of one bracket, of random bytes, of a string never closed: one located error each */
  memset(s, '[', big);
  cr_assert_null(parse_n(s, big));
  cr_assert_eq(D.nerrors, 1);
  diag_clear(&D);
  uint64_t seed = 99;
  for (size_t i = 0; i < big; i++) s[i] = (char)(pt_rng(&seed) >> 56);
  cr_assert_null(parse_n(s, big));
  cr_assert_eq(D.nerrors, 1);
  diag_clear(&D);
  memcpy(s, "module attributes {a = \"", 24);
  memset(s + 24, 'a', big - 24);
  cr_assert_null(parse_n(s, big));
  cr_assert_not_null(strstr(first_line(), "t.mlir:1:24: error: unterminated string: end of input inside it"),
                     "%s", first_line());
  free(s);
}

/* The bert file concatenated k times: k modules, k times the ops, k times the memory. */
static size_t parse_bert_times(int k, double *seconds, int *ops) {
  const diag_src *one = load_real("stablehlo-models/stablehlo-exports/pt_bert.mlir");
  char *s = malloc(one->len * (size_t)k + 1);
  for (int i = 0; i < k; i++) memcpy(s + one->len * (size_t)i, one->text, one->len);
  arena a;
  arena_init(&a);
  diag_src *src = diag_src_string(&a, "bert.mlir", s, one->len * (size_t)k);
  free(s);
  size_t before = a.used;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  mlir_file *f = mlir_parse(&a, &D, src);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  cr_assert_not_null(f, "%s", diag_text(&D));
  cr_assert_eq(f->nmodules, k);
  *seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  *ops = count_file(f).total;
  size_t used = a.used - before;
  arena_free(&a);
  return used;
}

Test(mlir, cost_is_linear) {
  double t1, t20;
  int n1, n20;
  size_t m1 = parse_bert_times(1, &t1, &n1);
  size_t m20 = parse_bert_times(20, &t20, &n20);
  cr_assert_eq(n1, 2938);
  cr_assert_eq(n20, 20 * 2938);
  /* memory: twenty times, give or take the interning of names already seen and array growth */
  double ratio = (double)m20 / (double)m1;
  cr_assert(ratio > 19.0 && ratio < 20.5, "memory %zu for one, %zu for twenty (x%.2f)", m1, m20, ratio);
  /* time: 5 MB in seconds even under sanitizers on a loaded machine, never minutes */
  cr_assert_lt(t20, 10.0, "%.2f s for 5 MB", t20);
}

/* ---- garbage never crashes ---- */

/* Parse n bytes: a tree, or exactly one error located in the file. */
static void parse_garbage(const char *buf, size_t n) {
  arena a;
  diag d;
  arena_init(&a);
  diag_init(&d);
  mlir_file *f = mlir_parse(&a, &d, diag_src_string(&a, "g.mlir", buf, n));
  if (!f) {
    cr_assert_eq(d.nerrors, 1, "%s", diag_text(&d));
    int line, col, k = 0;
    cr_assert(sscanf(diag_text(&d), "g.mlir:%d:%d: error: %n", &line, &col, &k) == 2 && k > 0, "%s", diag_text(&d));
    cr_assert_not_null(strstr(diag_text(&d), "^\n"));
  } else {
    cr_assert_eq(d.nerrors, 0);
    cr_assert_gt(f->nmodules, 0);
    count_file(f);                      /* every node reachable */
  }
  diag_free(&d);
  arena_free(&a);
}

Test(mlir, random_bytes) {
  pt_random_bytes(parse_garbage);
}

static const char *const mlir_pieces[] = {
  "module ", "@m ", "attributes ", "{", "}", "(", ")", "[", "]", "<", ">", "func.func ", "@f", "%0", "%arg0",
  "%0#1", ":", ",", "=", "->", "-", "tensor<", "4x", "f32", "i1", "dense<", "array<i64: ", "1", "2.5",
  "0x7FC00000", "\"s\"", "\n", " ", "// c\n", "stablehlo.add ", "\"mhlo.add\"", "reducer", "^bb0", "loc(",
  "#loc1", "#stablehlo.gather<", "!stablehlo.token", "x", "?", "dims = ", "init: ", "applies ", "{-#", "#-}",
  "sdy.mesh ", "unknown", "fused[", "callsite(", " at ", "return ", "\\", "\"",
};

Test(mlir, random_tokens) {
  static const char *const heads[] = {"", "func.func @f() {\n", "module attributes {a = ",
                                      "func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.add "};
  pt_random_tokens(parse_garbage, 600, mlir_pieces, sizeof mlir_pieces / sizeof mlir_pieces[0], heads, 4);
}

/* Mutations of a real file (its first 64 KB when it is bigger): truncated at
** ntrunc evenly spaced places, nflip copies with 1 to 4 bytes changed (half
** of them to bytes that mean something in MLIR), and ndel copies with one
** bracket deleted. Each must give a tree or one located error. */
static void mutate_real(const char *rel, int ntrunc, int nflip, int ndel) {
  const diag_src *s = load_real(rel);
  size_t n = s->len;
  if (n > 65536) {
    n = 65536;
    while (n > 0 && s->text[n - 1] != '\n') n--;
  }
  char *buf = malloc(n + 1);
  for (int i = 0; i < ntrunc; i++) parse_garbage(s->text, (size_t)((double)i * (double)n / ntrunc));
  static const char meaningful[] = "{}()[]<>,:=%@#^!\"\\x-0123456789 \n";
  uint64_t seed = 12345;
  for (int i = 0; i < nflip; i++) {
    memcpy(buf, s->text, n);
    int flips = 1 + (int)(pt_rng(&seed) % 4);
    for (int k = 0; k < flips; k++) {
      size_t pos = pt_rng(&seed) % n;
      buf[pos] = (i & 1) ? meaningful[pt_rng(&seed) % (sizeof meaningful - 1)] : (char)(pt_rng(&seed) >> 56);
    }
    parse_garbage(buf, n);
  }
  size_t nbr = 0;
  for (size_t i = 0; i < n; i++) nbr += strchr("{}()[]<>", s->text[i]) && s->text[i] ? 1 : 0;
  cr_assert_gt(nbr, 0);
  for (int i = 0; i < ndel; i++) {
    size_t want = (size_t)((double)i * (double)nbr / ndel), seen = 0, pos = 0;
    for (pos = 0; pos < n; pos++)
      if (s->text[pos] && strchr("{}()[]<>", s->text[pos]) && seen++ == want) break;
    memcpy(buf, s->text, pos);
    memcpy(buf + pos, s->text + pos + 1, n - pos - 1);
    parse_garbage(buf, n - 1);
  }
  free(buf);
}

Test(mlir, mutated_chess, .timeout = 300) {
  mutate_real("stablehlo-models/stablehlo-exports/searchless_chess_9m.mlir", 200, 400, 200);
}
Test(mlir, mutated_bert, .timeout = 300) {
  mutate_real("stablehlo-models/stablehlo-exports/pt_bert.mlir", 200, 400, 200);
}
Test(mlir, mutated_llama, .timeout = 300) {
  mutate_real("stablehlo-models/tt-mlir/sdy_llama_attn_prefill_manual.mlir", 300, 600, 300);
}
Test(mlir, mutated_nanogpt, .timeout = 300) {
  mutate_real("stablehlo-models/byteir/NanoGPT_BW_input.mlir", 200, 400, 200);
}

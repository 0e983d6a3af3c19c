/*
** test_tac.c: the tactic-file parser (lang/tac_*): trees, offsets, sizes,
** the REPL form and its "incomplete" answer, error messages with their
** places, bounded nesting, garbage input, and the .tac files of the
** tests/errors corpus.
*/
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lang/tac.h"
#include "parsetest.h"

static arena A;
static diag D;

static void setup(void) { arena_init(&A); diag_init(&D); }
static void teardown(void) { diag_free(&D); arena_free(&A); }

TestSuite(tac, .init = setup, .fini = teardown);

static const diag_src *src_of(const char *text, size_t len) {
  return diag_src_string(&A, "t.tac", text, len);
}

static tac_file *parse(const char *text) {
  return tac_parse(&A, &D, src_of(text, strlen(text)));
}

static tac_file *parse_line(const char *text, int *incomplete) {
  return tac_parse_line(&A, &D, src_of(text, strlen(text)), incomplete);
}

/* Parse text that must be valid. */
static tac_file *ok(const char *text) {
  tac_file *f = parse(text);
  cr_assert_not_null(f, "parse failed:\n%s", diag_text(&D) ? diag_text(&D) : "(no message)");
  cr_assert_eq(D.nerrors, 0);
  return f;
}

static const char *first_line(void) { return pt_first_line(&D); }

/* Offset of the nth (0-based) occurrence of needle in text. */
static uint32_t at(const char *text, const char *needle, int nth) {
  const char *p = text;
  for (;;) {
    p = strstr(p, needle);
    cr_assert_not_null(p, "'%s' not in the text", needle);
    if (nth-- == 0) return (uint32_t)(p - text);
    p++;
  }
}

/* ---- the example of DESIGN.md ---- */

static const char design_text[] =
  "# gpt2.tac \xe2\x80\x94 kept next to gpt2.cir\n"
  "mesh batch = 2, model = 2            # default; --mesh on the command line overrides\n"
  "\n"
  "use \"batch\"    as bp  (axis = batch)        # stdlib-tactics/batch.tac\n"
  "use \"megatron\" as mp  (axis = model)        # stdlib-tactics/megatron.lua\n"
  "use \"zero\"     as z3  (axis = batch, stage = 3)\n"
  "\n"
  "tactic emb(axis = model) {\n"
  "  shard param \"wte\" dim 0 on axis\n"
  "  replicate value \"logits\" on axis            # keep this value whole on that axis\n"
  "}\n"
  "\n"
  "tactic custom = lua \"my_tactic.lua\" (axis = model)\n"
  "tactic found  = auto (axes = [model], objective = time, memory_limit = 16GiB, budget = 2000)\n"
  "\n"
  "schedule bp, mp, emb, z3\n";

static void check_name_arg(const tac_arg *g, const char *key, uint32_t key_off,
                           const char *val, uint32_t val_off) {
  cr_assert_str_eq(g->key, key);
  cr_assert_eq(g->off, key_off, "%s at %u, wanted %u", key, g->off, key_off);
  cr_assert_eq(g->has_val, 1);
  cr_assert_eq(g->val.kind, TAC_VNAME);
  cr_assert_str_eq(g->val.text, val);
  cr_assert_eq(g->val.off, val_off);
}

Test(tac, design_example) {
  const char *T = design_text;
  tac_file *f = ok(T);
  cr_assert_eq(f->version, 0);
  cr_assert_eq(f->ndecls, 8);
  tac_decl *d = f->decls;

  /* mesh batch = 2, model = 2 */
  cr_assert_eq(d[0].kind, TAC_MESH);
  cr_assert_eq(d[0].off, at(T, "mesh", 0));
  ASSERT_AT(f, d[0].off, 2, 1);
  cr_assert_null(d[0].name);
  cr_assert_null(d[0].path);
  cr_assert_eq(d[0].nargs, 2);
  cr_assert_eq(d[0].nstmts, 0);
  cr_assert_eq(d[0].nnames, 0);
  cr_assert_str_eq(d[0].args[0].key, "batch");
  cr_assert_eq(d[0].args[0].off, at(T, "batch", 0));
  cr_assert_eq(d[0].args[0].has_val, 1);
  cr_assert_eq(d[0].args[0].val.kind, TAC_VINT);
  cr_assert_eq(d[0].args[0].val.i, 2);
  cr_assert_eq(d[0].args[0].val.num, 2.0);
  ASSERT_AT(f, d[0].args[0].val.off, 2, 14);
  cr_assert_str_eq(d[0].args[1].key, "model");
  ASSERT_AT(f, d[0].args[1].off, 2, 17);
  cr_assert_eq(d[0].args[1].val.i, 2);
  ASSERT_AT(f, d[0].args[1].val.off, 2, 25);

  /* use "batch" as bp (axis = batch) */
  cr_assert_eq(d[1].kind, TAC_USE);
  ASSERT_AT(f, d[1].off, 4, 1);
  cr_assert_str_eq(d[1].path, "batch");
  cr_assert_eq(d[1].path_off, at(T, "\"batch\"", 0));
  cr_assert_str_eq(d[1].name, "bp");
  cr_assert_eq(d[1].name_off, at(T, "bp", 0));
  cr_assert_eq(d[1].nargs, 1);
  check_name_arg(&d[1].args[0], "axis", at(T, "axis", 0), "batch", at(T, "batch)", 0));
  cr_assert_eq(d[1].nstmts, 0);

  cr_assert_eq(d[2].kind, TAC_USE);
  cr_assert_str_eq(d[2].path, "megatron");
  cr_assert_str_eq(d[2].name, "mp");
  cr_assert_eq(d[2].nargs, 1);
  check_name_arg(&d[2].args[0], "axis", at(T, "axis", 1), "model", at(T, "model)", 0));

  /* use "zero" as z3 (axis = batch, stage = 3) */
  cr_assert_eq(d[3].kind, TAC_USE);
  cr_assert_str_eq(d[3].path, "zero");
  cr_assert_eq(d[3].path_off, at(T, "\"zero\"", 0));
  cr_assert_str_eq(d[3].name, "z3");
  cr_assert_eq(d[3].nargs, 2);
  check_name_arg(&d[3].args[0], "axis", at(T, "axis", 2), "batch", at(T, "batch,", 0));
  cr_assert_str_eq(d[3].args[1].key, "stage");
  cr_assert_eq(d[3].args[1].off, at(T, "stage", 0));
  cr_assert_eq(d[3].args[1].val.kind, TAC_VINT);
  cr_assert_eq(d[3].args[1].val.i, 3);
  cr_assert_eq(d[3].args[1].val.off, at(T, "3)", 0));

  /* tactic emb(axis = model) { ... } */
  tac_decl *e = &d[4];
  cr_assert_eq(e->kind, TAC_TACTIC);
  ASSERT_AT(f, e->off, 8, 1);
  cr_assert_str_eq(e->name, "emb");
  ASSERT_AT(f, e->name_off, 8, 8);
  cr_assert_null(e->path);
  cr_assert_eq(e->nargs, 1);
  check_name_arg(&e->args[0], "axis", at(T, "axis", 3), "model", at(T, "model)", 1));
  cr_assert_eq(e->nstmts, 2);
  tac_stmt *s = &e->stmts[0];
  cr_assert_eq(s->kind, TAC_SHARD);
  ASSERT_AT(f, s->off, 9, 3);
  cr_assert_eq(s->sel, TAC_SEL_PARAM);
  cr_assert_eq(s->plural, 0);
  cr_assert_str_eq(s->glob, "wte");
  ASSERT_AT(f, s->glob_off, 9, 15);
  cr_assert_eq(s->dim, TAC_DIM_INDEX);
  cr_assert_eq(s->index, 0);
  ASSERT_AT(f, s->dim_off, 9, 25);
  cr_assert_str_eq(s->axis, "axis");
  ASSERT_AT(f, s->axis_off, 9, 30);
  s = &e->stmts[1];
  cr_assert_eq(s->kind, TAC_REPLICATE);
  ASSERT_AT(f, s->off, 10, 3);
  cr_assert_eq(s->sel, TAC_SEL_VALUE);
  cr_assert_eq(s->plural, 0);
  cr_assert_str_eq(s->glob, "logits");
  ASSERT_AT(f, s->glob_off, 10, 19);
  cr_assert_eq(s->dim, TAC_DIM_NONE);
  cr_assert_str_eq(s->axis, "axis");
  ASSERT_AT(f, s->axis_off, 10, 31);

  /* tactic custom = lua "my_tactic.lua" (axis = model) */
  cr_assert_eq(d[5].kind, TAC_LUA);
  ASSERT_AT(f, d[5].off, 13, 1);
  cr_assert_str_eq(d[5].name, "custom");
  ASSERT_AT(f, d[5].name_off, 13, 8);
  cr_assert_str_eq(d[5].path, "my_tactic.lua");
  ASSERT_AT(f, d[5].path_off, 13, 21);
  cr_assert_eq(d[5].nargs, 1);
  check_name_arg(&d[5].args[0], "axis", at(T, "axis", 7), "model", at(T, "model)", 2));
  cr_assert_eq(d[5].nstmts, 0);

  /* tactic found = auto (axes = [model], objective = time, memory_limit = 16GiB, budget = 2000) */
  tac_decl *u = &d[6];
  cr_assert_eq(u->kind, TAC_AUTO);
  ASSERT_AT(f, u->off, 14, 1);
  cr_assert_str_eq(u->name, "found");
  ASSERT_AT(f, u->name_off, 14, 8);
  cr_assert_null(u->path);
  cr_assert_eq(u->nargs, 4);
  cr_assert_str_eq(u->args[0].key, "axes");
  cr_assert_eq(u->args[0].val.kind, TAC_VLIST);
  ASSERT_AT(f, u->args[0].val.off, 14, 30);
  cr_assert_eq(u->args[0].val.nitems, 1);
  cr_assert_eq(u->args[0].val.items[0].kind, TAC_VNAME);
  cr_assert_str_eq(u->args[0].val.items[0].text, "model");
  ASSERT_AT(f, u->args[0].val.items[0].off, 14, 31);
  check_name_arg(&u->args[1], "objective", at(T, "objective", 0), "time", at(T, "time", 0));
  cr_assert_str_eq(u->args[2].key, "memory_limit");
  cr_assert_eq(u->args[2].val.kind, TAC_VSIZE);
  cr_assert_eq(u->args[2].val.i, (int64_t)16 << 30);
  cr_assert_str_eq(u->args[2].val.text, "16GiB");
  cr_assert_eq(u->args[2].val.off, at(T, "16GiB", 0));
  cr_assert_str_eq(u->args[3].key, "budget");
  cr_assert_eq(u->args[3].val.kind, TAC_VINT);
  cr_assert_eq(u->args[3].val.i, 2000);

  /* schedule bp, mp, emb, z3 */
  cr_assert_eq(d[7].kind, TAC_SCHEDULE);
  ASSERT_AT(f, d[7].off, 16, 1);
  cr_assert_eq(d[7].nnames, 4);
  const char *want[] = {"bp", "mp", "emb", "z3"};
  const int cols[] = {10, 14, 18, 23};
  for (int i = 0; i < 4; i++) {
    cr_assert_str_eq(d[7].names[i], want[i]);
    ASSERT_AT(f, d[7].name_offs[i], 16, cols[i]);
  }
  /* names are interned: the schedule's bp is the alias's bp */
  cr_assert_eq(d[7].names[0], d[1].name);
  cr_assert_eq(d[7].names[2], d[4].name);
  cr_assert_eq(d[4].stmts[0].axis, d[4].args[0].key);
}

/* ---- statements ---- */

Test(tac, dimspecs) {
  tac_file *f = ok("tactic t {\n"
                   "  shard param w dim 0 on m\n"
                   "  shard param w dim 3 on m\n"
                   "  shard param w dim -1 on m\n"
                   "  shard param w dim - 2 on m\n"
                   "  shard param w dim first on m\n"
                   "  shard param w dim last on m\n"
                   "  shard param w dim largest on m\n"
                   "  replicate param w dim largest on m\n"
                   "  replicate param w dim -3 on m\n"
                   "  replicate param w on m\n"
                   "}\n");
  tac_stmt *s = f->decls[0].stmts;
  cr_assert_eq(f->decls[0].nstmts, 10);
  cr_assert(s[0].dim == TAC_DIM_INDEX && s[0].index == 0);
  cr_assert(s[1].dim == TAC_DIM_INDEX && s[1].index == 3);
  cr_assert(s[2].dim == TAC_DIM_INDEX && s[2].index == -1);
  ASSERT_AT(f, s[2].dim_off, 4, 21);                 /* at the '-' */
  cr_assert(s[3].dim == TAC_DIM_INDEX && s[3].index == -2);
  cr_assert_eq(s[4].dim, TAC_DIM_FIRST);
  ASSERT_AT(f, s[4].dim_off, 6, 21);
  cr_assert_eq(s[5].dim, TAC_DIM_LAST);
  cr_assert_eq(s[6].dim, TAC_DIM_LARGEST);
  cr_assert(s[7].kind == TAC_REPLICATE && s[7].dim == TAC_DIM_LARGEST);
  cr_assert(s[8].kind == TAC_REPLICATE && s[8].dim == TAC_DIM_INDEX && s[8].index == -3);
  cr_assert(s[9].kind == TAC_REPLICATE && s[9].dim == TAC_DIM_NONE);
  for (int i = 0; i < 7; i++) cr_assert_eq(s[i].kind, TAC_SHARD);
}

Test(tac, selectors) {
  static const struct { const char *word; tac_sel sel; int plural; } cases[] = {
    {"input", TAC_SEL_INPUT, 0}, {"param", TAC_SEL_PARAM, 0}, {"grad", TAC_SEL_GRAD, 0},
    {"state", TAC_SEL_STATE, 0}, {"value", TAC_SEL_VALUE, 0},
    {"inputs", TAC_SEL_INPUT, 1}, {"params", TAC_SEL_PARAM, 1}, {"grads", TAC_SEL_GRAD, 1},
    {"states", TAC_SEL_STATE, 1}, {"values", TAC_SEL_VALUE, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[200];
    snprintf(text, sizeof text, "tactic t { replicate %s%s on m shard %s%s dim 0 on m }",
             cases[i].word, cases[i].plural ? "" : " x.y", cases[i].word,
             cases[i].plural ? "" : " \"x.y\"");
    tac_file *f = ok(text);
    cr_assert_eq(f->decls[0].nstmts, 2);
    for (int k = 0; k < 2; k++) {
      tac_stmt *s = &f->decls[0].stmts[k];
      cr_assert_eq(s->sel, cases[i].sel, "%s", text);
      cr_assert_eq(s->plural, cases[i].plural, "%s", text);
      if (cases[i].plural) {
        cr_assert_null(s->glob);
        cr_assert_eq(s->glob_off, at(text, cases[i].word, k));   /* the word itself */
      } else {
        cr_assert_str_eq(s->glob, "x.y");
        cr_assert_eq(s->glob_off, at(text, k ? "\"x.y\"" : "x.y", 0));
      }
    }
    /* a quoted and a bare glob of the same text are the same interned string */
    if (!cases[i].plural) cr_assert_eq(f->decls[0].stmts[0].glob, f->decls[0].stmts[1].glob);
  }
}

Test(tac, globs) {
  tac_file *f = ok("tactic t {\n"
                   "  shard param l*.attn.w? dim 0 on m\n"
                   "  shard param wte dim 0 on m\n"
                   "  shard param w[qkv] dim 0 on m\n"
                   "  shard param *.b[!0-9]* dim 0 on m\n"
                   "  shard grad \"grad.*\" dim 0 on m\n"
                   "  shard state adam.m.* dim 0 on m\n"
                   "  shard value \"on\" dim 0 on m\n"
                   "  shard input dims dim 0 on m\n"
                   "  shard value ? dim 0 on m\n"
                   "  shard value \"with space and \\\"quotes\\\"\" dim 0 on m\n"
                   "}\n");
  tac_stmt *s = f->decls[0].stmts;
  const char *want[] = {"l*.attn.w?", "wte", "w[qkv]", "*.b[!0-9]*", "grad.*", "adam.m.*",
                        "on", "dims", "?", "with space and \"quotes\""};
  cr_assert_eq(f->decls[0].nstmts, 10);
  for (int i = 0; i < 10; i++) cr_assert_str_eq(s[i].glob, want[i]);
  ASSERT_AT(f, s[0].glob_off, 2, 15);
  ASSERT_AT(f, s[0].dim_off, 2, 30);
  ASSERT_AT(f, s[4].glob_off, 6, 14);                  /* the opening quote */
  cr_assert_eq(s[1].glob, arena_intern_cstr(&A, "wte"));
}

Test(tac, sizes) {
  static const struct { const char *text; int64_t bytes; } cases[] = {
    {"0B", 0}, {"100B", 100}, {"1KB", 1000}, {"1MB", 1000000}, {"1GB", 1000000000},
    {"1TB", 1000000000000}, {"1KiB", 1024}, {"512MiB", (int64_t)512 << 20},
    {"16GiB", (int64_t)16 << 30}, {"2TiB", (int64_t)2 << 40}, {"1.5GB", 1500000000},
    {"1.1KB", 1100}, {"0.5KiB", 512}, {"1.25KiB", 1280}, {"2.GB", 2000000000},
    {"1.000B", 1}, {"8388607TiB", (int64_t)8388607 << 40},
    {"9223372036854775807B", INT64_MAX}, {"0.000001TB", 1000000},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[200];
    snprintf(text, sizeof text, "tactic t = auto (m = %s)", cases[i].text);
    tac_file *f = ok(text);
    tac_value *v = &f->decls[0].args[0].val;
    cr_assert_eq(v->kind, TAC_VSIZE, "%s", text);
    cr_assert_eq(v->i, cases[i].bytes, "%s: %lld bytes, wanted %lld", cases[i].text,
                 (long long)v->i, (long long)cases[i].bytes);
    cr_assert_eq(v->num, (double)cases[i].bytes);
    cr_assert_str_eq(v->text, cases[i].text);
    cr_assert_eq(v->off, at(text, cases[i].text, 0));
  }
}

Test(tac, durations) {
  static const struct { const char *text; double seconds; } cases[] = {
    {"30s", 30}, {"500ms", 0.5}, {"2min", 120}, {"1h", 3600}, {"1.5s", 1.5}, {"0s", 0}, {"90min", 5400},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[200];
    snprintf(text, sizeof text, "tactic t = auto (budget = %s)", cases[i].text);
    tac_file *f = ok(text);
    tac_value *v = &f->decls[0].args[0].val;
    cr_assert_eq(v->kind, TAC_VSECONDS, "%s", text);
    cr_assert_float_eq(v->num, cases[i].seconds, 1e-12, "%s: %g s, wanted %g", cases[i].text, v->num, cases[i].seconds);
    cr_assert_str_eq(v->text, cases[i].text);
    cr_assert_eq(v->off, at(text, cases[i].text, 0));
  }
}

Test(tac, numbers_and_lists) {
  const char *T = "use \"x\" (a = -1, b = -2.5, c = 1e-3, d = 9223372036854775807, e = [],\n"
                  "         f = [1, [2, [\"s\", -3]], []], g = \"str\", h = 7E+2, i = 3.)";
  tac_file *f = ok(T);
  tac_decl *d = &f->decls[0];
  cr_assert_eq(d->nargs, 9);
  tac_arg *g = d->args;
  cr_assert(g[0].val.kind == TAC_VINT && g[0].val.i == -1 && g[0].val.num == -1.0);
  cr_assert_eq(g[0].val.off, at(T, "-1", 0));         /* at the '-' */
  cr_assert(g[1].val.kind == TAC_VNUM && g[1].val.num == -2.5);
  cr_assert_eq(g[2].val.kind, TAC_VNUM);
  cr_assert_float_eq(g[2].val.num, 1e-3, 1e-18);
  cr_assert(g[3].val.kind == TAC_VINT && g[3].val.i == INT64_MAX);
  cr_assert(g[4].val.kind == TAC_VLIST && g[4].val.nitems == 0);
  cr_assert_eq(g[4].val.off, at(T, "[]", 0));
  tac_value *l = &g[5].val;
  cr_assert_eq(l->kind, TAC_VLIST);
  cr_assert_eq(l->nitems, 3);
  cr_assert(l->items[0].kind == TAC_VINT && l->items[0].i == 1);
  tac_value *in = &l->items[1];
  cr_assert(in->kind == TAC_VLIST && in->nitems == 2);
  cr_assert_eq(in->off, at(T, "[2", 0));
  cr_assert(in->items[0].kind == TAC_VINT && in->items[0].i == 2);
  cr_assert(in->items[1].kind == TAC_VLIST && in->items[1].nitems == 2);
  cr_assert(in->items[1].items[0].kind == TAC_VSTR);
  cr_assert_str_eq(in->items[1].items[0].text, "s");
  cr_assert(in->items[1].items[1].kind == TAC_VINT && in->items[1].items[1].i == -3);
  cr_assert(l->items[2].kind == TAC_VLIST && l->items[2].nitems == 0);
  cr_assert(g[6].val.kind == TAC_VSTR);
  cr_assert_str_eq(g[6].val.text, "str");
  cr_assert_eq(g[6].val.off, at(T, "\"str\"", 0));
  cr_assert(g[7].val.kind == TAC_VNUM && g[7].val.num == 700.0);
  cr_assert(g[8].val.kind == TAC_VNUM && g[8].val.num == 3.0);
  for (int i = 0; i < 9; i++) cr_assert_eq(g[i].has_val, 1);
}

Test(tac, lua_auto_use_forms) {
  tac_file *f = ok("tactic a = lua \"a.lua\"\n"
                   "tactic b = lua \"dir/b.lua\" ()\n"
                   "tactic c = lua \"c.lua\" (axis = model, depth = 2, tag = \"x\")\n"
                   "tactic d = auto\n"
                   "tactic e=auto(axes=[batch,model],budget=10)\n"
                   "use \"batch\"\n"
                   "use \"stdlib/zero.tac\" (stage = 3)\n"
                   "use \"megatron\" as mp ()\n");
  tac_decl *d = f->decls;
  cr_assert_eq(f->ndecls, 8);
  cr_assert(d[0].kind == TAC_LUA && d[0].nargs == 0);
  cr_assert_str_eq(d[0].name, "a");
  cr_assert_str_eq(d[0].path, "a.lua");
  cr_assert(d[1].kind == TAC_LUA && d[1].nargs == 0);
  cr_assert_str_eq(d[1].path, "dir/b.lua");
  cr_assert(d[2].kind == TAC_LUA && d[2].nargs == 3);
  cr_assert_str_eq(d[2].args[1].key, "depth");
  cr_assert_eq(d[2].args[1].val.i, 2);
  cr_assert_str_eq(d[2].args[2].val.text, "x");
  cr_assert(d[3].kind == TAC_AUTO && d[3].nargs == 0 && d[3].path == NULL);
  cr_assert_str_eq(d[3].name, "d");
  cr_assert(d[4].kind == TAC_AUTO && d[4].nargs == 2);
  cr_assert_eq(d[4].args[0].val.nitems, 2);
  cr_assert_str_eq(d[4].args[0].val.items[1].text, "model");
  cr_assert(d[5].kind == TAC_USE && d[5].name == NULL && d[5].nargs == 0);
  cr_assert_str_eq(d[5].path, "batch");
  cr_assert(d[6].kind == TAC_USE && d[6].name == NULL && d[6].nargs == 1);
  cr_assert_str_eq(d[6].path, "stdlib/zero.tac");
  cr_assert(d[7].kind == TAC_USE && d[7].nargs == 0);
  cr_assert_str_eq(d[7].name, "mp");
}

Test(tac, tactic_params) {
  tac_file *f = ok("tactic t(axis, d = -1, sizes = [2, 4]) { }\n"
                   "tactic u() {}\n"
                   "tactic v{replicate params on m}\n");
  tac_decl *d = f->decls;
  cr_assert_eq(d[0].nargs, 3);
  cr_assert_str_eq(d[0].args[0].key, "axis");
  cr_assert_eq(d[0].args[0].has_val, 0);
  ASSERT_AT(f, d[0].args[0].off, 1, 10);
  cr_assert_str_eq(d[0].args[1].key, "d");
  cr_assert_eq(d[0].args[1].has_val, 1);
  cr_assert_eq(d[0].args[1].val.i, -1);
  cr_assert_eq(d[0].args[2].val.nitems, 2);
  cr_assert_eq(d[0].nstmts, 0);
  cr_assert(d[1].kind == TAC_TACTIC && d[1].nargs == 0 && d[1].nstmts == 0);
  cr_assert(d[2].kind == TAC_TACTIC && d[2].nstmts == 1);
  cr_assert_str_eq(d[2].name, "v");
}

Test(tac, version_empty_and_comments) {
  tac_file *f = ok("");
  cr_assert_eq(f->ndecls, 0);
  cr_assert_eq(f->version, 0);
  f = ok("# only a comment\n\n   \t\r\n# another");
  cr_assert_eq(f->ndecls, 0);
  f = ok("version 1\n");
  cr_assert_eq(f->version, 1);
  ASSERT_AT(f, f->version_off, 1, 1);
  cr_assert_eq(f->ndecls, 0);
  f = ok("# head\r\nversion 1 # v\r\nmesh a=4,b=1 schedule x\r\n");
  cr_assert_eq(f->version, 1);
  ASSERT_AT(f, f->version_off, 2, 1);
  cr_assert_eq(f->ndecls, 2);
  cr_assert_eq(f->decls[0].args[1].val.i, 1);
  cr_assert_str_eq(f->decls[1].names[0], "x");
  /* keywords inside longer names are names */
  f = ok("mesh dims = 2, ondevice = 3, mesh.x = 1 schedule tactics, lua_x, values2");
  cr_assert_str_eq(f->decls[0].args[0].key, "dims");
  cr_assert_str_eq(f->decls[0].args[2].key, "mesh.x");
  cr_assert_str_eq(f->decls[1].names[2], "values2");
}

/* ---- the REPL form ---- */

Test(tac, line_bare_statement) {
  int inc = -1;
  const char *T = "shard param \"wte\" dim 0 on model";
  tac_file *f = parse_line(T, &inc);
  cr_assert_not_null(f, "%s", diag_text(&D));
  cr_assert_eq(inc, 0);
  cr_assert_eq(f->ndecls, 1);
  tac_decl *d = &f->decls[0];
  cr_assert_eq(d->kind, TAC_TACTIC);
  cr_assert_null(d->name);
  cr_assert_eq(d->off, 0);
  cr_assert_eq(d->nargs, 0);
  cr_assert_eq(d->nstmts, 1);
  cr_assert_eq(d->stmts[0].kind, TAC_SHARD);
  cr_assert_eq(d->stmts[0].sel, TAC_SEL_PARAM);
  cr_assert_str_eq(d->stmts[0].glob, "wte");
  cr_assert_eq(d->stmts[0].glob_off, at(T, "\"wte\"", 0));
  cr_assert_eq(d->stmts[0].index, 0);
  cr_assert_str_eq(d->stmts[0].axis, "model");
  cr_assert_eq(d->stmts[0].axis_off, at(T, "model", 0));
}

Test(tac, line_mixed) {
  int inc = -1;
  tac_file *f = parse_line("mesh a = 2 replicate values on a shard params dim last on a "
                           "tactic t { replicate inputs on a } shard grads dim 1 on a", &inc);
  cr_assert_not_null(f, "%s", diag_text(&D));
  cr_assert_eq(inc, 0);
  cr_assert_eq(f->ndecls, 4);
  cr_assert_eq(f->decls[0].kind, TAC_MESH);
  cr_assert(f->decls[1].kind == TAC_TACTIC && f->decls[1].name == NULL);
  cr_assert_eq(f->decls[1].nstmts, 2);               /* consecutive statements share one */
  cr_assert_eq(f->decls[1].stmts[1].dim, TAC_DIM_LAST);
  cr_assert_str_eq(f->decls[2].name, "t");
  cr_assert(f->decls[3].kind == TAC_TACTIC && f->decls[3].name == NULL && f->decls[3].nstmts == 1);
  cr_assert_eq(f->decls[3].stmts[0].sel, TAC_SEL_GRAD);
  /* a whole file is a line, too; an empty line is nothing */
  f = parse_line(design_text, &inc);
  cr_assert_not_null(f, "%s", diag_text(&D));
  cr_assert_eq(f->ndecls, 8);
  f = parse_line("", &inc);
  cr_assert(f && f->ndecls == 0 && inc == 0);
  f = parse_line("  # just a comment", &inc);
  cr_assert(f && f->ndecls == 0 && inc == 0);
  f = parse_line("version 1 replicate params on m", &inc);
  cr_assert(f && f->version == 1 && f->ndecls == 1);
}

typedef struct line_case {
  char text[120];
  int incomplete;
  char first[160];       /* expected first line, without "t.tac:" */
} line_case;

static line_case line_cases[] = {
  {"shard param \"wte\" dim", 1, "1:22: error: unexpected end of input, expected a dimension"},
  {"tactic t {", 1, "1:11: error: unexpected end of input, expected '}' to close tactic 't'"},
  {"shard param \"wte\" dim 0 on model )", 0, "1:34: error: unexpected ')': there is no open '(' to close"},
  {"shard", 1, "1:6: error: unexpected end of input, expected a selector"},
  {"replicate params", 1, "1:17: error: unexpected end of input, expected 'dim' or 'on'"},
  {"mesh a = 2,", 1, "1:12: error: unexpected end of input, expected the name of a mesh axis"},
  {"use \"batch\" (axis = [a, ", 1, "1:25: error: unexpected end of input, expected a value"},
  {"use \"batch", 1, "1:5: error: unterminated string: end of input inside it"},
  {"tactic t = lua \"x.lua", 1, "1:16: error: unterminated string"},
  {"tactic t { shard param \"w\" dim 0 on m\n", 1, "1:10: error: unclosed '{' opened here: expected '}' to close tactic 't' before the end of the input"},
  {"shard param \"w\ndim 0 on m", 0, "1:13: error: unterminated string: a string must end on the line"},
  {"shard param \"wte\" dim 0 on", 1, "1:27: error: unexpected end of input, expected the name of a mesh axis"},
  {"shard param \"wte\" dim 0 on model model", 0, "1:34: error: unexpected 'model', expected a declaration"},
  {"mesh a = 0", 0, "1:10: error: mesh axis 'a' must have a size of at least 1"},
  {"shard param \"wte\" dim x on m", 0, "1:23: error: unexpected 'x', expected a dimension"},
  {"foo", 0, "1:1: error: unexpected 'foo', expected a declaration (mesh, use, tactic or schedule) or a statement (shard or replicate)"},
  {"shard param \"wte\" dim 0 on m $", 0, "1:30: error: unexpected character '$'"},
  {"use \"x\" (a = 16GiG", 0, "1:16: error: unknown unit 'GiG'"},
  {"}", 0, "1:1: error: unexpected '}': there is no open '{' to close"},
};

ParameterizedTestParameters(tac, line_incomplete) {
  return cr_make_param_array(line_case, line_cases, sizeof line_cases / sizeof line_cases[0]);
}

ParameterizedTest(line_case *c, tac, line_incomplete) {
  int inc = -1;
  tac_file *f = parse_line(c->text, &inc);
  cr_assert_null(f, "%s parsed", c->text);
  cr_assert_eq(D.nerrors, 1);
  cr_assert_eq(inc, c->incomplete, "%s: incomplete=%d\n%s", c->text, inc, diag_text(&D));
  char want[200];
  snprintf(want, sizeof want, "t.tac:%s", c->first);
  cr_assert(strncmp(first_line(), want, strlen(want)) == 0,
            "for %s\nwanted: %s\ngot:    %s", c->text, want, first_line());
}

Test(tac, line_incomplete_may_be_null) {
  cr_assert_null(tac_parse_line(&A, &D, src_of("shard", 5), NULL));
  cr_assert_eq(D.nerrors, 1);
}

/* ---- errors ---- */

typedef struct err_case {
  char text[200];
  char first[200];       /* expected first line, without "t.tac:" */
  char note[80];         /* expected note line (second rendered message) or "" */
} err_case;

static err_case err_cases[] = {
  /* statements belong in tactics */
  {"shard param \"wte\" dim 0 on model", "1:1: error: 'shard' must be inside a 'tactic NAME { ... }' block (or typed in the REPL)", ""},
  {"mesh a = 2\nreplicate values on a", "2:1: error: 'replicate' must be inside a 'tactic NAME { ... }' block (or typed in the REPL)", ""},
  {"tactic t = auto\nshard params dim 0 on a", "2:1: error: 'shard' must be inside a 'tactic NAME { ... }' block", ""},
  {"tactic t(a) shard params dim 0 on a", "1:13: error: unexpected 'shard', expected '{'", ""},
  /* brackets */
  {"tactic emb {\n  shard params dim 0 on m\n", "1:12: error: unclosed '{' opened here: expected '}' to close tactic 'emb' before the end of the input",
   "2:26: note: the '}' is missing here, or earlier"},
  {"tactic t { shard params dim 0 on m ]", "1:36: error: unexpected ']', expected '}' to close tactic 't'", "1:10: note: '{' opened here"},
  {"tactic t { } }", "1:14: error: unexpected '}': there is no open '{' to close", ""},
  {"use \"x\" (a = 1))", "1:16: error: unexpected ')': there is no open '(' to close", ""},
  {"use \"x\" (a = [1, [2, 3)", "1:23: error: unexpected ')', expected ']' to close the list", "1:18: note: '[' opened here"},
  {"use \"x\" (a = [[1]", "1:18: error: unexpected end of input, expected ']' to close the list", "1:14: note: '[' opened here"},
  {"use \"x\" (axis = model", "1:22: error: unexpected end of input, expected ')' to close the arguments", "1:9: note: '(' opened here"},
  {"tactic t(axis", "1:14: error: unexpected end of input, expected ')' to close the parameters of tactic 't'", "1:9: note: '(' opened here"},
  {"tactic t(axis = ", "1:17: error: unexpected end of input, expected a value", "1:9: note: '(' opened here"},
  {"tactic t(", "1:10: error: unexpected end of input, expected ')' to close the parameters of tactic 't'", "1:9: note: '(' opened here"},
  {"tactic a {\n  replicate params on m\ntactic b { }", "1:10: error: unclosed '{' opened here: expected '}' to close tactic 'a' before 'tactic' on line 3",
   "2:24: note: the '}' is missing here at the end of line 2, or earlier"},
  {"use \"batch\" as bp (axis = m\nschedule bp\n", "1:19: error: unclosed '(' opened here: expected ')' to close the arguments before 'schedule' on line 2",
   "1:28: note: the ')' is missing here at the end of line 1, or earlier"},
  /* expected ... */
  {"foo", "1:1: error: unexpected 'foo', expected a declaration (mesh, use, tactic or schedule)", ""},
  {"mesh a = 2 b = 3", "1:12: error: unexpected 'b', expected ',' or a declaration (mesh, use, tactic or schedule)", ""},
  {"mesh", "1:5: error: unexpected end of input, expected the name of a mesh axis", ""},
  {"mesh a 2", "1:8: error: unexpected '2', expected '='", ""},
  {"mesh a = 2.5", "1:10: error: unexpected '2.5', expected an integer", ""},
  {"use batch", "1:5: error: unexpected 'batch', expected the tactic to use, as a string (\"batch\" or a path)", ""},
  {"use \"x\" as (a = 1)", "1:12: error: unexpected '(', expected a name for the tactic", ""},
  {"use \"x\" (axis)", "1:14: error: unexpected ')', expected '='", ""},
  {"use \"x\" (axis = )", "1:17: error: unexpected ')', expected a value", ""},
  {"use \"x\" (a = 1,)", "1:16: error: unexpected ')', expected an argument name", ""},
  {"use \"x\" (a = [1 2])", "1:17: error: unexpected '2', expected ',' or ']'", ""},
  {"tactic { }", "1:8: error: unexpected '{', expected the tactic's name", ""},
  {"tactic t", "1:9: error: unexpected end of input, expected '=', '(' or '{'", ""},
  {"tactic t(a b) { }", "1:12: error: unexpected 'b', expected ',', '=' or ')'", ""},
  {"tactic t(a, ) { }", "1:13: error: unexpected ')', expected a parameter name", ""},
  {"tactic t = foo", "1:12: error: unexpected 'foo', expected 'lua' or 'auto'", ""},
  {"tactic t = lua x.lua", "1:16: error: unexpected 'x.lua', expected the script's path, as a string", ""},
  {"tactic t { foo }", "1:12: error: unexpected 'foo', expected a statement (shard or replicate) or '}'", ""},
  {"tactic t { shard }", "1:18: error: unexpected '}', expected a selector such as param \"wte\" or params", ""},
  {"tactic t { shard param }", "1:24: error: unexpected '}', expected the name or glob of a value (\"wte\", l*.attn.w?)", ""},
  {"tactic t { shard param \"w\" on m }", "1:28: error: unexpected 'on', expected 'dim'", ""},
  {"tactic t { replicate param \"w\" }", "1:32: error: unexpected '}', expected 'dim' or 'on'", ""},
  {"tactic t { shard param \"w\" dim 1.5 on m }", "1:32: error: unexpected '1.5', expected a dimension (an index, first, last or largest)", ""},
  {"tactic t { shard param \"w\" dim -x on m }", "1:33: error: unexpected 'x', expected an integer", ""},
  {"tactic t { shard param \"w\" dim 0 m }", "1:34: error: unexpected 'm', expected 'on'", ""},
  {"tactic t { shard param \"w\" dim 0 on }", "1:37: error: unexpected '}', expected the name of a mesh axis", ""},
  {"tactic t { shard param w dim 0 tactic u { } }", "1:32: error: unexpected 'tactic', expected 'on'", ""},
  {"schedule", "1:9: error: unexpected end of input, expected the name of a tactic", ""},
  {"schedule a,", "1:12: error: unexpected end of input, expected the name of a tactic", ""},
  {"schedule a b", "1:12: error: unexpected 'b', expected ',' or a declaration (mesh, use, tactic or schedule)", ""},
  {"{", "1:1: error: unexpected '{', expected a declaration (mesh, use, tactic or schedule)", ""},
  /* keywords, hints */
  {"mesh dim = 2", "1:6: error: unexpected 'dim': it is a keyword and cannot be used as a name", ""},
  {"tactic t { shard params dim 0 on first }", "1:34: error: unexpected 'first': it is a keyword and cannot be used as a name", ""},
  {"tactic t { shard param dim 0 on m }", "1:24: error: unexpected 'dim', expected the name or glob of a value; a value named 'dim' must be quoted: \"dim\"", ""},
  {"tactic t { shard params \"x\" dim 0 on m }", "1:25: error: unexpected string: 'params' selects all of them; write 'param' and a name or glob to select some", ""},
  {"tactic t { replicate values l* on m }", "1:29: error: unexpected 'l*': 'values' selects all of them; write 'value' and a name or glob to select some", ""},
  {"use \"x\" (m = 16 GiB)", "1:17: error: unexpected 'GiB': write a size without a space, as in 16GiB", ""},
  {"tactic t { shard params dim 0 on * }", "1:34: error: unexpected character '*' (a glob may only follow input, param, grad, state or value)", ""},
  {"tactic t { shard param w[qkv dim 0 on m }", "1:25: error: unclosed '[' in a glob; a character class such as [qkv] closes before the end of the name", ""},
  {"tactic t { shard param \"w\" dim 0 on m; }", "1:38: error: unexpected ';': statements need no separator, write one per line", ""},
  /* versions */
  {"version 2\nmesh a = 1", "1:9: error: this file needs tactic-language version 2, but this carve reads versions up to 1; upgrade carve", ""},
  {"version 0", "1:9: error: tactic-language versions start at 1", ""},
  {"mesh a = 1\nversion 1", "2:1: error: unexpected 'version': it may only start the file, as in 'version 1'", ""},
  {"version", "1:8: error: unexpected end of input, expected an integer", ""},
  /* checks the parser does itself */
  {"mesh batch = 0", "1:14: error: mesh axis 'batch' must have a size of at least 1", ""},
  {"mesh batch = 2, model = -4", "1:25: error: mesh axis 'model' must have a size of at least 1", ""},
  {"mesh batch = 2, model = 2, batch = 4", "1:28: error: mesh axis 'batch' is listed twice", "1:6: note: first listed here"},
  {"tactic emb(axis, d = 0, axis = m) { }", "1:25: error: parameter 'axis' is listed twice in tactic 'emb'", "1:12: note: first listed here"},
  {"use \"x\" (a = 1, b = 2, a = 2)", "1:24: error: argument 'a' is given twice", "1:10: note: first given here"},
  {"mesh a = 1 mesh a = 2", "", ""},                 /* two mesh lines: interp decides */
  /* tokens */
  {"mesh a = 99999999999999999999", "1:10: error: number too large (integers must fit in 64 bits)", ""},
  {"use \"x\" (a = 1e999)", "1:14: error: number too large (beyond the range of a double)", ""},
  {"use \"x\" (a = .5)", "1:14: error: a number must start with a digit: write 0.5", ""},
  {"use \"x\" (m = 16GiG)", "1:16: error: unknown unit 'GiG'; sizes take B, KB, MB, GB, TB, KiB, MiB, GiB or TiB, durations ms, s, min or h", ""},
  {"use \"x\" (m = 16gb)", "1:16: error: unknown unit 'gb'", ""},
  {"use \"x\" (m = 2x)", "1:15: error: unknown unit 'x'", ""},
  {"use \"x\" (m = 0.3B)", "1:14: error: size 0.3B is not a whole number of bytes", ""},
  {"use \"x\" (m = 8388608TiB)", "1:14: error: size too large (at most 2^63 - 1 bytes)", ""},
  {"use \"x\" (m = 99999999999999999999B)", "1:14: error: size too large", ""},
  {"use \"x\" (m = 0.0000000000000000001GB)", "1:14: error: size has too many digits", ""},
  {"use \"x\" (m = -16GiB)", "1:15: error: unexpected '16GiB', expected an integer or a number", ""},
  {"use \"x", "1:5: error: unterminated string: end of input inside it", ""},
  {"use \"x\ny\"", "1:5: error: unterminated string: a string must end on the line where it starts", ""},
  {"use \"a\\nb\"", "1:7: error: unknown escape in string", ""},
  {"use \"x\" (a = $)", "1:14: error: unexpected character '$'", ""},
  {"use \"x\" (a = \x01)", "1:14: error: unexpected character '\\x01'", ""},
  {"mesh \xce\xb1 = 2", "1:6: error: unexpected character '\\xce' (only ASCII is allowed outside comments and strings)", ""},
  {"# caf\xc3\xa9\nuse \"\xc3\xa9\"", "", ""},   /* non-ASCII in comments and strings is fine */
};

ParameterizedTestParameters(tac, errors) {
  return cr_make_param_array(err_case, err_cases, sizeof err_cases / sizeof err_cases[0]);
}

ParameterizedTest(err_case *c, tac, errors) {
  pt_error_case(parse(c->text), &D, "t.tac", c->text, c->first, c->note);
}

/* A NUL inside the text is an error, not the end of input. */
Test(tac, embedded_nul) {
  static const char text[] = "mesh a = 2 \0 b";
  tac_file *f = tac_parse(&A, &D, src_of(text, sizeof text - 1));
  cr_assert_null(f);
  cr_assert_str_eq(first_line(), "t.tac:1:12: error: unexpected character '\\x00' (is this a binary file?)");
  static const char text2[] = "use \"a\0\"";
  f = tac_parse(&A, &D, src_of(text2, sizeof text2 - 1));
  cr_assert_null(f);
  cr_assert_eq(D.nerrors, 2);
  cr_assert_not_null(strstr(diag_text(&D), "t.tac:1:7: error: unexpected character '\\x00' in string"));
}

/* ---- bounded nesting ---- */

static const char *nest_units[][2] = {{"[", "]"}, {"[1, ", "]"}, {"[\"s\", -2, ", ", 3]"}};

Test(tac, deep_nesting_5000) {
  for (int u = 0; u < 3; u++) {
    char *s = pt_repeat("use \"x\" (a = ", nest_units[u][0], 5000, "1", nest_units[u][1], ")");
    tac_file *f = parse(s);
    free(s);
    cr_assert_null(f);
    cr_assert_not_null(strstr(first_line(), "error: nesting deeper than 256 levels"), "%s", first_line());
    cr_assert_eq(D.nerrors, 1);
    diag_clear(&D);
  }
  /* unclosed, too, and in the REPL form (not "incomplete": it is wrong) */
  char *s = pt_repeat("tactic t = auto (a = ", "[", 5000, "", "", "");
  int inc = -1;
  cr_assert_null(parse_line(s, &inc));
  free(s);
  cr_assert_eq(inc, 0);
  cr_assert_not_null(strstr(first_line(), "nesting deeper than 256 levels"));
}

Test(tac, nesting_up_to_the_limit) {
  /* the '(' is one level: 255 lists inside are fine, 256 are not */
  for (int u = 0; u < 3; u++) {
    char *s = pt_repeat("use \"x\" (a = ", nest_units[u][0], 255, "1", nest_units[u][1], ")");
    tac_file *f = parse(s);
    cr_assert_not_null(f, "%s", diag_text(&D));
    free(s);
    tac_value *v = &f->decls[0].args[0].val;
    int depth = 0;
    while (v && v->kind == TAC_VLIST) {
      depth++;
      tac_value *in = NULL;
      for (int i = 0; i < v->nitems; i++) if (v->items[i].kind == TAC_VLIST) in = &v->items[i];
      v = in;
    }
    cr_assert_eq(depth, 255);
    s = pt_repeat("use \"x\" (a = ", nest_units[u][0], 256, "1", nest_units[u][1], ")");
    cr_assert_null(parse(s));
    free(s);
    cr_assert_not_null(strstr(first_line(), "nesting deeper than 256 levels"));
    diag_clear(&D);
  }
}

/* Many statements and declarations: arrays grow, nothing is nested. */
Test(tac, long_files) {
  size_t cap = 1 << 20, n = 0;
  char *s = malloc(cap);
  n += (size_t)snprintf(s + n, cap - n, "tactic big {\n");
  for (int i = 0; i < 3000; i++)
    n += (size_t)snprintf(s + n, cap - n, "  shard param l%d.w dim %d on m\n", i, i % 4);
  n += (size_t)snprintf(s + n, cap - n, "}\nschedule ");
  for (int i = 0; i < 2000; i++) n += (size_t)snprintf(s + n, cap - n, "%st%d", i ? ", " : "", i);
  n += (size_t)snprintf(s + n, cap - n, "\nmesh ");
  for (int i = 0; i < 500; i++) n += (size_t)snprintf(s + n, cap - n, "%sa%d = %d", i ? ", " : "", i, i + 1);
  tac_file *f = ok(s);
  free(s);
  cr_assert_eq(f->ndecls, 3);
  cr_assert_eq(f->decls[0].nstmts, 3000);
  cr_assert_str_eq(f->decls[0].stmts[2999].glob, "l2999.w");
  cr_assert_eq(f->decls[0].stmts[2999].index, 3);
  cr_assert_eq(f->decls[1].nnames, 2000);
  cr_assert_str_eq(f->decls[1].names[1999], "t1999");
  cr_assert_eq(f->decls[2].nargs, 500);
  cr_assert_eq(f->decls[2].args[499].val.i, 500);
}

/* ---- garbage never crashes ---- */

/* Both forms: a tree and no message, or no tree and exactly one error. */
static void parse_garbage(const char *buf, size_t n) {
  for (int line = 0; line < 2; line++) {
    arena a;
    diag d;
    arena_init(&a);
    diag_init(&d);
    const diag_src *src = diag_src_string(&a, "g.tac", buf, n);
    int inc = -1;
    tac_file *f = line ? tac_parse_line(&a, &d, src, &inc) : tac_parse(&a, &d, src);
    if (!f) {
      cr_assert_eq(d.nerrors, 1, "%s", diag_text(&d));
      cr_assert(strncmp(diag_text(&d), "g.tac:", 6) == 0, "%s", diag_text(&d));
      if (line) cr_assert(inc == 0 || inc == 1);
    } else {
      cr_assert_eq(d.nerrors, 0);
      cr_assert_str_empty(diag_text(&d));
      cr_assert_geq(f->ndecls, 0);
      if (line) cr_assert_eq(inc, 0);
    }
    diag_free(&d);
    arena_free(&a);
  }
}

Test(tac, random_bytes) {
  pt_random_bytes(parse_garbage);
}

/* Pieces of the language itself reach deeper into the grammar. */
Test(tac, random_tokens) {
  static const char *const pieces[] = {
    "mesh ", "use ", " as ", "tactic ", "lua ", "auto ", "schedule ", "shard ", "replicate ",
    " dim ", " on ", "first ", "last ", "largest ", "param ", "params ", "value ", "values ",
    "input ", "grads ", "state ", "x", "wte", "l*.w?", "w[qkv]", "[", "]", "(", ")", "{", "}",
    ",", "=", "-", "1", "2.5", "16GiB", "3KB", "\"s\"", "\n", " ", "# c\n", "version ", "\"",
    "\\", "*", "[ab", "0",
  };
  static const char *const heads[] = {"", "tactic t { ", "shard param "};
  pt_random_tokens(parse_garbage, 600, pieces, sizeof pieces / sizeof pieces[0], heads, 3);
}

Test(tac, mutated_example) {
  /* half of the copies take bytes that mean something here */
  pt_mutated(parse_garbage, 600, design_text, sizeof design_text - 1, "[](){}=,-\"*?#\n0 x");
}

/* ---- the tests/errors corpus: .tac files marked "# stage: syntax" ---- */

static const void *parse_tree(arena *a, diag *d, const diag_src *src) {
  return tac_parse(a, d, src);
}

Test(tac, error_corpus) {
  int nsyntax = pt_error_corpus(".tac", parse_tree, 1);
  cr_assert_geq(nsyntax, 10, "only %d syntax cases among the .tac files of tests/errors", nsyntax);
}

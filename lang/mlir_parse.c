/*
** mlir_parse.c: the MLIR driver. The lexer's tokens are pushed into the
** Lemon parser one by one (as SQLite's tokenizer does); the first error,
** lexical or syntactic, stops everything. Open brackets, '<' included, are
** tracked here beside the parser (with lang/syntax.c, as cir_parse.c and
** tac_parse.c do), so that an error can say what is unclosed and where it
** was opened, and so that nesting stays bounded.
**
** The tree is finished here too: generic "builtin.module" and "func.func"
** ops become modules and functions, sdy.mesh ops become meshes, and
** loc(#locN) references are tied to their definitions once the whole file
** (whose #locN lines mostly come last) has been read.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lang/mlir_int.h"
#include "lang/mlir_gram.h"

/* ---- describing tokens ---- */

/* How a token reads in "expected ...". ORDER tokens: the %token lines of mlir_gram.lemon. */
static const char *const tok_words[] = {
  [0] = "end of input",
  [TK_MODULE] = "'module'", [TK_ATTRIBUTES] = "'attributes'", [TK_FUNC] = "'func.func'",
  [TK_LOC] = "'loc'",
  [TK_VALUE] = "a value such as %0", [TK_SYMBOL] = "a symbol such as @main",
  [TK_HASHID] = "an alias such as #loc1", [TK_BLOCKID] = "a block label such as ^bb0",
  [TK_LABEL] = "a region label", [TK_BARE] = "a name", [TK_ELTYPE] = "an element type such as f32",
  [TK_DIMS] = "dimensions such as 4x8x", [TK_INT] = "an integer", [TK_HEX] = "a hexadecimal number",
  [TK_FLOAT] = "a number", [TK_STRING] = "a string",
  [TK_HASHLA] = "an attribute such as #stablehlo.gather<...>", [TK_BANGID] = "a dialect type",
  [TK_BANGLA] = "a dialect type", [TK_TENSORLA] = "'tensor<'", [TK_COMPLEXLA] = "'complex<'",
  [TK_TUPLELA] = "'tuple<'", [TK_DENSELA] = "'dense<'", [TK_DRESLA] = "'dense_resource<'",
  [TK_ARRAYLA] = "'array<'",
  [TK_LP] = "'('", [TK_RP] = "')'", [TK_LB] = "'['", [TK_RB] = "']'", [TK_LC] = "'{'", [TK_RC] = "'}'",
  [TK_LA] = "'<'", [TK_RA] = "'>'", [TK_COLON] = "':'", [TK_COMMA] = "','", [TK_EQ] = "'='",
  [TK_MINUS] = "'-'", [TK_ARROW] = "'->'", [TK_QUESTION] = "'?'", [TK_CROSS] = "'x'",
};

#define BIT SYN_BIT
#define TYPE_START (BIT(TK_ELTYPE) | BIT(TK_TENSORLA) | BIT(TK_COMPLEXLA) | BIT(TK_TUPLELA) | \
                    BIT(TK_BANGID) | BIT(TK_BANGLA))
#define NUM_START (BIT(TK_INT) | BIT(TK_HEX) | BIT(TK_FLOAT) | BIT(TK_MINUS))
#define ATTR_START (NUM_START | TYPE_START | BIT(TK_STRING) | BIT(TK_BARE) | BIT(TK_SYMBOL) | \
                    BIT(TK_VALUE) | BIT(TK_QUESTION) | BIT(TK_HASHID) | BIT(TK_HASHLA) | BIT(TK_LB) | \
                    BIT(TK_LC) | BIT(TK_LA) | BIT(TK_LP) | BIT(TK_ARRAYLA) | BIT(TK_DENSELA) | BIT(TK_DRESLA))
#define PIECE_START (NUM_START | BIT(TK_STRING) | BIT(TK_BARE) | BIT(TK_SYMBOL) | BIT(TK_VALUE) | \
                     BIT(TK_HASHID) | BIT(TK_HASHLA) | BIT(TK_LB) | BIT(TK_LA) | BIT(TK_LP) | \
                     BIT(TK_ARRAYLA) | BIT(TK_DENSELA) | BIT(TK_DRESLA))
#define STMT_START (BIT(TK_VALUE) | BIT(TK_BARE) | BIT(TK_STRING) | BIT(TK_FUNC))

static int is_angle_opener(int code) {
  return code == TK_LA || code == TK_HASHLA || code == TK_BANGLA || code == TK_TENSORLA ||
         code == TK_COMPLEXLA || code == TK_TUPLELA || code == TK_DENSELA || code == TK_DRESLA ||
         code == TK_ARRAYLA;
}

static int is_closer(int code) {
  return code == TK_RP || code == TK_RB || code == TK_RC || code == TK_RA;
}

static char closer_of(char open) {
  return open == '(' ? ')' : open == '[' ? ']' : open == '{' ? '}' : '>';
}

static int closer_code(char open) {
  return open == '(' ? TK_RP : open == '[' ? TK_RB : open == '{' ? TK_RC : TK_RA;
}

/* "to close function @main" and the like. */
static void close_text(const syn_open *o, char *buf, size_t cap) {
  int n = o->whatlen;
  const char *w = o->what;
  switch (o->kind) {
  case MLIR_OPEN_MODULE:
    if (n) snprintf(buf, cap, "to close module @%.*s", n, w);
    else snprintf(buf, cap, "to close the module");
    break;
  case MLIR_OPEN_FUNC: snprintf(buf, cap, "to close function @%.*s", n, w); break;
  case MLIR_OPEN_REGION: snprintf(buf, cap, "to close the region of '%.*s'", n, w); break;
  case MLIR_OPEN_LREGION: snprintf(buf, cap, "to close region '%.*s'", n, w); break;
  case MLIR_OPEN_DICT: snprintf(buf, cap, "to close the dictionary"); break;
  case MLIR_OPEN_ARGS: snprintf(buf, cap, "to close the arguments of @%.*s", n, w); break;
  case MLIR_OPEN_OPERANDS: snprintf(buf, cap, "to close the operands of '%.*s'", n, w); break;
  case MLIR_OPEN_REGIONS: snprintf(buf, cap, "to close the regions of '%.*s'", n, w); break;
  case MLIR_OPEN_LOC: snprintf(buf, cap, "to close the location"); break;
  case MLIR_OPEN_LIST: snprintf(buf, cap, "to close the list"); break;
  case MLIR_OPEN_ANGLE:
    if (n) snprintf(buf, cap, "to close '%.*s<'", n, w);
    else snprintf(buf, cap, "to close the '<'");
    break;
  default: snprintf(buf, cap, "to close the '%c'", o->ch); break;
  }
}

static const syn_lang mlir_syn = {
  .lp = TK_LP, .rp = TK_RP, .lb = TK_LB, .rb = TK_RB, .lc = TK_LC, .rc = TK_RC,
  .string = TK_STRING, .tok_words = tok_words, .close_text = close_text,
};

/* "a, b or c" for the acceptable tokens, named after where we are. */
static void expected_text(const mlir_pctx *p, uint64_t set, char *buf, size_t cap) {
  syn_words w = {.set = set};
  int prev = p->syn.prev;
  if (prev == TK_TENSORLA || prev == TK_DIMS) {
    syn_group(&w, TYPE_START, prev == TK_TENSORLA ? "dimensions such as 4x8x or an element type such as f32"
                                                  : "an element type such as f32");
    w.set &= ~BIT(TK_DIMS);
  }
  if ((w.set & STMT_START) == STMT_START && !(w.set & BIT(TK_LB))) {
    syn_word(&w, "an operation", STMT_START);
    w.set &= ~(BIT(TK_HASHID) | BIT(TK_BANGID) | BIT(TK_MODULE));   /* top level: also aliases, modules */
  }
  if ((w.set & (BIT(TK_BARE) | BIT(TK_STRING))) == (BIT(TK_BARE) | BIT(TK_STRING)) && !(w.set & BIT(TK_INT)))
    syn_word(&w, "an op name such as stablehlo.add or \"mhlo.add\"", BIT(TK_BARE) | BIT(TK_STRING));
  if (!syn_group(&w, ATTR_START, "an attribute"))
    syn_group(&w, PIECE_START, "an operand or attribute");
  syn_group(&w, TYPE_START, "a type");
  syn_group(&w, NUM_START, "a number");
  /* separators before openers and closers: "',' or ')'" reads better than "')' or ','" */
  static const int order[] = {
    TK_COMMA, TK_EQ, TK_COLON, TK_ARROW, TK_CROSS, TK_LP, TK_LB, TK_LC, TK_LA, TK_RP, TK_RB, TK_RC, TK_RA,
    TK_MODULE, TK_ATTRIBUTES, TK_FUNC, TK_LOC, TK_LABEL, TK_BLOCKID,
    TK_VALUE, TK_SYMBOL, TK_HASHID, TK_HASHLA, TK_BARE, TK_ELTYPE, TK_DIMS, TK_INT, TK_HEX, TK_FLOAT,
    TK_STRING, TK_BANGID, TK_BANGLA, TK_TENSORLA, TK_COMPLEXLA, TK_TUPLELA, TK_DENSELA, TK_DRESLA,
    TK_ARRAYLA, TK_MINUS, TK_QUESTION, 0,
  };
  syn_tokens(&w, &mlir_syn, order, sizeof order / sizeof order[0]);
  syn_join(&w, buf, cap);
}

/* The innermost bracket still open, not counting one the token itself opened. */
static const syn_open *open_before(const mlir_pctx *p) {
  int d = p->syn.depth - (p->pushed ? 1 : 0);
  return d > 0 ? &p->syn.open[d - 1] : NULL;
}

/* What syn_unexpected says, for brackets among which a '<' is involved. */
static int angle_unexpected(mlir_pctx *p, int code, const mlir_tok *t, uint64_t expected,
                            const char *exp) {
  const syn_open *o = open_before(p);
  if (!(code == TK_RA || (o && o->ch == '<' && (code == 0 || is_closer(code))))) return 0;
  char close[256] = "";
  if (o) close_text(o, close, sizeof close);
  if (code == 0) {
    p->syn.incomplete = 1;
    if (expected & BIT(TK_RA))
      mlir_error(p, t->off, "unexpected end of input, expected '>' %s", close);
    else
      mlir_error(p, t->off, "unexpected end of input, expected %s", exp);
    syn_note_open(&p->syn, o);
    return 1;
  }
  char ch = code == TK_RP ? '(' : code == TK_RB ? '[' : code == TK_RC ? '{' : '<';
  if (!o) {
    mlir_error(p, t->off, "unexpected '%c': there is no open '%c' to close", closer_of(ch), ch);
    return 1;
  }
  if (o->ch == ch) return 0;
  if (expected & BIT(closer_code(o->ch)))
    mlir_error(p, t->off, "unexpected '%c', expected '%c' %s", closer_of(ch), closer_of(o->ch), close);
  else
    mlir_error(p, t->off, "unexpected '%c', expected %s", closer_of(ch), exp);
  syn_note_open(&p->syn, o);
  return 1;
}

void mlir_syntax_error(mlir_pctx *p, int code, const mlir_tok *t, uint64_t expected) {
  if (p->syn.failed) return;
  char exp[768];
  expected_text(p, expected, exp, sizeof exp);
  if (angle_unexpected(p, code, t, expected, exp)) return;
  syn_err e;
  const char *text = p->syn.src->text + t->off;
  if (syn_unexpected(&p->syn, &mlir_syn, code, t->off, text, t->len, expected, exp, &e)) return;
  if (code == TK_MODULE && open_before(p)) {
    mlir_error(p, t->off, "unexpected 'module': a module may only be at the top of the file");
    return;
  }
  if (code == TK_LABEL)
    snprintf(e.what, sizeof e.what, "'%.*s'", e.n, text);
  mlir_error(p, t->off, "unexpected %s, expected %s", e.what, exp);
}

/* ---- brackets ---- */

static int push_open(mlir_pctx *p, int code, const mlir_tok *t) {
  int depth = p->syn.depth;
  int prev = p->syn.prev;
  const syn_open *top = depth > 0 ? &p->syn.open[depth - 1] : NULL;
  syn_open *o = syn_push(&p->syn, &mlir_syn, code, t->off);
  if (!o) return mlir_error(p, t->off, "nesting deeper than %d levels", MLIR_MAX_DEPTH);
  p->pushed = 1;
  if (is_angle_opener(code)) {
    o->ch = '<';
    o->off = t->off + t->len - 1;
    o->kind = MLIR_OPEN_ANGLE;
    syn_name(o, t->s, t->len - 1);
    return 0;
  }
  if (o->ch == '[') {
    o->kind = top && top->kind == MLIR_OPEN_LOC ? MLIR_OPEN_LOC : MLIR_OPEN_LIST;
  } else if (o->ch == '(') {
    if (prev == TK_LOC || (top && top->kind == MLIR_OPEN_LOC)) {
      o->kind = MLIR_OPEN_LOC;
    } else if (p->headkind == TK_FUNC && depth == p->head_depth && prev == TK_SYMBOL) {
      o->kind = MLIR_OPEN_ARGS;
      syn_name(o, p->head.s, p->head.slen);
    } else if (prev == TK_STRING) {
      o->kind = MLIR_OPEN_OPERANDS;
      syn_name(o, p->prevtok.s, p->prevtok.slen);
      p->gen_depth = depth + 1;
      p->gen = p->prevtok;
    } else if (p->gen_depth == depth + 1 && (prev == TK_RP || prev == TK_RA)) {
      o->kind = MLIR_OPEN_REGIONS;
      syn_name(o, p->gen.s, p->gen.slen);
      p->gen_depth = 0;
    } else {
      o->kind = MLIR_OPEN_PAREN;
    }
  } else if (prev == TK_ATTRIBUTES) {
    o->kind = MLIR_OPEN_DICT;
  } else if (p->headkind && depth == p->head_depth) {
    o->kind = p->headkind == TK_FUNC ? MLIR_OPEN_FUNC : MLIR_OPEN_MODULE;
    syn_name(o, p->head.s, p->head.slen);
    p->headkind = 0;
  } else if (p->label_depth == depth + 1) {
    o->kind = MLIR_OPEN_LREGION;
    syn_name(o, p->label.s, p->label.len);
    p->label_depth = 0;
  } else if (top && top->kind == MLIR_OPEN_REGIONS && (prev == TK_LP || prev == TK_COMMA)) {
    o->kind = MLIR_OPEN_REGION;
    syn_name(o, top->what, (uint32_t)top->whatlen);
  } else {
    o->kind = MLIR_OPEN_DICT;
  }
  return 0;
}

/* Keep what push_open needs to know about the token about to be parsed. */
static void track(mlir_pctx *p, int code, const mlir_tok *t) {
  int prev = p->syn.prev;
  if (code == TK_FUNC || code == TK_MODULE) {
    p->headkind = code;
    p->head_depth = p->syn.depth;
    memset(&p->head, 0, sizeof p->head);
  } else if (code == TK_SYMBOL && p->headkind && p->syn.depth == p->head_depth &&
             (prev == TK_FUNC || prev == TK_MODULE || prev == TK_BARE)) {
    p->head = *t;
  } else if (code == TK_LABEL) {
    p->label = *t;
    p->label_depth = p->syn.depth + 1;
  }
  if (p->gen_depth == p->syn.depth + 1 && (code == TK_LC || code == TK_COLON)) p->gen_depth = 0;
}

/* ---- building the tree ---- */

mlir_attr *mlir_new_attr(mlir_pctx *p, mlir_akind k, uint32_t off, uint32_t end) {
  mlir_attr *a = arena_alloc(p->a, sizeof *a);
  a->kind = k;
  a->off = off;
  a->end = end;
  a->i = k == MLIR_A_VALUE ? -1 : 0;
  return a;
}

void mlir_items_begin(mlir_pctx *p, mlir_itemv *v) {
  v->start = p->nscratch;
  v->n = 0;
}

void mlir_item_push(mlir_pctx *p, mlir_itemv *v, mlir_item it) {
  if (v->start + v->n != p->nscratch) {   /* cannot happen: lists close in order */
    mlir_error(p, it.val->off, "internal error: attribute lists out of order");
    return;
  }
  if (p->nscratch == p->scratchcap) {
    p->scratchcap = p->scratchcap ? 2 * p->scratchcap : 256;
    p->scratch = xrealloc(p->scratch, (size_t)p->scratchcap * sizeof *p->scratch);
  }
  p->scratch[p->nscratch++] = it;
  v->n++;
}

mlir_item *mlir_items_end(mlir_pctx *p, const mlir_itemv *v) {
  if (v->n == 0 || v->start + v->n > p->nscratch) return NULL;
  mlir_item *out = arena_dup(p->a, p->scratch + v->start, (size_t)v->n * sizeof *out);
  p->nscratch = v->start;
  return out;
}

/* The values among a pretty op's items, in order (into out when not NULL); their number. */
static int collect(mlir_attr *a, mlir_attr **out, int n) {
  if (a->kind == MLIR_A_VALUE) {
    if (out) out[n] = a;
    return n + 1;
  }
  if (a->kind == MLIR_A_GROUP || a->kind == MLIR_A_SEQ)
    for (int i = 0; i < a->nitems; i++) n = collect(a->items[i].val, out, n);
  return n;
}

void mlir_pretty_done(mlir_pctx *p, mlir_op *op) {
  int n = 0;
  for (int i = 0; i < op->nitems; i++) n = collect(op->items[i].val, NULL, n);
  if (n) {
    op->operands = arena_alloc(p->a, (size_t)n * sizeof *op->operands);
    for (int i = 0, k = 0; i < op->nitems; i++) k = collect(op->items[i].val, op->operands, k);
  }
  op->noperands = n;
  if (!op->sig.has && n > 0 && !p->syn.failed) {
    /* Reduced on the token after the op: that is where the ':' is missing. */
    const mlir_tok *t = &p->tok;
    const mlir_item *last = &op->items[op->nitems - 1];
    int line_l, col_l, line_t, col_t;
    diag_linecol(p->syn.src, last->val->end, &line_l, &col_l);
    diag_linecol(p->syn.src, t->off, &line_t, &col_t);
    const char *comma = p->code == TK_VALUE && line_l == line_t ? "',' or " : "";
    char what[64];
    if (p->code == 0) {
      p->syn.incomplete = 1;
      snprintf(what, sizeof what, "end of input");
    } else if (p->code == TK_STRING) {
      snprintf(what, sizeof what, "string");
    } else {
      snprintf(what, sizeof what, "'%.*s%s'", (int)(t->len > 40 ? 40 : t->len), p->syn.src->text + t->off,
               t->len > 40 ? "..." : "");
    }
    mlir_error(p, t->off, "unexpected %s, expected %s':' and the types of '%s'", what, comma, op->name);
  }
}

void mlir_check_dense(mlir_pctx *p, const mlir_attr *lit) {
  switch (lit->kind) {
  case MLIR_A_INT: case MLIR_A_FLOAT: case MLIR_A_BOOL: case MLIR_A_STRING:
    return;
  case MLIR_A_LIST: case MLIR_A_GROUP:
    for (int i = 0; i < lit->nitems && !p->syn.failed; i++) {
      if (lit->items[i].key)
        mlir_error(p, lit->items[i].key_off, "dense elements cannot have keys");
      else
        mlir_check_dense(p, lit->items[i].val);
    }
    return;
  default: {
    uint32_t n = lit->end - lit->off;
    mlir_error(p, lit->off, "unexpected '%.*s%s' in dense<...>, expected numbers, true or false, "
               "lists of them, or a hex string such as \"0x0000803F\"", (int)(n > 40 ? 40 : n),
               p->syn.src->text + lit->off, n > 40 ? "..." : "");
    return;
  }
  }
}

mlir_modb mlir_module_open(mlir_pctx *p, uint32_t off) {
  mlir_modb b = {0};
  b.m = arena_alloc(p->a, sizeof *b.m);
  b.m->off = off;
  mlir_file *f = p->file;
  MLIR_PUSH(p->a, f->modules, f->nmodules, p->modcap, b.m);
  return b;
}

/* An item's value by key among items (NULL if none). */
static mlir_item *find_item(mlir_item *items, int n, const char *key) {
  for (int i = 0; i < n; i++)
    if (items[i].key && strcmp(items[i].key, key) == 0) return &items[i];
  return NULL;
}

/* A generic op's attribute, from its properties then its dictionary. */
static mlir_item *op_attr_item(const mlir_op *op, const char *key) {
  mlir_item *it = NULL;
  if (op->props) it = find_item(op->props->items, op->props->nitems, key);
  if (!it && op->attrs) it = find_item(op->attrs->items, op->attrs->nitems, key);
  return it;
}

/* A copy of dict d without the keys in drop (NULL if nothing is left). */
static mlir_attr *dict_without(mlir_pctx *p, const mlir_attr *d, const char *const *drop) {
  if (!d) return NULL;
  mlir_attr *c = arena_dup(p->a, d, sizeof *d);
  c->items = arena_alloc(p->a, (size_t)(d->nitems + 1) * sizeof *c->items);
  c->nitems = 0;
  for (int i = 0; i < d->nitems; i++) {
    int keep = 1;
    for (const char *const *k = drop; *k; k++)
      if (d->items[i].key && strcmp(d->items[i].key, *k) == 0) keep = 0;
    if (keep) c->items[c->nitems++] = d->items[i];
  }
  return c->nitems ? c : NULL;
}

/* The types of a function_type's side: (T, ...) items, or one TYPE. */
static int fn_types(mlir_pctx *p, const mlir_attr *a, mlir_type ***out, int *n) {
  if (a->kind == MLIR_A_TYPE) {
    *out = arena_alloc(p->a, sizeof **out);
    (*out)[0] = a->type;
    *n = 1;
    return 0;
  }
  if (a->kind != MLIR_A_GROUP && a->kind != MLIR_A_ARROW) return -1;
  *out = arena_alloc(p->a, (size_t)(a->nitems + 1) * sizeof **out);
  *n = a->nitems;
  for (int i = 0; i < a->nitems; i++) {
    if (a->items[i].key || a->items[i].val->kind != MLIR_A_TYPE) return -1;
    (*out)[i] = a->items[i].val->type;
  }
  return 0;
}

/* "func.func"() <{function_type = (...) -> (...), sym_name = "f"}> ({ ^bb0(...): ... }) : () -> () */
static mlir_func *generic_func(mlir_pctx *p, mlir_op *op) {
  mlir_item *name = op_attr_item(op, "sym_name"), *ft = op_attr_item(op, "function_type");
  mlir_item *vis = op_attr_item(op, "sym_visibility");
  mlir_item *aa = op_attr_item(op, "arg_attrs"), *ra = op_attr_item(op, "res_attrs");
  if (!name || name->val->kind != MLIR_A_STRING) {
    mlir_error(p, op->name_off, "a generic func.func needs sym_name = \"name\"");
    return NULL;
  }
  mlir_type **ins, **outs;
  int nins, nouts;
  if (!ft || ft->val->kind != MLIR_A_ARROW || fn_types(p, ft->val, &ins, &nins) < 0 ||
      fn_types(p, ft->val->out, &outs, &nouts) < 0) {
    mlir_error(p, ft ? ft->val->off : op->name_off, "a generic func.func needs function_type = "
               "(argument types) -> (result types)");
    return NULL;
  }
  if (op->nregions > 1) {
    mlir_error(p, op->regions[1]->off, "a func.func has one region, its body");
    return NULL;
  }
  mlir_func *f = arena_alloc(p->a, sizeof *f);
  f->generic = 1;
  f->off = op->off;
  f->name_off = name->val->off;
  f->name = arena_intern(p->a, name->val->text, name->val->len);
  if (vis && vis->val->kind == MLIR_A_STRING) f->visibility = arena_intern(p->a, vis->val->text, vis->val->len);
  f->loc = op->loc;
  f->body = op->nregions ? op->regions[0] : NULL;
  if (f->body && f->body->nblocks == 1 && !f->body->blocks[0]->label && f->body->blocks[0]->nops == 0)
    f->body = NULL;          /* ({}): a declaration, whose region has no block */
  if (f->body) {
    mlir_block *entry = f->body->blocks[0];
    if (entry->nargs != nins) {
      mlir_error(p, ft->val->off, "function_type of @%s has %d argument types but its body's "
                 "first block takes %d arguments", f->name, nins, entry->nargs);
      return NULL;
    }
    f->args = entry->args;
    f->nargs = entry->nargs;
  } else {
    f->args = arena_alloc(p->a, (size_t)(nins + 1) * sizeof *f->args);
    f->nargs = nins;
    for (int i = 0; i < nins; i++) {
      f->args[i].type = ins[i];
      f->args[i].off = ins[i]->off;
    }
  }
  f->results = arena_alloc(p->a, (size_t)(nouts + 1) * sizeof *f->results);
  f->nresults = nouts;
  for (int i = 0; i < nouts; i++) f->results[i].type = outs[i];
  if (aa && aa->val->kind == MLIR_A_LIST)
    for (int i = 0; i < aa->val->nitems && i < f->nargs; i++)
      if (aa->val->items[i].val->kind == MLIR_A_DICT) f->args[i].attrs = aa->val->items[i].val;
  if (ra && ra->val->kind == MLIR_A_LIST)
    for (int i = 0; i < ra->val->nitems && i < f->nresults; i++)
      if (ra->val->items[i].val->kind == MLIR_A_DICT) f->results[i].attrs = ra->val->items[i].val;
  static const char *const drop[] = {
    "sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs", NULL
  };
  f->attrs = dict_without(p, op->attrs, drop);
  if (op->props) {
    mlir_attr *rest = dict_without(p, op->props, drop);
    if (rest && !f->attrs) f->attrs = rest;
    else if (rest) {   /* both: properties first */
      mlir_attr *both = arena_dup(p->a, rest, sizeof *rest);
      both->items = arena_alloc(p->a, (size_t)(rest->nitems + f->attrs->nitems) * sizeof *both->items);
      memcpy(both->items, rest->items, (size_t)rest->nitems * sizeof *both->items);
      memcpy(both->items + rest->nitems, f->attrs->items, (size_t)f->attrs->nitems * sizeof *both->items);
      both->nitems = rest->nitems + f->attrs->nitems;
      f->attrs = both;
    }
  }
  return f;
}

/* sdy.mesh @mesh = <["x"=2, "y"=4]>, the older <"x"=2, "y"=4>, and device_ids=[...]. */
static mlir_mesh *make_mesh(mlir_pctx *p, mlir_op *op) {
  mlir_item *def = NULL;
  for (int i = 0; i < op->nitems && !def; i++)
    if (op->items[i].key && op->items[i].key[0] == '@' && op->items[i].sep == '=') def = &op->items[i];
  if (!def || def->val->kind != MLIR_A_ANGLE) {
    mlir_error(p, op->name_off, "sdy.mesh needs a name and axes, as in sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>");
    return NULL;
  }
  mlir_mesh *m = arena_alloc(p->a, sizeof *m);
  m->name = arena_intern_cstr(p->a, def->key + 1);
  m->off = op->off;
  m->op = op;
  mlir_attr *body = def->val;
  mlir_item *axes = body->items;
  int naxes = body->nitems;
  if (naxes > 0 && !axes[0].key && axes[0].val->kind == MLIR_A_LIST) {
    for (int i = 1; i < naxes; i++) {
      if (axes[i].key && strcmp(axes[i].key, "device_ids") == 0) {
        m->device_ids = axes[i].val;
      } else {
        mlir_error(p, axes[i].key ? axes[i].key_off : axes[i].val->off,
                   "unexpected item in sdy.mesh; after the axes only device_ids=[...] may follow");
        return NULL;
      }
    }
    naxes = axes[0].val->nitems;
    axes = axes[0].val->items;
  }
  m->axes = arena_alloc(p->a, (size_t)(naxes + 1) * sizeof *m->axes);
  for (int i = 0; i < naxes; i++) {
    if (axes[i].key && strcmp(axes[i].key, "device_ids") == 0 && body->items == axes) {
      m->device_ids = axes[i].val;
      continue;
    }
    if (!axes[i].key || axes[i].val->kind != MLIR_A_INT || axes[i].val->i < 1) {
      mlir_error(p, axes[i].key ? axes[i].key_off : axes[i].val->off,
                 "a mesh axis is written \"name\"=size with a size of at least 1");
      return NULL;
    }
    mlir_axis ax = {axes[i].key, axes[i].val->i, axes[i].key_off};
    m->axes[m->naxes++] = ax;
  }
  return m;
}

void mlir_module_add(mlir_pctx *p, mlir_modb *m, mlir_op *op) {
  if (!m) {
    if (op->generic && op->name == p->s_module) {
      mlir_modb b = mlir_module_open(p, op->off);
      b.m->generic = 1;
      b.m->loc = op->loc;
      mlir_item *name = op_attr_item(op, "sym_name");
      if (name && name->val->kind == MLIR_A_STRING) b.m->name = arena_intern(p->a, name->val->text, name->val->len);
      static const char *const drop[] = {"sym_name", NULL};
      b.m->attrs = dict_without(p, op->attrs, drop);
      if (op->nregions != 1 || op->regions[0]->nblocks != 1) {
        mlir_error(p, op->name_off, "a builtin.module has one region of one block");
        return;
      }
      mlir_block *body = op->regions[0]->blocks[0];
      for (int i = 0; i < body->nops; i++) mlir_module_add(p, &b, body->ops[i]);
      return;
    }
    if (!p->implicit.m) {
      p->implicit = mlir_module_open(p, op->off);
      p->implicit.m->implicit = 1;
    }
    m = &p->implicit;
  }
  mlir_module *mod = m->m;
  mlir_func *f = op->func;
  if (!f && op->generic && op->name == p->s_func) f = generic_func(p, op);
  if (f) {
    MLIR_PUSH(p->a, mod->funcs, mod->nfuncs, m->funccap, f);
  } else if (op->name == p->s_mesh && !op->generic) {
    mlir_mesh *mesh = make_mesh(p, op);
    if (mesh) MLIR_PUSH(p->a, mod->meshes, mod->nmeshes, m->meshcap, mesh);
  } else if (!p->syn.failed) {
    MLIR_PUSH(p->a, mod->ops, mod->nops, m->opcap, op);
  }
}

void mlir_alias_add(mlir_pctx *p, mlir_tok name, mlir_loc *l, mlir_attr *a, mlir_type *t) {
  mlir_alias al = {arena_intern(p->a, name.s, name.len), name.off, l, a, t};
  mlir_file *f = p->file;
  MLIR_PUSH(p->a, f->aliases, f->naliases, p->aliascap, al);
}

/* ---- aliases, once the whole file is read ---- */

static size_t ptr_hash(const void *q, size_t mask) {
  uintptr_t x = (uintptr_t)q;
  x ^= x >> 17;
  x *= 0x9e3779b97f4a7c15ull;
  return (size_t)(x >> 20) & mask;
}

/* Aliases by name: an open-addressing table of alias index + 1 (0: empty). */
typedef struct alias_table { int *slot; size_t mask; } alias_table;

static int alias_index(const mlir_file *f, const alias_table *t, const char *name) {
  size_t h = ptr_hash(name, t->mask);
  while (t->slot[h] && f->aliases[t->slot[h] - 1].name != name) h = (h + 1) & t->mask;
  return t->slot[h] - 1;
}

/* The aliases l refers to (not following them), onto the edge list of an alias. */
typedef struct intv { int *v; int n, cap; } intv;

static void alias_refs(mlir_pctx *p, const alias_table *t, const mlir_loc *l, intv *edges) {
  if (!l) return;
  if (l->kind == MLIR_L_ALIAS) {
    MLIR_PUSH(p->a, edges->v, edges->n, edges->cap, alias_index(p->file, t, l->text));
    return;
  }
  alias_refs(p, t, l->child, edges);
  alias_refs(p, t, l->caller, edges);
  for (int i = 0; i < l->nlocs; i++) alias_refs(p, t, l->locs[i], edges);
}

/* #a = loc(#b), #b = loc(fused[#a]): definitions that refer to themselves
** would send whoever follows them round for ever. A depth-first search of
** the aliases, with its own stack (chains can be long). */
static int alias_cycles(mlir_pctx *p, const alias_table *t) {
  mlir_file *f = p->file;
  int n = f->naliases;
  intv *edges = arena_alloc(p->a, (size_t)(n + 1) * sizeof *edges);
  for (int i = 0; i < n; i++) alias_refs(p, t, f->aliases[i].loc, &edges[i]);
  char *color = arena_alloc(p->a, (size_t)n + 1);           /* 0 new, 1 on the path, 2 done */
  int *stack = arena_alloc(p->a, (size_t)(n + 1) * sizeof *stack);
  int *next = arena_alloc(p->a, (size_t)(n + 1) * sizeof *next);
  for (int r = 0; r < n; r++) {
    if (color[r]) continue;
    int sp = 0;
    stack[sp++] = r;
    color[r] = 1;
    while (sp > 0) {
      int v = stack[sp - 1];
      if (next[v] == edges[v].n) {
        color[v] = 2;
        sp--;
        continue;
      }
      int w = edges[v].v[next[v]++];
      if (color[w] == 1)
        return mlir_error(p, f->aliases[w].off, "location alias '%s' refers to itself", f->aliases[w].name);
      if (!color[w]) {
        color[w] = 1;
        stack[sp++] = w;
      }
    }
  }
  return 0;
}

static int resolve_aliases(mlir_pctx *p) {
  mlir_file *f = p->file;
  size_t cap = 16;
  while (cap < 2 * (size_t)f->naliases) cap *= 2;
  alias_table t = {arena_alloc(p->a, cap * sizeof *t.slot), cap - 1};
  for (int i = 0; i < f->naliases; i++) {
    size_t h = ptr_hash(f->aliases[i].name, t.mask);
    while (t.slot[h] && f->aliases[t.slot[h] - 1].name != f->aliases[i].name) h = (h + 1) & t.mask;
    if (t.slot[h]) {
      mlir_error(p, f->aliases[i].off, "alias '%s' is defined twice", f->aliases[i].name);
      diag_note(p->syn.d, (loc){p->syn.src, f->aliases[t.slot[h] - 1].off}, "first defined here");
      return -1;
    }
    t.slot[h] = i + 1;
  }
  for (int i = 0; i < p->aliaslocs.n; i++) {
    mlir_loc *l = p->aliaslocs.v[i];
    int k = alias_index(f, &t, l->text);
    if (k < 0) return mlir_error(p, l->off, "undefined location alias '%s'", l->text);
    const mlir_alias *al = &f->aliases[k];
    if (!al->loc) {
      mlir_error(p, l->off, "'%s' is not a location", l->text);
      diag_note(p->syn.d, (loc){p->syn.src, al->off}, "defined here");
      return -1;
    }
    l->child = al->loc;
  }
  return alias_cycles(p, &t);
}

/* ---- the driver ---- */

mlir_file *mlir_parse(arena *a, diag *d, const diag_src *src) {
  mlir_pctx *p = xcalloc(1, sizeof *p);
  p->a = a;
  p->cur = src->text;
  p->file = arena_alloc(a, sizeof *p->file);
  p->file->src = src;
  p->s_module = arena_intern_cstr(a, "builtin.module");
  p->s_func = arena_intern_cstr(a, "func.func");
  p->s_mesh = arena_intern_cstr(a, "sdy.mesh");
  if (syn_init(&p->syn, d, src, "an MLIR file") < 0) {
    free(p);
    return NULL;
  }

  void *parser = mlirParseAlloc(xmalloc, p);
  for (;;) {
    mlir_tok t;
    int code = mlir_lex(p, &t);
    if (code < 0) break;
    p->pushed = 0;
    track(p, code, &t);
    if ((syn_is_opener(&mlir_syn, code) || is_angle_opener(code)) && push_open(p, code, &t) < 0) break;
    p->tok = t;
    p->code = code;
    if (!mlir_gram_accepts(parser, code)) {    /* say so from the state before the token */
      mlir_syntax_error(p, code, &t, mlir_gram_expected(parser));
      break;
    }
    mlirParse(parser, code, t);
    if (p->syn.failed || code == 0) break;
    if (code == TK_RA && p->syn.depth > 0 && p->syn.open[p->syn.depth - 1].ch == '<') p->syn.depth--;
    syn_shifted(&p->syn, &mlir_syn, code);
    p->prevtok = t;
  }
  mlirParseFree(parser, free);
  free(p->scratch);

  mlir_file *f = p->file;
  if (!p->syn.failed && f->nmodules == 0)
    mlir_error(p, 0, "no module or function in file; an MLIR file holds 'module { ... }' or func.func");
  if (!p->syn.failed) resolve_aliases(p);
  if (p->syn.failed) f = NULL;
  free(p);
  return f;
}

/* ---- reading the tree ---- */

/* The first FILE location (want_file) or the first NAME under l. Aliases
** are followed in a loop (chains can be long); the recursion through fused
** and callsite is bounded in depth, and the whole walk in visits (aliases
** may share definitions, which could otherwise cost exponential time). */
static const mlir_loc *loc_find(const mlir_loc *l, int want_file, int depth, long *budget) {
  while (l && l->kind == MLIR_L_ALIAS && --*budget >= 0) l = l->child;
  if (!l || --*budget < 0 || depth > 1000) return NULL;
  const mlir_loc *r = NULL;
  switch (l->kind) {
  case MLIR_L_FILE: return want_file ? l : NULL;
  case MLIR_L_NAME: return want_file ? loc_find(l->child, 1, depth + 1, budget) : l;
  case MLIR_L_CALLSITE:
    r = loc_find(l->child, want_file, depth + 1, budget);
    return r ? r : loc_find(l->caller, want_file, depth + 1, budget);
  case MLIR_L_FUSED:
    for (int i = 0; i < l->nlocs && !r; i++) r = loc_find(l->locs[i], want_file, depth + 1, budget);
    return r;
  case MLIR_L_UNKNOWN: case MLIR_L_ALIAS: return NULL;
  }
  return NULL;
}

const char *mlir_loc_text(arena *a, const mlir_loc *l) {
  long budget = 1L << 20;
  const mlir_loc *r = loc_find(l, 1, 0, &budget);
  if (r) return arena_printf(a, "%s:%lld:%lld", r->text, (long long)r->line, (long long)r->col);
  budget = 1L << 20;
  r = loc_find(l, 0, 0, &budget);
  return r ? r->text : NULL;
}

mlir_attr *mlir_attr_get(const mlir_attr *a, const char *key) {
  if (!a) return NULL;
  mlir_item *it = find_item(a->items, a->nitems, key);
  return it ? it->val : NULL;
}

const mlir_item *mlir_op_item(const mlir_op *op, const char *key) {
  return find_item(op->items, op->nitems, key);
}

mlir_attr *mlir_op_attr(const mlir_op *op, const char *key) {
  mlir_item *it = op_attr_item(op, key);
  return it ? it->val : NULL;
}

const mlir_alias *mlir_alias_find(const mlir_file *f, const char *name) {
  for (int i = 0; i < f->naliases; i++)
    if (strcmp(f->aliases[i].name, name) == 0) return &f->aliases[i];
  return NULL;
}

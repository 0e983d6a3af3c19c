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
  [TK_MINUS] = "'-'", [TK_ARROW] = "'->'", [TK_QUESTION] = "'?'", [TK_CROSS] = "'x'", [TK_TO] = "'to'",
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
  mlir_pctx *p = mem_calloc(1, sizeof *p);
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

  void *parser = mlirParseAlloc(mem_alloc, p);
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
    if (p->bad && !p->syn.failed) mlir_syntax_error(p, p->bad_code, &p->bad_tok, p->bad_expected);
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


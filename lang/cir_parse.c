/*
** cir_parse.c: the model-file driver. The lexer's tokens are pushed into
** the Lemon parser one by one (as SQLite's tokenizer does); the first
** error, lexical or syntactic, stops everything. Open brackets are tracked
** here, beside the parser (with lang/syntax.c, which tac_parse.c shares),
** so that an error can say what is unclosed and where it was opened, and
** so that nesting stays bounded.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lang/cir_int.h"
#include "lang/cir_gram.h"

/* ---- describing tokens ---- */

/* How a token reads in "expected ...". ORDER tokens: the %token lines of cir_gram.lemon. */
static const char *const tok_words[] = {
  [0] = "end of input",
  [TK_MODEL] = "'model'", [TK_INPUT] = "'input'", [TK_PARAM] = "'param'",
  [TK_RETURN] = "'return'", [TK_REPEAT] = "'repeat'", [TK_IN] = "'in'",
  [TK_VERSION] = "'version'",
  [TK_NAME] = "a name", [TK_INT] = "an integer", [TK_FLOAT] = "a number", [TK_STRING] = "a string",
  [TK_LP] = "'('", [TK_RP] = "')'", [TK_LB] = "'['", [TK_RB] = "']'", [TK_LC] = "'{'", [TK_RC] = "'}'",
  [TK_COLON] = "':'", [TK_COMMA] = "','", [TK_EQ] = "'='", [TK_MINUS] = "'-'", [TK_DOTDOT] = "'..'",
};

int cir_is_keyword(const char *name) {
  size_t n = strlen(name);
  for (int k = TK_MODEL; k <= TK_VERSION; k++)        /* "'model'" */
    if (strlen(tok_words[k]) == n + 2 && !strncmp(tok_words[k] + 1, name, n)) return 1;
  return 0;
}

#define BIT SYN_BIT
#define EXPR_START (BIT(TK_NAME) | BIT(TK_INT) | BIT(TK_FLOAT) | BIT(TK_STRING) | BIT(TK_MINUS) | BIT(TK_LB))
#define STMT_START (BIT(TK_NAME) | BIT(TK_INPUT) | BIT(TK_PARAM) | BIT(TK_RETURN) | BIT(TK_REPEAT))

/* "to close model 'mlp'" and the like. */
static void close_text(const syn_open *o, char *buf, size_t cap) {
  switch (o->kind) {
  case CIR_OPEN_MODEL: snprintf(buf, cap, "to close model '%.*s'", o->whatlen, o->what); break;
  case CIR_OPEN_REPEAT: snprintf(buf, cap, "to close repeat '%.*s'", o->whatlen, o->what); break;
  case CIR_OPEN_CALL: snprintf(buf, cap, "to close the call of '%.*s'", o->whatlen, o->what); break;
  case CIR_OPEN_SHAPE: snprintf(buf, cap, "to close the shape"); break;
  case CIR_OPEN_LIST: snprintf(buf, cap, "to close the list"); break;
  default: snprintf(buf, cap, "to close the '%c'", o->ch); break;
  }
}

static const syn_lang cir_syn = {
  .lp = TK_LP, .rp = TK_RP, .lb = TK_LB, .rb = TK_RB, .lc = TK_LC, .rc = TK_RC,
  .string = TK_STRING, .tok_words = tok_words, .close_text = close_text,
};

/* "a, b or c" for the acceptable tokens, named after where we are. */
static void expected_text(const cir_pctx *p, uint64_t set, char *buf, size_t cap) {
  syn_words w = {.set = set};
  int prev = p->syn.prev;
  if (!syn_group(&w, EXPR_START, "an expression") && !syn_group(&w, STMT_START, "a statement") &&
      (w.set & BIT(TK_NAME))) {
    const char *what = "a name";
    if (prev == TK_COLON) what = "a type such as f32[8, 16]";
    else if (prev == TK_MODEL) what = "the model's name";
    else if (prev == TK_REPEAT) what = "the name of the repeat variable";
    else if (prev == TK_INPUT || prev == TK_PARAM) what = "the name being declared";
    syn_word(&w, what, BIT(TK_NAME));
  }
  /* dims: '-' and floats are only there to give a better message */
  if ((w.set & BIT(TK_INT)) && !(w.set & BIT(TK_STRING))) {
    uint64_t dim = BIT(TK_INT) | BIT(TK_MINUS) | BIT(TK_FLOAT);
    syn_word(&w, (w.set & dim) == dim ? "a dimension" : (w.set & BIT(TK_FLOAT)) ? "a number" : "an integer", dim);
  }
  if (prev == TK_NAME && p->syn.prev2 == TK_COLON && (w.set & BIT(TK_LB)))
    syn_word(&w, "'[' and the shape (f32[] for a scalar)", BIT(TK_LB));
  /* separators before closers: "',' or ')'" reads better than "')' or ','" */
  static const int order[] = {
    TK_COMMA, TK_EQ, TK_COLON, TK_IN, TK_DOTDOT, TK_LP, TK_LB, TK_LC, TK_RP, TK_RB, TK_RC,
    TK_MODEL, TK_INPUT, TK_PARAM, TK_RETURN, TK_REPEAT, TK_VERSION,
    TK_NAME, TK_INT, TK_FLOAT, TK_STRING, TK_MINUS, 0
  };
  syn_tokens(&w, &cir_syn, order, sizeof order / sizeof order[0]);
  syn_join(&w, buf, cap);
}

void cir_syntax_error(cir_pctx *p, int code, const cir_tok *t, uint64_t expected) {
  if (p->syn.failed) return;
  char exp[512];
  expected_text(p, expected, exp, sizeof exp);
  syn_err e;
  /* a bracket left open before the next statement: said where it opened */
  const syn_open *in = p->syn.depth ? &p->syn.open[p->syn.depth - 1] : NULL;
  const char *after = t->s && code != TK_STRING ? t->s + t->len : NULL;
  while (after && (*after == ' ' || *after == '\t')) after++;
  int statement = code == TK_MODEL || code == TK_INPUT || code == TK_PARAM || code == TK_RETURN || code == TK_REPEAT ||
                  (code == TK_NAME && after && after[0] == '=');     /* y = ... */
  if (syn_unclosed(&p->syn, &cir_syn, code, t->off, t->s, t->len, p->prevtok.off + p->prevtok.len, expected,
                   statement, code == TK_MODEL && in && in->kind == CIR_OPEN_MODEL))
    return;
  if (syn_unexpected(&p->syn, &cir_syn, code, t->off, t->s, t->len, expected, exp, &e)) return;
  const syn_open *o = e.o;
  if (code == TK_MODEL && o) {
    if (o->kind == CIR_OPEN_MODEL)
      cir_error(p, t->off, "unexpected 'model' inside model '%.*s'; is its '}' missing?",
                o->whatlen, o->what);
    else
      cir_error(p, t->off, "unexpected 'model', expected %s", exp);
    syn_note_open(&p->syn, o);
    return;
  }
  int keyword = code >= TK_MODEL && code <= TK_VERSION;
  if ((expected & BIT(TK_MODEL)) && (code == TK_NAME || (keyword && code != TK_VERSION))) {
    cir_error(p, t->off, "unexpected %s outside a model; statements go inside "
              "'model NAME { ... }'", e.what);
    return;
  }
  if (keyword && (expected & BIT(TK_NAME))) {
    cir_error(p, t->off, "unexpected %s: it is a keyword and cannot be used as a name", e.what);
    return;
  }
  if (code == TK_VERSION) {
    cir_error(p, t->off, "unexpected 'version': it may only start the file, as in 'version 1'");
    return;
  }
  cir_error(p, t->off, "unexpected %s, expected %s", e.what, exp);
}

/* ---- brackets ---- */

static int push_open(cir_pctx *p, int code, const cir_tok *t) {
  syn_open *o = syn_push(&p->syn, &cir_syn, code, t->off);
  if (!o)
    return cir_error(p, t->off, "nesting deeper than %d levels; name intermediate "
                     "results to flatten it", CIR_MAX_DEPTH);
  int after_name = p->syn.prev == TK_NAME;
  if (o->ch == '(') {
    o->kind = after_name ? CIR_OPEN_CALL : CIR_OPEN_PAREN;
    if (after_name) syn_name(o, p->prevtok.s, p->prevtok.len);
  } else if (o->ch == '[') {
    o->kind = after_name ? CIR_OPEN_SHAPE : CIR_OPEN_LIST;
  } else if (after_name && p->syn.prev2 == TK_MODEL) {
    o->kind = CIR_OPEN_MODEL;
    syn_name(o, p->model_name.s, p->model_name.len);
  } else if (p->syn.prev == TK_INT && p->syn.prev2 == TK_DOTDOT) {
    o->kind = CIR_OPEN_REPEAT;
    syn_name(o, p->repeat_var.s, p->repeat_var.len);
  } else {
    o->kind = CIR_OPEN_BLOCK;
  }
  return 0;
}

/* ---- the driver ---- */

cir_file *cir_parse(arena *a, diag *d, const diag_src *src) {
  cir_pctx *p = mem_calloc(1, sizeof *p);
  p->a = a;
  p->cur = src->text;
  p->file = arena_alloc(a, sizeof *p->file);
  p->file->src = src;
  if (syn_init(&p->syn, d, src, "a model file") < 0) {
    free(p);
    return NULL;
  }

  void *parser = cirParseAlloc(mem_alloc, p);
  for (;;) {
    cir_tok t;
    int code = cir_lex(p, &t);
    if (code < 0) break;
    if (syn_is_opener(&cir_syn, code) && push_open(p, code, &t) < 0) break;
    if (p->syn.prev == TK_MODEL && code == TK_NAME) p->model_name = t;
    if (p->syn.prev == TK_REPEAT && code == TK_NAME) p->repeat_var = t;
    cirParse(parser, code, t);
    if (p->bad && !p->syn.failed) cir_syntax_error(p, p->bad_code, &p->bad_tok, p->bad_expected);
    if (p->syn.failed || code == 0) break;
    syn_shifted(&p->syn, &cir_syn, code);
    p->prevtok = t;
  }
  cirParseFree(parser, free);

  cir_file *f = p->syn.failed ? NULL : p->file;
  if (f && f->nmodels == 0) {
    cir_error(p, 0, "no model in file; a model file holds one or more 'model NAME { ... }'");
    f = NULL;
  }
  free(p);
  return f;
}

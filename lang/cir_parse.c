/*
** cir_parse.c: the model-file driver. The lexer's tokens are pushed into
** the Lemon parser one by one (as SQLite's tokenizer does); the first
** error, lexical or syntactic, stops everything. Open brackets are tracked
** here, beside the parser, so that an error can say what is unclosed and
** where it was opened, and so that nesting stays bounded.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lang/cir_int.h"
#include "lang/cir_gram.h"

int cir_error(cir_pctx *p, uint32_t off, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (p->failed) return -1;     /* the first error only */
  p->failed = 1;
  return diag_error(p->d, (loc){p->src, off}, "%s", msg);
}

/* ---- describing tokens ---- */

/* How a token reads in "expected ...". ORDER tokens: the %token lines of cir_gram.lemon. */
static const char *tok_desc(int code) {
  switch (code) {
  case 0: return "end of input";
  case TK_MODEL: return "'model'";
  case TK_INPUT: return "'input'";
  case TK_PARAM: return "'param'";
  case TK_RETURN: return "'return'";
  case TK_REPEAT: return "'repeat'";
  case TK_IN: return "'in'";
  case TK_VERSION: return "'version'";
  case TK_NAME: return "a name";
  case TK_INT: return "an integer";
  case TK_FLOAT: return "a number";
  case TK_STRING: return "a string";
  case TK_LP: return "'('";
  case TK_RP: return "')'";
  case TK_LB: return "'['";
  case TK_RB: return "']'";
  case TK_LC: return "'{'";
  case TK_RC: return "'}'";
  case TK_COLON: return "':'";
  case TK_COMMA: return "','";
  case TK_EQ: return "'='";
  case TK_MINUS: return "'-'";
  case TK_DOTDOT: return "'..'";
  }
  return "?";
}

#define BIT(c) ((uint64_t)1 << (c))
#define EXPR_START (BIT(TK_NAME) | BIT(TK_INT) | BIT(TK_FLOAT) | BIT(TK_STRING) | BIT(TK_MINUS) | BIT(TK_LB))
#define STMT_START (BIT(TK_NAME) | BIT(TK_INPUT) | BIT(TK_PARAM) | BIT(TK_RETURN) | BIT(TK_REPEAT))

/* "a, b or c" for the acceptable tokens, named after where we are. */
static void expected_text(const cir_pctx *p, uint64_t set, char *buf, size_t cap) {
  const char *items[40];
  int n = 0;
  if ((set & EXPR_START) == EXPR_START) {
    items[n++] = "an expression";
    set &= ~EXPR_START;
  } else if ((set & STMT_START) == STMT_START) {
    items[n++] = "a statement";
    set &= ~STMT_START;
  } else if (set & BIT(TK_NAME)) {
    const char *what = "a name";
    if (p->prev == TK_COLON) what = "a type such as f32[8, 16]";
    else if (p->prev == TK_MODEL) what = "the model's name";
    else if (p->prev == TK_REPEAT) what = "the name of the repeat variable";
    else if (p->prev == TK_INPUT || p->prev == TK_PARAM) what = "the name being declared";
    items[n++] = what;
    set &= ~BIT(TK_NAME);
  }
  /* dims: '-' and floats are only there to give a better message */
  if ((set & BIT(TK_INT)) && !(set & BIT(TK_STRING))) {
    uint64_t dim = BIT(TK_INT) | BIT(TK_MINUS) | BIT(TK_FLOAT);
    items[n++] = (set & dim) == dim ? "a dimension" : (set & BIT(TK_FLOAT)) ? "a number" : "an integer";
    set &= ~dim;
  }
  if (p->prev == TK_NAME && p->prev2 == TK_COLON && (set & BIT(TK_LB))) {
    items[n++] = "'[' and the shape (f32[] for a scalar)";
    set &= ~BIT(TK_LB);
  }
  /* separators before closers: "',' or ')'" reads better than "')' or ','" */
  static const int order[] = {
    TK_COMMA, TK_EQ, TK_COLON, TK_IN, TK_DOTDOT, TK_LP, TK_LB, TK_LC, TK_RP, TK_RB, TK_RC,
    TK_MODEL, TK_INPUT, TK_PARAM, TK_RETURN, TK_REPEAT, TK_VERSION,
    TK_NAME, TK_INT, TK_FLOAT, TK_STRING, TK_MINUS, 0
  };
  for (size_t i = 0; i < sizeof order / sizeof order[0] && n < 40; i++)
    if (set & BIT(order[i])) items[n++] = tok_desc(order[i]);
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < n && k < cap; i++) {
    const char *sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";
    k += (size_t)snprintf(buf + k, cap - k, "%s%s", sep, items[i]);
  }
}

static char closer_of(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }
static int closer_code(char open) { return open == '(' ? TK_RP : open == '[' ? TK_RB : TK_RC; }

/* "to close model 'mlp'" and the like. */
static void close_text(const cir_open *o, char *buf, size_t cap) {
  switch (o->kind) {
  case CIR_OPEN_MODEL: snprintf(buf, cap, "to close model '%.*s'", o->whatlen, o->what); break;
  case CIR_OPEN_REPEAT: snprintf(buf, cap, "to close repeat '%.*s'", o->whatlen, o->what); break;
  case CIR_OPEN_CALL: snprintf(buf, cap, "to close the call of '%.*s'", o->whatlen, o->what); break;
  case CIR_OPEN_SHAPE: snprintf(buf, cap, "to close the shape"); break;
  case CIR_OPEN_LIST: snprintf(buf, cap, "to close the list"); break;
  default: snprintf(buf, cap, "to close the '%c'", o->ch); break;
  }
}

static void note_open(cir_pctx *p, const cir_open *o) {
  diag_note(p->d, (loc){p->src, o->off}, "'%c' opened here", o->ch);
}

void cir_syntax_error(cir_pctx *p, int code, const cir_tok *t, uint64_t expected) {
  if (p->failed) return;
  char exp[512], close[256], what[64];
  expected_text(p, expected, exp, sizeof exp);

  /* The innermost bracket still open, not counting t itself. */
  const cir_open *o = NULL;
  if (p->depth > 0) {
    o = &p->open[p->depth - 1];
    if (o->off == t->off && (code == TK_LP || code == TK_LB || code == TK_LC))
      o = p->depth > 1 ? &p->open[p->depth - 2] : NULL;
  }
  if (o) close_text(o, close, sizeof close);

  if (code == 0) {
    if (o && (expected & BIT(closer_code(o->ch))))
      cir_error(p, t->off, "unexpected end of input, expected '%c' %s", closer_of(o->ch), close);
    else
      cir_error(p, t->off, "unexpected end of input, expected %s", exp);
    if (o) note_open(p, o);
    return;
  }

  int n = t->len > 40 ? 40 : (int)t->len;
  snprintf(what, sizeof what, "'%.*s%s'", n, t->s, t->len > 40 ? "..." : "");
  if (code == TK_STRING) snprintf(what, sizeof what, "string");

  if (code == TK_RP || code == TK_RB || code == TK_RC) {
    char ch = code == TK_RP ? '(' : code == TK_RB ? '[' : '{';
    if (!o) {
      cir_error(p, t->off, "unexpected %s: there is no open '%c' to close", what, ch);
      return;
    }
    if (o->ch != ch) {
      if (expected & BIT(closer_code(o->ch)))
        cir_error(p, t->off, "unexpected %s, expected '%c' %s", what, closer_of(o->ch), close);
      else
        cir_error(p, t->off, "unexpected %s, expected %s", what, exp);
      note_open(p, o);
      return;
    }
  }
  if (code == TK_MODEL && o) {
    if (o->kind == CIR_OPEN_MODEL)
      cir_error(p, t->off, "unexpected 'model' inside model '%.*s'; is its '}' missing?",
                o->whatlen, o->what);
    else
      cir_error(p, t->off, "unexpected 'model', expected %s", exp);
    note_open(p, o);
    return;
  }
  int keyword = code >= TK_MODEL && code <= TK_VERSION;
  if ((expected & BIT(TK_MODEL)) && (code == TK_NAME || (keyword && code != TK_VERSION))) {
    cir_error(p, t->off, "unexpected %s outside a model; statements go inside "
              "'model NAME { ... }'", what);
    return;
  }
  if (keyword && (expected & BIT(TK_NAME))) {
    cir_error(p, t->off, "unexpected %s: it is a keyword and cannot be used as a name", what);
    return;
  }
  if (code == TK_VERSION) {
    cir_error(p, t->off, "unexpected 'version': it may only start the file, as in 'version 1'");
    return;
  }
  cir_error(p, t->off, "unexpected %s, expected %s", what, exp);
}

/* ---- brackets ---- */

static int push_open(cir_pctx *p, int code, const cir_tok *t) {
  if (p->depth == CIR_MAX_DEPTH)
    return cir_error(p, t->off, "nesting deeper than %d levels; name intermediate "
                     "results to flatten it", CIR_MAX_DEPTH);
  cir_open *o = &p->open[p->depth++];
  memset(o, 0, sizeof *o);
  o->off = t->off;
  if (code == TK_LP) {
    o->ch = '(';
    o->kind = p->prev == TK_NAME ? CIR_OPEN_CALL : CIR_OPEN_PAREN;
    if (o->kind == CIR_OPEN_CALL) { o->what = p->prevtok.s; o->whatlen = (int)p->prevtok.len; }
  } else if (code == TK_LB) {
    o->ch = '[';
    o->kind = p->prev == TK_NAME ? CIR_OPEN_SHAPE : CIR_OPEN_LIST;
  } else {
    o->ch = '{';
    o->kind = CIR_OPEN_BLOCK;
    if (p->prev == TK_NAME && p->prev2 == TK_MODEL) {
      o->kind = CIR_OPEN_MODEL;
      o->what = p->model_name.s; o->whatlen = (int)p->model_name.len;
    } else if (p->prev == TK_INT && p->prev2 == TK_DOTDOT) {
      o->kind = CIR_OPEN_REPEAT;
      o->what = p->repeat_var.s; o->whatlen = (int)p->repeat_var.len;
    }
  }
  if (o->whatlen > 64) o->whatlen = 64;
  return 0;
}

/* ---- the driver ---- */

cir_file *cir_parse(arena *a, diag *d, const diag_src *src) {
  cir_pctx *p = xcalloc(1, sizeof *p);
  p->a = a;
  p->d = d;
  p->src = src;
  p->cur = src->text;
  p->file = arena_alloc(a, sizeof *p->file);
  p->file->src = src;
  if (src->len > UINT32_MAX - 1) {
    cir_error(p, 0, "file too large for a model file");
    free(p);
    return NULL;
  }

  void *parser = cirParseAlloc(xmalloc, p);
  for (;;) {
    cir_tok t;
    int code = cir_lex(p, &t);
    if (code < 0) break;
    if (code == TK_LP || code == TK_LB || code == TK_LC) {
      if (push_open(p, code, &t) < 0) break;
    }
    if (p->prev == TK_MODEL && code == TK_NAME) p->model_name = t;
    if (p->prev == TK_REPEAT && code == TK_NAME) p->repeat_var = t;
    cirParse(parser, code, t);
    if (p->failed || code == 0) break;
    if ((code == TK_RP || code == TK_RB || code == TK_RC) && p->depth > 0 &&
        closer_code(p->open[p->depth - 1].ch) == code)
      p->depth--;
    p->prev2 = p->prev;
    p->prev = code;
    p->prevtok = t;
  }
  cirParseFree(parser, free);

  cir_file *f = p->failed ? NULL : p->file;
  if (f && f->nmodels == 0) {
    cir_error(p, 0, "no model in file; a model file holds one or more 'model NAME { ... }'");
    f = NULL;
  }
  free(p);
  return f;
}

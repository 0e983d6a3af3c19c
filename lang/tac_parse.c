/*
** tac_parse.c: the tactic-file driver. The lexer's tokens are pushed into
** the Lemon parser one by one; the first error, lexical or syntactic,
** stops everything. Open brackets are tracked here, beside the parser, so
** that an error can say what is unclosed and where it was opened, and so
** that nesting stays bounded. The REPL form (tac_parse_line) is the same
** grammar entered through a LINE token, and it tells an input that ended
** too early from one that is wrong.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lang/tac_int.h"
#include "lang/tac_gram.h"

int tac_error(tac_pctx *p, uint32_t off, const char *fmt, ...) {
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

/* How a token reads in "expected ...". ORDER tokens: the %token lines of tac_gram.lemon. */
static const char *tok_desc(int code) {
  switch (code) {
  case 0: return "end of input";
  case TT_VERSION: return "'version'";
  case TT_MESH: return "'mesh'";
  case TT_USE: return "'use'";
  case TT_AS: return "'as'";
  case TT_TACTIC: return "'tactic'";
  case TT_LUA: return "'lua'";
  case TT_AUTO: return "'auto'";
  case TT_SCHEDULE: return "'schedule'";
  case TT_SHARD: return "'shard'";
  case TT_REPLICATE: return "'replicate'";
  case TT_DIM: return "'dim'";
  case TT_ON: return "'on'";
  case TT_FIRST: return "'first'";
  case TT_LAST: return "'last'";
  case TT_LARGEST: return "'largest'";
  case TT_INPUT: return "'input'";
  case TT_PARAM: return "'param'";
  case TT_GRAD: return "'grad'";
  case TT_STATE: return "'state'";
  case TT_VALUE: return "'value'";
  case TT_INPUTS: return "'inputs'";
  case TT_PARAMS: return "'params'";
  case TT_GRADS: return "'grads'";
  case TT_STATES: return "'states'";
  case TT_VALUES: return "'values'";
  case TT_NAME: return "a name";
  case TT_GLOB: return "a value name or glob";
  case TT_INT: return "an integer";
  case TT_NUMBER: return "a number";
  case TT_STRING: return "a string";
  case TT_SIZE: return "a size";
  case TT_LP: return "'('";
  case TT_RP: return "')'";
  case TT_LB: return "'['";
  case TT_RB: return "']'";
  case TT_LC: return "'{'";
  case TT_RC: return "'}'";
  case TT_COMMA: return "','";
  case TT_EQ: return "'='";
  case TT_MINUS: return "'-'";
  case TT_LINE: return "the start of a line";
  }
  return "?";
}

static int is_keyword(int code) { return code >= TT_VERSION && code <= TT_VALUES; }
static int is_decl_keyword(int code) {
  return code == TT_MESH || code == TT_USE || code == TT_TACTIC || code == TT_SCHEDULE;
}

#define BIT(c) ((uint64_t)1 << (c))
#define DECL_START (BIT(TT_MESH) | BIT(TT_USE) | BIT(TT_TACTIC) | BIT(TT_SCHEDULE))
#define STMT_START (BIT(TT_SHARD) | BIT(TT_REPLICATE))
#define SEL_START (BIT(TT_INPUT) | BIT(TT_PARAM) | BIT(TT_GRAD) | BIT(TT_STATE) | BIT(TT_VALUE) | \
                   BIT(TT_INPUTS) | BIT(TT_PARAMS) | BIT(TT_GRADS) | BIT(TT_STATES) | BIT(TT_VALUES))
#define DIM_START (BIT(TT_INT) | BIT(TT_MINUS) | BIT(TT_FIRST) | BIT(TT_LAST) | BIT(TT_LARGEST))
#define VALUE_START (BIT(TT_NAME) | BIT(TT_INT) | BIT(TT_NUMBER) | BIT(TT_STRING) | BIT(TT_SIZE) | \
                     BIT(TT_MINUS) | BIT(TT_LB))

/* What a NAME stands for where the parser wants one. */
static const char *name_role(const tac_pctx *p) {
  switch (p->prev) {
  case TT_ON: case TT_MESH: return "the name of a mesh axis";
  case TT_TACTIC: return "the tactic's name";
  case TT_AS: return "a name for the tactic";
  case TT_SCHEDULE: return "the name of a tactic";
  case TT_LP: case TT_COMMA:
    if (p->depth > 0 && p->open[p->depth - 1].ch == '(')
      return p->open[p->depth - 1].kind == TAC_OPEN_PARAMS ? "a parameter name" : "an argument name";
    if (p->depth == 0 && p->decl == TT_MESH) return "the name of a mesh axis";
    if (p->depth == 0 && p->decl == TT_SCHEDULE) return "the name of a tactic";
    break;
  }
  return "a name";
}

/* "a, b or c" for the acceptable tokens, named after where we are: what
** comes next first, then separators, then whole declarations or
** statements, then closers. */
static void expected_text(const tac_pctx *p, uint64_t set, char *buf, size_t cap) {
  const char *items[48];
  int n = 0;
  set &= ~BIT(TT_LINE);
  int decls = (set & DECL_START) == DECL_START, stmts = (set & STMT_START) == STMT_START;
  if (decls) set &= ~(DECL_START | BIT(TT_VERSION) | BIT(0));
  if (stmts) set &= ~STMT_START;

  if ((set & VALUE_START) == VALUE_START) {
    items[n++] = "a value";
    set &= ~VALUE_START;
  }
  if ((set & SEL_START) == SEL_START) {
    items[n++] = "a selector such as param \"wte\" or params";
    set &= ~SEL_START;
  }
  if (set & BIT(TT_GLOB)) {
    items[n++] = "the name or glob of a value (\"wte\", l*.attn.w?)";
    set &= ~(BIT(TT_GLOB) | BIT(TT_STRING));
  }
  if ((set & DIM_START) == DIM_START) {
    items[n++] = "a dimension (an index, first, last or largest)";
    set &= ~DIM_START;
  }
  if (set & BIT(TT_NAME)) {
    items[n++] = name_role(p);
    set &= ~BIT(TT_NAME);
  }
  if ((set & BIT(TT_INT)) && !(set & BIT(TT_NUMBER))) {   /* a version or a mesh size */
    items[n++] = "an integer";
    set &= ~(BIT(TT_INT) | BIT(TT_MINUS));
  }
  if ((set & BIT(TT_STRING)) && p->prev == TT_USE) {
    items[n++] = "the tactic to use, as a string (\"batch\" or a path)";
    set &= ~BIT(TT_STRING);
  }
  if ((set & BIT(TT_STRING)) && p->prev == TT_LUA) {
    items[n++] = "the script's path, as a string";
    set &= ~BIT(TT_STRING);
  }
  static const int first[] = {
    TT_COMMA, TT_EQ, TT_AS, TT_DIM, TT_ON, TT_LUA, TT_AUTO, TT_LP, TT_LB, TT_LC,
    TT_VERSION, TT_MESH, TT_USE, TT_TACTIC, TT_SCHEDULE, TT_SHARD, TT_REPLICATE,
    TT_FIRST, TT_LAST, TT_LARGEST, TT_INPUT, TT_PARAM, TT_GRAD, TT_STATE, TT_VALUE,
    TT_INPUTS, TT_PARAMS, TT_GRADS, TT_STATES, TT_VALUES,
    TT_NAME, TT_GLOB, TT_INT, TT_NUMBER, TT_STRING, TT_SIZE, TT_MINUS,
  };
  for (size_t i = 0; i < sizeof first / sizeof first[0] && n < 44; i++)
    if (set & BIT(first[i])) items[n++] = tok_desc(first[i]);
  if (decls) items[n++] = "a declaration (mesh, use, tactic or schedule)";
  if (stmts) items[n++] = "a statement (shard or replicate)";
  static const int last[] = {TT_RP, TT_RB, TT_RC, 0};
  for (size_t i = 0; i < sizeof last / sizeof last[0]; i++)
    if (set & BIT(last[i])) items[n++] = tok_desc(last[i]);
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < n && k < cap; i++) {
    const char *sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";
    k += (size_t)snprintf(buf + k, cap - k, "%s%s", sep, items[i]);
  }
}

static char closer_of(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }
static int closer_code(char open) { return open == '(' ? TT_RP : open == '[' ? TT_RB : TT_RC; }

/* "to close tactic 'emb'" and the like. */
static void close_text(const tac_open *o, char *buf, size_t cap) {
  switch (o->kind) {
  case TAC_OPEN_TACTIC: snprintf(buf, cap, "to close tactic '%.*s'", o->whatlen, o->what); break;
  case TAC_OPEN_PARAMS:
    snprintf(buf, cap, "to close the parameters of tactic '%.*s'", o->whatlen, o->what);
    break;
  case TAC_OPEN_ARGS: snprintf(buf, cap, "to close the arguments"); break;
  case TAC_OPEN_LIST: snprintf(buf, cap, "to close the list"); break;
  default: snprintf(buf, cap, "to close the '%c'", o->ch); break;
  }
}

static void note_open(tac_pctx *p, const tac_open *o) {
  diag_note(p->d, (loc){p->src, o->off}, "'%c' opened here", o->ch);
}

static int is_unit(const tac_tok *t) {
  static const char *const u[] = {"B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB"};
  for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
    if (t->len == strlen(u[i]) && memcmp(t->s, u[i], t->len) == 0) return 1;
  return 0;
}

void tac_syntax_error(tac_pctx *p, int code, const tac_tok *t, uint64_t expected) {
  if (p->failed) return;
  char exp[768], close[256], what[64];
  expected_text(p, expected, exp, sizeof exp);

  /* The innermost bracket still open, not counting t itself. */
  const tac_open *o = NULL;
  if (p->depth > 0) {
    o = &p->open[p->depth - 1];
    if (o->off == t->off && (code == TT_LP || code == TT_LB || code == TT_LC))
      o = p->depth > 1 ? &p->open[p->depth - 2] : NULL;
  }
  if (o) close_text(o, close, sizeof close);

  if (code == 0) {
    p->incomplete = 1;
    if (o && (expected & BIT(closer_code(o->ch))))
      tac_error(p, t->off, "unexpected end of input, expected '%c' %s", closer_of(o->ch), close);
    else
      tac_error(p, t->off, "unexpected end of input, expected %s", exp);
    if (o) note_open(p, o);
    return;
  }

  int n = t->len > 40 ? 40 : (int)t->len;
  snprintf(what, sizeof what, "'%.*s%s'", n, t->s, t->len > 40 ? "..." : "");
  if (code == TT_STRING) snprintf(what, sizeof what, "string");

  if (code == TT_RP || code == TT_RB || code == TT_RC) {
    char ch = code == TT_RP ? '(' : code == TT_RB ? '[' : '{';
    if (!o) {
      tac_error(p, t->off, "unexpected %s: there is no open '%c' to close", what, ch);
      return;
    }
    if (o->ch != ch) {
      if (expected & BIT(closer_code(o->ch)))
        tac_error(p, t->off, "unexpected %s, expected '%c' %s", what, closer_of(o->ch), close);
      else
        tac_error(p, t->off, "unexpected %s, expected %s", what, exp);
      note_open(p, o);
      return;
    }
  }
  if ((code == TT_SHARD || code == TT_REPLICATE) && (expected & BIT(TT_TACTIC))) {
    tac_error(p, t->off, "'%s' must be inside a 'tactic NAME { ... }' block (or typed in the REPL)",
              code == TT_SHARD ? "shard" : "replicate");
    return;
  }
  if (is_decl_keyword(code) && o && o->kind == TAC_OPEN_TACTIC && (expected & BIT(TT_RC))) {
    tac_error(p, t->off, "unexpected %s inside tactic '%.*s'; is its '}' missing?",
              what, o->whatlen, o->what);
    note_open(p, o);
    return;
  }
  if (code == TT_VERSION) {
    tac_error(p, t->off, "unexpected 'version': it may only start the file, as in 'version 1'");
    return;
  }
  if (is_keyword(code) && (expected & BIT(TT_GLOB))) {
    tac_error(p, t->off, "unexpected %s, expected the name or glob of a value; a value named "
              "%s must be quoted: \"%.*s\"", what, what, n, t->s);
    return;
  }
  if (is_keyword(code) && (expected & BIT(TT_NAME))) {
    tac_error(p, t->off, "unexpected %s: it is a keyword and cannot be used as a name", what);
    return;
  }
  if ((code == TT_GLOB || code == TT_STRING) && p->prev >= TT_INPUTS && p->prev <= TT_VALUES) {
    const char *pl = tok_desc(p->prev) + 1;      /* "params'" */
    int pn = (int)strlen(pl) - 1;
    tac_error(p, t->off, "unexpected %s: '%.*s' selects all of them; write '%.*s' and a name "
              "or glob to select some", what, pn, pl, pn - 1, pl);
    return;
  }
  if (code == TT_NAME && (p->prev == TT_INT || p->prev == TT_NUMBER) && is_unit(t)) {
    tac_error(p, t->off, "unexpected %s: write a size without a space, as in %.*s%.*s", what,
              (int)(p->prevtok.len > 20 ? 20 : p->prevtok.len), p->prevtok.s, n, t->s);
    return;
  }
  tac_error(p, t->off, "unexpected %s, expected %s", what, exp);
}

/* ---- brackets ---- */

static int push_open(tac_pctx *p, int code, const tac_tok *t) {
  if (p->depth == TAC_MAX_DEPTH)
    return tac_error(p, t->off, "nesting deeper than %d levels", TAC_MAX_DEPTH);
  tac_open *o = &p->open[p->depth++];
  memset(o, 0, sizeof *o);
  o->off = t->off;
  int in_tactic = p->depth == 1 && p->decl == TT_TACTIC;
  if (code == TT_LP) {
    o->ch = '(';
    o->kind = TAC_OPEN_ARGS;
    if (in_tactic && p->prev == TT_NAME && p->prev2 == TT_TACTIC) o->kind = TAC_OPEN_PARAMS;
  } else if (code == TT_LB) {
    o->ch = '[';
    o->kind = TAC_OPEN_LIST;
  } else {
    o->ch = '{';
    o->kind = in_tactic ? TAC_OPEN_TACTIC : TAC_OPEN_BLOCK;
  }
  if (o->kind == TAC_OPEN_TACTIC || o->kind == TAC_OPEN_PARAMS) {
    o->what = p->tactic_name.s;
    o->whatlen = p->tactic_name.len > 64 ? 64 : (int)p->tactic_name.len;
  }
  return 0;
}

/* ---- the driver ---- */

static tac_file *parse(arena *a, diag *d, const diag_src *src, int line_mode, int *incomplete) {
  if (incomplete) *incomplete = 0;
  tac_pctx *p = xcalloc(1, sizeof *p);
  p->a = a;
  p->d = d;
  p->src = src;
  p->cur = src->text;
  p->file = arena_alloc(a, sizeof *p->file);
  p->file->src = src;
  if (src->len > UINT32_MAX - 1) {
    tac_error(p, 0, "file too large for a tactic file");
    free(p);
    return NULL;
  }

  void *parser = tacParseAlloc(xmalloc, p);
  if (line_mode) {
    tac_tok line = {0};
    line.s = src->text;
    tacParse(parser, TT_LINE, line);
  }
  for (;;) {
    tac_tok t;
    int code = tac_lex(p, &t);
    if (code < 0) break;
    if (code == TT_LP || code == TT_LB || code == TT_LC) {
      if (push_open(p, code, &t) < 0) break;
    }
    if (p->depth == 0 && is_decl_keyword(code)) p->decl = code;
    if (p->prev == TT_TACTIC && code == TT_NAME) p->tactic_name = t;
    tac_gram_snapshot(parser, p);
    tacParse(parser, code, t);
    if (p->failed || code == 0) break;
    if ((code == TT_RP || code == TT_RB || code == TT_RC) && p->depth > 0 &&
        closer_code(p->open[p->depth - 1].ch) == code)
      p->depth--;
    p->prev2 = p->prev;
    p->prev = code;
    p->prevtok = t;
  }
  tacParseFree(parser, free);

  tac_file *f = p->failed ? NULL : p->file;
  if (incomplete && p->failed) *incomplete = p->incomplete;
  free(p);
  return f;
}

tac_file *tac_parse(arena *a, diag *d, const diag_src *src) {
  return parse(a, d, src, 0, NULL);
}

tac_file *tac_parse_line(arena *a, diag *d, const diag_src *src, int *incomplete) {
  return parse(a, d, src, 1, incomplete);
}

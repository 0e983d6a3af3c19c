/*
** tac_parse.c: the tactic-file driver. The lexer's tokens are pushed into
** the Lemon parser one by one; the first error, lexical or syntactic,
** stops everything. Open brackets are tracked here, beside the parser
** (with lang/syntax.c, which cir_parse.c shares), so that an error can say
** what is unclosed and where it was opened, and so that nesting stays
** bounded. The REPL form (tac_parse_line) is the same
** grammar entered through a LINE token, and it tells an input that ended
** too early from one that is wrong.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lang/tac_int.h"
#include "lang/tac_gram.h"

/* ---- describing tokens ---- */

/* How a token reads in "expected ...". ORDER tokens: the %token lines of tac_gram.lemon. */
static const char *const tok_words[] = {
  [0] = "end of input",
  [TT_VERSION] = "'version'", [TT_MESH] = "'mesh'", [TT_USE] = "'use'", [TT_AS] = "'as'",
  [TT_TACTIC] = "'tactic'", [TT_LUA] = "'lua'", [TT_AUTO] = "'auto'",
  [TT_SCHEDULE] = "'schedule'", [TT_SHARD] = "'shard'", [TT_REPLICATE] = "'replicate'",
  [TT_DIM] = "'dim'", [TT_ON] = "'on'", [TT_FIRST] = "'first'", [TT_LAST] = "'last'",
  [TT_LARGEST] = "'largest'", [TT_INPUT] = "'input'", [TT_PARAM] = "'param'",
  [TT_GRAD] = "'grad'", [TT_STATE] = "'state'", [TT_VALUE] = "'value'",
  [TT_INPUTS] = "'inputs'", [TT_PARAMS] = "'params'", [TT_GRADS] = "'grads'",
  [TT_STATES] = "'states'", [TT_VALUES] = "'values'",
  [TT_NAME] = "a name", [TT_GLOB] = "a value name or glob", [TT_INT] = "an integer",
  [TT_NUMBER] = "a number", [TT_STRING] = "a string", [TT_SIZE] = "a size", [TT_DURATION] = "a duration",
  [TT_LP] = "'('", [TT_RP] = "')'", [TT_LB] = "'['", [TT_RB] = "']'", [TT_LC] = "'{'", [TT_RC] = "'}'",
  [TT_COMMA] = "','", [TT_EQ] = "'='", [TT_MINUS] = "'-'", [TT_LINE] = "the start of a line",
  [TT_OPTMESH] = "the start of the mesh", [TT_OPTCALL] = "the start of the value",
  [TT_OPTARGS] = "the start of the arguments", [TT_DOTDOT] = "'..'",
};

static int is_keyword(int code) { return code >= TT_VERSION && code <= TT_VALUES; }
static int is_decl_keyword(int code) {
  return code == TT_MESH || code == TT_USE || code == TT_TACTIC || code == TT_SCHEDULE;
}

#define BIT SYN_BIT
#define DECL_START (BIT(TT_MESH) | BIT(TT_USE) | BIT(TT_TACTIC) | BIT(TT_SCHEDULE))
#define STMT_START (BIT(TT_SHARD) | BIT(TT_REPLICATE))
#define SEL_START (BIT(TT_INPUT) | BIT(TT_PARAM) | BIT(TT_GRAD) | BIT(TT_STATE) | BIT(TT_VALUE) | \
                   BIT(TT_INPUTS) | BIT(TT_PARAMS) | BIT(TT_GRADS) | BIT(TT_STATES) | BIT(TT_VALUES))
#define DIM_START (BIT(TT_INT) | BIT(TT_MINUS) | BIT(TT_FIRST) | BIT(TT_LAST) | BIT(TT_LARGEST))
#define VALUE_START (BIT(TT_NAME) | BIT(TT_INT) | BIT(TT_NUMBER) | BIT(TT_STRING) | BIT(TT_SIZE) | BIT(TT_DURATION) | \
                     BIT(TT_MINUS) | BIT(TT_LB))

/* What a NAME stands for where the parser wants one. */
static const char *name_role(const tac_pctx *p) {
  const syn_open *o = p->syn.depth > 0 ? &p->syn.open[p->syn.depth - 1] : NULL;
  switch (p->syn.prev) {
  case TT_ON: case TT_MESH: case TT_OPTMESH: return "the name of a mesh axis";
  case TT_OPTCALL: return "a name, as in adam(lr = 1e-3)";
  case TT_OPTARGS: return "an argument name";
  case TT_TACTIC: return "the tactic's name";
  case TT_AS: return "a name for the tactic";
  case TT_SCHEDULE: return "the name of a tactic";
  case TT_LP: case TT_COMMA:
    if (o && o->ch == '(') return o->kind == TAC_OPEN_PARAMS ? "a parameter name" : "an argument name";
    if (!o && p->decl == TT_MESH) return "the name of a mesh axis";
    if (!o && p->decl == TT_SCHEDULE) return "the name of a tactic";
    break;
  }
  return "a name";
}

/* "to close tactic 'emb'" and the like. */
static void close_text(const syn_open *o, char *buf, size_t cap) {
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

static const syn_lang tac_syn = {
  .lp = TT_LP, .rp = TT_RP, .lb = TT_LB, .rb = TT_RB, .lc = TT_LC, .rc = TT_RC,
  .string = TT_STRING, .tok_words = tok_words, .close_text = close_text,
};

/* "a, b or c" for the acceptable tokens, named after where we are: what
** comes next first, then separators, then whole declarations or
** statements, then closers. */
static void expected_text(const tac_pctx *p, uint64_t set, char *buf, size_t cap) {
  syn_words w = {.set = set & ~(BIT(TT_LINE) | BIT(TT_OPTMESH) | BIT(TT_OPTCALL) | BIT(TT_OPTARGS))};
  if (p->start != TT_OPTARGS) w.set &= ~BIT(TT_DOTDOT);      /* ranges are for --sweep */
  int decls = (w.set & DECL_START) == DECL_START, stmts = (w.set & STMT_START) == STMT_START;
  if (decls) w.set &= ~(DECL_START | BIT(TT_VERSION) | BIT(0));
  if (stmts) w.set &= ~STMT_START;

  syn_group(&w, VALUE_START, "a value");
  syn_group(&w, SEL_START, "a selector such as param \"wte\" or params");
  if (w.set & BIT(TT_GLOB))
    syn_word(&w, "the name or glob of a value (\"wte\", l*.attn.w?)", BIT(TT_GLOB) | BIT(TT_STRING));
  syn_group(&w, DIM_START, "a dimension (an index, first, last or largest)");
  if (w.set & BIT(TT_NAME)) syn_word(&w, name_role(p), BIT(TT_NAME));
  if ((w.set & BIT(TT_INT)) && !(w.set & BIT(TT_NUMBER)))    /* a version or a mesh size */
    syn_word(&w, "an integer", BIT(TT_INT) | BIT(TT_MINUS));
  if ((w.set & BIT(TT_STRING)) && p->syn.prev == TT_USE)
    syn_word(&w, "the tactic to use, as a string (\"batch\" or a path)", BIT(TT_STRING));
  if ((w.set & BIT(TT_STRING)) && p->syn.prev == TT_LUA)
    syn_word(&w, "the script's path, as a string", BIT(TT_STRING));
  static const int first[] = {
    TT_COMMA, TT_EQ, TT_DOTDOT, TT_AS, TT_DIM, TT_ON, TT_LUA, TT_AUTO, TT_LP, TT_LB, TT_LC,
    TT_VERSION, TT_MESH, TT_USE, TT_TACTIC, TT_SCHEDULE, TT_SHARD, TT_REPLICATE,
    TT_FIRST, TT_LAST, TT_LARGEST, TT_INPUT, TT_PARAM, TT_GRAD, TT_STATE, TT_VALUE,
    TT_INPUTS, TT_PARAMS, TT_GRADS, TT_STATES, TT_VALUES,
    TT_NAME, TT_GLOB, TT_INT, TT_NUMBER, TT_STRING, TT_SIZE, TT_DURATION, TT_MINUS,
  };
  syn_tokens(&w, &tac_syn, first, sizeof first / sizeof first[0]);
  if (decls) syn_word(&w, "a declaration (mesh, use, tactic or schedule)", 0);
  if (stmts) syn_word(&w, "a statement (shard or replicate)", 0);
  static const int last[] = {TT_RP, TT_RB, TT_RC, 0};
  syn_tokens(&w, &tac_syn, last, sizeof last / sizeof last[0]);
  syn_join(&w, buf, cap);
}

static int is_unit(const tac_tok *t) {
  static const char *const u[] = {"B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB"};
  for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
    if (t->len == strlen(u[i]) && memcmp(t->s, u[i], t->len) == 0) return 1;
  return 0;
}

void tac_syntax_error(tac_pctx *p, int code, const tac_tok *t, uint64_t expected) {
  if (p->syn.failed) return;
  char exp[768];
  expected_text(p, expected, exp, sizeof exp);
  syn_err e;
  /* a bracket left open before the next statement: said where it opened */
  const syn_open *in = p->syn.depth ? &p->syn.open[p->syn.depth - 1] : NULL;
  int statement = is_decl_keyword(code) || code == TT_SHARD || code == TT_REPLICATE || code == TT_VERSION;
  if (syn_unclosed(&p->syn, &tac_syn, code, t->off, t->s, t->len, p->prevtok.off + p->prevtok.len, expected,
                   statement, is_decl_keyword(code) && in && in->kind == TAC_OPEN_TACTIC))
    return;
  if (syn_unexpected(&p->syn, &tac_syn, code, t->off, t->s, t->len, expected, exp, &e)) return;
  const syn_open *o = e.o;
  const char *what = e.what;
  int n = e.n, prev = p->syn.prev;
  if ((code == TT_SHARD || code == TT_REPLICATE) && (expected & BIT(TT_TACTIC))) {
    tac_error(p, t->off, "'%s' must be inside a 'tactic NAME { ... }' block (or typed in the REPL)",
              code == TT_SHARD ? "shard" : "replicate");
    return;
  }
  if (is_decl_keyword(code) && o && o->kind == TAC_OPEN_TACTIC && (expected & BIT(TT_RC))) {
    tac_error(p, t->off, "unexpected %s inside tactic '%.*s'; is its '}' missing?",
              what, o->whatlen, o->what);
    syn_note_open(&p->syn, o);
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
  if ((code == TT_GLOB || code == TT_STRING) && prev >= TT_INPUTS && prev <= TT_VALUES) {
    const char *pl = tok_words[prev] + 1;      /* "params'" */
    int pn = (int)strlen(pl) - 1;
    tac_error(p, t->off, "unexpected %s: '%.*s' selects all of them; write '%.*s' and a name "
              "or glob to select some", what, pn, pl, pn - 1, pl);
    return;
  }
  if (code == TT_NAME && (prev == TT_INT || prev == TT_NUMBER) && is_unit(t)) {
    tac_error(p, t->off, "unexpected %s: write a size without a space, as in %.*s%.*s", what,
              (int)(p->prevtok.len > 20 ? 20 : p->prevtok.len), p->prevtok.s, n, t->s);
    return;
  }
  tac_error(p, t->off, "unexpected %s, expected %s", what, exp);
}

/* ---- brackets ---- */

static int push_open(tac_pctx *p, int code, const tac_tok *t) {
  syn_open *o = syn_push(&p->syn, &tac_syn, code, t->off);
  if (!o) return tac_error(p, t->off, "nesting deeper than %d levels", TAC_MAX_DEPTH);
  int in_tactic = p->syn.depth == 1 && p->decl == TT_TACTIC;
  if (o->ch == '(')
    o->kind = in_tactic && p->syn.prev == TT_NAME && p->syn.prev2 == TT_TACTIC ? TAC_OPEN_PARAMS
                                                                               : TAC_OPEN_ARGS;
  else if (o->ch == '[')
    o->kind = TAC_OPEN_LIST;
  else
    o->kind = in_tactic ? TAC_OPEN_TACTIC : TAC_OPEN_BLOCK;
  if (o->kind == TAC_OPEN_TACTIC || o->kind == TAC_OPEN_PARAMS)
    syn_name(o, p->tactic_name.s, p->tactic_name.len);
  return 0;
}

/* ---- the driver ---- */

/* start: 0 a file, else the token that selects another form (LINE, OPTMESH, OPTCALL) */
static tac_file *parse(arena *a, diag *d, const diag_src *src, int start, int *incomplete) {
  if (incomplete) *incomplete = 0;
  tac_pctx *p = mem_calloc(1, sizeof *p);
  p->a = a;
  p->cur = src->text;
  p->file = arena_alloc(a, sizeof *p->file);
  p->file->src = src;
  if (syn_init(&p->syn, d, src, "a tactic file") < 0) {
    free(p);
    return NULL;
  }

  void *parser = tacParseAlloc(mem_alloc, p);
  p->start = start;
  if (start == TT_OPTMESH) p->decl = TT_MESH;    /* names after ',' are mesh axes */
  if (start) {
    tac_tok line = {0};
    line.s = src->text;
    tacParse(parser, start, line);
    p->syn.prev = start;
  }
  for (;;) {
    tac_tok t;
    int code = tac_lex(p, &t);
    if (code < 0) break;
    if (syn_is_opener(&tac_syn, code) && push_open(p, code, &t) < 0) break;
    if (p->syn.depth == 0 && is_decl_keyword(code)) p->decl = code;
    if (p->syn.prev == TT_TACTIC && code == TT_NAME) p->tactic_name = t;
    tac_gram_snapshot(parser, p);
    tacParse(parser, code, t);
    if (p->bad && !p->syn.failed) tac_syntax_error(p, p->bad_code, &p->bad_tok, p->bad_expected);
    if (p->syn.failed || code == 0) break;
    syn_shifted(&p->syn, &tac_syn, code);
    p->prevtok = t;
  }
  tacParseFree(parser, free);

  tac_file *f = p->syn.failed ? NULL : p->file;
  if (incomplete && p->syn.failed) *incomplete = p->syn.incomplete;
  free(p);
  return f;
}

tac_file *tac_parse(arena *a, diag *d, const diag_src *src) {
  return parse(a, d, src, 0, NULL);
}

tac_file *tac_parse_line(arena *a, diag *d, const diag_src *src, int *incomplete) {
  return parse(a, d, src, TT_LINE, incomplete);
}

tac_file *tac_parse_option(arena *a, diag *d, const diag_src *src, tac_option kind) {
  return parse(a, d, src, kind == TAC_OPT_MESH ? TT_OPTMESH : kind == TAC_OPT_CALL ? TT_OPTCALL : TT_OPTARGS, NULL);
}

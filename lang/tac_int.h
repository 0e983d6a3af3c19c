/*
** tac_int.h: what the tactic-file lexer (tac_lex.re), grammar
** (tac_gram.lemon) and driver (tac_parse.c) share. Other layers see only
** tac.h.
*/
#ifndef lang_tac_int_h
#define lang_tac_int_h

#include <stddef.h>
#include <stdint.h>
#include "lang/tac.h"
#include "lang/syntax.h"

/* Deepest nesting of ( [ { the parser accepts; it bounds the Lemon stack. */
#define TAC_MAX_DEPTH SYN_MAX_DEPTH
/* Lemon stack entries: a nesting level costs at most 3 (list ',' '['). */
#define TAC_STACK_DEPTH (4 * TAC_MAX_DEPTH + 64)

/* One token: a slice of the source plus its decoded value. */
typedef struct tac_tok {
  uint32_t off;          /* byte offset of the first character */
  uint32_t len;          /* length in the source */
  const char *s;         /* src->text + off; STRING: the decoded contents (interned) */
  int64_t i;             /* INT; SIZE: bytes */
  double f;              /* INT, NUMBER and SIZE; DURATION: seconds */
} tac_tok;

/* Growable arrays in the arena while a list is being parsed (SYN_PUSH). */
typedef struct tac_argv { tac_arg *v; int n, cap; uint32_t end; } tac_argv;   /* end: just past the ')' (0: none) */
typedef struct tac_stmtv { tac_stmt *v; int n, cap; } tac_stmtv;
typedef struct tac_namev { const char **v; uint32_t *o; int n, cap; } tac_namev;
/* A list value being built and the capacity of its items. */
typedef struct tac_listb { tac_value v; int cap; } tac_listb;
/* A mesh line being built. */
typedef struct tac_meshb { tac_decl *d; int cap; } tac_meshb;
/* A selector before the statement around it is known. */
typedef struct tac_selb { tac_sel sel; int plural; const char *glob; uint32_t glob_off; } tac_selb;
/* A dim spec: kind, index and place. */
typedef struct tac_dimb { tac_dimkind kind; int64_t index; uint32_t off; } tac_dimb;

/* What an open bracket (syn_open.kind) opened, for "expected '}' to close tactic 'emb'". */
typedef enum tac_openkind {
  TAC_OPEN_TACTIC, TAC_OPEN_BLOCK,      /* { */
  TAC_OPEN_PARAMS, TAC_OPEN_ARGS,       /* ( */
  TAC_OPEN_LIST                         /* [ */
} tac_openkind;

/* The parse context: Lemon's %extra_context. All parse and error state. */
typedef struct tac_pctx {
  int bad;               /* the grammar met a syntax error: reported by the driver */
  int bad_code;
  tac_tok bad_tok;
  uint64_t bad_expected;
  syn_ctx syn;           /* diagnostics, first error, prev tokens, open brackets */
  arena *a;
  const char *cur;       /* lexer position; syn.src->text is NUL-terminated */
  tac_file *file;
  int declcap;
  int bare_open;         /* the last decl collects bare statements (line mode) */
  int barecap;
  tac_tok prevtok;       /* the last token */
  int start;             /* the token that selected the form: 0 (a file), TT_LINE, TT_OPT* */
  int decl;              /* keyword of the latest top-level declaration */
  tac_tok tactic_name;   /* the latest name after 'tactic' */
  /* Parser states before the current token, to tell what was expected
  ** there (Lemon may have reduced by default before it saw the error). */
  uint16_t snap[TAC_STACK_DEPTH + 1];
  int nsnap;
} tac_pctx;

/* tac_lex.re: the next token's TT_ code (0 at the end), or -1 after an error. */
int tac_lex(tac_pctx *p, tac_tok *t);

/* tac_parse.c: report the parser's first syntax error; expected is a bit
** set of acceptable token codes (bit 0: end of input). */
void tac_syntax_error(tac_pctx *p, int code, const tac_tok *t, uint64_t expected);
/* Record the first error (syn_error); returns -1. */
#define tac_error(p, off, ...) syn_error(&(p)->syn, (off), __VA_ARGS__)

/* The generated parser (tac_gram.c). */
void *tacParseAlloc(void *(*mallocProc)(size_t), tac_pctx *p);
void  tacParse(void *parser, int code, tac_tok tok);
void  tacParseFree(void *parser, void (*freeProc)(void *));
/* Save the parser's states into p->snap (before each token). */
void tac_gram_snapshot(void *parser, tac_pctx *p);
/* Bit set of the token codes acceptable in the saved states. */
uint64_t tac_gram_expected(const tac_pctx *p);

#endif

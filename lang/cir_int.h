/*
** cir_int.h: what the model-file lexer (cir_lex.re), grammar
** (cir_gram.lemon) and driver (cir_parse.c) share. Not for other layers:
** they see only cir.h.
*/
#ifndef lang_cir_int_h
#define lang_cir_int_h

#include <stddef.h>
#include <stdint.h>
#include "lang/cir.h"
#include "lang/syntax.h"

/* Deepest nesting of ( [ { the parser accepts; it bounds the Lemon stack. */
#define CIR_MAX_DEPTH SYN_MAX_DEPTH
/* Lemon stack entries: at most 8 per nesting level (a repeat header) + slack. */
#define CIR_STACK_DEPTH (8 * CIR_MAX_DEPTH + 64)
/* Dimensions above this are refused so that products of a few stay in int64. */
#define CIR_MAX_DIM ((int64_t)1 << 62)

/* One token: a slice of the source plus its decoded value. */
typedef struct cir_tok {
  uint32_t off;          /* byte offset of the first character */
  uint32_t len;          /* length in the source */
  const char *s;         /* src->text + off; STRING: the decoded contents (interned) */
  uint32_t slen;         /* STRING: length of the decoded contents */
  int64_t i;             /* INT */
  double f;              /* INT and FLOAT */
} cir_tok;

/* Growable arrays in the arena while a list is being parsed (SYN_PUSH). */
typedef struct cir_exprv { cir_expr **v; int n, cap; uint32_t off; } cir_exprv;
typedef struct cir_stmtv { cir_stmt **v; int n, cap; } cir_stmtv;
typedef struct cir_dimv  { int64_t *v; uint32_t *o; int n, cap; } cir_dimv;
/* A call being built: the node and the capacities of its two arrays. */
typedef struct cir_callb { cir_expr *e; int argcap, attrcap; } cir_callb;

/* What an open bracket (syn_open.kind) opened, for "expected '}' to close model 'mlp'". */
typedef enum cir_openkind {
  CIR_OPEN_MODEL, CIR_OPEN_REPEAT, CIR_OPEN_BLOCK,   /* { */
  CIR_OPEN_CALL, CIR_OPEN_PAREN,                     /* ( */
  CIR_OPEN_SHAPE, CIR_OPEN_LIST                      /* [ */
} cir_openkind;

/* The parse context: Lemon's %extra_context. All parse and error state. */
typedef struct cir_pctx {
  int bad;               /* the grammar met a syntax error: reported by the driver */
  int bad_code;
  cir_tok bad_tok;
  uint64_t bad_expected;
  syn_ctx syn;           /* diagnostics, first error, prev tokens, open brackets */
  arena *a;
  const char *cur;       /* lexer position; syn.src->text is NUL-terminated */
  cir_file *file;
  int modelcap;
  cir_tok prevtok;       /* the last token */
  cir_tok model_name, repeat_var;   /* latest after 'model' / 'repeat' */
} cir_pctx;

/* cir_lex.re: the next token's TK_ code (0 at the end), or -1 after an error. */
int cir_lex(cir_pctx *p, cir_tok *t);

/* cir_parse.c: report the parser's first syntax error; expected is a
** bit set of acceptable token codes (bit 0: end of input). */
void cir_syntax_error(cir_pctx *p, int code, const cir_tok *t, uint64_t expected);
/* Record the first error (syn_error); returns -1. */
#define cir_error(p, off, ...) syn_error(&(p)->syn, (off), __VA_ARGS__)

/* The generated parser (cir_gram.c). */
void *cirParseAlloc(void *(*mallocProc)(size_t), cir_pctx *p);
void  cirParse(void *parser, int code, cir_tok tok);
void  cirParseFree(void *parser, void (*freeProc)(void *));
/* Bit set of the token codes the parser would accept now (after an error). */
uint64_t cir_gram_expected(void *parser);

#endif

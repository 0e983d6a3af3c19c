/*
** syntax.h: what the model-file and tactic-file front ends (cir_*, tac_*)
** do alike: the first error only, the stack of open brackets with its
** "opened here" notes, the wording of "unexpected X, expected Y", and the
** decoding of numbers and strings. Each grammar keeps its own token codes
** (TK_, TT_) and hands in the few that matter here through a syn_lang.
*/
#ifndef lang_syntax_h
#define lang_syntax_h

#include <stddef.h>
#include <stdint.h>
#include "util/arena.h"
#include "util/diag.h"

/* Deepest nesting of ( [ { a parser accepts; it bounds the Lemon stack. */
#define SYN_MAX_DEPTH 256

/* A token code in a set of acceptable codes (bit 0: end of input). */
#define SYN_BIT(c) ((uint64_t)1 << (c))

/* Append x to an arena array that is being parsed, doubling it when full. */
#define SYN_PUSH(ar, arr, n, cap, x) do {                                   \
    if ((n) == (cap)) {                                                     \
      int nc_ = (cap) ? 2 * (cap) : 4;                                      \
      (arr) = arena_grow((ar), (arr), (size_t)(cap), (size_t)nc_, sizeof *(arr)); \
      (cap) = nc_;                                                          \
    }                                                                       \
    (arr)[(n)++] = (x);                                                     \
  } while (0)

/* An open bracket: what it opened, for "expected '}' to close model 'mlp'". */
typedef struct syn_open {
  char ch;               /* ( [ { */
  int kind;              /* the language's own: cir_openkind, tac_openkind */
  uint32_t off;          /* where the bracket is */
  const char *what;      /* a name for the message (slice), or NULL */
  int whatlen;
} syn_open;

/* What one grammar tells the shared code: a few token codes and words. */
typedef struct syn_lang {
  int lp, rp, lb, rb, lc, rc;          /* its brackets */
  int string;            /* its string token, shown as "string" rather than its text */
  const char *const *tok_words;        /* how each code reads in "expected ..." */
  /* "to close model 'mlp'" and the like. */
  void (*close_text)(const syn_open *o, char *buf, size_t cap);
} syn_lang;

/* The state both drivers keep; their parse contexts embed it as .syn. */
typedef struct syn_ctx {
  diag *d;
  const diag_src *src;
  int failed;            /* an error has been recorded: stop */
  int incomplete;        /* that error was the input ending early */
  int prev, prev2;       /* codes of the last two tokens handed to the parser */
  syn_open open[SYN_MAX_DEPTH];
  int depth;
} syn_ctx;

/* Start on src; what names the kind of file ("a model file") should it be too large. */
int  syn_init(syn_ctx *s, diag *d, const diag_src *src, const char *what);
/* Record an error at off, the first one only. Returns -1. */
int  syn_error(syn_ctx *s, uint32_t off, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
/* "'(' opened here" at o. */
void syn_note_open(syn_ctx *s, const syn_open *o);

/* ---- brackets ---- */

int  syn_is_opener(const syn_lang *l, int code);
/* Push the opener code at off and return it to be filled in; NULL when
** SYN_MAX_DEPTH are open (the caller says so, in its own words). */
syn_open *syn_push(syn_ctx *s, const syn_lang *l, int code, uint32_t off);
/* Name o after the len bytes at what (at most 64 of them). */
void syn_name(syn_open *o, const char *what, uint32_t len);
/* After the parser took code: close its bracket, remember it as prev. */
void syn_shifted(syn_ctx *s, const syn_lang *l, int code);

/* ---- "unexpected X, expected Y" ---- */

/* The words of "expected a, b or c", gathered from a set of acceptable tokens. */
typedef struct syn_words {
  uint64_t set;          /* the acceptable tokens not yet worded */
  const char *item[72];  /* enough for every token and a few groups */
  int n;
} syn_words;

/* Add word and forget the tokens in drop. */
void syn_word(syn_words *w, const char *word, uint64_t drop);
/* Add word for group if every token of it is acceptable; returns whether it did. */
int  syn_group(syn_words *w, uint64_t group, const char *word);
/* Add each acceptable token of codes, in that order, in the language's words. */
void syn_tokens(syn_words *w, const syn_lang *l, const int *codes, size_t n);
/* "a, b or c" into buf. */
void syn_join(const syn_words *w, char *buf, size_t cap);

/* A syntax error being worded. */
typedef struct syn_err {
  const syn_open *o;     /* the innermost bracket still open, not counting the token */
  char what[64];         /* the token as messages quote it: 'abc' or string */
  int n;                 /* bytes of the token's text in what (at most 40) */
} syn_err;

/* Report what both languages word alike about the token code (len bytes
** at text, at off) where the parser expected the set worded as exp: the
** end of input, and a closer that closes nothing or the wrong bracket.
** Returns 1 if it did; else 0, with e filled in for the language's own
** messages. */
int  syn_unexpected(syn_ctx *s, const syn_lang *l, int code, uint32_t off, const char *text,
                    uint32_t len, uint64_t expected, const char *exp, syn_err *e);

/* A bracket never closed: the token code (len bytes at text, at off; 0:
** the end of input) comes on a later line than the last token, which ended
** at prev_end, and the innermost open bracket's closer is among the
** expected tokens. Only where the caller says the token starts a new
** statement (statement: for '(' and '[') or cannot be inside the block
** (outside: for '{'), or at the end of input. Reports at the bracket,
** "unclosed '(' opened here: expected ')' to close the call of 'f' before
** 'y' on line 5", with a note where the closer was due; returns 1 if it did. */
int  syn_unclosed(syn_ctx *s, const syn_lang *l, int code, uint32_t off, const char *text, uint32_t len,
                  uint32_t prev_end, uint64_t expected, int statement, int outside);

/* ---- tokens ---- */

/* The byte for a message: itself when printable, else \xNN. */
const char *syn_show_byte(char buf[8], unsigned char c);
/* Decimal digits into *v; an error (and -1) when they do not fit in 64 bits. */
int  syn_int(syn_ctx *s, uint32_t off, const char *digits, uint32_t len, int64_t *v);
/* An integer literal's digits into *v and *f (as a double), 2^63 too:
** the magnitude of INT64_MIN, kept as INT64_MIN, which a grammar takes
** only after a minus sign. An error (and -1) when larger. */
int  syn_int_literal(syn_ctx *s, uint32_t off, const char *digits, uint32_t len, int64_t *v, double *f);
/* A decimal number with '.' or an exponent into *v; an error (and -1) when
** it is too long or too large for a double. */
int  syn_float(syn_ctx *s, uint32_t off, const char *text, uint32_t len, double *v);
/* The contents of a string token that passed the scanner (only \" and \\
** occur), interned; their length into *n unless n is NULL. */
const char *syn_unquote(arena *a, const char *tok, uint32_t len, uint32_t *n);

#endif

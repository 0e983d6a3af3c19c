/*
** prof_int.h: what the profile scanner and reader share.
*/
#ifndef lang_prof_int_h
#define lang_prof_int_h

#include "lang/prof.h"
#include "lang/syntax.h"

enum { PROF_T_END = 0, PROF_T_NL, PROF_T_WORD, PROF_T_NUM, PROF_T_STR, PROF_T_EQ };

typedef struct prof_tok {
  const char *s;
  uint32_t off, len;
  double num;
} prof_tok;

typedef struct prof_pctx {
  syn_ctx syn;
  arena *a;
  const char *cur;
} prof_pctx;

#define prof_error(p, off, ...) syn_error(&(p)->syn, (off), __VA_ARGS__)

/* prof_lex.re: the next token (PROF_T_END at the end), or -1 after an error. */
int prof_lex(prof_pctx *p, prof_tok *t);

#endif

/*
** prof_parse.c: device profiles, a line at a time: a key word, then items,
** each a value or a word '=' value, until the end of the line.
*/
#include <stdlib.h>
#include <string.h>
#include "lang/prof_int.h"

static const char *tok_word(int code) {
  switch (code) {
  case PROF_T_END: return "end of input";
  case PROF_T_NL: return "end of line";
  case PROF_T_WORD: return "a word";
  case PROF_T_NUM: return "a number";
  case PROF_T_STR: return "a string";
  default: return "'='";
  }
}

static int unexpected(prof_pctx *p, const prof_tok *t, int code, const char *want) {
  if (code == PROF_T_WORD || code == PROF_T_NUM)
    return prof_error(p, t->off, "unexpected '%.*s', expected %s", (int)(t->len > 40 ? 40 : t->len), t->s, want);
  return prof_error(p, t->off, "unexpected %s, expected %s", tok_word(code), want);
}

static prof_item value_of(prof_pctx *p, const prof_tok *t, int code) {
  prof_item it = {0};
  it.off = t->off;
  if (code == PROF_T_NUM) { it.kind = PROF_NUM; it.num = t->num; it.text = arena_intern(p->a, t->s, t->len); }
  else if (code == PROF_T_STR) { it.kind = PROF_STR; it.text = arena_intern(p->a, t->s + 1, t->len - 2); }
  else { it.kind = PROF_WORD; it.text = arena_intern(p->a, t->s, t->len); }
  return it;
}

static int is_value(int code) { return code == PROF_T_NUM || code == PROF_T_STR || code == PROF_T_WORD; }

prof_file *prof_parse(arena *a, diag *d, const diag_src *src) {
  prof_pctx p = {0};
  p.a = a;
  p.cur = src->text;
  if (syn_init(&p.syn, d, src, "a device profile") < 0) return NULL;
  prof_file *f = arena_alloc(a, sizeof *f);
  f->src = src;
  int linecap = 0;
  prof_tok t;
  int code = prof_lex(&p, &t);
  while (code > 0 || code == PROF_T_END) {
    if (code == PROF_T_END) return f;
    if (code == PROF_T_NL) { code = prof_lex(&p, &t); continue; }
    if (code != PROF_T_WORD) { unexpected(&p, &t, code, "a key such as flops, memory or link"); return NULL; }
    prof_line ln = {arena_intern(a, t.s, t.len), t.off, NULL, 0};
    int itemcap = 0;
    code = prof_lex(&p, &t);
    while (is_value(code)) {
      prof_tok v = t;
      int vcode = code;
      code = prof_lex(&p, &t);
      prof_item it;
      if (code == PROF_T_EQ) {
        if (vcode != PROF_T_WORD) { unexpected(&p, &t, code, "a value"); return NULL; }
        prof_tok eq = t;
        code = prof_lex(&p, &t);
        if (!is_value(code)) { unexpected(&p, code > 0 || code == PROF_T_END ? &t : &eq, code, "a value after '='"); return NULL; }
        it = value_of(&p, &t, code);
        it.key = arena_intern(a, v.s, v.len);
        it.key_off = v.off;
        code = prof_lex(&p, &t);
      } else {
        it = value_of(&p, &v, vcode);
      }
      SYN_PUSH(a, ln.items, ln.nitems, itemcap, it);
    }
    if (code < 0) return NULL;
    if (code != PROF_T_NL && code != PROF_T_END) { unexpected(&p, &t, code, "a value or the end of the line"); return NULL; }
    SYN_PUSH(a, f->lines, f->nlines, linecap, ln);
  }
  return NULL;
}

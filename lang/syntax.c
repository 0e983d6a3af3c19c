/*
** syntax.c: the parts of the two front ends' drivers and scanners that
** read the same in both languages (see syntax.h).
*/
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lang/syntax.h"

int syn_init(syn_ctx *s, diag *d, const diag_src *src, const char *what) {
  s->d = d;
  s->src = src;
  if (src->len > UINT32_MAX - 1) return syn_error(s, 0, "file too large for %s", what);
  return 0;
}

int syn_error(syn_ctx *s, uint32_t off, const char *fmt, ...) {
  if (s->failed) return -1;     /* the first error only */
  s->failed = 1;
  strbuf msg;
  sb_init(&msg);
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(&msg, fmt, ap);
  va_end(ap);
  diag_error(s->d, (loc){s->src, off}, "%s", sb_str(&msg));
  sb_free(&msg);
  return -1;
}

void syn_note_open(syn_ctx *s, const syn_open *o) {
  diag_note(s->d, (loc){s->src, o->off}, "'%c' opened here", o->ch);
}

/* ---- brackets ---- */

int syn_is_opener(const syn_lang *l, int code) {
  return code == l->lp || code == l->lb || code == l->lc;
}

static int is_closer(const syn_lang *l, int code) {
  return code == l->rp || code == l->rb || code == l->rc;
}

static char closer_of(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

static int closer_code(const syn_lang *l, char open) {
  return open == '(' ? l->rp : open == '[' ? l->rb : l->rc;
}

syn_open *syn_push(syn_ctx *s, const syn_lang *l, int code, uint32_t off) {
  if (s->depth == SYN_MAX_DEPTH) return NULL;
  syn_open *o = &s->open[s->depth++];
  memset(o, 0, sizeof *o);
  o->off = off;
  o->ch = code == l->lp ? '(' : code == l->lb ? '[' : '{';
  return o;
}

void syn_name(syn_open *o, const char *what, uint32_t len) {
  o->what = what;
  o->whatlen = len > 64 ? 64 : (int)len;
}

void syn_shifted(syn_ctx *s, const syn_lang *l, int code) {
  if (is_closer(l, code) && s->depth > 0 && closer_code(l, s->open[s->depth - 1].ch) == code)
    s->depth--;
  s->prev2 = s->prev;
  s->prev = code;
}

/* ---- "unexpected X, expected Y" ---- */

void syn_word(syn_words *w, const char *word, uint64_t drop) {
  if (w->n < (int)(sizeof w->item / sizeof w->item[0])) w->item[w->n++] = word;
  w->set &= ~drop;
}

int syn_group(syn_words *w, uint64_t group, const char *word) {
  if ((w->set & group) != group) return 0;
  syn_word(w, word, group);
  return 1;
}

void syn_tokens(syn_words *w, const syn_lang *l, const int *codes, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (w->set & SYN_BIT(codes[i])) syn_word(w, l->tok_words[codes[i]], 0);
}

void syn_join(const syn_words *w, char *buf, size_t cap) {
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < w->n && k < cap; i++) {
    const char *sep = i == 0 ? "" : i == w->n - 1 ? " or " : ", ";
    k += (size_t)snprintf(buf + k, cap - k, "%s%s", sep, w->item[i]);
  }
}

int syn_unexpected(syn_ctx *s, const syn_lang *l, int code, uint32_t off, const char *text,
                   uint32_t len, uint64_t expected, const char *exp, syn_err *e) {
  char close[256];
  /* The innermost bracket still open, not counting the token itself. */
  const syn_open *o = NULL;
  if (s->depth > 0) {
    o = &s->open[s->depth - 1];
    if (o->off == off && syn_is_opener(l, code))
      o = s->depth > 1 ? &s->open[s->depth - 2] : NULL;
  }
  if (o) l->close_text(o, close, sizeof close);
  e->o = o;

  if (code == 0) {
    s->incomplete = 1;
    if (o && (expected & SYN_BIT(closer_code(l, o->ch))))
      syn_error(s, off, "unexpected end of input, expected '%c' %s", closer_of(o->ch), close);
    else
      syn_error(s, off, "unexpected end of input, expected %s", exp);
    if (o) syn_note_open(s, o);
    return 1;
  }

  e->n = len > 40 ? 40 : (int)len;
  snprintf(e->what, sizeof e->what, "'%.*s%s'", e->n, text, len > 40 ? "..." : "");
  if (code == l->string) snprintf(e->what, sizeof e->what, "string");

  if (is_closer(l, code)) {
    char ch = code == l->rp ? '(' : code == l->rb ? '[' : '{';
    if (!o) {
      syn_error(s, off, "unexpected %s: there is no open '%c' to close", e->what, ch);
      return 1;
    }
    if (o->ch != ch) {
      if (expected & SYN_BIT(closer_code(l, o->ch)))
        syn_error(s, off, "unexpected %s, expected '%c' %s", e->what, closer_of(o->ch), close);
      else
        syn_error(s, off, "unexpected %s, expected %s", e->what, exp);
      syn_note_open(s, o);
      return 1;
    }
  }
  return 0;
}

int syn_unclosed(syn_ctx *s, const syn_lang *l, int code, uint32_t off, const char *text, uint32_t len,
                 uint32_t prev_end, uint64_t expected, int statement, int outside) {
  if (s->failed || s->depth == 0 || is_closer(l, code)) return 0;
  const syn_open *o = &s->open[s->depth - 1];
  if (o->off == off && syn_is_opener(l, code)) {     /* not the token itself */
    if (s->depth < 2) return 0;
    o = &s->open[s->depth - 2];
  }
  char closer = closer_of(o->ch);
  if (!(expected & SYN_BIT(closer_code(l, o->ch))) || (code != 0 && !(o->ch == '{' ? outside : statement))) return 0;
  if (prev_end > off || off > s->src->len || !memchr(s->src->text + prev_end, '\n', off - prev_end)) return 0;
  char close[256];
  l->close_text(o, close, sizeof close);
  int line, col, pline;
  diag_linecol(s->src, off, &line, &col);
  diag_linecol(s->src, prev_end, &pline, &col);
  if (code == 0) {
    s->incomplete = 1;
    syn_error(s, o->off, "unclosed '%c' opened here: expected '%c' %s before the end of the input", o->ch, closer, close);
    diag_note(s->d, (loc){s->src, prev_end}, "the '%c' is missing here, or earlier", closer);
    return 1;
  }
  int n = len > 40 ? 40 : (int)len;
  char what[64];
  snprintf(what, sizeof what, "'%.*s%s'", n, text, len > 40 ? "..." : "");
  if (code == l->string) snprintf(what, sizeof what, "a string");
  syn_error(s, o->off, "unclosed '%c' opened here: expected '%c' %s before %s on line %d", o->ch, closer, close, what, line);
  diag_note(s->d, (loc){s->src, prev_end}, "the '%c' is missing here at the end of line %d, or earlier", closer, pline);
  return 1;
}

/* ---- tokens ---- */

const char *syn_show_byte(char buf[8], unsigned char c) {
  if (c > 32 && c < 127) { buf[0] = (char)c; buf[1] = 0; }
  else { static const char hex[] = "0123456789abcdef"; buf[0] = '\\'; buf[1] = 'x';
         buf[2] = hex[c >> 4]; buf[3] = hex[c & 15]; buf[4] = 0; }
  return buf;
}

int syn_int_literal(syn_ctx *s, uint32_t off, const char *digits, uint32_t len, int64_t *v, double *f) {
  if (len == 19 && !memcmp(digits, "9223372036854775808", 19)) {
    *v = INT64_MIN;
    *f = 9223372036854775808.0;
    return 0;
  }
  if (syn_int(s, off, digits, len, v) < 0) return -1;
  *f = (double)*v;
  return 0;
}

int syn_int(syn_ctx *s, uint32_t off, const char *digits, uint32_t len, int64_t *v) {
  int64_t x = 0;
  for (uint32_t k = 0; k < len; k++) {
    int dgt = digits[k] - '0';
    if (x > (INT64_MAX - dgt) / 10)
      return syn_error(s, off, "number too large (integers must fit in 64 bits)");
    x = x * 10 + dgt;
  }
  *v = x;
  return 0;
}

int syn_float(syn_ctx *s, uint32_t off, const char *text, uint32_t len, double *v) {
  char buf[128];
  if (len >= sizeof buf) return syn_error(s, off, "number has too many digits");
  memcpy(buf, text, len);
  buf[len] = 0;
  errno = 0;
  double x = strtod(buf, NULL);
  if (errno == ERANGE && (x > 1.0 || x < -1.0))
    return syn_error(s, off, "number too large (beyond the range of a double)");
  *v = x;
  return 0;
}

const char *syn_unquote(arena *a, const char *tok, uint32_t len, uint32_t *n) {
  const char *b = tok + 1, *e = tok + len - 1;
  char *out = arena_alloc(a, (size_t)(e - b) + 1);
  uint32_t k = 0;
  for (const char *q = b; q < e; q++) {
    if (*q == '\\') q++;
    out[k++] = *q;
  }
  if (n) *n = k;
  return arena_intern(a, out, k);
}

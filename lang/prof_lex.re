/*
** prof_lex.re: the device-profile scanner (re2c 3.0). The text is
** NUL-terminated and only the "\x00" rule reads a NUL, so no bounds checks.
*/
#include <string.h>
#include "lang/prof_int.h"

/* ORDER units: the list in the message below. */
static const struct { const char *name; double scale; } units[] = {
  {"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
  {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
  {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9},
};

/* A number, glued to a unit or not. */
static int lex_num(prof_pctx *p, prof_tok *t) {
  const char *s = t->s, *end = t->s + t->len, *u = s;
  while (u < end && ((*u >= '0' && *u <= '9') || *u == '.' || *u == '-' || *u == '+' ||
                     ((*u == 'e' || *u == 'E') && u + 1 < end && ((u[1] >= '0' && u[1] <= '9') || u[1] == '-' || u[1] == '+'))))
    u++;
  double scale = 1;
  if (u < end) {
    scale = 0;
    for (size_t k = 0; k < sizeof units / sizeof units[0]; k++)
      if ((size_t)(end - u) == strlen(units[k].name) && !memcmp(u, units[k].name, (size_t)(end - u))) scale = units[k].scale;
    if (!scale)
      return prof_error(p, (uint32_t)(u - p->syn.src->text), "unknown unit '%.*s'; use B, KB, MB, GB, TB, KiB, MiB, GiB, "
                        "TiB (bytes) or s, ms, us, ns (time)", (int)(end - u > 40 ? 40 : end - u), u);
  }
  if (syn_float(&p->syn, t->off, s, (uint32_t)(u - s), &t->num) < 0) return -1;
  t->num *= scale;
  return PROF_T_NUM;
}

int prof_lex(prof_pctx *p, prof_tok *t) {
  const unsigned char *YYCURSOR = (const unsigned char *)p->cur, *YYMARKER, *start;
  const char *text = p->syn.src->text;
  char bb[8];
  int code;
  for (;;) {
    start = YYCURSOR;
    t->s = (const char *)start;
    t->off = (uint32_t)((const char *)start - text);
    /*!re2c
      re2c:yyfill:enable = 0;
      re2c:define:YYCTYPE = "unsigned char";

      digit = [0-9];
      exp   = [eE] [+-]? digit+;
      word  = [A-Za-z_] [A-Za-z0-9_.-]*;

      "\x00"   {
        if ((size_t)((const char *)YYCURSOR - text) > p->syn.src->len) { code = PROF_T_END; goto done; }
        code = prof_error(p, t->off, "unexpected character '\\x00' (is this a binary file?)");
        goto done;
      }
      [ \t\r]+            { continue; }
      "#" [^\n\x00]*      { continue; }
      "\n"                { code = PROF_T_NL; goto done; }
      word                { code = PROF_T_WORD; goto done; }
      "-"? digit+ ("." digit*)? exp? [A-Za-z]*   { t->len = (uint32_t)(YYCURSOR - start); code = lex_num(p, t); goto out; }
      "\"" [^"\n\x00]* "\""   { code = PROF_T_STR; goto done; }
      "\"" [^"\n\x00]*        { code = prof_error(p, t->off, "unterminated string: a string ends on its line"); goto done; }
      "="      { code = PROF_T_EQ; goto done; }
      [\x80-\xff] {
        code = prof_error(p, t->off, "unexpected character '%s' (only ASCII outside comments)", syn_show_byte(bb, *start));
        goto done;
      }
      * { code = prof_error(p, t->off, "unexpected character '%s'", syn_show_byte(bb, *start)); goto done; }
    */
  }
done:
  t->len = (uint32_t)(YYCURSOR - start);
out:
  p->cur = (const char *)YYCURSOR;
  return code;
}

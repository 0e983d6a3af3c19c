/*
** cir_lex.re: the model-file scanner (re2c 3.0). It returns the TK_ codes
** that Lemon generated in cir_gram.h, so lexer and parser share one set of
** token numbers.
**
** The source text is NUL-terminated, and no rule but the lone "\x00" one
** reads past a NUL, so the scanner needs no bounds checks; that rule tells
** the end of input from a stray NUL by its position.
**
** Names may carry index templates glued to them: l{i}.w1, h{i+1},
** blk{i}.{j}. A template opens with a non-blank character and closes on
** the same line; a '{' followed by a blank (or anything a template may not
** hold) is a block brace, so `model mlp{` and `model mlp {` both open a
** block.
*/
#include <string.h>
#include "lang/cir_int.h"
#include "lang/cir_gram.h"

/* 2^63 comes as INT64_MIN, which new_num takes only after a minus sign */
static int lex_int(cir_pctx *p, cir_tok *t) {
  return syn_int_literal(&p->syn, t->off, t->s, t->len, &t->i, &t->f) < 0 ? -1 : TK_INT;
}

static int lex_float(cir_pctx *p, cir_tok *t) {
  return syn_float(&p->syn, t->off, t->s, t->len, &t->f) < 0 ? -1 : TK_FLOAT;
}

static int lex_string(cir_pctx *p, cir_tok *t) {
  t->s = syn_unquote(p->a, t->s, t->len, &t->slen);
  return TK_STRING;
}

int cir_lex(cir_pctx *p, cir_tok *t) {
  const char *text = p->syn.src->text;
  const unsigned char *YYCURSOR = (const unsigned char *)p->cur, *YYMARKER = YYCURSOR, *start;
  char bb[8];
  int code;
  for (;;) {
    start = YYCURSOR;
    memset(t, 0, sizeof *t);
    t->off = (uint32_t)((const char *)start - text);
    t->s = (const char *)start;
    /*!re2c
      re2c:define:YYCTYPE = "unsigned char";
      re2c:yyfill:enable = 0;

      digit  = [0-9];
      exp    = [eE] [+-]? digit+;
      tchar  = [A-Za-z0-9_+*\-];
      tmpl   = "{" tchar (tchar | " ")* "}";
      name   = [A-Za-z_] ([A-Za-z0-9_.] | tmpl)*;
      schar  = [^"\\\n\x00];
      sbody  = "\"" (schar | "\\" ["\\])*;

      "\x00" {
        if ((size_t)((const char *)start - text) >= p->syn.src->len) { YYCURSOR = start; code = 0; goto done; }
        code = cir_error(p, t->off, "unexpected character '\\x00' (is this a binary file?)");
        goto done;
      }
      [ \t\r\n]+          { continue; }
      "#" [^\n\x00]*      { continue; }

      "model"    { code = TK_MODEL; goto done; }
      "input"    { code = TK_INPUT; goto done; }
      "param"    { code = TK_PARAM; goto done; }
      "return"   { code = TK_RETURN; goto done; }
      "repeat"   { code = TK_REPEAT; goto done; }
      "in"       { code = TK_IN; goto done; }
      "version"  { code = TK_VERSION; goto done; }
      name       { code = TK_NAME; goto done; }

      digit+                      { t->len = (uint32_t)(YYCURSOR - start); code = lex_int(p, t); goto out; }
      /* 0..12 is a range, not the float 0. followed by .12 */
      digit+ ".."                 { YYCURSOR -= 2; t->len = (uint32_t)(YYCURSOR - start); code = lex_int(p, t); goto out; }
      digit+ "." digit* exp?      { t->len = (uint32_t)(YYCURSOR - start); code = lex_float(p, t); goto out; }
      digit+ exp                  { t->len = (uint32_t)(YYCURSOR - start); code = lex_float(p, t); goto out; }
      "." digit                   {
        code = cir_error(p, t->off, "a number must start with a digit: write 0%.*s",
                         (int)strspn((const char *)start + 1, "0123456789") + 1, (const char *)start);
        goto done;
      }

      sbody "\""                  { t->len = (uint32_t)(YYCURSOR - start); code = lex_string(p, t); goto out; }
      sbody "\\" [^"\\\n\x00]     {
        code = cir_error(p, (uint32_t)((const char *)YYCURSOR - text) - 2,
                         "unknown escape in string; only \\\" and \\\\ may follow a backslash");
        goto done;
      }
      sbody "\\"? "\n"            {
        code = cir_error(p, t->off, "unterminated string: a string must end on the line where it starts");
        goto done;
      }
      sbody "\\"? "\x00"          {
        if ((size_t)((const char *)YYCURSOR - text) > p->syn.src->len)
          code = cir_error(p, t->off, "unterminated string: end of input inside it");
        else
          code = cir_error(p, (uint32_t)((const char *)YYCURSOR - text) - 1,
                           "unexpected character '\\x00' in string (is this a binary file?)");
        goto done;
      }

      "("   { code = TK_LP; goto done; }
      ")"   { code = TK_RP; goto done; }
      "["   { code = TK_LB; goto done; }
      "]"   { code = TK_RB; goto done; }
      "{"   { code = TK_LC; goto done; }
      "}"   { code = TK_RC; goto done; }
      ":"   { code = TK_COLON; goto done; }
      ","   { code = TK_COMMA; goto done; }
      "="   { code = TK_EQ; goto done; }
      "-"   { code = TK_MINUS; goto done; }
      ".."  { code = TK_DOTDOT; goto done; }
      ";"   {
        code = cir_error(p, t->off, "unexpected ';': statements need no separator, "
                         "write one per line");
        goto done;
      }
      [\x80-\xff] {
        code = cir_error(p, t->off, "unexpected character '%s' (only ASCII is allowed "
                         "outside comments and strings)", syn_show_byte(bb, *start));
        goto done;
      }
      * {
        code = cir_error(p, t->off, "unexpected character '%s'", syn_show_byte(bb, *start));
        goto done;
      }
    */
  }
done:
  t->len = (uint32_t)(YYCURSOR - start);
out:
  p->cur = (const char *)YYCURSOR;
  return code;
}

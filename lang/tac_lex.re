/*
** tac_lex.re: the tactic-file scanner (re2c 3.0). It returns the TT_
** codes that Lemon generated in tac_gram.h, so lexer and parser share one
** set of token numbers.
**
** The source text is NUL-terminated, and no rule but the lone "\x00" one
** reads past a NUL, so the scanner needs no bounds checks; that rule tells
** the end of input from a stray NUL by its position.
**
** Globs (l*.attn.w?, w[qkv]) can only follow a selector word (param,
** values, ...), so the scanner reads one there and nowhere else: '*', '?'
** and '[' mean nothing else after a selector, while elsewhere '[' opens a
** list. A plain name in that place comes back as a glob too.
**
** Sizes are numbers glued to a unit (16GiB, 1.5GB); they are converted to
** bytes exactly, in integers, so that 1.1KB is 1100 and not 1100.0000001.
*/
#include <string.h>
#include "lang/tac_int.h"
#include "lang/tac_gram.h"

/* lex_glob found no glob here: scan normally. */
#define NOT_GLOB (-2)

static int is_selector(int code) {
  return code >= TT_INPUT && code <= TT_VALUES;
}

/* 2^63 only after a minus sign (-2^63, INT64_MIN, which the grammar keeps
** as it is): a minus is only ever a number's sign here */
static int lex_int(tac_pctx *p, tac_tok *t) {
  if (syn_int_literal(&p->syn, t->off, t->s, t->len, &t->i, &t->f) < 0) return -1;
  if (t->i == INT64_MIN && p->syn.prev != TT_MINUS) return tac_error(p, t->off, "number too large (integers must fit in 64 bits)");
  return TT_INT;
}

static int lex_number(tac_pctx *p, tac_tok *t) {
  return syn_float(&p->syn, t->off, t->s, t->len, &t->f) < 0 ? -1 : TT_NUMBER;
}

/* ORDER units: the list in the message below. */
static const struct { const char *name; int64_t bytes; } units[] = {
  {"B", 1}, {"KB", 1000}, {"MB", 1000000}, {"GB", 1000000000}, {"TB", 1000000000000},
  {"KiB", (int64_t)1 << 10}, {"MiB", (int64_t)1 << 20}, {"GiB", (int64_t)1 << 30},
  {"TiB", (int64_t)1 << 40},
};

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) { int64_t r = a % b; a = b; b = r; }
  return a;
}

/* ORDER durations: the list in the message below. */
static const struct { const char *name; double seconds; } durations[] = {{"ms", 1e-3}, {"s", 1}, {"min", 60}, {"h", 3600}};

/* digits ['.' digits] unit: bytes = mantissa * unit / 10^fraction digits;
** or a duration (30s, 500ms, 2min, 1h) in seconds. */
static int lex_size(tac_pctx *p, tac_tok *t) {
  const char *s = t->s, *end = t->s + t->len;
  const char *u = s;
  while (u < end && ((*u >= '0' && *u <= '9') || *u == '.')) u++;
  for (size_t k = 0; k < sizeof durations / sizeof durations[0]; k++)
    if ((size_t)(end - u) == strlen(durations[k].name) && memcmp(u, durations[k].name, (size_t)(end - u)) == 0) {
      if (syn_float(&p->syn, t->off, s, (uint32_t)(u - s), &t->f) < 0) return -1;
      t->f *= durations[k].seconds;
      return TT_DURATION;
    }
  int64_t unit = 0;
  for (size_t k = 0; k < sizeof units / sizeof units[0]; k++)
    if ((size_t)(end - u) == strlen(units[k].name) && memcmp(u, units[k].name, (size_t)(end - u)) == 0)
      unit = units[k].bytes;
  if (!unit && u - s == 1 && *s == '0' && (*u == 'x' || *u == 'X'))
    return tac_error(p, t->off, "hexadecimal numbers are not taken; write the number in decimal (as 16, 0.01 or 1e-3)");
  if (!unit)
    return tac_error(p, (uint32_t)(u - p->syn.src->text), "unknown unit '%.*s'; sizes take B, KB, MB, "
                     "GB, TB, KiB, MiB, GiB or TiB, durations ms, s, min or h", (int)(end - u > 40 ? 40 : end - u), u);
  const char *dot = memchr(s, '.', (size_t)(u - s));
  const char *last = u;                   /* drop trailing zeros of the fraction */
  if (dot) while (last > dot + 1 && last[-1] == '0') last--;
  if (dot && last - dot - 1 > 18) return tac_error(p, t->off, "size has too many digits");
  int64_t m = 0, scale = 1;
  for (const char *q = s; q < last; q++) {
    if (q == dot) continue;
    int dgt = *q - '0';
    if (m > (INT64_MAX - dgt) / 10)
      return tac_error(p, t->off, dot && q > dot ? "size has too many digits"
                       : "size too large (at most 2^63 - 1 bytes)");
    m = m * 10 + dgt;
    if (dot && q > dot) scale *= 10;     /* at most 10^18 */
  }
  int64_t g = gcd64(unit, scale), den = scale / g, mul = unit / g;
  if (m % den != 0)
    return tac_error(p, t->off, "size %.*s is not a whole number of bytes", (int)t->len, s);
  m /= den;
  if (m > INT64_MAX / mul)
    return tac_error(p, t->off, "size too large (at most 2^63 - 1 bytes)");
  t->i = m * mul;
  t->f = (double)t->i;
  return TT_SIZE;
}

static int lex_string(tac_pctx *p, tac_tok *t) {
  t->s = syn_unquote(p->a, t->s, t->len, NULL);
  return TT_STRING;
}

/* After a selector word: a glob with at least one of * ? [..], else
** NOT_GLOB (a plain name is scanned as usual and turned into a glob). */
static int lex_glob(tac_pctx *p, tac_tok *t, const unsigned char **cursor) {
  const unsigned char *YYCURSOR = *cursor, *YYMARKER = YYCURSOR, *start = YYCURSOR;
  /*!re2c
    re2c:define:YYCTYPE = "unsigned char";
    re2c:yyfill:enable = 0;

    gclass = "[" [^\]\x00\n\r\t "#]+ "]";
    gfirst = [A-Za-z_*?] | gclass;
    gpart  = [A-Za-z0-9_.*?] | gclass;

    gfirst gpart* {
      t->len = (uint32_t)(YYCURSOR - start);
      if (!memchr(t->s, '*', t->len) && !memchr(t->s, '?', t->len) && !memchr(t->s, '[', t->len))
        return NOT_GLOB;
      *cursor = YYCURSOR;
      return TT_GLOB;
    }
    gpart* "[" [^\]\x00\n\r\t "#]* {
      const unsigned char *b = YYCURSOR;
      while (*b != '[') b--;
      *cursor = YYCURSOR;
      return tac_error(p, (uint32_t)((const char *)b - p->syn.src->text), "unclosed '[' in a glob; "
                       "a character class such as [qkv] closes before the end of the name");
    }
    * { return NOT_GLOB; }
  */
}

int tac_lex(tac_pctx *p, tac_tok *t) {
  const char *text = p->syn.src->text;
  const unsigned char *YYCURSOR = (const unsigned char *)p->cur, *YYMARKER = YYCURSOR, *start;
  char bb[8];
  int code;
  int glob = is_selector(p->syn.prev);
  for (;;) {
    start = YYCURSOR;
    memset(t, 0, sizeof *t);
    t->off = (uint32_t)((const char *)start - text);
    t->s = (const char *)start;
    if (glob) {
      code = lex_glob(p, t, &YYCURSOR);
      if (code != NOT_GLOB) goto done;
    }
    /*!re2c
      re2c:define:YYCTYPE = "unsigned char";
      re2c:yyfill:enable = 0;

      digit  = [0-9];
      exp    = [eE] [+-]? digit+;
      name   = [A-Za-z_] [A-Za-z0-9_.]*;
      schar  = [^"\\\n\x00];
      sbody  = "\"" (schar | "\\" ["\\])*;

      "\x00" {
        if ((size_t)((const char *)start - text) >= p->syn.src->len) { YYCURSOR = start; code = 0; goto done; }
        code = tac_error(p, t->off, "unexpected character '\\x00' (is this a binary file?)");
        goto done;
      }
      [ \t\r\n]+          { continue; }
      "#" [^\n\x00]*      { continue; }

      /* ORDER tokens: the %token lines of tac_gram.lemon. */
      "version"   { code = TT_VERSION; goto done; }
      "mesh"      { code = TT_MESH; goto done; }
      "use"       { code = TT_USE; goto done; }
      "as"        { code = TT_AS; goto done; }
      "tactic"    { code = TT_TACTIC; goto done; }
      "lua"       { code = TT_LUA; goto done; }
      "auto"      { code = TT_AUTO; goto done; }
      "schedule"  { code = TT_SCHEDULE; goto done; }
      "shard"     { code = TT_SHARD; goto done; }
      "replicate" { code = TT_REPLICATE; goto done; }
      "dim"       { code = TT_DIM; goto done; }
      "on"        { code = TT_ON; goto done; }
      "first"     { code = TT_FIRST; goto done; }
      "last"      { code = TT_LAST; goto done; }
      "largest"   { code = TT_LARGEST; goto done; }
      "input"     { code = TT_INPUT; goto done; }
      "param"     { code = TT_PARAM; goto done; }
      "grad"      { code = TT_GRAD; goto done; }
      "state"     { code = TT_STATE; goto done; }
      "value"     { code = TT_VALUE; goto done; }
      "inputs"    { code = TT_INPUTS; goto done; }
      "params"    { code = TT_PARAMS; goto done; }
      "grads"     { code = TT_GRADS; goto done; }
      "states"    { code = TT_STATES; goto done; }
      "values"    { code = TT_VALUES; goto done; }
      name        { code = glob ? TT_GLOB : TT_NAME; goto done; }

      digit+                      { t->len = (uint32_t)(YYCURSOR - start); code = lex_int(p, t); goto out; }
      digit+ / ".."               { t->len = (uint32_t)(YYCURSOR - start); code = lex_int(p, t); goto out; }
      ".."                        { code = TT_DOTDOT; goto done; }
      digit+ "." digit* exp?      { t->len = (uint32_t)(YYCURSOR - start); code = lex_number(p, t); goto out; }
      digit+ exp                  { t->len = (uint32_t)(YYCURSOR - start); code = lex_number(p, t); goto out; }
      /* after the number rules: on a tie (1e5) the number wins */
      digit+ ("." digit*)? [A-Za-z_] [A-Za-z0-9_]* {
        t->len = (uint32_t)(YYCURSOR - start); code = lex_size(p, t); goto out;
      }
      "." digit                   {
        code = tac_error(p, t->off, "a number must start with a digit: write 0%.*s",
                         (int)strspn((const char *)start + 1, "0123456789") + 1, (const char *)start);
        goto done;
      }

      sbody "\""                  { t->len = (uint32_t)(YYCURSOR - start); code = lex_string(p, t); goto out; }
      sbody "\\" [^"\\\n\x00]     {
        code = tac_error(p, (uint32_t)((const char *)YYCURSOR - text) - 2,
                         "unknown escape in string; only \\\" and \\\\ may follow a backslash");
        goto done;
      }
      sbody "\\"? "\n"            {
        code = tac_error(p, t->off, "unterminated string: a string must end on the line where it starts");
        goto done;
      }
      sbody "\\"? "\x00"          {
        if ((size_t)((const char *)YYCURSOR - text) > p->syn.src->len) {
          code = tac_error(p, t->off, "unterminated string: end of input inside it");
          p->syn.incomplete = 1;
        } else {
          code = tac_error(p, (uint32_t)((const char *)YYCURSOR - text) - 1,
                           "unexpected character '\\x00' in string (is this a binary file?)");
        }
        goto done;
      }

      "("   { code = TT_LP; goto done; }
      ")"   { code = TT_RP; goto done; }
      "["   { code = TT_LB; goto done; }
      "]"   { code = TT_RB; goto done; }
      "{"   { code = TT_LC; goto done; }
      "}"   { code = TT_RC; goto done; }
      ","   { code = TT_COMMA; goto done; }
      "="   { code = TT_EQ; goto done; }
      "-"   { code = TT_MINUS; goto done; }
      ";"   {
        code = tac_error(p, t->off, "unexpected ';': statements need no separator, "
                         "write one per line");
        goto done;
      }
      [*?]  {
        code = tac_error(p, t->off, "unexpected character '%c' (a glob may only follow "
                         "input, param, grad, state or value)", *start);
        goto done;
      }
      [\x80-\xff] {
        code = tac_error(p, t->off, "unexpected character '%s' (only ASCII is allowed "
                         "outside comments and strings)", syn_show_byte(bb, *start));
        goto done;
      }
      * {
        code = tac_error(p, t->off, "unexpected character '%s'", syn_show_byte(bb, *start));
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

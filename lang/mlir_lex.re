/*
** mlir_lex.re: the MLIR scanner (re2c 3.0). It returns the TK_ codes that
** Lemon generated in mlir_gram.h, so lexer and parser share one set of
** token numbers.
**
** The source text is NUL-terminated, and no rule but the lone "\x00" one
** reads past a NUL, so the scanner needs no bounds checks; that rule tells
** the end of input from a stray NUL by its position.
**
** A few tokens depend on where they are, as in MLIR's own lexer:
**  - right after 'tensor<' (also vector<, memref<), the dimensions
**    "33x79x" are one DIMS token, so that "33x79xf32" is not read as a
**    number and a name;
**  - a word directly inside a region or function body and followed by '('
**    or '{' labels a region (reducer(...) {, cond {, do {): LABEL;
**  - an 'x' between ']' and '[' joins dot_general's dims: CROSS;
**  - a '<' glued to what it opens is one token with it: tensor<, dense<,
**    #stablehlo.gather<, !quant.uniform<.
** Strings are decoded here (MLIR's escapes \" \\ \n \t \XX) and must be
** UTF-8; names are left as slices of the source.
*/
#include <string.h>
#include "lang/mlir_int.h"
#include "lang/mlir_gram.h"

/* lex_dims found no dimensions here: scan normally. */
#define NOT_DIMS (-2)

/* 2^63 comes as INT64_MIN, which num_attr takes only after a minus sign */
static int lex_int(mlir_pctx *p, mlir_tok *t) {
  return syn_int_literal(&p->syn, t->off, t->s, t->len, &t->i, &t->f) < 0 ? -1 : TK_INT;
}

static int lex_hex(mlir_pctx *p, mlir_tok *t) {
  const char *q = t->s + 2, *e = t->s + t->len;
  while (q < e && *q == '0') q++;
  if (e - q > 16)
    return mlir_error(p, t->off, "hexadecimal number too large (at most 64 bits, 16 digits)");
  uint64_t v = 0;
  for (; q < e; q++) {
    int c = *q, d = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
    v = v << 4 | (uint64_t)d;
  }
  t->i = (int64_t)v;
  t->f = (double)v;
  return TK_HEX;
}

static int lex_float(mlir_pctx *p, mlir_tok *t) {
  return syn_float(&p->syn, t->off, t->s, t->len, &t->f) < 0 ? -1 : TK_FLOAT;
}

/* The length of a valid UTF-8 sequence at s (at most n bytes), or 0. */
static int utf8_len(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  int k;
  uint32_t cp;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) { k = 2; cp = c & 0x1f; }
  else if (c >= 0xe0 && c <= 0xef) { k = 3; cp = c & 0x0f; }
  else if (c >= 0xf0 && c <= 0xf4) { k = 4; cp = c & 0x07; }
  else return 0;
  if ((size_t)k > n) return 0;
  for (int i = 1; i < k; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
      (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return k;
}

static int hexval(int c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

/* Decode the string between the quotes at b .. e (the scanner checked its
** escapes) into the arena: s, slen. Bytes outside escapes must be UTF-8. */
static int decode_string(mlir_pctx *p, mlir_tok *t, const char *b, const char *e) {
  char *out = arena_alloc(p->a, (size_t)(e - b) + 1);
  uint32_t k = 0;
  for (const char *q = b; q < e;) {
    unsigned char c = (unsigned char)*q;
    if (c == '\\') {
      char n = q[1];
      if (n == 'n') out[k++] = '\n';
      else if (n == 't') out[k++] = '\t';
      else if (n == '"' || n == '\\') out[k++] = n;
      else { out[k++] = (char)(hexval(n) << 4 | hexval(q[2])); q++; }
      q += 2;
    } else if (c < 0x80) {
      out[k++] = (char)c;
      q++;
    } else {
      int n = utf8_len((const unsigned char *)q, (size_t)(e - q));
      if (!n)
        return mlir_error(p, (uint32_t)(q - p->syn.src->text), "invalid UTF-8 in string "
                          "(byte \\x%02x); write other bytes as \\XX escapes", c);
      memcpy(out + k, q, (size_t)n);
      k += (uint32_t)n;
      q += n;
    }
  }
  out[k] = 0;
  t->s = out;
  t->slen = k;
  return 0;
}

/* An unterminated or broken string starting at start; cur is where the scan stopped. */
static int bad_string(mlir_pctx *p, mlir_tok *t, const unsigned char *cur, int what) {
  const char *text = p->syn.src->text;
  uint32_t at = (uint32_t)((const char *)cur - text);
  if (what == '\\')
    return mlir_error(p, at - 2, "unknown escape in string; only \\\", \\\\, \\n, \\t and \\XX "
                      "(two hex digits) may follow a backslash");
  if (what == '\n')
    return mlir_error(p, t->off, "unterminated string: a string must end on the line where it starts");
  if ((size_t)at > p->syn.src->len) {
    p->syn.incomplete = 1;
    return mlir_error(p, t->off, "unterminated string: end of input inside it");
  }
  return mlir_error(p, at - 1, "unexpected character '\\x00' in string (is this a binary file?)");
}

/* After 'tensor<': "33x79x", "?x4x" or "*x" (unranked) as one DIMS token. */
static int lex_dims(mlir_pctx *p, mlir_tok *t, const unsigned char **cursor) {
  const unsigned char *q = *cursor;
  const char *text = p->syn.src->text;
  if (q[0] == '*' && q[1] == 'x') {
    t->rank = -1;
    *cursor = q + 2;
    return TK_DIMS;
  }
  int n = 0;
  for (const unsigned char *r = q;;) {       /* count them first */
    const unsigned char *d = r;
    if (*r == '?') r++;
    else while (*r >= '0' && *r <= '9') r++;
    if (r == d || *r != 'x') break;
    r++;
    n++;
  }
  if (n == 0) return NOT_DIMS;
  t->dims = arena_alloc(p->a, (size_t)n * (sizeof *t->dims + sizeof *t->dim_off));
  t->dim_off = (uint32_t *)(t->dims + n);
  t->rank = n;
  for (int i = 0; i < n; i++) {
    const unsigned char *d = q;
    uint32_t off = (uint32_t)((const char *)d - text);
    t->dim_off[i] = off;
    if (*q == '?') {
      t->dims[i] = MLIR_DYN;
      q++;
    } else {
      while (*q >= '0' && *q <= '9') q++;
      int64_t v;
      if (syn_int(&p->syn, off, (const char *)d, (uint32_t)(q - d), &v) < 0) return -1;
      if (v > MLIR_MAX_DIM) return mlir_error(p, off, "dimension too large (the limit is 2^62)");
      t->dims[i] = v;
    }
    q++;                                      /* the 'x' */
  }
  *cursor = q;
  return TK_DIMS;
}

/* The first character after blanks and newlines from q. */
static unsigned char peek(const unsigned char *q) {
  while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n') q++;
  return *q;
}

/* A bare word: a region label, dot_general's 'x', a range's 'to', or a plain word. */
static int lex_bare(mlir_pctx *p, mlir_tok *t, const unsigned char *end) {
  unsigned char next = peek(end);
  if (t->len == 1 && t->s[0] == 'x' && p->syn.prev == TK_RB && next == '[') return TK_CROSS;
  /* a location's range, "f":3:5 to :9 or to 4:9: 'to' after a column (in a
  ** callsite location the word after one is 'at') */
  if (t->len == 2 && !memcmp(t->s, "to", 2) && p->syn.prev == TK_INT) return TK_TO;
  if ((next == '(' || next == '{') && !memchr(t->s, '.', t->len) && p->syn.depth > 0) {
    const syn_open *o = &p->syn.open[p->syn.depth - 1];
    if (o->kind == MLIR_OPEN_REGION || o->kind == MLIR_OPEN_LREGION || o->kind == MLIR_OPEN_FUNC)
      return TK_LABEL;
  }
  return TK_BARE;
}

/* {-# dialect_resources: ... #-}: skipped, its place kept. */
static int lex_resources(mlir_pctx *p, mlir_tok *t, const unsigned char **cursor) {
  const char *text = p->syn.src->text;
  size_t len = p->syn.src->len;
  size_t i = (size_t)((const char *)*cursor - text);
  for (; i + 2 < len; i++) {
    if (text[i] == '#' && text[i + 1] == '-' && text[i + 2] == '}') {
      if (!p->file->resources_end) {
        p->file->resources_off = t->off;
        p->file->resources_end = (uint32_t)(i + 3);
      }
      *cursor = (const unsigned char *)text + i + 3;
      return 0;
    }
  }
  p->syn.incomplete = 1;
  return mlir_error(p, t->off, "unterminated resource section: '{-#' without its '#-}'");
}

int mlir_lex(mlir_pctx *p, mlir_tok *t) {
  const char *text = p->syn.src->text;
  const unsigned char *YYCURSOR = (const unsigned char *)p->cur, *YYMARKER = YYCURSOR, *start;
  char bb[8];
  int code;
  int dims = p->syn.prev == TK_TENSORLA;
  for (;;) {
    start = YYCURSOR;
    memset(t, 0, sizeof *t);
    t->off = (uint32_t)((const char *)start - text);
    t->s = (const char *)start;
    t->i = -1;
    if (dims && ((*start >= '0' && *start <= '9') || *start == '?' || *start == '*')) {
      code = lex_dims(p, t, &YYCURSOR);
      if (code != NOT_DIMS) goto done;
    }
    /*!re2c
      re2c:define:YYCTYPE = "unsigned char";
      re2c:yyfill:enable = 0;

      digit  = [0-9];
      hex    = [0-9a-fA-F];
      exp    = [eE] [+-]? digit+;
      idc    = [A-Za-z0-9_$.\-];
      suffix = digit+ | [A-Za-z_$.\-] idc*;
      bare   = [A-Za-z_] [A-Za-z0-9_$.]*;
      eltype = "f16" | "f32" | "f64" | "f80" | "f128" | "bf16" | "tf32" | "index"
             | [su]? "i" [1-9] digit* | "f" digit+ "E" digit+ "M" digit+ [A-Z0-9]*;
      schar  = [^"\\\n\x00];
      sbody  = "\"" (schar | "\\" (["\\nt] | hex hex))*;

      "\x00" {
        if ((size_t)((const char *)start - text) >= p->syn.src->len) { YYCURSOR = start; code = 0; goto done; }
        code = mlir_error(p, t->off, "unexpected character '\\x00' (is this a binary file?)");
        goto done;
      }
      [ \t\r\n]+          { continue; }
      "//" [^\n\x00]*     { continue; }
      "{-#"               { if (lex_resources(p, t, &YYCURSOR) < 0) { code = -1; goto done; } continue; }

      /* ORDER tokens: the %token lines of mlir_gram.lemon. */
      "module"            { code = TK_MODULE; goto done; }
      "attributes"        { code = TK_ATTRIBUTES; goto done; }
      "func.func" | "func" { code = TK_FUNC; goto done; }
      "loc"               { code = TK_LOC; goto done; }
      eltype              { code = TK_ELTYPE; goto done; }
      ("tensor" | "vector" | "memref") "<" { code = TK_TENSORLA; goto done; }
      "complex<"          { code = TK_COMPLEXLA; goto done; }
      "tuple<"            { code = TK_TUPLELA; goto done; }
      "dense<"            { code = TK_DENSELA; goto done; }
      "dense_resource<"   { code = TK_DRESLA; goto done; }
      "array<"            { code = TK_ARRAYLA; goto done; }
      bare                { t->len = (uint32_t)(YYCURSOR - start); code = lex_bare(p, t, YYCURSOR); goto out; }

      "%" suffix ("#" digit+)? {
        t->len = (uint32_t)(YYCURSOR - start);
        const char *h = memchr(t->s + 1, '#', t->len - 1);
        t->slen = h ? (uint32_t)(h - t->s) : t->len;
        if (h && syn_int(&p->syn, t->off + t->slen + 1, h + 1, t->len - t->slen - 1, &t->i) < 0) {
          code = -1;
          goto out;
        }
        code = TK_VALUE;
        goto out;
      }
      "@" suffix ("::" "@" suffix)* {
        t->len = (uint32_t)(YYCURSOR - start);
        t->s = (const char *)start + 1;       /* without the '@' */
        t->slen = t->len - 1;
        code = TK_SYMBOL;
        goto out;
      }
      "@" sbody "\"" {
        t->len = (uint32_t)(YYCURSOR - start);
        code = decode_string(p, t, (const char *)start + 2, (const char *)YYCURSOR - 1) < 0 ? -1 : TK_SYMBOL;
        goto out;
      }
      "#" suffix "<"      { code = TK_HASHLA; goto done; }
      "#" suffix          { code = TK_HASHID; goto done; }
      "!" suffix "<"      { code = TK_BANGLA; goto done; }
      "!" suffix          { code = TK_BANGID; goto done; }
      "^" suffix          { code = TK_BLOCKID; goto done; }
      [%@#!^] {
        code = mlir_error(p, t->off, "'%c' must be followed by a name, as in %s", *start,
                          *start == '%' ? "%0 or %arg0" : *start == '@' ? "@main" :
                          *start == '#' ? "#loc1" : *start == '!' ? "!stablehlo.token" : "^bb0");
        goto done;
      }

      digit+                      { t->len = (uint32_t)(YYCURSOR - start); code = lex_int(p, t); goto out; }
      "0x" hex+                   { t->len = (uint32_t)(YYCURSOR - start); code = lex_hex(p, t); goto out; }
      digit+ "." digit* exp?      { t->len = (uint32_t)(YYCURSOR - start); code = lex_float(p, t); goto out; }
      digit+ exp                  { t->len = (uint32_t)(YYCURSOR - start); code = lex_float(p, t); goto out; }
      "." digit                   {
        code = mlir_error(p, t->off, "a number must start with a digit: write 0%.*s",
                          (int)strspn((const char *)start + 1, "0123456789") + 1, (const char *)start);
        goto done;
      }

      sbody "\"" {
        t->len = (uint32_t)(YYCURSOR - start);
        code = decode_string(p, t, (const char *)start + 1, (const char *)YYCURSOR - 1) < 0 ? -1 : TK_STRING;
        goto out;
      }
      "@"? sbody "\\" [^"\\\n\x00]  { code = bad_string(p, t, YYCURSOR, '\\'); goto done; }
      "@"? sbody "\\"? "\n"         { code = bad_string(p, t, YYCURSOR, '\n'); goto done; }
      "@"? sbody "\\"? "\x00"       { code = bad_string(p, t, YYCURSOR, 0); goto done; }

      "("   { code = TK_LP; goto done; }
      ")"   { code = TK_RP; goto done; }
      "["   { code = TK_LB; goto done; }
      "]"   { code = TK_RB; goto done; }
      "{"   { code = TK_LC; goto done; }
      "}"   { code = TK_RC; goto done; }
      "<"   { code = TK_LA; goto done; }
      ">"   { code = TK_RA; goto done; }
      ":"   { code = TK_COLON; goto done; }
      ","   { code = TK_COMMA; goto done; }
      "="   { code = TK_EQ; goto done; }
      "-"   { code = TK_MINUS; goto done; }
      "->"  { code = TK_ARROW; goto done; }
      "?"   { code = TK_QUESTION; goto done; }
      [\x80-\xff] {
        code = mlir_error(p, t->off, "unexpected character '%s' (only ASCII is allowed "
                          "outside comments and strings)", syn_show_byte(bb, *start));
        goto done;
      }
      * {
        code = mlir_error(p, t->off, "unexpected character '%s'", syn_show_byte(bb, *start));
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

/*
** strbuf.h: growable text. Reports, messages and JSON are built here, so
** no name or value length ever meets a fixed-size buffer.
*/
#ifndef util_strbuf_h
#define util_strbuf_h

#include <stdarg.h>
#include <stddef.h>

typedef struct strbuf {
  char *p;               /* NUL-terminated once anything is written (malloc'd) */
  size_t n, cap;
} strbuf;

void sb_init(strbuf *b);
void sb_free(strbuf *b);
void sb_clear(strbuf *b);                  /* empty, memory kept */
void sb_put(strbuf *b, const char *s, size_t n);
void sb_puts(strbuf *b, const char *s);
void sb_putc(strbuf *b, char c);
void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(strbuf *b, const char *fmt, va_list ap);
/* The text so far ("" when nothing was written; never NULL). */
const char *sb_str(const strbuf *b);

/* Numbers as users read them, in the shortest form that reads back as the
** same number: integers exact (1399567872, not 1.39956787e+09), 0.05 not
** 0.050000000000000003. num_double tries %.15g, %.16g, %.17g (a double's
** decimal of up to 15 digits always reads back); num_float the same for a
** float from %.6g to %.9g. NaN and infinities as nan, inf, -inf. Each
** writes into buf (NUM_LEN bytes) and returns it. */
#define NUM_LEN 32
const char *num_double(char buf[NUM_LEN], double x);
const char *num_float(char buf[NUM_LEN], float x);
/* sb_puts(b, num_double(..., x)) */
void sb_num(strbuf *b, double x);

#endif

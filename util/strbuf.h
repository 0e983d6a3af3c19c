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

#endif

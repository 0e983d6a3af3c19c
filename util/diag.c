/*
** diag.c: rendering of located messages with the source line and a caret.
*/
#include "util/diag.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIAG_MAX_FILE (256u << 20)   /* model and tactic files beyond this are refused */

void diag_init(diag *d) { memset(d, 0, sizeof *d); }
void diag_free(diag *d) { sb_free(&d->out); memset(d, 0, sizeof *d); }
const char *diag_text(const diag *d) { return sb_str(&d->out); }
void diag_clear(diag *d) { int w = d->werror; diag_free(d); d->werror = w; }

void diag_append(diag *d, const char *s) { sb_puts(&d->out, s); }

void diag_linecol(const diag_src *s, uint32_t off, int *line, int *col) {
  int l = 1, c = 1;
  if (off > s->len) off = (uint32_t)s->len;
  for (uint32_t i = 0; i < off; i++) {
    if (s->text[i] == '\n') { l++; c = 1; } else c++;
  }
  *line = l; *col = c;
}

/* A place in a string read on its own, as the place in the file that holds it. */
static loc outermost(loc at) {
  while (at.src && at.src->within) at = (loc){at.src->within, at.src->within_off + at.off};
  return at;
}

const char *diag_where(arena *a, loc at) {
  at = outermost(at);
  if (!at.src) return "(no place)";
  int l, c;
  diag_linecol(at.src, at.off, &l, &c);
  return arena_printf(a, "%s:%d:%d", at.src->name, l, c);
}

/* The source line holding off, then a caret under its column. Tabs are
** kept so that the caret lines up in a terminal. */
static void append_caret(diag *d, loc at) {
  const diag_src *s = at.src;
  uint32_t off = at.off > s->len ? (uint32_t)s->len : at.off;
  uint32_t b = off, e = off;
  while (b > 0 && s->text[b - 1] != '\n') b--;
  while (e < s->len && s->text[e] != '\n') e++;
  if (e - b > 200) {                    /* very long lines: show a window */
    if (off > b + 80) b = off - 80;     /* never before the line's start */
    if (e - b > 160) e = b + 160;
  }
  char buf[512];
  size_t k = 0;
  buf[k++] = ' '; buf[k++] = ' ';
  for (uint32_t i = b; i < e && k < 240; i++) {
    unsigned char ch = (unsigned char)s->text[i];
    buf[k++] = (ch == '\t' || (ch >= 32 && ch < 127) || ch >= 128) ? (char)ch : '?';
  }
  buf[k++] = '\n';
  buf[k++] = ' '; buf[k++] = ' ';
  for (uint32_t i = b; i < off && k < 490; i++) buf[k++] = s->text[i] == '\t' ? '\t' : ' ';
  buf[k++] = '^'; buf[k++] = '\n'; buf[k] = 0;
  diag_append(d, buf);
}

static void vemit(diag *d, loc at, const char *kind, const char *fmt, va_list ap) {
  at = outermost(at);
  if (at.src) {
    int l, c;
    diag_linecol(at.src, at.off, &l, &c);
    sb_printf(&d->out, "%s:%d:%d: %s: ", at.src->name, l, c, kind);
  } else {
    sb_printf(&d->out, "carve: %s: ", kind);
  }
  sb_vprintf(&d->out, fmt, ap);
  sb_putc(&d->out, '\n');
  if (at.src) append_caret(d, at);
}

int diag_error(diag *d, loc at, const char *fmt, ...) {
  va_list ap; va_start(ap, fmt); vemit(d, at, "error", fmt, ap); va_end(ap);
  d->nerrors++;
  return -1;
}

int diag_warning(diag *d, loc at, const char *fmt, ...) {
  va_list ap; va_start(ap, fmt); vemit(d, at, d->werror ? "error" : "warning", fmt, ap); va_end(ap);
  if (d->werror) { d->nerrors++; return -1; }
  d->nwarnings++;
  return 0;
}

void diag_note(diag *d, loc at, const char *fmt, ...) {
  va_list ap; va_start(ap, fmt); vemit(d, at, "note", fmt, ap); va_end(ap);
}

diag_src *diag_src_string(arena *a, const char *name, const char *text, size_t len) {
  diag_src *s = arena_alloc(a, sizeof *s);
  s->name = arena_strndup(a, name, strlen(name));
  char *t = arena_strndup(a, text, len);
  /* a lone CR (old Mac line ends) ends a line as LF does; CR LF stays,
     its CR being blank space to the lexers. Offsets do not move. */
  for (size_t i = 0; i < len; i++)
    if (t[i] == '\r' && (i + 1 == len || t[i + 1] != '\n')) t[i] = '\n';
  s->text = t;
  s->len = len;
  return s;
}

diag_src *diag_load_file(arena *a, diag *d, const char *path) { return diag_load_file_at(a, d, path, LOC_NONE); }

diag_src *diag_load_file_at(arena *a, diag *d, const char *path, loc at) {
  /* opened without waiting: a FIFO with no writer would block a plain open */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) { diag_error(d, at, "cannot open '%s': %s", path, strerror(errno)); return NULL; }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    int e = errno;
    int tty = isatty(fd);
    close(fd);
    if (S_ISDIR(st.st_mode)) diag_error(d, at, "'%s' is a directory, not a file; name a file", path);
    else if (tty) diag_error(d, at, "'%s' is a terminal; carve reads a file whole: give a file (or use 'carve repl' to type)", path);
    else if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
      diag_error(d, at, "'%s' is %s; carve reads a file whole: write the text to a regular file and give that", path,
                 S_ISFIFO(st.st_mode) ? "a FIFO or a pipe" : S_ISSOCK(st.st_mode) ? "a socket" : "a device");
    else diag_error(d, at, "cannot read '%s': %s", path, strerror(e));
    return NULL;
  }
  FILE *f = fdopen(fd, "rb");
  if (!f) { close(fd); diag_error(d, at, "cannot open '%s': %s", path, strerror(errno)); return NULL; }
  size_t cap = 4096, len = 0;
  char *buf = mem_alloc(cap);
  for (;;) {
    if (len + 4096 > cap) {
      if (cap >= DIAG_MAX_FILE) {
        free(buf); fclose(f);
        diag_error(d, at, "'%s' is larger than %u MiB; is it really a carve file?", path, DIAG_MAX_FILE >> 20);
        return NULL;
      }
      cap *= 2; buf = mem_realloc(buf, cap);
    }
    size_t n = fread(buf + len, 1, cap - len, f);
    len += n;
    if (n == 0) break;
  }
  int err = ferror(f);
  fclose(f);
  if (err) { free(buf); diag_error(d, at, "cannot read '%s'", path); return NULL; }
  diag_src *s = diag_src_string(a, path, buf, len);
  free(buf);
  return s;
}

int diag_errbuf(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (err && errlen) vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

diag_src *diag_src_piece(arena *a, const char *name, const char *text, size_t len, loc at) {
  diag_src *s = diag_src_string(a, name, text, len);
  if (at.src && at.off <= at.src->len && len <= at.src->len - at.off && !memcmp(at.src->text + at.off, text, len)) {
    s->within = at.src;
    s->within_off = at.off;
  }
  return s;
}

/* ---- did you mean ---- */

int diag_distance(const char *a, const char *b, int max) {
  size_t n = strlen(a), m = strlen(b);
  if (max < 0) return 0;
  if ((n > m ? n - m : m - n) > (size_t)max) return max + 1;
  if (n > 256 || m > 256) return strcmp(a, b) ? max + 1 : 0;
  int rows[3][257], *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
  for (size_t j = 0; j <= m; j++) prev[j] = (int)j;
  int plow = 0;                                    /* the least of the row before (a swap reaches back two rows) */
  for (size_t i = 1; i <= n; i++) {
    cur[0] = (int)i;
    int low = cur[0];
    for (size_t j = 1; j <= m; j++) {
      int cost = a[i - 1] != b[j - 1];
      int d = prev[j] + 1;
      if (cur[j - 1] + 1 < d) d = cur[j - 1] + 1;
      if (prev[j - 1] + cost < d) d = prev[j - 1] + cost;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < d) d = prev2[j - 2] + 1;
      cur[j] = d;
      if (d < low) low = d;
    }
    if (low > max && plow >= max) return max + 1;
    plow = low;
    int *t = prev2; prev2 = prev; prev = cur; cur = t;
  }
  return prev[m] > max ? max + 1 : prev[m];
}

void diag_suggest_init(diag_suggest *s, const char *word) {
  s->word = word;
  s->best = NULL;
  int len = (int)strlen(word);
  s->dist = (len / 3 > 1 ? len / 3 : 1) + 1;     /* what a candidate must beat */
}

void diag_suggest_add(diag_suggest *s, const char *candidate) {
  if (!candidate || !strcmp(candidate, s->word)) return;
  int d = diag_distance(s->word, candidate, s->dist - 1);
  if (d < s->dist) { s->dist = d; s->best = candidate; }
}

const char *diag_suggest_text(arena *a, const diag_suggest *s) {
  return s->best ? arena_printf(a, "; did you mean '%s'?", s->best) : "";
}

/*
** diag.h: located diagnostics. Positions are byte offsets into a source
** buffer, turned into line:col only when a message is rendered. Messages
** accumulate in a diag and are printed by the command line, never deep
** inside a pass.
*/
#ifndef util_diag_h
#define util_diag_h

#include <stddef.h>
#include <stdint.h>
#include "util/arena.h"
#include "util/strbuf.h"

typedef struct diag_src {
  const char *name;      /* as given on the command line */
  const char *text;      /* NUL-terminated copy of the file */
  size_t len;
  const struct diag_src *within;   /* a string written in another source, read on its own: messages point there */
  uint32_t within_off;             /* where its first byte is in that source */
} diag_src;

/* A place in a source; src == NULL means "no place" (carve: error: ...). */
typedef struct loc {
  const diag_src *src;
  uint32_t off;
} loc;

#define LOC_NONE ((loc){NULL, 0})

typedef struct diag {
  strbuf out;            /* every rendered message, in order: diag_text(d) */
  int nerrors, nwarnings;
  int werror;            /* warnings count as errors (not --lenient where it matters) */
} diag;

void diag_init(diag *d);
void diag_free(diag *d);
void diag_clear(diag *d);
/* Everything rendered so far ("" when nothing). */
const char *diag_text(const diag *d);

/* Each returns -1 so that `return diag_error(...)` reads naturally. */
int  diag_error(diag *d, loc at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int  diag_warning(diag *d, loc at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_note(diag *d, loc at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Append raw text (already formatted). */
void diag_append(diag *d, const char *s);

void diag_linecol(const diag_src *s, uint32_t off, int *line, int *col);
/* "file:line:col" for messages that mention another place. */
const char *diag_where(arena *a, loc at);

/* Write a one-line reason into err (if any) and return -1: the error
** convention of functions that report through a caller's buffer. */
int diag_errbuf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "Did you mean": the restricted Damerau-Levenshtein distance between a
** and b (an insertion, deletion, change or swap of two neighbours each
** counts one), or max + 1 as soon as it is more than max. */
int diag_distance(const char *a, const char *b, int max);
/* The closest candidate to a misspelt word: start with diag_suggest_init,
** offer each candidate to diag_suggest_add; best is the first of the
** closest within max(1, strlen(word) / 3) edits, or NULL. The word itself
** is never suggested. best points at the candidate as given. */
typedef struct diag_suggest { const char *word; const char *best; int dist; } diag_suggest;
void diag_suggest_init(diag_suggest *s, const char *word);
void diag_suggest_add(diag_suggest *s, const char *candidate);
/* "; did you mean 'fc1.weight'?" for the best candidate, "" when none. */
const char *diag_suggest_text(arena *a, const diag_suggest *s);

/* Read a whole file into the arena; on failure records a carve: error and returns NULL. */
diag_src *diag_load_file(arena *a, diag *d, const char *path);
/* The same for a file another file names (a tactic file's use, a script):
** its errors are located at `at`, where the name is written. */
diag_src *diag_load_file_at(arena *a, diag *d, const char *path, loc at);
/* Wrap a string already in memory (the REPL, tests). */
diag_src *diag_src_string(arena *a, const char *name, const char *text, size_t len);
/* The same for a string read on its own that a file holds as it is at
** `at` (a tactic file's links = "..."): its messages point into that
** file. Where at is LOC_NONE, or the file holds the string otherwise
** (escapes), messages name `name` as diag_src_string's do. */
diag_src *diag_src_piece(arena *a, const char *name, const char *text, size_t len, loc at);

#endif

/*
** repl.c: carve repl: the REPL's sessions (interp/repl) behind a line
** editor. On a terminal: libedit with history in ~/.carve_history (or
** $CARVE_HISTORY) and tab completion; otherwise lines are read from stdin
** as they come, with no prompt and no escape codes, so that the REPL can
** be scripted. Exit 0, or 1 when some line ended in an error.
*/
#include "cli/cli.h"
#include "interp/repl/repl.h"
#include "util/datadir.h"

#include <editline/readline.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* readline's completion takes plain functions: the session and the words
** found for the current completion live here, for the duration of one
** Tab, and nowhere else. */
static struct { repl *r; char **words; int n, cap, next; } completion;

static void add_word(void *ctx, const char *word) {
  (void)ctx;
  if (completion.n == completion.cap) {
    completion.cap = completion.cap ? 2 * completion.cap : 16;
    completion.words = mem_realloc(completion.words, sizeof *completion.words * (size_t)completion.cap);
  }
  completion.words[completion.n++] = strdup(word);
}

static char *next_word(const char *text, int state) {
  (void)text;
  if (!state) completion.next = 0;
  return completion.next < completion.n ? strdup(completion.words[completion.next++]) : NULL;
}

static char **complete(const char *text, int start, int end) {
  (void)start;
  for (int i = 0; i < completion.n; i++) free(completion.words[i]);
  completion.n = 0;
  repl_complete(completion.r, rl_line_buffer, end, add_word, NULL);
  rl_attempted_completion_over = 1;          /* no file names */
  if (completion.n > 1 && strpbrk(text, "*?[")) {
    /* a glob's matches share no prefix with it: the editor would put their
    ** common prefix in its place (l*.mlp.w1 -> l). The first entry, what
    ** replaces the word, is the glob itself; the rest are listed. */
    char **m = mem_alloc(sizeof *m * (size_t)(completion.n + 2));
    m[0] = strdup(text);
    for (int i = 0; i < completion.n; i++) m[i + 1] = strdup(completion.words[i]);
    m[completion.n + 1] = NULL;
    return m;
  }
  return completion.n ? rl_completion_matches(text, next_word) : NULL;
}

static const char *history_path(void) {
  const char *h = getenv("CARVE_HISTORY");
  if (h && *h) return h;
  static char path[4096];
  const char *home = getenv("HOME");
  snprintf(path, sizeof path, "%s/.carve_history", home && *home ? home : ".");
  return path;
}

int cli_repl(const cli_opts *o) {
  repl_opts ro = {o->nfiles > 0 ? o->files[0] : NULL, o->model, o->train, o->nfiles > 1 ? o->files[1] : NULL, o->mesh, o->device, NULL,
                  o->no_fuse, o->strict, o->lenient, NULL};
  ro.profile_dir = datadir_path(DATADIR_PROFILES);
  ro.stdlib_dir = datadir_path(DATADIR_STDLIB);
  strbuf out;
  sb_init(&out);
  repl *r = repl_new(&ro, &out);
  int tty = isatty(0) && isatty(1);
  fputs(sb_str(&out), stdout);
  sb_clear(&out);
  if (tty) {
    rl_readline_name = "carve";
    completion.r = r;
    rl_attempted_completion_function = complete;
    rl_basic_word_break_characters = " \t\n\"(),=";
    using_history();
    read_history(history_path());
    puts("carve repl: 'help' lists the commands; Tab completes");
  }
  char *line = NULL;
  size_t cap = 0;
  for (;;) {
    char *text;
    if (tty) {
      text = readline(repl_prompt(r));
      if (!text) { putchar('\n'); break; }
      if (text[strspn(text, " \t")]) add_history(text);
    } else {
      ssize_t n = getline(&line, &cap, stdin);
      if (n < 0) break;
      if (n && line[n - 1] == '\n') line[--n] = 0;
      if (n && line[n - 1] == '\r') line[--n] = 0;
      text = line;
    }
    int rc = repl_line(r, text, &out);
    if (tty) free(text);
    fputs(sb_str(&out), stdout);
    fflush(stdout);
    sb_clear(&out);
    if (rc == REPL_QUIT) break;
  }
  if (repl_pending(r)) fprintf(stderr, "carve: error: the input ended inside a statement\n");
  int errors = repl_errors(r) + repl_pending(r);
  if (tty) write_history(history_path());
  for (int i = 0; i < completion.n; i++) free(completion.words[i]);
  free(completion.words);
  free(line);
  sb_free(&out);
  repl_free(r);
  return errors ? 1 : 0;
}

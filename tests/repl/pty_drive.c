/*
** pty_drive.c: drives `carve repl` through a pseudo-terminal as a person
** would: Tab completion, a statement continued on a second line, and the
** history file. Usage: pty_drive CARVE MODEL HISTORY. Prints one line per
** check and exits 1 if any failed.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fd;
static char seen[1 << 20];
static size_t nseen;

/* read until want appears after position from, or 60 seconds pass */
static int expect(const char *want, size_t from) {
  time_t end = time(NULL) + 60;
  while (time(NULL) < end) {
    seen[nseen] = 0;
    if (strstr(seen + from, want)) return 1;
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 500) <= 0) continue;
    ssize_t n = read(fd, seen + nseen, sizeof seen - nseen - 1);
    if (n <= 0) break;
    nseen += (size_t)n;
  }
  seen[nseen] = 0;
  return strstr(seen + from, want) != NULL;
}

static void type(const char *s) { if (write(fd, s, strlen(s)) < 0) perror("write"); }

static int failures;
static void check(int ok, const char *what) {
  printf("%s: %s\n", ok ? "ok" : "FAIL", what);
  if (!ok) { failures++; printf("--- the terminal so far:\n%s\n---\n", seen); }
}

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: pty_drive CARVE MODEL HISTORY\n"); return 2; }
  struct winsize ws = {40, 200, 0, 0};
  pid_t pid = forkpty(&fd, NULL, NULL, &ws);
  if (pid < 0) { perror("forkpty"); return 2; }
  if (pid == 0) {
    setenv("CARVE_HISTORY", argv[3], 1);
    setenv("TERM", "xterm", 1);
    execl(argv[1], argv[1], "repl", argv[2], "--train", "adam(lr = 1e-3)", "--mesh", "batch=2,model=2", (char *)NULL);
    _exit(127);
  }
  check(expect("carve> ", 0), "a prompt on a terminal");
  size_t at = nseen;
  type("expl\t");
  check(expect("ain ", at), "Tab completes a command");     /* the editor writes the rest of the word */
  at = nseen;
  type("l0.mlp.w2\r");
  check(expect("not split on any axis", at), "the completed command runs");
  at = nseen;
  type("use \"zero\" as z3 (axis = batch,\r");
  check(expect("   ... ", at), "an unfinished statement asks for more");
  at = nseen;
  type("stage = 3)\r");
  check(expect("wte", at) && expect("carve> ", at), "and applies once it is whole");
  at = nseen;
  type("show l0.mlp.w\t\t");
  check(expect("l0.mlp.w1", at) && expect("l0.mlp.w2", at), "Tab lists the values a prefix names");
  type("\x15");
  at = nseen;
  type("show l*.mlp.w1\t\t");                 /* a glob: its matches listed, the word kept (not cut to 'l') */
  int listed = expect("l0.mlp.w1", at) && expect("l1.mlp.w1", at);
  size_t after = listed ? (size_t)(strstr(seen + at, "l1.mlp.w1") - seen) : at;
  check(listed && expect("show l*.mlp.w1", after), "Tab lists the values a glob matches and keeps the glob");
  type("\x15quit\r");                 /* ^U clears the line */
  int status = 0;
  for (int i = 0; i < 600 && waitpid(pid, &status, WNOHANG) == 0; i++) usleep(100000);
  if (waitpid(pid, &status, WNOHANG) == 0) { kill(pid, SIGKILL); waitpid(pid, &status, 0); }
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "quit ends the session with status 0");
  FILE *h = fopen(argv[3], "r");
  char line[4096];
  int found = 0;
  while (h && fgets(line, sizeof line, h)) found |= strstr(line, "use \"zero\"") != NULL || strstr(line, "use\\040\"zero\"") != NULL;
  if (h) fclose(h);
  check(found, "the history file keeps the lines typed");
  return failures ? 1 : 0;
}

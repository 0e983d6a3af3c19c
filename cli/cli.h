/*
** cli.h: the command line. main.c parses options into cli_opts and
** dispatches; each command lives in a cli_*.c file and returns the exit
** code (0 ok, 1 user error, 2 bad usage). Messages go to stderr only
** here, at the top.
*/
#ifndef interp_cli_h
#define interp_cli_h

#include <stdio.h>

typedef struct cli_opts {
  const char *cmd;
  const char *files[4];
  int nfiles;
  const char *train, *mesh, *model, *params, *data, *save, *device, *out;
  long steps;
  int rank;                 /* --rank for lower */
  int json, check, strict, lenient, print, profile;
} cli_opts;

int cli_check(const cli_opts *o);
int cli_apply(const cli_opts *o);
int cli_explain(const cli_opts *o);
int cli_run(const cli_opts *o);
int cli_lower(const cli_opts *o);

/* Print the session's messages to stderr (first line: the located error). */
struct diag;
void cli_report(const struct diag *d);
/* Load the model (and tactic file) of a command; -1 after reporting. */
struct session;
int cli_load(struct session *s, const cli_opts *o);

#endif

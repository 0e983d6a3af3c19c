/*
** cli.h: the command line. main.c parses options into cli_opts and
** dispatches; each command lives in a file of its own (cli/check.c ...) and returns the exit
** code (0 ok, 1 user error, 2 bad usage). Messages go to stderr only
** here, at the top.
*/
#ifndef cli_cli_h
#define cli_cli_h

#include <stdio.h>
#include "interp/drive/session.h"

typedef struct cli_opts {
  const char *cmd;
  const char *files[4];
  int nfiles;
  const char *train, *mesh, *model, *params, *data, *save;
  const char *device_kind;  /* --device-kind cpu|cuda (run) */
  const char *device, *links, *compare, *sweep;   /* simulate */
  const char *out;          /* -o */
  const char *svg;          /* show --svg FILE */
  const char *tolerance;    /* run --check, --bisect, bisect: relative error allowed */
  const char *params_from_args, *tactics_out;   /* import */
  const char *bucket;       /* --bucket SIZE: gradient reductions joined (apply, lower, simulate, run) */
  long steps;
  int rank;                 /* --rank for lower */
  int json, check, strict, lenient, print, profile, tf32, overlap, quiet, print_outputs, no_fuse;
  int bisect, keep_values;  /* run --bisect; lower --keep-values */
  int drop_collective;      /* --test-drop-collective K: tests only (a planted wrong collective) */
  const char *test_perturb; /* --test-perturb VALUE: tests only (rank 0's piece of VALUE made wrong after the run) */
  int test_apart;           /* --test-unfused-elementwise: benchmarks only (elementwise chains not fused) */
  int allow_nonfinite;      /* run: go on past a NaN or Inf loss */
  int verbose;              /* apply: every value, conflict and collective, not the summary */
} cli_opts;

int cli_check(const cli_opts *o);
/* the op list check --help ends with */
void cli_check_help(FILE *f);
int cli_apply(const cli_opts *o);
int cli_explain(const cli_opts *o);
int cli_run(const cli_opts *o);
int cli_lower(const cli_opts *o);
int cli_simulate(const cli_opts *o);
int cli_calibrate(const cli_opts *o);
int cli_repl(const cli_opts *o);
int cli_auto(const cli_opts *o);
int cli_import(const cli_opts *o);
int cli_export(const cli_opts *o);
int cli_show(const cli_opts *o);
int cli_diff(const cli_opts *o);
int cli_bisect(const cli_opts *o);
/* --tolerance (run --bisect, bisect): the default without it; 0 after an error (say: print it). */
double cli_tolerance(const cli_opts *o, int say);
/* A bisection's report on stdout, as text or with --json one object. */
struct bisect_result;
struct progfile;
void cli_bisect_print(const cli_opts *o, const struct bisect_result *res, const struct progfile *desc);

/* Print the session's messages to stderr (first line: the located error). */
void cli_report(const diag *d);
/* The session options of a command's files and flags. */
void cli_session_opts(const cli_opts *o, session_opts *so);
/* The lowering options of a command's flags (--bucket); -1 after saying what is wrong. */
struct lower_opts;
int cli_lower_opts(const cli_opts *o, struct lower_opts *lo);
/* May the command write each of its outputs (-o, --tactics-out, --svg,
** --save)? Each must be a regular file or a new name, none of the files
** the command reads (under any name: device and inode compared) and no
** other output; --save may replace --params. -1 with the reason in err
** ("-o: 'm.cir' is the model file this command reads; write to another
** file"). main() calls it before every command but run and calibrate,
** which call it on rank 0 and agree. */
int cli_check_outputs(const cli_opts *o, char *err, size_t errlen);
/* Are the files of a command that reads a model in their order? A tactic
** file where the model goes (by its extension, .tac, or its first words)
** is -1 with what to write instead in err: "the model comes first: ...". */
int cli_check_order(const cli_opts *o, char *err, size_t errlen);
/* Load the model (and tactic file) of a command; -1 after reporting. */
int cli_load(session *s, const cli_opts *o);
/* The id of the value named name (not a literal); -1 after saying there is none. */
int cli_value(const session *s, const cli_opts *o, const char *name);

#endif

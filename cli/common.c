/*
** common.c: what every command does alike: report the session's messages
** and load the model and tactic file.
*/
#include "cli/cli.h"
#include "interp/drive/session.h"
#include "interp/lower/lower.h"
#include "util/datadir.h"
#include "util/file.h"

#include <errno.h>
#include <stdlib.h>

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cli_report(const diag *d) { fputs(diag_text(d), stderr); }

/* An auto tactic's progress on stderr, once it has run for a second:
** "searching found: 412/2000 evaluations, best 230.4 ms, 10.2 GiB (fits)". */
static void progress(void *ud, const search_progress *pr, int done) {
  (void)ud;
  if (pr->elapsed < 1) return;
  char budget[64] = "";
  if (pr->budget) snprintf(budget, sizeof budget, "/%lld", (long long)pr->budget);
  else if (pr->seconds > 0) snprintf(budget, sizeof budget, " in %.0f of %.0f s", pr->elapsed, pr->seconds);
  double mem = pr->best_memory;
  const char *unit = "B";
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
  for (int i = 0; i < 4 && mem >= 1024; i++) { mem /= 1024; unit = units[i]; }
  fprintf(stderr, "\r\033[Ksearching: %lld%s evaluations, best %.3f ms, %.1f %s (%s)%s", (long long)pr->evals, budget,
          pr->best_seconds * 1e3, mem, unit, pr->fits ? "fits" : "over the limit", done ? "\n" : "");
  fflush(stderr);
}

void cli_session_opts(const cli_opts *o, session_opts *so) {
  *so = (session_opts){o->files[0], o->model, o->train, o->nfiles > 1 ? o->files[1] : NULL, {o->mesh, o->strict, o->lenient, NULL}};
  so->tac.device = o->device;
  so->tac.stdlib_dir = datadir_path(DATADIR_STDLIB);
  so->tac.profile_dir = datadir_path(DATADIR_PROFILES);
  so->no_fuse = o->no_fuse;
  if (!o->quiet && isatty(2)) so->tac.progress = progress;
}

int cli_lower_opts(const cli_opts *o, lower_opts *lo) {
  lo->no_fuse_elementwise |= o->test_apart;
  if (!o->bucket) return 0;
  static const struct { const char *unit; int64_t bytes; } units[] = {
    {"", 1}, {"B", 1}, {"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000000}, {"GB", 1000000000},
  };
  const char *t = o->bucket;
  char *end;
  errno = 0;
  long long n = t[0] >= '0' && t[0] <= '9' ? strtoll(t, &end, 10) : -1;
  for (size_t u = 0; n >= 0 && errno == 0 && u < sizeof units / sizeof *units; u++)
    if (!strcmp(end, units[u].unit) && n <= INT64_MAX / units[u].bytes) { lo->bucket_bytes = n ? n * units[u].bytes : -1; return 0; }
  fprintf(stderr, "carve: error: --bucket '%s': give a size in bytes, KiB, MiB or GiB, as in --bucket 25MiB (0: each gradient alone)\n", t);
  return -1;
}

/* What a file is to carve, by its extension or else its first words
** (after comments and a version line): 1 a model (.cir, .mlir; model,
** module, func.func), 2 a tactic file (.tac; mesh, use, tactic,
** schedule), 0 not known. Only regular files are read. */
static int file_kind(const char *path) {
  size_t n = strlen(path);
  static const struct { const char *ext; int kind; } exts[] = {{".cir", 1}, {".mlir", 1}, {".tac", 2}};
  for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
    size_t e = strlen(exts[i].ext);
    if (n > e && !strcmp(path + n - e, exts[i].ext)) return exts[i].kind;
  }
  struct stat st;
  if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) return 0;
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char buf[4096];
  size_t got = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[got] = 0;
  for (char *p = buf; *p;) {
    p += strspn(p, " \t\r\n");
    if (*p == '#' || (p[0] == '/' && p[1] == '/')) { p += strcspn(p, "\n"); continue; }
    size_t w = strcspn(p, " \t\r\n{(");
    if (w == 7 && !strncmp(p, "version", 7)) { p += w; p += strspn(p, " \t"); p += strspn(p, "0123456789"); continue; }
    static const struct { const char *word; int kind; } words[] = {
      {"model", 1}, {"module", 1}, {"func.func", 1}, {"mesh", 2}, {"use", 2}, {"tactic", 2}, {"schedule", 2},
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
      if (w == strlen(words[i].word) && !strncmp(p, words[i].word, w)) return words[i].kind;
    return 0;
  }
  return 0;
}

int cli_check_order(const cli_opts *o, char *err, size_t errlen) {
  static const char *const readers[] = {"check", "run", "apply", "explain", "simulate", "repl", "auto", "export", "lower", "show", "diff"};
  int reads = 0;
  for (size_t i = 0; i < sizeof readers / sizeof readers[0]; i++) reads |= !strcmp(o->cmd, readers[i]);
  if (!reads || o->nfiles < 1 || file_kind(o->files[0]) != 2) return 0;
  int nfiles = !strcmp(o->cmd, "show") || !strcmp(o->cmd, "explain") ? 2 : o->nfiles;   /* their third is a value's name */
  int model = -1;
  for (int i = 1; i < nfiles && i < o->nfiles; i++) if (model < 0 && file_kind(o->files[i]) == 1) model = i;
  if (model < 0)
    return diag_errbuf(err, errlen, "'%s' is a tactic file, and the model comes first: carve %s MODEL.cir %s%s", o->files[0], o->cmd,
                       o->files[0], nfiles > 1 ? " ..." : "");
  strbuf b;
  sb_init(&b);
  sb_printf(&b, "carve %s %s", o->cmd, o->files[model]);
  for (int i = 0; i < o->nfiles; i++) if (i != model) sb_printf(&b, " %s", o->files[i]);
  diag_errbuf(err, errlen, "'%s' is a tactic file and '%s' a model: the model comes first, as in %s", o->files[0], o->files[model], sb_str(&b));
  sb_free(&b);
  return -1;
}

int cli_load(session *s, const cli_opts *o) {
  session_init(s);
  session_opts so;
  cli_session_opts(o, &so);
  if (session_load(s, &so) < 0) {
    cli_report(&s->diag);
    session_free(s);
    return -1;
  }
  return 0;
}

int cli_value(const session *s, const cli_opts *o, const char *name) {
  const ir_value *v = ir_lookup(s->g, name);
  if (v && v->kind != IR_CONST) return v->id;
  arena a;
  arena_init(&a);
  diag_suggest sg;
  diag_suggest_init(&sg, name);
  for (int i = 0; i < s->g->nvals; i++) if (s->g->vals[i]->kind != IR_CONST) diag_suggest_add(&sg, s->g->vals[i]->name);
  fprintf(stderr, "carve: error: no value named '%s' in model '%s'%s%s ('carve apply --verbose' lists every value)\n", name, s->g->name,
          !o->train && !strncmp(name, "grad.", 5) ? " (gradients exist with --train)" : "", diag_suggest_text(&a, &sg));
  arena_free(&a);
  return -1;
}

/* The files a command reads, with what each is to it: its file arguments
** (not show's and explain's value name), --params, --data, --compare, and
** --device where it names a file. How many. */
static int inputs_of(const cli_opts *o, file_read *in) {
  static const char *const roles[][3] = {
    {"the model file this command reads", "the tactic file this command reads", NULL},
    {"the model file this command reads", "tactic file A this command reads", "tactic file B this command reads"},
    {"program file A this command reads", "program file B this command reads", NULL},
    {"the StableHLO program this command reads", NULL, NULL},
  };
  int r = !strcmp(o->cmd, "diff") ? 1 : !strcmp(o->cmd, "bisect") ? 2 : !strcmp(o->cmd, "import") ? 3 : 0;
  int nfiles = o->nfiles, n = 0;
  if (!strcmp(o->cmd, "show") || !strcmp(o->cmd, "explain")) nfiles = nfiles < 2 ? nfiles : 2;
  for (int i = 0; i < nfiles && i < 3; i++) in[n++] = (file_read){o->files[i], roles[r][i]};
  in[n++] = (file_read){o->params, "the --params file this command reads"};
  in[n++] = (file_read){o->data, "the --data file this command reads"};
  in[n++] = (file_read){o->compare, "the --compare tactic file this command reads"};
  size_t dl = o->device ? strlen(o->device) : 0;     /* a profile's name is no file here (sim_profile_load) */
  if (o->device && (strchr(o->device, '/') || (dl > 8 && !strcmp(o->device + dl - 8, ".profile"))))
    in[n++] = (file_read){o->device, "the --device profile this command reads"};
  return n;
}

int cli_check_outputs(const cli_opts *o, char *err, size_t errlen) {
  const struct { const char *path, *option, *what; int over_params; } outs[] = {
    {o->out, "-o", "the file -o writes", 0},
    {o->tactics_out, "--tactics-out", "the file --tactics-out writes", 0},
    {o->svg, "--svg", "the file --svg writes", 0},
    {o->save, "--save", "the file --save writes", 1},   /* over --params: resuming in place */
  };
  file_read in[12];
  int n = inputs_of(o, in);
  for (size_t k = 0; k < sizeof outs / sizeof outs[0]; k++) {
    if (!outs[k].path) continue;
    file_read list[12];
    int m = 0;
    for (int i = 0; i < n; i++) if (!outs[k].over_params || in[i].path != o->params) list[m++] = in[i];
    char why[512];
    if (file_check_target(outs[k].path, list, m, why, sizeof why) < 0)
      return diag_errbuf(err, errlen, "%s: %s", outs[k].option, why);
    in[n++] = (file_read){outs[k].path, outs[k].what};  /* no later output may be this one */
  }
  return 0;
}

/*
** main.c: carve's command line: parse options, dispatch to a command.
** Commands and options are tables: a command names the options it takes;
** an option says what it holds and where it goes in cli_opts.
*/
#include "cli/cli.h"
#include "util/datadir.h"
#include "util/diag.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef enum { OPT_FLAG, OPT_TEXT, OPT_COUNT } optkind;

typedef struct option {
  const char *name;         /* without the dashes */
  optkind kind;
  size_t at;                /* offsetof the field in cli_opts */
} option;

#define TEXT(n, f) {n, OPT_TEXT, offsetof(cli_opts, f)}
#define FLAG(n, f) {n, OPT_FLAG, offsetof(cli_opts, f)}
#define COUNT(n, f) {n, OPT_COUNT, offsetof(cli_opts, f)}

static const option options[] = {
  TEXT("train", train), TEXT("mesh", mesh), TEXT("model", model), TEXT("params", params),
  TEXT("data", data), TEXT("save", save), TEXT("device-kind", device_kind),
  TEXT("device", device), TEXT("links", links), TEXT("compare", compare), TEXT("sweep", sweep),
  TEXT("out", out), TEXT("svg", svg), TEXT("tolerance", tolerance),
  TEXT("params-from-args", params_from_args), TEXT("tactics-out", tactics_out), TEXT("bucket", bucket),
  TEXT("test-perturb", test_perturb),
  COUNT("steps", steps), COUNT("rank", rank), COUNT("test-drop-collective", drop_collective),
  FLAG("json", json), FLAG("check", check), FLAG("strict", strict), FLAG("lenient", lenient),
  FLAG("print", print), FLAG("profile", profile), FLAG("tf32", tf32), FLAG("overlap", overlap), FLAG("quiet", quiet),
  FLAG("bisect", bisect), FLAG("keep-values", keep_values), FLAG("allow-nonfinite", allow_nonfinite),
  FLAG("print-outputs", print_outputs), FLAG("test-unfused-elementwise", test_apart), FLAG("no-fuse", no_fuse), FLAG("verbose", verbose),
};

typedef struct command {
  const char *name;
  int (*run)(const cli_opts *o);
  int minfiles, maxfiles;
  const char *options;      /* the options it takes, space-separated */
  const char *usage;
  const char *help;
  void (*more_help)(FILE *f);  /* what the help text goes on with (NULL: nothing) */
  int mpi;                  /* runs under mpirun: checks its outputs itself, on rank 0 (cli_check_outputs) */
} command;

static const command commands[] = {
  {"check", cli_check, 1, 2, "train mesh model no-fuse print lenient strict",
   "carve check MODEL.cir [TACTICS.tac] [--train OPT] [--model NAME] [--mesh ..] [--print] [--no-fuse] [--strict] [--lenient]",
   "Parse and verify a model (and its training step with --train). Exit 0 when it is\n"
   "well-formed, else 1 with located errors. --print writes the IR back as model text.",
   cli_check_help},
  {"run", cli_run, 1, 2, "train mesh model no-fuse strict lenient steps params data save check tolerance json profile device-kind tf32 quiet allow-nonfinite bisect test-drop-collective test-perturb test-unfused-elementwise print-outputs bucket",
   "carve run MODEL.cir [TACTICS.tac] [--steps N] [--train OPT] [--params F] [--data F] [--save F] [--check [--tolerance E]]\n"
   "          [--profile] [--json] [--device-kind cpu|cuda] [--tf32] [--allow-nonfinite] [--bisect [--tolerance E]]\n"
   "          [--print-outputs] [--bucket SIZE] [--model NAME] [--mesh ..] [--no-fuse] [--strict] [--lenient] [--quiet]",
   "Execute the program N times (a training step with --train, which needs --steps;\n"
   "without --train one run unless --steps says otherwise). Without --params,\n"
   "parameters start from a deterministic init; without --data, inputs are fixed\n"
   "deterministic values (ids within the table sizes). --save writes the parameters and\n"
   "optimizer state after the last step as safetensors (atomically). With a tactic\n"
   "file, run it under mpirun with one rank per device; --check also runs the\n"
   "unpartitioned program on rank 0 (on the same kind of device) and reports the\n"
   "largest relative error; above --tolerance (default 1e-4; 1e-9 for a model whose\n"
   "parameters and inputs are all f64) the run exits 1. A NaN or Inf training loss stops\n"
   "the run with an error naming the step and the first value that held one, unless\n"
   "--allow-nonfinite (a forward program's outputs get a note instead). --profile prints\n"
   "the time per step of each kind of instruction. --device-kind cuda runs each rank's\n"
   "program on a GPU (rank i of a node on GPU i mod the GPUs there; NCCL when every rank\n"
   "has a GPU of its own, else collectives through host memory); --tf32 lets GEMMs round\n"
   "their inputs to TF32.\n"
   "--bisect (with or without --check) runs one step (the last of --steps N, default 1)\n"
   "keeping every value, compares each value of the partitioned program, put back\n"
   "together, with the one-device program's in program order, and names the first whose\n"
   "relative error ||a - b|| / ||b|| exceeds --tolerance (the same default); a mismatch\n"
   "is exit 1. --print-outputs prints each returned tensor whole after the run, one JSON\n"
   "object a line on stdout (the step lines go to stderr): {\"name\", \"shape\", \"dtype\",\n"
   "\"values\"} (NaN and infinities as the strings \"nan\", \"inf\", \"-inf\").\n"
   "Every command that reads a model fuses softmax(scale q k^T) v attention into one\n"
   "attention op (docs/execution.md, \"Fused attention\"); --no-fuse keeps the model as written.", NULL, 1},
  {"apply", cli_apply, 2, 2, "train mesh model no-fuse json strict lenient quiet bucket verbose",
   "carve apply MODEL.cir TACTICS.tac [--mesh ..] [--train OPT] [--verbose] [--json] [--strict] [--lenient] [--bucket SIZE]\n"
   "          [--model NAME] [--no-fuse] [--quiet]",
   "Apply the tactic file's schedule and print a summary: the mesh, the tactics applied\n"
   "and how many values each split, how many values of each kind are split, the\n"
   "conflicts, the memory the executor plans for one device, and the collectives of\n"
   "the lowered program by kind with their bytes per device. --verbose prints every\n"
   "value's sharding and local shape, each conflict (what was refused and why) and each\n"
   "collective instead; --json all of it. --strict makes a tactic's conflict an error."},
  {"explain", cli_explain, 3, 3, "train mesh model no-fuse strict lenient",
   "carve explain MODEL.cir TACTICS.tac VALUE [--train OPT] [--mesh ..] [--model NAME] [--no-fuse] [--strict] [--lenient]",
   "Why VALUE has its sharding: the chain of decisions from a tactic statement through\n"
   "the ops propagation went through, what kept it whole, and its conflicts."},
  {"simulate", cli_simulate, 1, 2, "train mesh model no-fuse json strict lenient device links compare sweep overlap tf32 quiet bucket test-unfused-elementwise",
   "carve simulate MODEL.cir [TACTICS.tac] [--device NAME|FILE] [--links AXIS=LINK,..] [--compare OTHER.tac]\n"
   "          [--sweep AXIS=LO..HI,..] [--overlap] [--tf32] [--json] [--strict] [--bucket SIZE]\n"
   "          [--train OPT] [--mesh ..] [--model NAME] [--no-fuse] [--lenient] [--quiet]",
   "Predict one device's memory (params, gradients, optimizer state, activations,\n"
   "collective buffers, peak) and step time (compute, each collective, the slowest\n"
   "instructions) on a device profile: profiles/NAME.profile (a100-40g, a100-80g,\n"
   "h100-sxm (the default), h200, tpu-v4, tpu-v5p), 'local' (what 'carve calibrate'\n"
   "measured here) or a file. Mesh axes map to the profile's links from the minor end (a\n"
   "node's worth on the first link) unless --links says otherwise. --compare shows two\n"
   "plans side by side; --sweep lists every mesh shape of the ranges (powers of two) or\n"
   "lists with its peak memory and step time, and names the fastest that fits. --overlap\n"
   "lets collectives run beside independent compute. Over the device's memory: a\n"
   "warning, an error with --strict."},
  {"calibrate", cli_calibrate, 0, 0, "out",
   "carve calibrate [-o FILE]",
   "Measure this machine into a device profile (under a minute): GEMM throughput at\n"
   "sizes 32..2048, memory bandwidth, the executor's cost per instruction, each\n"
   "kernel's cost per element at two sizes, and under mpirun each collective's latency\n"
   "and bandwidth between the ranks (every rank measures at once). Writes FILE, or\n"
   "~/.config/carve/local.profile, which 'carve simulate --device local' reads. Set\n"
   "OPENBLAS_NUM_THREADS as the runs to predict will have it.", NULL, 1},
  {"repl", cli_repl, 0, 2, "train mesh model device no-fuse strict lenient",
   "carve repl [MODEL.cir [TACTICS.tac]] [--train OPT] [--mesh ..] [--device PROFILE] [--model NAME] [--no-fuse]\n"
   "          [--strict] [--lenient]",
   "Explore shardings a line at a time: tactic statements and declarations apply at once\n"
   "with propagation and print what they split; 'show', 'explain', 'conflicts',\n"
   "'collectives' and 'cost' report on the state; 'undo' goes back any number of steps;\n"
   "'save FILE.tac' writes a tactic file that loads back to the same state. 'help' lists\n"
   "the commands. History in ~/.carve_history, Tab completes commands, value names (a\n"
   "glob lists its matches) and axes. Lines piped on stdin are read without a prompt;\n"
   "the exit status is 1 when a line ended in an error."},
  {"auto", cli_auto, 2, 2, "train mesh model no-fuse out device json strict lenient quiet",
   "carve auto MODEL.cir TACTICS.tac -o FOUND.tac [--device PROFILE] [--json] [--quiet] [--train OPT] [--mesh ..]\n"
   "          [--model NAME] [--no-fuse] [--strict] [--lenient]",
   "Run the schedule's auto tactics (tactic found = auto (axes = [..], objective = time|memory,\n"
   "memory_limit = 16GiB, budget = 2000 | 30s, seed = 0, over = [inputs, params, states, grads],\n"
   "values = [\"glob\", ..], device = PROFILE, links = \"..\", strategy = beam|greedy|mcts, beam = 8))\n"
   "and write FOUND.tac: the same file with each auto tactic replaced by the plain tactics it found,\n"
   "one per action (found_1, found_2, ...), with the predicted time and memory in comments.\n"
   "The written file is loaded back and checked to give exactly the found plan. --device\n"
   "costs the search on another profile. A progress line shows on a terminal for searches\n"
   "over a second (--quiet: none). Nothing fitting memory_limit (default: the device's\n"
   "memory) is an error that names the smallest footprint found and what fills it."},
  {"import", cli_import, 1, 1, "out model params-from-args tactics-out quiet no-fuse",
   "carve import PROGRAM.mlir -o MODEL.cir [--params-from-args 'GLOB,..'] [--tactics-out FILE.tac] [--model FUNC]\n"
   "            [--no-fuse] [--quiet]",
   "Read a StableHLO program (what jax.jit(f).lower(..).as_text(), jax.export or torch-xla\n"
   "print) and write it as a model file. The entry function is @main (or --model FUNC);\n"
   "private functions are inlined. Arguments are named from jax.arg_info or their loc\n"
   "names. Params: --params-from-args lists them by glob; else in a training step the\n"
   "arguments it returns new values of (and their optimizer state); else the arguments\n"
   "inside a pytree (params['w']); else float arguments of rank >= 1. The rest are inputs;\n"
   "elided constants (dense_resource) become params. --tactics-out writes the sdy.mesh and\n"
   "the arguments' sdy.sharding as a tactic file. carve's own composites (stablehlo.composite\n"
   "\"carve.NAME\", as export writes them) come back as its ops; --no-fuse reads their\n"
   "decompositions instead. Every other command also reads a .mlir directly."},
  {"export", cli_export, 1, 2, "train mesh model no-fuse out strict lenient quiet",
   "carve export MODEL [TACTICS.tac] -o PROGRAM.mlir [--train OPT] [--mesh ..] [--model NAME] [--no-fuse] [--strict]\n"
   "          [--lenient] [--quiet]",
   "Write the program (with --train the whole training step) as StableHLO text in the\n"
   "syntax JAX prints: a module with the tactic file's mesh as sdy.mesh, @main whose\n"
   "arguments are the inputs, parameters and optimizer state in order, each with its\n"
   "sdy.sharding after the tactics and loc(\"name\"), results with jax.result_info and\n"
   "their shardings. Every carve op becomes primitive stablehlo ops (softmax, layernorm,\n"
   "cross_entropy, attention and the gradients as their definitions); 'carve import'\n"
   "and every command read the file back."},
  {"lower", cli_lower, 1, 2, "train mesh model no-fuse rank strict lenient out keep-values test-drop-collective bucket",
   "carve lower MODEL.cir [TACTICS.tac] [--train OPT] [--rank R] [-o PROGRAM [--keep-values]] [--bucket SIZE]\n"
   "          [--mesh ..] [--model NAME] [--no-fuse] [--strict] [--lenient]",
   "Print the per-device program: buffers and one instruction a line. -o writes the\n"
   "program to a file that 'carve bisect' reads back (every rank's program: they\n"
   "differ only in which piece each rank holds); --keep-values keeps every value's\n"
   "buffer after a step, so that bisection can compare them all."},
  {"show", cli_show, 3, 3, "train mesh model no-fuse rank svg strict lenient",
   "carve show MODEL.cir TACTICS.tac VALUE [--rank R] [--svg FILE] [--train OPT] [--mesh ..] [--model NAME] [--no-fuse]\n"
   "          [--strict] [--lenient]",
   "Which device holds which block of VALUE: its global shape and sharding, then a grid\n"
   "(split on two dims: rows are the pieces of the first, columns those of the second) or\n"
   "a list of blocks with their index ranges and the devices holding each; devices are\n"
   "ranks (d3), row-major over the mesh axes. Partial sums are marked. --rank R shows\n"
   "only what rank R holds; --svg FILE also writes the picture as SVG."},
  {"diff", cli_diff, 3, 3, "train mesh model no-fuse json device links strict lenient",
   "carve diff MODEL.cir A.tac B.tac [--train OPT] [--device PROFILE] [--links AXIS=LINK,..] [--json] [--mesh ..]\n"
   "          [--model NAME] [--no-fuse] [--strict] [--lenient]",
   "What changes from plan A to plan B: the values whose sharding differs (names that\n"
   "differ only in their numbers, l0.attn.wq, l1.attn.wq, as one line l{i}.attn.wq when\n"
   "they differ alike), the collectives added and removed by kind with their bytes,\n"
   "memory per device by category and step time from the simulator (--device as for\n"
   "simulate, default h100-sxm), and the conflicts found in one plan and not the other."},
  {"bisect", cli_bisect, 2, 2, "params data steps tolerance json",
   "carve bisect A.prog B.prog [--steps N] [--tolerance X] [--params F] [--data F] [--json]",
   "Run two programs written by 'carve lower -o' (each on its own mesh, one thread a\n"
   "device in this process) for N steps (default 1), compare every value both keep at the\n"
   "last step, in A's program order, B being the reference, and name the first whose\n"
   "relative error exceeds --tolerance (default 1e-4): exit 1 when there is one, else 0."},
};

#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])
#define NOPTIONS (int)(sizeof options / sizeof options[0])


static void usage_all(FILE *f) {
  fputs("usage: carve COMMAND [ARGS] [OPTIONS]\n\ncommands:\n", f);
  for (int i = 0; i < NCOMMANDS; i++) fprintf(f, "  %s\n", commands[i].usage);
  fputs("\noptions common to commands that read a model:\n"
        "  --train 'sgd(lr = 0.01)' | 'adam(lr = 1e-3)' | 'adamw(lr = 3e-4)'   build the training\n"
        "                   step (sgd: momentum, weight_decay; adam, adamw: beta1, beta2, eps,\n"
        "                   weight_decay); add remat = cheap | full to recompute activations in the\n"
        "                   backward pass, or remat = \"l*.h.matmul\": cheap's, and the forward values\n"
        "                   those globs name; precision = bf16 | f16 computes the passes in that type\n"
        "                   from f32 parameters, gradients and optimizer state (f16 scales the loss:\n"
        "                   loss_scale = 1024 by default, a power of two)\n"
        "  --model NAME     pick a model from a file with several\n"
        "  --mesh 'batch=4, model=2'   override the tactic file's mesh\n"
        "\n'carve COMMAND --help' says more about one command.\n", f);
}

/* "options: --train --mesh ...": every option the command takes (but the
** tests' own --test-*), as man/carve.1 lists them (tests/e2e/man.sh). */
static void options_line(const command *c, FILE *f) {
  int col = fprintf(f, "\noptions:") - 1;
  for (const char *p = c->options; *p;) {
    size_t n = strcspn(p, " ");
    if (n && strncmp(p, "test-", 5)) {
      const char *pre = n == 3 && !strncmp(p, "out", 3) ? "-o, " : "";   /* the one short option */
      if (col + 3 + (int)(strlen(pre) + n) > 80) col = fprintf(f, "\n        ");
      col += fprintf(f, " %s--%.*s", pre, (int)n, p);
    }
    p += n;
    while (*p == ' ') p++;
  }
  fputc('\n', f);
}

static int usage_error(const char *cmd, const char *fmt, const char *arg) {
  fprintf(stderr, "carve: error: ");
  fprintf(stderr, fmt, arg);
  if (cmd) fprintf(stderr, " (see 'carve %s --help')\n", cmd);
  else fprintf(stderr, " (see 'carve --help')\n");
  return 2;
}

static int takes(const command *c, const char *opt) {
  size_t n = strlen(opt);
  for (const char *p = c->options; (p = strstr(p, opt)); p += n)
    if ((p == c->options || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return 1;
  return 0;
}

/* "unknown option '--stesp'; did you mean '--steps'?": the closest of the
** options the command takes */
static int unknown_option(const command *c, const char *arg, const char *key) {
  arena a;
  arena_init(&a);
  diag_suggest sg;
  diag_suggest_init(&sg, key);
  for (int i = 0; i < NOPTIONS; i++)
    if (takes(c, options[i].name) && strncmp(options[i].name, "test-", 5)) diag_suggest_add(&sg, options[i].name);
  diag_suggest_add(&sg, "help");
  const char *more = sg.best ? arena_printf(&a, "; did you mean '%s%s'?", strcmp(sg.best, "out") ? "--" : "", strcmp(sg.best, "out") ? sg.best : "-o") : "";
  int rc = usage_error(c->name, "%s", arena_printf(&a, "unknown option '%s'%s", arg, more));
  arena_free(&a);
  return rc;
}

static const option *find_option(const char *name, size_t n) {
  for (int i = 0; i < NOPTIONS; i++)
    if (strlen(options[i].name) == n && !strncmp(options[i].name, name, n)) return &options[i];
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) { usage_all(stderr); return 2; }
  const char *name = argv[1];
  if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) { usage_all(stdout); return 0; }
  if (!strcmp(name, "--version")) {       /* and where the shipped files are looked for, first first (util/datadir.h) */
    printf("carve 0.1.0\nstdlib tactics:  %s\ndevice profiles: %s\n", datadir_path(DATADIR_STDLIB), datadir_path(DATADIR_PROFILES));
    return 0;
  }
  const command *c = NULL;
  for (int i = 0; i < NCOMMANDS; i++) if (!strcmp(commands[i].name, name)) c = &commands[i];
  if (!c) {
    arena a;
    arena_init(&a);
    diag_suggest sg;
    diag_suggest_init(&sg, name);
    for (int i = 0; i < NCOMMANDS; i++) diag_suggest_add(&sg, commands[i].name);
    int rc = usage_error(NULL, "%s", arena_printf(&a, "unknown command '%s'%s", name, diag_suggest_text(&a, &sg)));
    arena_free(&a);
    return rc;
  }
  cli_opts o;
  memset(&o, 0, sizeof o);
  o.cmd = c->name;
  o.rank = -1;
  o.steps = -1;
  unsigned char seen[NOPTIONS] = {0};       /* an option given twice is a mistake, not "the last wins" */
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf("usage: %s\n\n%s\n", c->usage, c->help);
      options_line(c, stdout);
      if (c->more_help) c->more_help(stdout);
      return 0;
    }
    if (!strcmp(a, "-o")) a = "--out";      /* the one short option */
    if (a[0] == '-' && a[1] == '-') {
      const char *eq = strchr(a, '=');
      size_t kl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
      const option *op = find_option(a + 2, kl);
      char key[64];
      snprintf(key, sizeof key, "%.*s", (int)(kl < 60 ? kl : 60), a + 2);
      if (!op) return unknown_option(c, a, key);
      if (!takes(c, op->name)) return usage_error(c->name, "option '%s' does not apply to this command", a);
      if (seen[op - options]++) return usage_error(c->name, "option '--%s' is given twice; give it once", key);
      char *field = (char *)&o + op->at;
      if (op->kind == OPT_FLAG) {
        if (eq) return usage_error(c->name, "option '--%s' takes no value", key);
        *(int *)field = 1;
        continue;
      }
      const char *val;
      if (eq) val = eq + 1;
      else if (i + 1 < argc) val = argv[++i];
      else return usage_error(c->name, "option '%s' needs a value", a);
      if (op->kind == OPT_TEXT) { *(const char **)field = val; continue; }
      char *end;
      errno = 0;
      long x = strtol(val, &end, 10);
      if (*val == 0 || *end || errno || x < 0 || x > 100000000) return usage_error(c->name, "'%s' is not a valid count", val);
      if (op->at == offsetof(cli_opts, steps)) o.steps = x; else *(int *)field = (int)x;
      continue;
    }
    if (o.nfiles == c->maxfiles) return usage_error(c->name, "unexpected argument '%s'", a);
    o.files[o.nfiles++] = a;
  }
  if (o.nfiles < c->minfiles) {
    static const char *need[] = {"", "a model file", "a model file and a tactic file", "a model file, a tactic file and a value name"};
    const char *what = !strcmp(c->name, "diff") ? "a model file and two tactic files"
                     : !strcmp(c->name, "bisect") ? "two program files (carve lower -o)" : need[c->minfiles];
    fprintf(stderr, "carve: error: %s needs %s: %s (see 'carve %s --help')\n", c->name, what, c->usage, c->name);
    return 2;
  }
  char err[1024];
  if (cli_check_order(&o, err, sizeof err) < 0) {   /* carve apply X.tac X.cir: the model comes first */
    fprintf(stderr, "carve: error: %s (see 'carve %s --help')\n", err, c->name);
    return 2;
  }
  if (!c->mpi && cli_check_outputs(&o, err, sizeof err) < 0) {   /* before the work, not after */
    fprintf(stderr, "carve: error: %s\n", err);
    return 1;
  }
  return c->run(&o);
}

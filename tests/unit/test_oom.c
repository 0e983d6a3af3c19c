/*
** test_oom.c: allocation-failure injection (issue 11). A counting
** allocator (malloc, calloc, realloc and free of this test binary, over
** glibc's own) fails the Nth allocation of parsing, building, autodiff,
** tactics, propagation and lowering, for every N, on the examples. Each
** run must end one of three ways: the whole pipeline done with every
** allocation given back; a located error (Lua, for one, reports its out
** of memory as a tactic error) with every allocation given back; or carve's
** one line "carve: error: out of memory" and exit 1 (mem.h: the one
** condition carve does not report through diag). A crash, a silent
** failure or a leak is a failure of the test.
** Not built under the sanitizers: they replace malloc themselves.
*/
#include "harness.h"
#include "interp/tactic/tactic.h"
#include "interp/train/train.h"

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

/* the counter: state of this test process alone (each N runs in a child) */
static long fail_at = -1, count, live;

void *malloc(size_t n) {
  if (fail_at >= 0 && ++count == fail_at) return NULL;
  void *p = __libc_malloc(n);
  if (p && fail_at >= 0) live++;
  return p;
}
void *calloc(size_t n, size_t m) {
  if (fail_at >= 0 && ++count == fail_at) return NULL;
  void *p = __libc_calloc(n, m);
  if (p && fail_at >= 0) live++;
  return p;
}
void *realloc(void *q, size_t n) {
  if (fail_at >= 0 && ++count == fail_at) return NULL;
  void *p = __libc_realloc(q, n);
  if (p && !q && fail_at >= 0) live++;
  return p;
}
void free(void *p) {
  if (p && fail_at >= 0) live--;
  __libc_free(p);
}

/* exit codes of a child */
enum { DONE = 0, OOM = 1, REPORTED = 2, LEAKED = 3, SILENT = 4, UNPLACED = 5 };

static int pipeline(const char *model, const char *tactics, const char *train) {
  arena m;
  arena_init(&m);
  diag d;
  diag_init(&d);
  ir_graph *g = NULL;
  sh_plan *p = NULL;
  int ok = 0;
  cir_file *f = cir_parse(&m, &d, diag_src_string(&m, "m.cir", model, strlen(model)));
  if (f && (g = build_model(f, NULL, &d))) {
    train_spec t;
    int good = !train || (train_parse(&m, train, &t, &d) == 0 && train_build(g, &t, &d) == 0);
    if (good && tactics) {
      tac_file *tf = tac_parse(&m, &d, diag_src_string(&m, "t.tac", tactics, strlen(tactics)));
      tactic_opts o = {0};
      if (tf) p = tactic_apply(g, tf, &o, &m, &d);
      good = p != NULL;
    }
    if (good) {
      ir_link(g);
      rt_prog prog;
      lower_result lr;
      if (lower_program(g, p, &prog, &lr, &d) == 0) { ok = 1; lower_result_free(&lr); rt_prog_free(&prog); }
    }
  }
  int rc = DONE;
  if (!ok && getenv("CARVE_OOM_VERBOSE")) fprintf(stderr, "%.200s\n", diag_text(&d));
  if (!ok) {
    const char *t = diag_text(&d);
    rc = REPORTED;
    if (!d.nerrors || !t[0]) rc = SILENT;
    else if (strncmp(t, "m.cir:", 6) && strncmp(t, "t.tac:", 6) && strncmp(t, "--train:", 8) && strncmp(t, "carve: error:", 13) &&
             !strstr(t, "stdlib-tactics/")) rc = UNPLACED;
  }
  shard_free(p);
  ir_graph_free(g);
  diag_free(&d);
  arena_free(&m);
  return rc;
}

/* Fail allocation N, N + stride, ... until the pipeline no longer reaches N. */
static void every_n(const char *model_file, const char *tactic_file, const char *train, long stride) {
  char *model = hx_slurp(model_file), *tac = tactic_file ? hx_slurp(tactic_file) : NULL;
  long runs = 0, ooms = 0, errors = 0;
  for (long n = 1;; n += stride) {
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
      count = 0;
      live = 0;
      fail_at = n;
      if (!getenv("CARVE_OOM_VERBOSE")) freopen("/dev/null", "w", stderr);   /* the out-of-memory lines */
      int rc = pipeline(model, tac, train);
      long reached = count, left = live;
      fail_at = -1;
      if ((rc == DONE || rc == REPORTED) && left) rc = LEAKED;
      if (rc == DONE && reached < n) _exit(100);       /* allocation n never came: done */
      _exit(rc);
    }
    int st;
    cr_assert(waitpid(pid, &st, 0) == pid);
    cr_assert(WIFEXITED(st), "%s: failing allocation %ld killed the pipeline (signal %d)", model_file, n,
              WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    int code = WEXITSTATUS(st);
    if (code == 100) break;
    runs++;
    cr_assert(code != LEAKED, "%s: failing allocation %ld: %ld allocations were not given back", model_file, n, (long)0);
    cr_assert(code != SILENT, "%s: failing allocation %ld: a failure without a message", model_file, n);
    cr_assert(code != UNPLACED, "%s: failing allocation %ld: an error that names no place", model_file, n);
    cr_assert(code == OOM || code == REPORTED || code == DONE, "%s: failing allocation %ld: exit %d", model_file, n, code);
    ooms += code == OOM;
    errors += code == REPORTED;
  }
  cr_log_info("%s%s%s: %ld allocations failed one at a time: %ld out-of-memory exits, %ld reported errors",
              model_file, tactic_file ? " + " : "", tactic_file ? tactic_file : "", runs, ooms, errors);
  cr_assert(runs > 10, "the pipeline made only %ld allocations", runs);
  free(model);
  free(tac);
}

Test(oom, mlp_forward_every_allocation, .timeout = 900) { every_n("examples/mlp_small.cir", NULL, NULL, 1); }
Test(oom, mlp_adam_batch_every_allocation, .timeout = 900) {
  every_n("examples/mlp_small.cir", "examples/mlp_bp.tac", "adam(lr = 1e-3)", 1);
}
Test(oom, mlp_megatron_lua_every_allocation, .timeout = 900) {
  every_n("examples/mlp_small.cir", "examples/mlp_mp.tac", "sgd(lr = 0.1)", 1);
}
/* the small GPT makes many more allocations: every 7th */
Test(oom, gpt_bp_mp_every_7th_allocation, .timeout = 900) {
  every_n("examples/gpt2_small.cir", "examples/gpt2_small_bp_mp.tac", "adam(lr = 1e-3)", 7);
}

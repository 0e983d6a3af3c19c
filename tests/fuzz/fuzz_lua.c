/* fuzz_lua.c: a Lua tactic script (interp/tactic/lua.c), as `carve apply`
** runs one: the input is t.lua, written beside a tactic file that runs it
** on examples/mlp_small.cir (trained with Adam: grads and state to act on)
** over `mesh model = 2`. The script plans or fails with a located error;
** the sandbox's limits hold (scripts run under smaller limits than carve's
** default, so that a runaway loop costs a few milliseconds: a run
** near libFuzzer's -timeout means work the instruction limit does not count).
** run.sh closes its stderr (what scripts print): run a finding's input by
** hand to read the message. */
#include "fuzz.h"
#include "interp/front/build.h"
#include "interp/tactic/tactic.h"
#include "interp/train/train.h"
#include "lang/cir.h"

#include <unistd.h>

#ifndef SRCDIR
#define SRCDIR "."
#endif

#define TAC "mesh model = 2\ntactic t = lua \"t.lua\" (axis = model)\nschedule t\n"

static char dir[64];                    /* this process's folder: t.lua is written there */

static void gone(void) {
  char p[96];
  snprintf(p, sizeof p, "%s/t.lua", dir);
  unlink(p);
  rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "/tmp/fuzz_lua_XXXXXX");
    if (!mkdtemp(dir)) abort();
    atexit(gone);
  }
  char script[96], tname[96];
  snprintf(script, sizeof script, "%s/t.lua", dir);
  snprintf(tname, sizeof tname, "%s/t.tac", dir);
  FILE *f = fopen(script, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) abort();
  arena a;
  arena_init(&a);
  diag d;
  diag_init(&d);
  const diag_src *m = diag_load_file(&a, &d, SRCDIR "/examples/mlp_small.cir");
  cir_file *cf = m ? cir_parse(&a, &d, m) : NULL;
  ir_graph *g = cf ? build_model(cf, NULL, &d) : NULL;
  train_spec ts;
  fuzz_check(g && train_parse(&a, "adam(lr = 1e-3)", &ts, &d) == 0 && train_build(g, &ts, &d) == 0, "the model does not build", &d);
  diag_clear(&d);
  tac_file *tf = tac_parse(&a, &d, diag_src_string(&a, tname, TAC, strlen(TAC)));
  fuzz_check(tf != NULL, "the tactic file does not parse", &d);
  tactic_opts o = {0};
  o.stdlib_dir = SRCDIR "/stdlib-tactics";
  o.profile_dir = SRCDIR "/profiles";
  o.lua_steps = 2000000;               /* 0.25% of carve's: about 10 ms of Lua (the stdlib tactics take 10^4-10^5 here) */
  o.lua_memory = (size_t)64 << 20;
  sh_plan *p = tactic_apply(g, tf, &o, &a, &d);
  if (!p) fuzz_failed_saying(&d, memmem(data, size, "internal error", 14) != NULL);   /* (ctx:error("internal error ..")) */
  shard_free(p);
  ir_graph_free(g);
  diag_free(&d);
  arena_free(&a);
  return 0;
}

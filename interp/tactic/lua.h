/*
** lua.h: Lua tactics. A script (`tactic x = lua "file.lua" (...)`, or a
** `use "name"` that finds name.lua) returns function(ctx, args); lapi_run
** runs it in a sandbox against the plan of a tactic_ctx. ctx reads the
** program and acts on the plan (shard, replicate, each followed by
** propagation); args holds the tactic file's arguments. docs/lua.md "The
** API" is the reference of the API.
**
** The sandbox: base (without load, loadfile, dofile; collectgarbage only
** counts and collects; print writes to stderr), table, string (without
** dump), math (seeded, so a tactic plans alike every run), utf8; no os,
** io, package/require, debug or coroutine; setmetatable refuses __gc
** (finalisers run with hooks off). A memory limit through the allocator
** and an instruction limit through a count hook, which ctx calls count
** against by their work; a limit reached stays reached. Every Lua
** error becomes one carve error at the script's file:line, with notes
** naming the tactic and giving the Lua traceback.
*/
#ifndef interp_tactic_lua_h
#define interp_tactic_lua_h

#include "interp/tactic/tactic.h"

/* What one script may hold, and how many Lua instructions it may run
** (tactic_opts.lua_memory and lua_steps override them). */
#ifndef LAPI_MEMORY
#define LAPI_MEMORY ((size_t)256 << 20)
#endif
#ifndef LAPI_STEPS
#define LAPI_STEPS 250000000LL
#endif

/* One argument of the tactic: the key, its value, and where the value is
** written (messages about it point there). */
typedef struct lapi_arg {
  const char *key;
  const tac_value *val;
  loc at;
} lapi_arg;

typedef struct lapi_tactic {
  const char *name;        /* the tactic's name in the schedule (ctx.tactic) */
  const char *path;        /* the script */
  loc decl;                /* its declaration: `tactic x = lua ...` or the `use` line */
  loc path_at;             /* where the script's path is written */
  const lapi_arg *args;    /* in binding order: a later one with the same key wins */
  int nargs;
} lapi_tactic;

/* Run the script's function against c->p; decisions record the tactic's
** name (c->p->tactic) and the script's line of each call. 0, or -1 with
** the error in c->d. */
int lapi_run(tactic_ctx *c, const lapi_tactic *t);

#endif

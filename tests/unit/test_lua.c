/*
** test_lua.c: Lua tactics. The ctx API on small models (scripts check
** what they read with assert; the plan is checked from C after), the
** sandbox (every escape a clean located error, nothing run), the
** mapping of Lua errors to carve's, and the stdlib's Lua tactics against
** the golden plans of the C tactics they replaced (tests/data/golden_plans,
** see its README.md for how they were made) and on a renamed model.
*/
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <sys/stat.h>
#include <unistd.h>

#include "interp/front/build.h"
#include "interp/report/report.h"
#include "interp/tactic/lua.h"
#include "interp/train/train.h"
#include "lang/cir.h"
#include "plans.h"

/* ---- running a script ---- */

typedef struct lt {
  arena mem;
  diag d;
  ir_graph *g;
  sh_plan *p;
  char dir[64];          /* the tactic file and the script live here */
  int rc;
} lt;

#define MLP "model mlp {\n input x : f32[16, 8]\n input y : f32[16, 8]\n param w1 : f32[8, 32]\n param w2 : f32[32, 8]\n" \
            " param b1 : f32[32]\n h = gelu(add(matmul(x, w1), b1))\n out = matmul(h, w2)\n loss = mean(mul(sub(out, y), sub(out, y)))\n" \
            " return loss\n}\n"

static void put(const char *dir, const char *name, const char *text) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  cr_assert(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

/* model: text, or a path under the source tree ending in .cir; tac: the
** tactic file (t.tac beside the script t.lua). */
static int lt_run_opts(lt *t, const char *model, const char *train, const char *tac, const char *script, const tactic_opts *opts) {
  memset(t, 0, sizeof *t);
  arena_init(&t->mem);
  diag_init(&t->d);
  snprintf(t->dir, sizeof t->dir, "/tmp/carve_lua_XXXXXX");
  cr_assert(mkdtemp(t->dir), "mkdtemp");
  if (script) put(t->dir, "t.lua", script);
  const diag_src *src;
  if (strstr(model, ".cir") && !strchr(model, '\n')) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", SRCDIR, model);
    src = diag_load_file(&t->mem, &t->d, path);
  } else {
    src = diag_src_string(&t->mem, "m.cir", model, strlen(model));
  }
  cr_assert(src);
  cir_file *f = cir_parse(&t->mem, &t->d, src);
  cr_assert(f, "%s", diag_text(&t->d));
  t->g = build_model(f, NULL, &t->d);
  cr_assert(t->g, "%s", diag_text(&t->d));
  if (train) {
    train_spec ts;
    cr_assert(train_parse(&t->mem, train, &ts, &t->d) == 0 && train_build(t->g, &ts, &t->d) == 0, "%s", diag_text(&t->d));
  }
  char tname[128];
  snprintf(tname, sizeof tname, "%s/t.tac", t->dir);
  tac_file *tf = tac_parse(&t->mem, &t->d, diag_src_string(&t->mem, tname, tac, strlen(tac)));
  cr_assert(tf, "%s", diag_text(&t->d));
  tactic_opts o = opts ? *opts : (tactic_opts){0};
  t->p = tactic_apply(t->g, tf, &o, &t->mem, &t->d);
  t->rc = t->p ? 0 : -1;
  return t->rc;
}

static int lt_run(lt *t, const char *model, const char *train, const char *tac, const char *script) {
  return lt_run_opts(t, model, train, tac, script, NULL);
}

#define TAC2 "mesh model = 2\ntactic custom = lua \"t.lua\" (axis = model)\nschedule custom\n"

static void lt_free(lt *t) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", t->dir);
  if (system(cmd)) {}
  shard_free(t->p);
  ir_graph_free(t->g);
  diag_free(&t->d);
  arena_free(&t->mem);
}

static const char *lay(lt *t, const char *name) {
  ir_value *v = ir_lookup(t->g, name);
  cr_assert(v, "no value %s", name);
  return shard_str(t->p, v->id, &t->mem);
}

/* the message text must hold want, and its first line begin with "DIR/t.lua:" + where */
static void expect_error(lt *t, const char *where, const char *want) {
  const char *text = diag_text(&t->d);
  cr_assert(t->rc < 0, "accepted; diagnostics:\n%s", text);
  char first[256];     /* where "t.lua:3:" leaves the column open */
  snprintf(first, sizeof first, "%s/%s%s", t->dir, where, where[strlen(where) - 1] == ':' ? "" : ": error: ");
  cr_assert(!strncmp(text, first, strlen(first)), "wanted the first line to begin with '%s' in:\n%s", first, text);
  cr_assert(strstr(text, want), "wanted '%s' in:\n%s", want, text);
}

/* script on the MLP (o may be NULL) fails with want, its first line at where */
static void script_fails(const char *script, const tactic_opts *o, const char *where, const char *want) {
  lt t;
  lt_run_opts(&t, MLP, NULL, TAC2, script, o);
  expect_error(&t, where, want);
  lt_free(&t);
}

/* ---- the API: reading the program ---- */

Test(api, values_by_kind_and_glob) {
  lt t;
  const char *s =
    "return function(ctx, args)\n"
    "  local function names(vs) local r = {} for i, v in ipairs(vs) do r[i] = v.name end return table.concat(r, ' ') end\n"
    "  assert(names(ctx:values('param')) == 'w1 w2 b1', names(ctx:values('param')))\n"
    "  assert(names(ctx:values('params')) == 'w1 w2 b1')\n"
    "  assert(names(ctx:values('input')) == 'x y')\n"
    "  assert(names(ctx:values('param', 'w*')) == 'w1 w2')\n"
    "  assert(names(ctx:values('grad')) == 'grad.w2 grad.b1 grad.w1', names(ctx:values('grad')))\n"
    "  assert(names(ctx:values('state', 'adam.m.*')) == 'adam.m.w1 adam.m.w2 adam.m.b1', names(ctx:values('state', 'adam.m.*')))\n"
    "  assert(names(ctx:values('value', 'h*')) == 'h.matmul h.add h', names(ctx:values('value', 'h*')))\n"
    "  assert(#ctx:values('param', 'nothing') == 0)\n"
    "  for _, v in ipairs(ctx:values()) do assert(v.kind ~= 'constant') end\n"
    "  assert(#ctx:values() == #ctx:values('value'))\n"
    "  assert(ctx:values('param')[1] == ctx:value('w1'), 'the same table each time')\n"
    "  assert(ctx:value('nope') == nil)\n"
    "  local ok, err = pcall(ctx.values, ctx, 'weights')\n"
    "  assert(not ok and err:find(\"unknown kind 'weights'\"), err)\n"
    "end\n";
  cr_assert(lt_run(&t, MLP, "adam(lr = 1e-3)", TAC2, s) == 0, "%s", diag_text(&t.d));
  lt_free(&t);
}

Test(api, value_tables) {
  lt t;
  const char *s =
    "return function(ctx, args)\n"
    "  local w1 = ctx:value('w1')\n"
    "  assert(w1.name == 'w1' and w1.kind == 'param' and w1.dtype == 'f32')\n"
    "  assert(#w1.shape == 2 and w1.shape[1] == 8 and w1.shape[2] == 32)\n"
    "  assert(w1.producer == nil)\n"
    "  assert(#w1.users == 2 and w1.users[1].kind == 'matmul' and w1.users[2].results[1].name == 'new.w1', w1.users[2].results[1].name)\n"
    "  local mm = w1.users[1]\n"
    "  assert(mm.operands[1] == ctx:value('x') and mm.operands[2] == w1)\n"
    "  assert(mm.results[1] == ctx:value('h.matmul'))\n"
    "  assert(ctx:value('h.matmul').producer == mm, 'op tables are cached too')\n"
    "  assert(ctx:value('grad.w1').kind == 'grad' and ctx:value('adam.v.w2').kind == 'state')\n"
    "  assert(ctx:value('x').kind == 'input' and ctx:value('h').kind == 'value')\n"
    "  local seen = {}\n"
    "  seen[ctx:value('h')] = true\n"
    "  assert(seen[ctx:value('h')], 'values work as keys')\n"
    "  local loss = ctx:outputs()[1]\n"
    "  assert(loss.name == 'loss' and #loss.shape == 0)\n"
    "  local scale = loss.producer.operands[1].producer\n"
    "  assert(scale.kind == 'mul')\n"
    "  local sub = ctx:value('out').users[1]\n"
    "  assert(sub.kind == 'sub')\n"
    "  assert(tostring(w1) == \"value 'w1'\" and tostring(mm) == \"op matmul -> 'h.matmul'\", tostring(mm))\n"
    "end\n";
  cr_assert(lt_run(&t, MLP, "adam(lr = 1e-3)", TAC2, s) == 0, "%s", diag_text(&t.d));
  lt_free(&t);
}

Test(api, fields_a_script_replaces_mislead_only_the_script) {
  /* value and op tables are the script's to write in: carve knows which
  ** value or op a table is by the table (print(op) after op.results = 5
  ** segfaulted), and the lazy partial list by a checked id */
  lt t;
  const char *s =
    "return function(ctx, args)\n"
    "  local h = ctx:value('h')\n"
    "  local op = h.producer\n"
    "  op.results = 5; op.kind = {}; op.operands = 'x'\n"
    "  assert(tostring(op) == \"op gelu -> 'h'\", tostring(op))\n"
    "  print(op)\n"
    "  h.name = nil; h.id = 'x'; h.producer = 7\n"
    "  assert(tostring(h) == \"value 'h'\", tostring(h))\n"
    "  assert(ctx:factors(op).kind[1] == 'pass')\n"
    "  local _, partial = ctx:sharding(h)\n"
    "  assert(getmetatable(partial) == 'carve.partial')\n"
    "  partial[next(partial)] = 1e9\n"
    "  assert(#partial == 0)\n"
    "  ctx:shard(h, 1, args.axis)\n"
    "end\n";
  cr_assert(lt_run(&t, MLP, NULL, TAC2, s) == 0, "%s", diag_text(&t.d));
  cr_assert_str_eq(lay(&t, "h"), "[-, model]");
  lt_free(&t);
}

Test(api, op_kinds_attrs_and_spec) {
  lt t;
  const char *s =
    "return function(ctx, args)\n"
    "  local q = ctx:value('l0.q').producer\n"
    "  assert(q.kind == 'einsum' and q.spec == 'bsd,dhk->bhsk' and q.attrs.spec == 'bsd,dhk->bhsk')\n"
    "  local p = ctx:value('l0.p').producer\n"
    "  assert(p.kind == 'softmax' and p.attrs.dim == 3, p.attrs.dim)\n"
    "  assert(p.operands[1].producer.kind == 'causal_mask')\n"
    "  local a = ctx:value('l0.a').producer\n"
    "  assert(a.kind == 'layernorm' and a.attrs.dim == 2 and math.abs(a.attrs.eps - 1e-5) < 1e-12)\n"
    "  assert(#a.operands == 3 and a.operands[2].name == 'l0.ln1.g')\n"
    "  local emb = ctx:value('x0').producer.operands[1].producer\n"
    "  assert(emb.kind == 'embedding' and emb.spec == nil)\n"
    "  local s = ctx:value('l0.s').producer\n"
    "  assert(s.kind == 'mul' and s.operands[2].kind == 'constant' and s.operands[2].value == 0.25)\n"
    "  assert(ctx:value('loss').producer.kind == 'cross_entropy')\n"
    "  assert(ctx:value('l0.h').producer.kind == 'gelu_tanh')\n"
    "end\n";
  cr_assert(lt_run(&t, "examples/gpt2_small.cir", NULL, TAC2, s) == 0, "%s", diag_text(&t.d));
  lt_free(&t);
  s = "return function(ctx, args)\n"
      "  local r = ctx:value('q').producer\n"
      "  assert(r.kind == 'transpose' and table.concat(r.attrs.perm, ',') == '0,2,1,3')\n"
      "  local rs = r.operands[1].producer\n"
      "  assert(rs.kind == 'reshape' and table.concat(rs.attrs.shape, ',') == '4,16,4,8')\n"
      "  assert(rs.operands[1].producer.kind == 'matmul')\n"
      "end\n";
  cr_assert(lt_run(&t, "tests/data/attn_reshape.cir", NULL, TAC2, s) == 0, "%s", diag_text(&t.d));
  lt_free(&t);
  s = "return function(ctx, args)\n"
      "  local m = ctx:value('m').producer\n"
      "  assert(m.kind == 'mean' and table.concat(m.attrs.dims, ',') == '1' and m.attrs.keepdims == true)\n"
      "  local sl = ctx:value('s').producer\n"
      "  assert(sl.kind == 'slice' and sl.attrs.dim == 1 and sl.attrs.start == 2 and sl.attrs['end'] == 5)\n"
      "  local c = ctx:value('c').producer\n"
      "  assert(c.kind == 'concat' and c.attrs.dim == 0 and #c.operands == 2)\n"
      "end\n";
  cr_assert(lt_run(&t, "model m {\n input a : f32[4, 8]\n m = mean(a, dims = [1], keepdims = true)\n s = slice(a, 1, 2, 5)\n"
                   " c = concat([a, a], 0)\n return m, s, c\n}\n", NULL, TAC2, s) == 0, "%s", diag_text(&t.d));
  lt_free(&t);
}

Test(api, factors) {
  lt t;
  const char *s =
    "return function(ctx, args)\n"
    "  local f = ctx:factors(ctx:value('h.matmul').producer)\n"
    "  assert(table.concat(f.kind, ',') == 'pass,contract,pass', table.concat(f.kind, ','))\n"
    "  assert(f.operands[1][2] == f.operands[2][1], 'the contracted dims share a factor')\n"
    "  assert(f.kind[f.operands[1][2]] == 'contract')\n"
    "  assert(f.result[1] == f.operands[1][1] and f.result[2] == f.operands[2][2])\n"
    "  local g = ctx:factors(ctx:value('h.add').producer)\n"
    "  assert(#g.operands == 2 and g.operands[2][1] == g.result[2])\n"
    "  local ok, err = pcall(ctx.factors, ctx, ctx:value('w1'))\n"
    "  assert(not ok and err:find('must be an op'), err)\n"
    "end\n";
  cr_assert(lt_run(&t, MLP, NULL, TAC2, s) == 0, "%s", diag_text(&t.d));
  lt_free(&t);
}

Test(api, mesh_and_tactic_fields) {
  lt t;
  const char *s =
    "return function(ctx, args)\n"
    "  local sizes, names = ctx:mesh()\n"
    "  assert(sizes.batch == 4 and sizes.model == 2 and #names == 2 and names[1] == 'batch' and names[2] == 'model')\n"
    "  assert(ctx.tactic == 'custom' and ctx.train == 'sgd')\n"
    "end\n";
  cr_assert(lt_run(&t, MLP, "sgd(lr = 0.1)", "mesh batch = 4, model = 2\ntactic custom = lua \"t.lua\"\nschedule custom\n", s) == 0, "%s", diag_text(&t.d));
  lt_free(&t);
  s = "return function(ctx) assert(ctx.train == nil) end\n";
  cr_assert(lt_run(&t, MLP, NULL, TAC2, s) == 0, "%s", diag_text(&t.d));
  lt_free(&t);
}

Test(api, args_of_every_kind) {
  lt t;
  const char *tac = "mesh model = 2\n"
                    "tactic custom = lua \"t.lua\" (axis = model, name = \"a string\", n = 3, neg = -2, f = 2.5, mem = 16GiB,\n"
                    "                               list = [1, [2, x], \"s\"], r = 1..64)\n"
                    "schedule custom\n";
  const char *s =
    "return function(ctx, args)\n"
    "  assert(args.axis == 'model' and args.name == 'a string')\n"
    "  assert(math.type(args.n) == 'integer' and args.n == 3 and args.neg == -2)\n"
    "  assert(math.type(args.f) == 'float' and args.f == 2.5)\n"
    "  assert(math.type(args.mem) == 'integer' and args.mem == 16 * 1024 * 1024 * 1024, args.mem)\n"
    "  assert(#args.list == 3 and args.list[1] == 1 and args.list[2][1] == 2 and args.list[2][2] == 'x' and args.list[3] == 's')\n"
    "  assert(args.r.lo == 1 and args.r.hi == 64)\n"
    "  local n = 0 for _ in pairs(args) do n = n + 1 end\n"
    "  assert(n == 8, n)\n"
    "end\n";
  cr_assert(lt_run(&t, MLP, NULL, tac, s) == 0, "%s", diag_text(&t.d));
  lt_free(&t);
  /* a use line gives its arguments */
  const char *used = "mesh model = 2\nuse \"t.lua\" as mine (axis = model, k = 1)\nschedule mine\n";
  s = "return function(ctx, args) assert(ctx.tactic == 'mine' and args.axis == 'model' and args.k == 1) end\n";
  cr_assert(lt_run(&t, MLP, NULL, used, s) == 0, "%s", diag_text(&t.d));
  lt_free(&t);
}

/* ---- the API: actions ---- */

Test(api, shard_propagates_before_it_returns) {
  lt t;
  const char *s =
    "return function(ctx, args)\n"
    "  local dims = ctx:sharding('h')\n"
    "  assert(#dims == 2 and #dims[1] == 0 and #dims[2] == 0)\n"
    "  assert(ctx:shard('w1', 1, args.axis) == true)\n"
    "  dims = ctx:sharding(ctx:value('h'))\n"
    "  assert(dims[2][1] == 'model', 'propagation is visible at once')\n"
    "  assert((ctx:sharding('w2'))[1][1] == 'model', 'the row-parallel partner')\n"
    "  assert((ctx:sharding('b1'))[1][1] == 'model')\n"
    "  local ok, msg = ctx:shard('w1', 0, 'model')\n"
    "  assert(ok == false and msg == \"split dim 0 of 'w1' on 'model' refused: 'w1' already uses that axis on another dim\", msg)\n"
    "  assert(ctx:shard('w1', -1, 'model') == true, 'restating a split that holds does nothing')\n"
    "  ok, msg = ctx:replicate('h', 'model')\n"
    "  assert(ok == false and msg == \"replicate 'h' on 'model' refused: it is already split on 'model' (dim 1)\", msg)\n"
    "end\n";
  cr_assert(lt_run(&t, MLP, "sgd(lr = 0.1)", TAC2, s) == 0, "%s", diag_text(&t.d));
  cr_assert_str_eq(lay(&t, "w1"), "[-, model]");
  cr_assert_str_eq(lay(&t, "w2"), "[model, -]");
  cr_assert_str_eq(lay(&t, "grad.w1"), "[-, model]");
  int tactic_conflicts = 0;
  for (int i = 0; i < t.p->ncon; i++) tactic_conflicts += t.p->con[i].from_tactic;
  cr_assert_eq(tactic_conflicts, 2, "the refusals are recorded as conflicts (once per value and axis)");
  lt_free(&t);
}

/* ZeRO's split: a parameter's pieces are kept and updated there, every
** other op reads it gathered, so nothing downstream is split */
Test(api, a_storage_split_stays_with_the_parameter) {
  lt t;
  const char *s =
    "return function(ctx, args)\n"
    "  assert(ctx:shard('w1', 0, args.axis, 'storage') == true)\n"
    "  assert((ctx:sharding('w1'))[1][1] == 'model')\n"
    "  local _, partial = ctx:sharding('h.matmul')\n"
    "  assert(#partial == 0 and #(ctx:sharding('x'))[2] == 0, 'activations are not split')\n"
    "end\n";
  cr_assert(lt_run(&t, MLP, "adam(lr = 0.1)", TAC2, s) == 0, "%s", diag_text(&t.d));
  cr_assert_str_eq(lay(&t, "w1"), "[model, -]");
  cr_assert_str_eq(lay(&t, "x"), "[-, -]", "the matmul reads w1 gathered: its other operand is not split");
  cr_assert_str_eq(lay(&t, "grad.w1"), "[model, -]", "the gradient is kept as the parameter is");
  cr_assert_eq(t.p->ncon, 0);
  lt_free(&t);
  /* the same statement as a split propagates into the activations */
  s = "return function(ctx, args) assert(ctx:shard('w1', 0, args.axis, 'split')) end\n";
  cr_assert(lt_run(&t, MLP, "adam(lr = 0.1)", TAC2, s) == 0, "%s", diag_text(&t.d));
  cr_assert_str_eq(lay(&t, "x"), "[-, model]");
  lt_free(&t);
}

Test(api, replicate_and_partial_sums) {
  lt t;
  const char *s =
    "return function(ctx, args)\n"
    "  assert(ctx:replicate('h', 'model', -1))\n"
    "  local dims, partial, whole = ctx:sharding('h')\n"
    "  assert(#whole[1] == 0 and whole[2][1] == 'model')\n"
    "  assert(ctx:shard('w1', 1, 'model'))\n"
    "  assert(#(ctx:sharding('h'))[2] == 0, 'the replicate stops propagation')\n"
    "  assert(ctx:shard('w2', 0, 'model'))\n"
    "  dims, partial = ctx:sharding('out')\n"
    "  assert(#partial == 1 and partial[1] == 'model', 'out is a partial sum over model')\n"
    "  local n = 0 for _, a in pairs(partial) do n = n + 1 end\n"
    "  assert(n == 1)\n"
    "  dims, partial = ctx:sharding('w2')\n"
    "  assert(#partial == 0)\n"
    "end\n";
  cr_assert(lt_run(&t, MLP, NULL, TAC2, s) == 0, "%s", diag_text(&t.d));
  cr_assert_str_eq(lay(&t, "h"), "[-, -]");
  lt_free(&t);
}

Test(api, together_propagates_once_at_the_end) {
  lt t;
  const char *s =
    "return function(ctx, args)\n"
    "  ctx:together(function()\n"
    "    assert(ctx:shard('w1', 1, 'model'))\n"
    "    assert(#(ctx:sharding('h'))[2] == 0, 'not yet propagated')\n"
    "    ctx:together(function() assert(ctx:shard('x', 0, 'batch')) end)\n"
    "    assert(#(ctx:sharding('h'))[1] == 0, 'nested: still held')\n"
    "  end)\n"
    "  assert((ctx:sharding('h'))[2][1] == 'model' and (ctx:sharding('h'))[1][1] == 'batch')\n"
    "  local ok = pcall(ctx.together, ctx, function() ctx:shard('y', 0, 'batch') error('stop') end)\n"
    "  assert(not ok and (ctx:sharding('d'))[1][1] == 'batch', 'propagated when it raises too')\n"
    "  assert(ctx:shard('y', 1, 'model') == true and (ctx:sharding('d'))[2][1] == 'model', 'no longer held')\n"
    "end\n";
  const char *tac = "mesh batch = 2, model = 2\ntactic custom = lua \"t.lua\"\nschedule custom\n";
  cr_assert(lt_run(&t, "model mlp {\n input x : f32[16, 8]\n input y : f32[16, 8]\n param w1 : f32[8, 32]\n param w2 : f32[32, 8]\n"
                   " param b1 : f32[32]\n h = gelu(add(matmul(x, w1), b1))\n out = matmul(h, w2)\n d = sub(y, y)\n return out, d\n}\n",
                   NULL, tac, s) == 0, "%s", diag_text(&t.d));
  cr_assert_str_eq(lay(&t, "h"), "[batch, model]");
  lt_free(&t);
}

Test(api, mark_and_rollback) {
  lt t;
  const char *s =
    "return function(ctx, args)\n"
    "  local m0 = ctx:mark()\n"
    "  assert(ctx:shard('w1', 1, 'model'))\n"
    "  local m1 = ctx:mark()\n"
    "  assert(ctx:shard('x', 0, 'batch'))\n"
    "  ctx:rollback(m1)\n"
    "  assert(#(ctx:sharding('x'))[1] == 0 and (ctx:sharding('h'))[2][1] == 'model')\n"
    "  ctx:rollback(m0)\n"
    "  assert(#(ctx:sharding('h'))[2] == 0 and #(ctx:sharding('w2'))[1] == 0)\n"
    "  local ok, err = pcall(ctx.rollback, ctx, m1)\n"
    "  assert(not ok and err:find('discarded by a rollback to an earlier one'), err)\n"
    "  ctx:rollback(m0)\n"
    "  for i = 1, 20 do local m = ctx:mark() ctx:shard('w2', 0, 'model') ctx:rollback(m) end\n"
    "  assert(ctx:shard('w2', 1, 'batch'))\n"
    "end\n";
  const char *tac = "mesh batch = 2, model = 2\ntactic custom = lua \"t.lua\"\nschedule custom\n";
  cr_assert(lt_run(&t, MLP, "sgd(lr = 0.1)", tac, s) == 0, "%s", diag_text(&t.d));
  cr_assert_str_eq(lay(&t, "w1"), "[-, -]");
  cr_assert_str_eq(lay(&t, "w2"), "[-, batch]");
  cr_assert_eq(t.p->ncon, 0, "rolled-back conflicts are gone");
  lt_free(&t);
}

Test(api, cost_falls_when_the_model_is_split) {
  lt t;
  const char *s =
    "return function(ctx, args)\n"
    "  local c0 = ctx:cost()\n"
    "  assert(c0.time > 0 and c0.memory > 0 and c0.compute > 0 and c0.communication == 0)\n"
    "  assert(ctx:shard('x', 0, 'batch'))\n"
    "  local c1 = ctx:cost()\n"
    "  assert(c1.time < c0.time and c1.memory < c0.memory, ('%g %g / %g %g'):format(c0.time, c0.memory, c1.time, c1.memory))\n"
    "  assert(c1.communication > 0, 'the gradients are all-reduced')\n"
    "  local dims, partial = ctx:sharding('grad.w1')\n"
    "  assert(#partial == 1, 'a gradient is a partial sum over batch')\n"
    "end\n";
  const char *tac = "mesh batch = 4\ntactic custom = lua \"t.lua\"\nschedule custom\n";
  cr_assert(lt_run(&t, "examples/mlp.cir", "sgd(lr = 0.1)", tac, s) == 0, "%s", diag_text(&t.d));
  lt_free(&t);
}

Test(api, decisions_record_the_script_line) {
  lt t;
  const char *s =
    "return function(ctx, args)\n"
    "  local w = ctx:value('w1')\n"
    "  if w then\n"
    "    local ok = ctx:shard(w, 1, args.axis)\n"
    "  end\n"
    "end\n";
  cr_assert(lt_run(&t, MLP, "sgd(lr = 0.1)", TAC2, s) == 0, "%s", diag_text(&t.d));
  strbuf b;
  sb_init(&b);
  report_explain(&b, t.p, ir_lookup(t.g, "w2")->id);
  char want[160];
  snprintf(want, sizeof want, "%s/t.lua:4:16: tactic 'custom' split dim 1 of 'w1' on 'model'", t.dir);
  cr_assert(strstr(sb_str(&b), want), "wanted '%s' in:\n%s", want, sb_str(&b));
  sb_free(&b);
  lt_free(&t);
}

/* ctx:note(v, msg) leaves a word for carve explain at the script's line;
** a rollback to an earlier mark takes it back with the rest */
Test(api, notes_for_explain) {
  lt t;
  const char *s =
    "return function(ctx, args)\n"
    "  local m = ctx:mark()\n"
    "  ctx:note('w1', 'tried and taken back')\n"
    "  ctx:rollback(m)\n"
    "  ctx:note(ctx:value('w2'), 'left whole: it is small')\n"
    "  local ok, err = pcall(ctx.note, ctx, 'nope', 'x')\n"
    "  assert(not ok and err:find(\"no value named 'nope'\"), err)\n"
    "end\n";
  cr_assert(lt_run(&t, MLP, "sgd(lr = 0.1)", TAC2, s) == 0, "%s", diag_text(&t.d));
  strbuf b;
  sb_init(&b);
  report_explain(&b, t.p, ir_lookup(t.g, "w2")->id);
  char want[160];
  snprintf(want, sizeof want, "%s/t.lua:5:3: tactic 'custom': left whole: it is small\n", t.dir);
  cr_assert(strstr(sb_str(&b), want), "wanted '%s' in:\n%s", want, sb_str(&b));
  cr_assert(!strstr(sb_str(&b), "no tactic split it"), "a noted value does not say no tactic looked at it:\n%s", sb_str(&b));
  sb_clear(&b);
  report_explain(&b, t.p, ir_lookup(t.g, "w1")->id);
  cr_assert(!strstr(sb_str(&b), "taken back"), "the rolled-back note is gone:\n%s", sb_str(&b));
  cr_assert(strstr(sb_str(&b), "no tactic split it"), "%s", sb_str(&b));
  sb_free(&b);
  lt_free(&t);
}

Test(api, messages_in_carves_words) {
  lt t;
  const char *s = "return function(ctx, args)\n  ctx:warn('careful')\n  ctx:error('bad axis ' .. args.axis, 'axis')\nend\n";
  tactic_opts o = {.lenient = 1};
  cr_assert(lt_run_opts(&t, MLP, NULL, "mesh model = 2\ntactic custom = lua \"t.lua\" (axis = model)\nschedule custom\n", s, &o) < 0);
  const char *text = diag_text(&t.d);
  cr_assert(strstr(text, "t.tac:2:1: warning: careful\n"), "%s", text);
  cr_assert(strstr(text, "t.tac:2:37: error: bad axis model\n"), "the error points at the argument:\n%s", text);
  cr_assert(!strstr(text, "traceback"), "a tactic's own error has no traceback:\n%s", text);
  lt_free(&t);
  /* without --lenient a warning stops the tactic */
  cr_assert(lt_run(&t, MLP, NULL, TAC2, "return function(ctx) ctx:warn('careful') error('not reached') end\n") < 0);
  cr_assert(strstr(diag_text(&t.d), "t.tac:2:1: error: careful\n") && !strstr(diag_text(&t.d), "not reached"), "%s", diag_text(&t.d));
  lt_free(&t);
  /* an error the script catches still fails the tactic */
  cr_assert(lt_run(&t, MLP, NULL, TAC2, "return function(ctx) pcall(ctx.error, ctx, 'caught') end\n") < 0);
  cr_assert(strstr(diag_text(&t.d), "t.tac:2:1: error: caught\n"), "%s", diag_text(&t.d));
  lt_free(&t);
}

/* ---- errors become carve errors ---- */

Test(errors, a_runtime_error_three_calls_deep) {
  lt t;
  const char *s =
    "local function third(v)\n"
    "  return v.shape.nope + 1\n"
    "end\n"
    "local function second(v) local r = third(v) return r end\n"
    "local function first(v) local r = second(v) return r end\n"
    "return function(ctx, args)\n"
    "  first(ctx:value('w1'))\n"
    "end\n";
  lt_run(&t, MLP, NULL, TAC2, s);
  expect_error(&t, "t.lua:2:18", "attempt to perform arithmetic on a nil value (field 'nope')\n    return v.shape.nope + 1\n                   ^\n");
  const char *text = diag_text(&t.d);
  cr_assert(strstr(text, "t.tac:2:1: note: in Lua tactic 'custom'\n"), "%s", text);
  char tb[512];
  snprintf(tb, sizeof tb, "carve: note: Lua traceback:\n    %s/t.lua:2: in upvalue 'third'\n    %s/t.lua:4: in upvalue 'second'\n"
           "    %s/t.lua:5: in upvalue 'first'\n    %s/t.lua:7: in function <%s/t.lua:6>\n", t.dir, t.dir, t.dir, t.dir, t.dir);
  cr_assert(strstr(text, tb), "wanted\n%s\nin:\n%s", tb, text);
  lt_free(&t);
}

typedef struct lerr { char script[240]; int devices; char where[16]; char want[120]; } lerr;

static lerr lerrs[] = {
  {"return function(ctx) error('plain') end\n", 2, "t.lua:1:1", "error: plain\n"},
  {"return function(ctx)\n  error('no place', 0)\nend\n", 2, "t.lua:2:3", "error: no place\n"},
  {"return function(ctx) error({}) end\n", 2, "t.lua:1:1", "error: (error object is a table value)\n"},
  {"return function(ctx) error(setmetatable({}, {__tostring = function() return 'shown' end})) end\n", 2, "t.lua:1:1", "error: shown\n"},
  {"local x = = 1\n", 2, "t.lua:1:1", "error: unexpected symbol near '='\n"},
  {"return function(ctx)\n  ctx:shard('w1', 5, 'model')\nend\n", 2, "t.lua:2:3", "dim 5 is out of range for 'w1' of rank 2"},
  {"return function(ctx)\n  ctx:shard('w1', 0, 'nope')\nend\n", 2, "t.lua:2:3", "unknown axis 'nope'; the mesh has model"},
  {"return function(ctx)\n  ctx:shard('nope', 0, 'model')\nend\n", 2, "t.lua:2:3", "ctx:shard: no value named 'nope'"},
  {"return function(ctx)\n  ctx:shard({}, 0, 'model')\nend\n", 2, "t.lua:2:3", "must be a value"},
  {"return function(ctx)\n  local v = ctx:value('w1')\n  local fake = {id = v.id, name = 'w1'}\n  ctx:shard(fake, 0, 'model')\nend\n",
   2, "t.lua:4:3", "must be a value"},
  {"return function(ctx)\n  local ok = ctx:shard('x', 0, 'model')\nend\n", 3, "t.lua:2:14",
   "cannot split dim 0 of 'x' (size 16) into 3 pieces on 'model': it is not divisible"},
  {"return function(ctx)\n  ctx.shard(nil, 'w1', 0, 'model')\nend\n", 2, "t.lua:2:3", "bad argument #1 to 'shard' (carve.ctx expected, got nil)"},
  {"return function(ctx)\n  ctx:replicate('w1', 'model', 2)\nend\n", 2, "t.lua:2:3", "dim 2 is out of range for 'w1' of rank 2"},
  {"return function(ctx)\n  ctx:shard('w1', 0, 'model', 'zero')\nend\n", 2, "t.lua:2:3", "the fourth argument is \"split\" or \"storage\""},
  {"return function(ctx)\n  ctx:rollback({})\nend\n", 2, "t.lua:2:3", "bad argument #1 to 'rollback' (carve.mark expected, got table)"},
  {"return function(ctx) collectgarbage('stop') end\n", 2, "t.lua:1:1", "collectgarbage('stop') is not available to a tactic script"},
  {"return function(ctx) return string.rep('x', 10 * 1024 * 1024 * 1024) end\n", 2, "t.lua:1:1", "resulting string too large"},
  {"return function(ctx)\n  local t = nil\n  return t[1]\nend\n", 2, "t.lua:3:10", "attempt to index a nil value (local 't')"},
};

ParameterizedTestParameters(errors, located) { return cr_make_param_array(lerr, lerrs, sizeof lerrs / sizeof lerrs[0]); }

ParameterizedTest(lerr *c, errors, located) {
  lt t;
  char tac[200];
  snprintf(tac, sizeof tac, "mesh model = %d\ntactic custom = lua \"t.lua\" (axis = model)\nschedule custom\n", c->devices);
  lt_run(&t, MLP, NULL, tac, c->script);
  expect_error(&t, c->where, c->want);
  cr_assert(strstr(diag_text(&t.d), "note: in Lua tactic 'custom'"), "%s", diag_text(&t.d));
  cr_assert_eq(t.d.nerrors, 1, "one error:\n%s", diag_text(&t.d));
  lt_free(&t);
}

Test(errors, the_script_must_return_a_function) {
  lt t;
  lt_run(&t, MLP, NULL, TAC2, "return 42\n");
  cr_assert(t.rc < 0);
  cr_assert(strstr(diag_text(&t.d), "t.tac:2:21: error: '") && strstr(diag_text(&t.d), "t.lua' must return a function(ctx, args), not number"),
            "%s", diag_text(&t.d));
  lt_free(&t);
}

Test(errors, a_missing_script_is_located_at_its_path) {
  lt t;
  lt_run(&t, MLP, NULL, TAC2, NULL);
  cr_assert(t.rc < 0);
  cr_assert(strstr(diag_text(&t.d), "t.tac:2:21: error: cannot open Lua script '"), "%s", diag_text(&t.d));
  lt_free(&t);
  lt_run(&t, MLP, NULL, "mesh model = 2\nuse \"nothere.lua\" as n (axis = model)\nschedule n\n", NULL);
  cr_assert(strstr(diag_text(&t.d), "t.tac:2:5: error: cannot open tactic file '"), "%s", diag_text(&t.d));
  lt_free(&t);
}

/* ---- the sandbox ---- */

typedef struct escape { char call[120]; char where[16]; char want[80]; } escape;

static escape escapes[] = {
  {"os.execute('touch DIR/ran')", "t.lua:2:3", "attempt to index a nil value (global 'os')"},
  {"io.open('DIR/ran', 'w'):write('x')", "t.lua:2:3", "attempt to index a nil value (global 'io')"},
  {"require('os').execute('touch DIR/ran')", "t.lua:2:3", "attempt to call a nil value (global 'require')"},
  {"load('os.execute(\"touch DIR/ran\")')()", "t.lua:2:3", "attempt to call a nil value (global 'load')"},
  {"loadfile('DIR/evil.lua')()", "t.lua:2:3", "attempt to call a nil value (global 'loadfile')"},
  {"dofile('DIR/evil.lua')", "t.lua:2:3", "attempt to call a nil value (global 'dofile')"},
  {"string.dump(function() end)", "t.lua:2:10", "attempt to call a nil value (field 'dump')"},
  {"('x'):dump()", "t.lua:2:9", "attempt to call a nil value (method 'dump')"},
  {"debug.sethook()", "t.lua:2:3", "attempt to index a nil value (global 'debug')"},
  {"package.loadlib('libc.so.6', 'system')", "t.lua:2:3", "attempt to index a nil value (global 'package')"},
  {"coroutine.wrap(function() end)()", "t.lua:2:3", "attempt to index a nil value (global 'coroutine')"},
  {"rawget(_G, 'os').execute('touch DIR/ran')", "t.lua:2:3", "attempt to index a nil value"},
  {"getmetatable('').__index.dump(print)", "t.lua:2:28", "attempt to call a nil value (field 'dump')"},
};

ParameterizedTestParameters(sandbox, escapes) { return cr_make_param_array(escape, escapes, sizeof escapes / sizeof escapes[0]); }

ParameterizedTest(escape *c, sandbox, escapes) {
  lt t;
  char dir[64];
  snprintf(dir, sizeof dir, "/tmp/carve_lua_XXXXXX");
  cr_assert(mkdtemp(dir));
  char evil[128], call[256], script[400];
  snprintf(evil, sizeof evil, "os.execute('touch %s/ran')\n", dir);
  put(dir, "evil.lua", evil);
  const char *d = strstr(c->call, "DIR");
  if (d) snprintf(call, sizeof call, "%.*s%s%s", (int)(d - c->call), c->call, dir, d + 3);
  else snprintf(call, sizeof call, "%s", c->call);
  snprintf(script, sizeof script, "return function(ctx, args)\n  %s\nend\n", call);
  lt_run(&t, MLP, NULL, TAC2, script);
  expect_error(&t, c->where, c->want);
  char ran[128];
  snprintf(ran, sizeof ran, "%s/ran", dir);
  cr_assert(access(ran, F_OK) != 0, "the escape ran: %s", c->call);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) {}
  lt_free(&t);
}

Test(sandbox, only_five_libraries) {
  lt t;
  const char *s =
    "return function(ctx)\n"
    "  local have = {}\n"
    "  for k, v in pairs(_G) do if type(v) == 'table' and k ~= '_G' then have[#have + 1] = k end end\n"
    "  table.sort(have)\n"
    "  assert(table.concat(have, ' ') == 'math string table utf8', table.concat(have, ' '))\n"
    "  for _, f in ipairs({'load', 'loadfile', 'dofile', 'require', 'loadstring'}) do assert(_G[f] == nil, f) end\n"
    "  assert(string.dump == nil)\n"
    "  assert(type(collectgarbage('count')) == 'number' and collectgarbage() == 0 and collectgarbage('step') ~= nil)\n"
    "  assert(math.random(1000000) == math.random(1000000) or true)\n"
    "end\n";
  cr_assert(lt_run(&t, MLP, NULL, TAC2, s) == 0, "%s", diag_text(&t.d));
  lt_free(&t);
}

Test(sandbox, random_numbers_are_the_same_every_run) {
  /* two runs draw the same numbers: a tactic that uses them plans alike */
  const char *s = "return function(ctx) if math.random(1, 2) == 1 then ctx:shard('w1', 1, 'model') else ctx:shard('x', 0, 'model') end end\n";
  lt a, b;
  cr_assert(lt_run(&a, MLP, NULL, TAC2, s) == 0, "%s", diag_text(&a.d));
  cr_assert(lt_run(&b, MLP, NULL, TAC2, s) == 0, "%s", diag_text(&b.d));
  cr_assert_str_eq(lay(&a, "h"), lay(&b, "h"));
  lt_free(&a);
  lt_free(&b);
}

Test(sandbox, an_endless_loop_ends) {
  lt t;
  tactic_opts o = {.lua_steps = 1000000};
  lt_run_opts(&t, MLP, NULL, TAC2, "return function(ctx)\n  local n = 0\n  while true do n = n + 1 end\nend\n", &o);
  expect_error(&t, "t.lua:3:", "the script ran too long (more than 1000000 instructions)");
  lt_free(&t);
  /* a pcall that catches it gets no further, and neither does its handler */
  lt_run_opts(&t, MLP, NULL, TAC2,
              "return function(ctx)\n  while true do\n    pcall(function() while true do end end)\n"
              "    xpcall(function() while true do end end, function() while true do end end)\n  end\nend\n", &o);
  cr_assert(t.rc < 0 && strstr(diag_text(&t.d), "the script ran too long"), "%s", diag_text(&t.d));
  lt_free(&t);
  /* the default limit */
  lt_run(&t, MLP, NULL, TAC2, "return function(ctx) while true do end end\n");
  expect_error(&t, "t.lua:1:", "the script ran too long (more than 250000000 instructions)");
  lt_free(&t);
}

Test(sandbox, ctx_calls_count_against_the_limit) {
  /* the time spent in ctx calls counts as the instructions it stands for:
  ** ctx:cost() in a loop ran for hours on four Lua instructions a turn */
  tactic_opts o = {.lua_steps = 1000000};
  script_fails("return function(ctx)\n  while true do\n    ctx:cost()\n  end\nend\n", &o, "t.lua:3:",
               "the script ran too long (more than 1000000 instructions)");
  script_fails("return function(ctx)\n  while true do\n    pcall(ctx.values, ctx)\n  end\nend\n", &o, "t.lua:3:", "the script ran too long");
  /* and so does the work of one instruction in C: a copy of a long string, a print */
  script_fails("return function(ctx)\n  local s = string.rep('x', 1 << 20)\n  while true do\n    local t = s .. 'y'\n  end\nend\n", &o,
               "t.lua:4:", "the script ran too long");
  o.lua_steps = 20000;
  script_fails("return function(ctx)\n  local s = string.rep('p', 999)\n  while true do\n    print(s)\n  end\nend\n", &o, "t.lua:4:",
               "the script ran too long (more than 20000 instructions)");
  /* one call past the limit, caught by pcall as the script's last word: the limit is the error */
  o.lua_steps = 100;
  script_fails("return function(ctx)\n  pcall(ctx.cost, ctx)\nend\n", &o, "t.lua:2:3", "the script ran too long (more than 100 instructions)");
}

Test(sandbox, finalisers_are_refused) {
  /* Lua runs __gc with hooks off, during any collection and when the state
  ** closes: an endless one hung carve. A metatable with __gc is refused. */
  script_fails("return function(ctx)\n  local x = {}\n  setmetatable(x, {__gc = function() while true do end end})\nend\n", NULL, "t.lua:3:3",
               "setmetatable: a metatable with __gc is refused");
  /* __gc added after setmetatable makes no finaliser: nothing runs at close */
  lt t;
  const char *s = "return function(ctx)\n  local mt = {}\n  local x = setmetatable({}, mt)\n  mt.__gc = function() while true do end end\n"
                  "  x = nil\n  collectgarbage()\n  assert(getmetatable(setmetatable({}, {})) ~= nil)\nend\n";
  cr_assert(lt_run(&t, MLP, NULL, TAC2, s) == 0, "%s", diag_text(&t.d));
  lt_free(&t);
}

Test(sandbox, ten_gigabytes) {
  lt t;
  /* a string doubled up to 16 GiB: refused at the 256 MiB the allocator allows */
  lt_run(&t, MLP, NULL, TAC2, "return function(ctx)\n  local s = 'x'\n  for i = 1, 34 do s = s .. s end\n  ctx:shard('w1', 1, 'model')\nend\n");
  expect_error(&t, "t.lua:", "the script ran out of memory (a tactic script may use 256 MiB)");
  lt_free(&t);
  lt_run(&t, MLP, NULL, TAC2, "return function(ctx)\n  local s = string.rep('x', 1 << 30)\nend\n");
  expect_error(&t, "t.lua:2:3", "the script ran out of memory");
  lt_free(&t);
  /* a table grown in a loop, under a smaller limit */
  tactic_opts o = {.lua_memory = 8 << 20};
  lt_run_opts(&t, MLP, NULL, TAC2, "return function(ctx)\n  local t = {}\n  for i = 1, 10 * 1024 * 1024 * 1024 // 8 do t[i] = i end\nend\n", &o);
  expect_error(&t, "t.lua:3:", "the script ran out of memory (a tactic script may use 8 MiB)");
  lt_free(&t);
  /* caught by pcall, the limit holds: the script gets no further */
  script_fails("return function(ctx)\n  assert(not pcall(string.rep, 'x', 1 << 30))\n  ctx:shard('w1', 1, 'model')\nend\n", NULL, "t.lua:2:3",
               "the script ran out of memory (a tactic script may use 256 MiB)");
  /* an allocation loop inside pcall went on until the instruction limit */
  script_fails("return function(ctx)\n  while true do\n    pcall(function() local t = {} for i = 1, 1e9 do t[i] = i end end)\n  end\nend\n", &o,
               "t.lua:3:", "the script ran out of memory (a tactic script may use 8 MiB)");
  /* garbage is no holding: 64 MiB of tables through an 8 MiB limit (Lua collects, and asks again) */
  const char *churn = "return function(ctx)\n  local n = 0\n  for i = 1, 4096 do\n    local t = {}\n    for j = 1, 1024 do t[j] = j end\n"
                      "    n = n + #t\n  end\n  assert(n == 4096 * 1024)\n  ctx:shard('w1', 1, 'model')\nend\n";
  cr_assert(lt_run_opts(&t, MLP, NULL, TAC2, churn, &o) == 0, "%s", diag_text(&t.d));
  cr_assert_str_eq(lay(&t, "w1"), "[-, model]");
  lt_free(&t);
}

Test(sandbox, ctx_is_dead_after_the_tactic) {
  /* a finaliser would run when the state closes, after the tactic: none is set */
  script_fails("return function(ctx)\n  setmetatable({}, {__gc = function() ctx:shard('w1', 1, 'model') end})\n  saved = ctx\nend\n", NULL,
               "t.lua:2:3", "a metatable with __gc is refused");
}

/* ---- the stdlib: the C tactics' golden plans, a renamed model ---- */

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  strbuf b;
  sb_init(&b);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) sb_printf(&b, "%.*s", (int)n, buf);
  fclose(f);
  char *r = strdup(sb_str(&b));
  sb_free(&b);
  return r;
}

/* the first line where two texts differ, for the failure message */
static const char *first_difference(const char *a, const char *b, int *line) {
  *line = 1;
  const char *start = a;
  while (*a && *a == *b) {
    if (*a == '\n') { (*line)++; start = a + 1; }
    a++, b++;
  }
  return start;
}

ParameterizedTestParameters(stdlib, golden_plans) {
  return cr_make_param_array(plan_case, (void *)plan_cases, NPLAN_CASES);
}

ParameterizedTest(plan_case *c, stdlib, golden_plans) {
  char path[1024];
  snprintf(path, sizeof path, "%s/" GP "%s.plan", SRCDIR, c->name);
  char *want = slurp(path);
  cr_assert(want, "no golden plan %s", path);
  strbuf got;
  sb_init(&got);
  plan_text(c, SRCDIR, &got);
  if (strcmp(want, sb_str(&got))) {
    int line;
    const char *at = first_difference(want, sb_str(&got), &line);
    const char *eol = strchr(at, '\n');
    cr_assert(0, "%s differs from %s at line %d:\n  want: %.*s\n  got:  %.*s", c->name, path, line, eol ? (int)(eol - at) : (int)strlen(at), at,
              80, sb_str(&got) + (at - want));
  }
  sb_free(&got);
  free(want);
}

/* tests/data/gpt2_renamed.cir is gpt2_small.cir with every name changed:
** megatron.lua (and the rest) must give the same sharding to every value */
static void same_as_renamed(const char *tac) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/%s", SRCDIR, tac);
  session a, b;
  session_init(&a);
  session_init(&b);
  char ma[512], mb[512];
  snprintf(ma, sizeof ma, "%s/examples/gpt2_small.cir", SRCDIR);
  snprintf(mb, sizeof mb, "%s/tests/data/gpt2_renamed.cir", SRCDIR);
  session_opts oa = {.model_path = ma, .train = "adam(lr = 1e-3)", .tactic_path = path};
  session_opts ob = {.model_path = mb, .train = "adam(lr = 1e-3)", .tactic_path = path};
  cr_assert(session_load(&a, &oa) == 0, "%s", diag_text(&a.diag));
  cr_assert(session_load(&b, &ob) == 0, "%s", diag_text(&b.diag));
  cr_assert_eq(a.g->nvals, b.g->nvals);
  int split = 0;
  for (int v = 0; v < a.g->nvals; v++) {
    if (a.g->vals[v]->kind == IR_CONST) continue;
    const ir_value *x = a.g->vals[v];       /* what the model names, and what is named after it */
    if (x->at.src || x->kind == IR_INPUT || x->kind == IR_PARAM || x->role == ROLE_GRAD)
      cr_assert(!ir_lookup(b.g, x->name), "'%s' kept its name", x->name);
    const char *sa = shard_str(a.plan, v, &a.mem), *sb = shard_str(b.plan, v, &b.mem);
    cr_assert_str_eq(sa, sb, "'%s' is %s but its renamed twin '%s' is %s", a.g->vals[v]->name, sa, b.g->vals[v]->name, sb);
    split += strchr(sa, 'm') != NULL;
  }
  cr_assert_gt(split, 100, "megatron split something");
  cr_assert_eq(a.plan->ncon, b.plan->ncon);
  int counts[2][RT_NOPS] = {{0}};
  session *s[2] = {&a, &b};
  for (int k = 0; k < 2; k++) {
    rt_prog prog;
    lower_result lr;
    cr_assert(lower_program(s[k]->g, s[k]->plan, &prog, &lr, &s[k]->diag) == 0);
    for (int i = 0; i < prog.ninstrs; i++) counts[k][prog.instrs[i].op]++;
    lower_result_free(&lr);
    rt_prog_free(&prog);
  }
  for (int op = RT_ALL_REDUCE; op <= RT_ALL_TO_ALL; op++) cr_assert_eq(counts[0][op], counts[1][op]);
  session_free(&a);
  session_free(&b);
}

Test(stdlib, megatron_on_a_renamed_model) { same_as_renamed("gpt2_small_mp.tac"); }
Test(stdlib, bp_megatron_zero3_on_a_renamed_model) { same_as_renamed("gpt2_small_bp_mp_z3.tac"); }

/* the attention written with reshape and transpose (tests/data/attn_reshape.cir) */
/* megatron alone on a model = 2 mesh, after Adam's step is built */
static void megatron_on(lt *t, const char *model) {
  cr_assert(lt_run(t, model, "adam(lr = 1e-3)", "mesh model = 2\nuse \"megatron\" as mp (axis = model)\nschedule mp\n", NULL) == 0,
            "%s", diag_text(&t->d));
}

Test(stdlib, megatron_through_reshapes) {
  lt t;
  megatron_on(&t, "tests/data/attn_reshape.cir");
  cr_assert_str_eq(lay(&t, "wq"), "[-, model]");
  cr_assert_str_eq(lay(&t, "wk"), "[-, model]");
  cr_assert_str_eq(lay(&t, "wv"), "[-, model]");
  cr_assert_str_eq(lay(&t, "wo"), "[model, -]");
  cr_assert_str_eq(lay(&t, "emb"), "[-, -]");
  lt_free(&t);
}

/* A fused qkv weight sliced apart cannot be split into contiguous blocks
** (each device would hold a mix of q, k and v columns): megatron splits
** the MLPs, leaves it whole, and says why at carve explain; a weight it
** split, or one propagation split, gets no note. */
Test(stdlib, megatron_says_why_a_weight_stays_whole) {
  lt t;
  megatron_on(&t, "tests/data/fused_qkv.cir");
  cr_assert_str_eq(lay(&t, "l0.wg"), "[-, model]");
  cr_assert_str_eq(lay(&t, "l0.wd"), "[model, -]");
  cr_assert_str_eq(lay(&t, "l0.wqkv"), "[-, -]");
  strbuf b;
  sb_init(&b);
  report_explain(&b, t.p, ir_lookup(t.g, "l1.wqkv")->id);
  cr_assert(strstr(sb_str(&b), "tactic 'mp': megatron: not a column-parallel weight: dim 1 of 'l1.wqkv' leads to slice "
                               "'l1.q.slice', which needs that dim of 'l1.qkv' whole: the slice takes a part of a dim"),
            "%s", sb_str(&b));
  sb_clear(&b);
  report_explain(&b, t.p, ir_lookup(t.g, "head")->id);
  cr_assert(strstr(sb_str(&b), "dim 1 of 'head' leads to cross_entropy 'loss', the loss over its classes: megatron leaves the "
                               "vocabulary whole"), "%s", sb_str(&b));
  for (int i = 0; i < t.p->nnote; i++) {
    const char *name = t.g->vals[t.p->note[i].value]->name;
    cr_expect(strcmp(name, "l0.wg") && strcmp(name, "l0.wu") && strcmp(name, "l0.wd"), "a note on %s, which is split", name);
  }
  sb_free(&b);
  lt_free(&t);
  /* a weight megatron declines but an earlier tactic split on its axis gets no note */
  cr_assert(lt_run(&t, "tests/data/fused_qkv.cir", "adam(lr = 1e-3)",
                   "mesh model = 2\ntactic h(axis = model) {\n  shard param \"head\" dim 1 on axis\n}\n"
                   "use \"megatron\" as mp (axis = model)\nschedule h, mp\n", NULL) == 0, "%s", diag_text(&t.d));
  cr_assert_str_eq(lay(&t, "head"), "[-, model]");
  for (int i = 0; i < t.p->nnote; i++)
    cr_expect(t.g->vals[t.p->note[i].value] != ir_lookup(t.g, "head"), "a note on head, which tactic 'h' split: %s", t.p->note[i].text);
  cr_expect_gt(t.p->nnote, 0, "the fused weights are still noted");
  lt_free(&t);
}

/* the same model with the fused weight written [d, 3, heads, head_dim],
** as the note suggests: megatron splits its heads */
Test(stdlib, megatron_splits_a_fused_weight_by_heads) {
  lt t;
  megatron_on(&t, "tests/data/fused_qkv_heads.cir");
  cr_assert_str_eq(lay(&t, "l0.wqkv"), "[-, -, model, -]");
  cr_assert_str_eq(lay(&t, "l1.wo"), "[model, -]");
  cr_assert_str_eq(lay(&t, "l1.wd"), "[model, -]");
  lt_free(&t);
}

/* docs/lua.md's tactic in five steps: kept on the MLP, rolled back on the small GPT */
static const char *tutorial(const char *model, const char *value, arena *keep) {
  char m[512], t[512];
  snprintf(m, sizeof m, "%s/examples/%s", SRCDIR, model);
  snprintf(t, sizeof t, "%s/examples/gelu_split.tac", SRCDIR);
  session s;
  session_init(&s);
  session_opts o = {.model_path = m, .train = "sgd(lr = 0.1)", .tactic_path = t};
  cr_assert(session_load(&s, &o) == 0, "%s", diag_text(&s.diag));
  const char *r = shard_str(s.plan, ir_lookup(s.g, value)->id, keep);
  session_free(&s);
  return r;
}

Test(examples, the_readme_tutorial) {
  arena a;
  arena_init(&a);
  cr_assert_str_eq(tutorial("mlp.cir", "w1", &a), "[-, model]");
  cr_assert_str_eq(tutorial("mlp.cir", "w2", &a), "[model, -]");
  cr_assert_str_eq(tutorial("gpt2_small.cir", "l0.mlp.w1", &a), "[-, -]", "too small to pay");
  arena_free(&a);
}

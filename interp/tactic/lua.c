/*
** lua.c: Lua tactics (lapi_), one binding file in the manner of Lua's
** liolib: a luaL_Reg table of ctx methods, a metatable per kind of object
** (carve.ctx, carve.value, carve.op, carve.mark), arguments checked by the
** luaL_check* family.
**
** Everything a script can reach is made for one run: a fresh lua_State
** per tactic, value and op tables built when first asked for and cached
** per value id (so the same table comes back and can be used as a key),
** marks in a stack that a rollback cuts. The plan itself is carve's.
**
** The limits hold on every path: a ctx call counts its work against the
** instruction limit (charge), a limit once reached stays reached (every
** later hook raises again and, after memory, every allocation fails, so a
** pcall that catches the error gets no further) and lapi_run reports the
** limit whatever error reached it; no table gets a __gc finaliser, which
** Lua runs with hooks off (setmetatable refuses one).
**
** Errors longjmp. Nothing malloc'd is held across a Lua call that can
** raise: what outlives one call is in lapi_state (on lapi_run's stack),
** in the session's arena (the script's source, locations, messages) or in
** Lua (tables, userdata); the C calls that allocate (propagation, the
** simulator) finish and free before the next Lua call, and their errors
** are copied to the C stack before luaL_error.
*/
#include "interp/tactic/lua.h"
#include "interp/ir/ops.h"
#include "interp/shard/layout.h"
#include "interp/sim/sim.h"
#include "util/mem.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#define LAPI_PROFILE "h100-sxm"       /* ctx:cost()'s device until tactic_opts names one */
#define LAPI_HOOK_EVERY 1000          /* instructions between two count hooks */
#define LAPI_HEADROOM ((size_t)1 << 20)   /* for the message handler once the limit is hit */

/* What a ctx call costs against the instruction limit, in instructions:
** a base for every call, and per value of the program for what walks it
** (measured against Lua's own speed: ctx:cost() takes about 1.5 us a value,
** a propagation about 30 ns, a Lua instruction about 4 ns). */
#define LAPI_CALL_STEPS 100
#define LAPI_COST_STEPS 400           /* ctx:cost(): lowering and simulating the plan */
#define LAPI_PROP_STEPS 10            /* a propagation */
#define LAPI_LIST_STEPS 10            /* ctx:values(): a table of every value */
#define LAPI_PARTIAL_STEPS 25         /* the partial sums of the whole plan */
#define LAPI_MARK_STEPS 2             /* ctx:mark(), ctx:rollback() */
/* and so does what one instruction or library call can do in C: an
** instruction for every LAPI_BYTE_STEPS bytes allocated (s .. s copies
** them) or held when Lua collects them all to ask again, and for every
** byte print writes */
#define LAPI_BYTE_STEPS 4

#define K_VALUES "carve.values"       /* registry: value id + 1 -> value table */
#define K_OPS "carve.ops"             /* registry: value id + 1 -> table of the op making it */
#define K_MARKS "carve.marks"         /* registry: serials of the marks alive, oldest first */
#define K_TRACE "carve.traceback"     /* registry: the traceback of the error being raised */
#define K_PARTIAL "carve.partial.axes"  /* registry: userdata, one uint32 per value */
#define K_IDS "carve.ids"             /* registry: value table -> id + 1, op table -> -(id + 1) */

enum { OVER_NONE, OVER_STEPS, OVER_MEMORY };   /* lapi_state.over: the limit reached first */

typedef struct lapi_state {
  tactic_ctx *c;
  const lapi_tactic *t;
  const diag_src *src;                /* the script, in c->mem */
  char chunk[LUA_IDSIZE];             /* its name as Lua's messages begin ("" until loaded) */
  /* the allocator */
  size_t used, limit;
  int headroom;                       /* the handler's extra room was given */
  size_t refused;                     /* the growth of a request refused and not granted since (0: none), */
  const void *refused_block;          /* its block and size (a retry asks for the same), */
  size_t refused_size;
  unsigned long grants, refused_grants;   /* the requests that grew granted, in all and before it, */
  int refused_line;                   /* and the line last seen running when it was refused */
  /* the hooks */
  long long steps, max_steps;         /* instructions run, and ctx calls' work in instructions */
  int line;                           /* the line last seen running */
  int over;                           /* a limit was reached (OVER_*): every later hook raises again */
  /* errors */
  int loading;                        /* compiling the chunk: a syntax error has no traceback */
  int err_line;                       /* the innermost line the handler found */
  const char *hint; int hint_line;    /* the ctx method that raised, and its line */
  int reported;                       /* an error or fatal warning is already in c->d */
  int closed;                         /* the script's function has returned */
  int held;                           /* inside ctx:together: actions do not propagate */
  loc together_at;                    /* the outermost ctx:together call: where its propagation happens */
  /* caches */
  uint32_t *partial;                  /* partial-sum axes per value (userdata K_PARTIAL) */
  int partial_ok;                     /* ... and they are those of the state now */
  sim_profile prof;
  int have_prof;
  lua_Integer serial;                 /* of the last mark */
} lapi_state;

typedef struct lapi_mark { sh_mark m; lua_Integer serial; } lapi_mark;

static const char lapi_reported = 0;  /* address: the error object of an error already in c->d */

static lapi_state *state_of(lua_State *L) { return *(lapi_state **)lua_getextraspace(L); }

/* ---- locations ---- */

static int is_ident(int ch) { return isalnum(ch) || ch == '_'; }

/* A place on line `line` of the script: where `word` is written on it,
** else the line's first non-blank; the declaration when the line is
** unknown. how: 'r' the receiver of a method call (ctx:shard -> ctx),
** '.' or ':' the word after that character (a field, a method), 'w' the
** word standing alone (a variable). */
static loc line_loc(const lapi_state *S, int line, const char *word, int how) {
  if (line <= 0 || !S->src) return S->t->decl;
  const char *text = S->src->text;
  size_t len = S->src->len, b = 0;
  for (int l = 1; l < line; b++) {
    if (b >= len) return S->t->decl;
    if (text[b] == '\n') l++;
  }
  size_t e = b;
  while (e < len && text[e] != '\n') e++;
  size_t at = b;
  while (at < e && (text[at] == ' ' || text[at] == '\t')) at++;
  size_t wl = word ? strlen(word) : 0, first = e;
  for (size_t i = b; wl && i + wl <= e; i++) {
    if (memcmp(text + i, word, wl) || (i + wl < e && is_ident((unsigned char)text[i + wl]))) continue;
    int before = i > b ? (unsigned char)text[i - 1] : ' ';
    int fits = how == 'w' ? !is_ident(before) && before != '.' && before != ':'
             : how == 'r' ? before == ':' || before == '.'
             : before == how;
    if (!fits) continue;
    if (how == 'w') {            /* a variable: rather where it is used (x.y, x[i], x(), x:m()) than declared */
      size_t j = i + wl;
      while (j < e && text[j] == ' ') j++;
      if (first == e) first = i;
      if (j == e || !strchr(".[:(", text[j])) continue;
    }
    at = i;
    if (how == 'r') {
      at = i - 1;
      while (at > b && is_ident((unsigned char)text[at - 1])) at--;
    }
    first = e;
    break;
  }
  if (first < e) at = first;
  return (loc){S->src, (uint32_t)at};
}

/* Lua's messages name what failed: "... (global 'os')", "(field 'dump')". */
static loc message_loc(const lapi_state *S, int line, const char *msg) {
  static const struct { const char *kind; int how; } kinds[] = {
    {"global", 'w'}, {"local", 'w'}, {"upvalue", 'w'}, {"constant", 'w'}, {"field", '.'}, {"method", ':'},
  };
  size_t n = strlen(msg);
  if (n < 4 || msg[n - 1] != ')' || msg[n - 2] != '\'') return line_loc(S, line, NULL, 0);
  const char *q = msg + n - 2, *open = q;
  while (open > msg && open[-1] != '\'') open--;
  for (size_t k = 0; open > msg + 1 && k < sizeof kinds / sizeof kinds[0]; k++) {
    size_t kl = strlen(kinds[k].kind);
    const char *kw = open - 2 - kl;
    if (kw < msg + 1 || kw[-1] != '(' || strncmp(kw, kinds[k].kind, kl) || kw[kl] != ' ') continue;
    size_t wl = (size_t)(q - open);
    char *word = mem_alloc(wl + 1);
    memcpy(word, open, wl);
    word[wl] = 0;
    loc r = line_loc(S, line, word, kinds[k].how);
    free(word);
    return r;
  }
  return line_loc(S, line, NULL, 0);
}

/* The line of the innermost Lua function from stack level `level` up (0: none). */
static int lua_line(lua_State *L, int level) {
  lua_Debug ar;
  for (; lua_getstack(L, level, &ar); level++)
    if (lua_getinfo(L, "l", &ar) && ar.currentline > 0) return ar.currentline;
  return 0;
}

/* Where the script called the running ctx method: provenance of decisions. */
static loc call_loc(lua_State *L, const lapi_state *S, const char *method) {
  return line_loc(S, lua_line(L, 1), method, 'r');
}

/* luaL_error, remembering which method raised so that the caret can point at its call */
static int lapi_raise(lua_State *L, lapi_state *S, const char *method, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int lapi_raise(lua_State *L, lapi_state *S, const char *method, const char *fmt, ...) {
  /* the text lives in a Lua userdata, so the raise below leaks nothing */
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, aq);
  va_end(aq);
  char *msg = lua_newuserdatauv(L, n > 0 ? (size_t)n + 1 : 1, 0);
  msg[0] = 0;
  if (n > 0) vsnprintf(msg, (size_t)n + 1, fmt, ap);
  va_end(ap);
  S->hint = method;
  S->hint_line = lua_line(L, 1);
  return luaL_error(L, "%s", msg);
}

/* ---- the allocator and the hooks ---- */

/* The memory limit. A request over it is refused and remembered. Most
** times Lua then collects all garbage and asks again at once: refused
** again, the script holds too much. A luaL_Buffer does not ask again:
** settle collects at the next hook (or when the script ends) and looks
** whether the request fits then. Once the limit is reached every request
** that grows fails (a pcall that catches the error gets no further), and
** every hook raises again. */
static void *lapi_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  lapi_state *S = ud;
  if (!ptr) osize = 0;                 /* then osize tells the kind of object */
  if (nsize == 0) {
    free(ptr);
    S->used -= osize;
    return NULL;
  }
  if (nsize > osize && !S->closed && (S->over == OVER_MEMORY || nsize - osize > S->limit - S->used)) {
    if (S->refused && S->refused_block == ptr && S->refused_size == nsize && S->refused_grants == S->grants && S->over == OVER_NONE)
      S->over = OVER_MEMORY;             /* asked again after collecting, with nothing granted between */
    else if (S->over == OVER_NONE) {
      S->refused = nsize - osize;
      S->refused_block = ptr;
      S->refused_size = nsize;
      S->refused_grants = S->grants;
      S->refused_line = S->line;
    }
    return NULL;
  }
  void *q = realloc(ptr, nsize);
  if (!q) return NULL;
  S->used = S->used - osize + nsize;
  if (nsize > osize) {                   /* the work is counted; the next hook raises when it passes the limit */
    S->grants++;
    S->steps += (long long)((nsize - osize) / LAPI_BYTE_STEPS);
    if (ptr == S->refused_block && nsize == S->refused_size && S->refused) {   /* the request asked again fits */
      S->refused = 0;
      S->steps += (long long)(S->used / LAPI_BYTE_STEPS);                      /* after a full collection */
    }
  }
  return q;
}

/* A refused request, at a point where Lua may collect: with all garbage
** gone, does it fit? If not, the memory limit is reached. */
static void settle(lua_State *L, lapi_state *S) {
  size_t want = S->refused;
  if (!want || S->over) return;
  S->refused = 0;
  lua_gc(L, LUA_GCCOLLECT);
  if (want <= S->limit - S->used) return;
  S->over = OVER_MEMORY;
  S->line = S->refused_line;
}

static void lapi_hook(lua_State *L, lua_Debug *ar);

/* A limit reached: the error, raised again by every later hook (a pcall
** that catches it gets no further); lapi_run reports the limit. */
static int lapi_stop(lua_State *L, lapi_state *S) {
  if (S->over == OVER_NONE) S->over = OVER_STEPS;
  lua_sethook(L, lapi_hook, LUA_MASKCALL | LUA_MASKCOUNT, 1);
  if (S->over == OVER_MEMORY) lua_pushliteral(L, "not enough memory");   /* Lua's own string: nothing to allocate */
  else lua_pushfstring(L, "%s:%d: the script ran too long (more than %I instructions)", S->chunk, S->line, (lua_Integer)S->max_steps);
  return lua_error(L);
}

/* Count hook: the instruction limit, refused requests settled, and the
** line running (for errors that carry none, out of memory). Call hook: the
** caller's line, so that a C function that runs out of memory
** (string.rep) is placed on its call. */
static void lapi_hook(lua_State *L, lua_Debug *ar) {
  lapi_state *S = state_of(L);
  if (S->over) lapi_stop(L, S);        /* S->line stays where the limit was reached */
  if (ar->event != LUA_HOOKCOUNT) {
    int l = lua_line(L, 1);
    if (l > 0) S->line = l;
    return;
  }
  if (lua_getinfo(L, "l", ar) && ar->currentline > 0) S->line = ar->currentline;
  S->steps += LAPI_HOOK_EVERY;
  settle(L, S);
  if (S->steps > S->max_steps || S->over) lapi_stop(L, S);
}

/* A ctx call's work, counted against the instruction limit as the
** instructions it stands for: the limit bounds time spent in C too. */
static void charge(lua_State *L, lapi_state *S, long long steps) {
  if (S->over) lapi_stop(L, S);
  S->steps += steps;
  if (S->steps <= S->max_steps) return;
  int l = lua_line(L, 1);
  if (l > 0) S->line = l;
  lapi_stop(L, S);
}

/* work that walks every value n times over */
static long long per_value(const lapi_state *S, long long n) { return n * (long long)S->c->g->nvals; }

/* The message handler: a string message, the innermost line, the traceback. */
static int lapi_msgh(lua_State *L) {
  lapi_state *S = state_of(L);
  if (lua_touserdata(L, 1) == &lapi_reported || S->over == OVER_MEMORY) return 1;   /* out of memory: nothing more to allocate */
  if (!S->headroom) {
    S->headroom = 1;
    S->limit += LAPI_HEADROOM;
  }
  const char *msg = lua_tostring(L, 1);
  if (!msg) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) msg = lua_tostring(L, -1);
    else msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  S->err_line = lua_line(L, 1);
  if (!S->loading) {
    luaL_traceback(L, L, NULL, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, K_TRACE);
  }
  lua_pushstring(L, msg);
  return 1;
}

/* ---- objects: values and ops ---- */

static const char *kind_name(const ir_value *v) {
  switch (v->kind) {
  case IR_INPUT: return "input";
  case IR_PARAM: return "param";
  case IR_STATE: return "state";
  case IR_CONST: return "constant";
  case IR_OP: break;
  }
  return v->role == ROLE_GRAD ? "grad" : "value";
}

static void push_ints(lua_State *L, const int64_t *x, int n) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushinteger(L, (lua_Integer)x[i]);
    lua_rawseti(L, -2, i + 1);
  }
}

/* Which value or op a table on the stack is: kept in the registry, not in
** the table, whose fields the script may replace. key: id + 1 for a
** value, -(id + 1) for an op. */
static void remember(lua_State *L, lua_Integer key) {
  lua_getfield(L, LUA_REGISTRYINDEX, K_IDS);
  lua_pushvalue(L, -2);
  lua_pushinteger(L, key);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

/* The id of the value (op 0) or op (op 1) table at idx, or -1 when it is not one of ours. */
static int object_id(lua_State *L, const lapi_state *S, int idx, int op) {
  if (lua_type(L, idx) != LUA_TTABLE) return -1;
  idx = lua_absindex(L, idx);
  lua_getfield(L, LUA_REGISTRYINDEX, K_IDS);
  lua_pushvalue(L, idx);
  lua_Integer key = lua_rawget(L, -2) == LUA_TNUMBER ? lua_tointeger(L, -1) : 0;
  lua_pop(L, 2);
  lua_Integer id = op ? -key - 1 : key - 1;
  return id >= 0 && id < S->c->g->nvals ? (int)id : -1;
}

/* The cached table of value id (pushed). */
static void push_value(lua_State *L, lapi_state *S, int id) {
  lua_getfield(L, LUA_REGISTRYINDEX, K_VALUES);
  if (lua_rawgeti(L, -1, id + 1) != LUA_TNIL) {
    lua_remove(L, -2);
    return;
  }
  lua_pop(L, 1);
  const ir_value *v = S->c->g->vals[id];
  lua_createtable(L, 0, 8);
  lua_pushstring(L, v->name);
  lua_setfield(L, -2, "name");
  lua_pushstring(L, kind_name(v));
  lua_setfield(L, -2, "kind");
  lua_pushstring(L, ir_dtype_name(v->dtype));
  lua_setfield(L, -2, "dtype");
  push_ints(L, v->shape.d, v->shape.rank);
  lua_setfield(L, -2, "shape");
  lua_pushinteger(L, id + 1);
  lua_setfield(L, -2, "id");
  if (v->kind == IR_CONST) {
    lua_pushnumber(L, v->attr.scalar);
    lua_setfield(L, -2, "value");
  }
  luaL_setmetatable(L, "carve.value");     /* producer and users come on first use */
  remember(L, (lua_Integer)id + 1);
  lua_pushvalue(L, -1);
  lua_rawseti(L, -3, id + 1);
  lua_remove(L, -2);
}

/* An op's attributes as its signature names them (ops.h), values as the printer writes them. */
static void push_attrs(lua_State *L, const ir_value *v) {
  const ir_attrs *a = &v->attr;
  lua_newtable(L);
  char name[IR_SIG_NAME], t;
  int opt;
  for (const char *p = ir_opinfo_of(v->op)->sig; ir_sig_next(&p, name, &t, &opt);) {
    int64_t xs[IR_MAXRANK];
    const ir_index *ix = a->index;
    switch (t) {
    case 'v': case 'V': continue;
    case 's':
      if (ix && !strcmp(name, "combine")) lua_pushstring(L, ir_combiner_name(ix->combine));
      else if (ix) lua_pushstring(L, ix->other_bounds ? (v->op == IR_GATHER ? "fill" : "clip") : (v->op == IR_GATHER ? "clip" : "skip"));
      else lua_pushstring(L, a->spec ? a->spec : "");
      break;
    case 'f': lua_pushnumber(L, ir_attr_number(a, name)); break;
    case 'b': lua_pushboolean(L, ir_attr_flag(a, name)); break;
    case 'i':
      lua_pushinteger(L, ix ? ix->ivd : !strcmp(name, "dim") ? a->dim : !strcmp(name, "start") ? a->start : !strcmp(name, "rows") ? a->rows : a->end);
      break;
    case 'I':
      if (ix) push_ints(L, ix->v[ir_index_list(v->op, name)], ix->n[ir_index_list(v->op, name)]);
      else if (!strcmp(name, "shape")) push_ints(L, a->to.d, a->to.rank);
      else {
        for (int i = 0; i < a->ndims; i++) xs[i] = a->dims[i];
        push_ints(L, xs, a->ndims);
      }
      break;
    default: continue;
    }
    lua_setfield(L, -2, name);
  }
}

/* The cached table of the op whose result is value id (pushed). */
static void push_op(lua_State *L, lapi_state *S, int id) {
  lua_getfield(L, LUA_REGISTRYINDEX, K_OPS);
  if (lua_rawgeti(L, -1, id + 1) != LUA_TNIL) {
    lua_remove(L, -2);
    return;
  }
  lua_pop(L, 1);
  const ir_value *v = S->c->g->vals[id];
  lua_createtable(L, 0, 6);
  lua_pushstring(L, ir_opinfo_of(v->op)->name);
  lua_setfield(L, -2, "kind");
  lua_createtable(L, v->nargs, 0);
  for (int k = 0; k < v->nargs; k++) {
    push_value(L, S, v->args[k]);
    lua_rawseti(L, -2, k + 1);
  }
  lua_setfield(L, -2, "operands");
  lua_createtable(L, 1, 0);
  push_value(L, S, id);
  lua_rawseti(L, -2, 1);
  lua_setfield(L, -2, "results");
  push_attrs(L, v);
  lua_setfield(L, -2, "attrs");
  if (v->op == IR_EINSUM) {
    lua_pushstring(L, v->attr.spec);
    lua_setfield(L, -2, "spec");
  }
  luaL_setmetatable(L, "carve.op");
  remember(L, -(lua_Integer)id - 1);
  lua_pushvalue(L, -1);
  lua_rawseti(L, -3, id + 1);
  lua_remove(L, -2);
}

static lapi_state *live(lua_State *L) {
  lapi_state *S = state_of(L);
  if (S->closed) luaL_error(L, "the tactic has returned; its ctx can no longer be used");
  return S;
}

/* value.producer, value.users: made when first read (users then kept in the table) */
static int value_index(lua_State *L) {
  lapi_state *S = live(L);
  const char *k = lua_tostring(L, 2);
  if (!k || (strcmp(k, "producer") && strcmp(k, "users"))) return 0;
  int id = object_id(L, S, 1, 0);
  if (id < 0) return 0;
  const ir_value *v = S->c->g->vals[id];
  if (k[0] == 'p') {
    if (v->kind != IR_OP) return 0;
    push_op(L, S, id);
    return 1;
  }
  lua_createtable(L, v->nusers, 0);
  for (int i = 0; i < v->nusers; i++) {
    push_op(L, S, v->users[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_pushvalue(L, -1);
  lua_setfield(L, 1, "users");
  return 1;
}

/* tostring of a value or an op: from the program, whatever the script put in the table's fields */
static int value_tostring(lua_State *L) {
  const lapi_state *S = state_of(L);
  int id = object_id(L, S, 1, 0);
  lua_pushfstring(L, "value '%s'", id >= 0 ? S->c->g->vals[id]->name : "?");
  return 1;
}

static int op_tostring(lua_State *L) {
  const lapi_state *S = state_of(L);
  int id = object_id(L, S, 1, 1);
  const ir_value *v = id >= 0 ? S->c->g->vals[id] : NULL;
  lua_pushfstring(L, "op %s -> '%s'", v ? ir_opinfo_of(v->op)->name : "?", v ? v->name : "?");
  return 1;
}

/* A value argument: one of our value tables, or a name. Its id. */
static int check_value(lua_State *L, lapi_state *S, int arg, const char *method) {
  const ir_graph *g = S->c->g;
  if (lua_type(L, arg) == LUA_TSTRING) {
    const ir_value *v = ir_lookup(g, lua_tostring(L, arg));
    const struct ir_fused *fu = v ? NULL : ir_fused_match(g, lua_tostring(L, arg));
    if (fu)
      return lapi_raise(L, S, method, "ctx:%s: no value named '%s': it was fused into the attention op '%s' (docs/execution.md, "
                        "\"Fused attention\"); name '%s', or run with --no-fuse", method, fu->name, fu->into, fu->into);
    if (!v) return lapi_raise(L, S, method, "ctx:%s: no value named '%s'", method, lua_tostring(L, arg));
    return v->id;
  }
  int id = object_id(L, S, arg, 0);
  if (id >= 0) return id;
  return lapi_raise(L, S, method, "ctx:%s: argument %d must be a value (from ctx:values, an op's operands or results) or a value's name, not %s",
                    method, arg - 1, luaL_typename(L, arg));
}

/* An op argument: one of our op tables. The id of its result. */
static int check_op(lua_State *L, lapi_state *S, int arg, const char *method) {
  int id = object_id(L, S, arg, 1);
  if (id >= 0) return id;
  return lapi_raise(L, S, method, "ctx:%s: argument 1 must be an op (a value's producer or one of its users), not %s", method, luaL_typename(L, arg));
}

static int check_axis(lua_State *L, lapi_state *S, int arg, const char *method) {
  const char *name = luaL_checkstring(L, arg);
  const sh_plan *p = S->c->p;
  int a = shard_axis(p, name);
  if (a >= 0) return a;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 0; i < p->mesh.n; i++) {
    if (i) luaL_addstring(&b, ", ");
    luaL_addstring(&b, p->mesh.name[i]);
  }
  luaL_pushresult(&b);
  return lapi_raise(L, S, method, "unknown axis '%s'; the mesh has %s", name, lua_tostring(L, -1));
}

/* dim as tactic files take it: 0-based, negative from the end */
static int check_dim(lua_State *L, lapi_state *S, int arg, int v, const char *method) {
  lua_Integer d = luaL_checkinteger(L, arg);
  const ir_value *x = S->c->g->vals[v];
  lua_Integer i = d < 0 ? d + x->shape.rank : d;
  if (i < 0 || i >= x->shape.rank)
    return lapi_raise(L, S, method, "dim %lld is out of range for '%s' of rank %d", (long long)d, x->name, x->shape.rank);
  return (int)i;
}

/* The ctx of a method call, its base cost charged. */
static lapi_state *check_ctx(lua_State *L) {
  luaL_checkudata(L, 1, "carve.ctx");
  lapi_state *S = live(L);
  charge(L, S, LAPI_CALL_STEPS);
  return S;
}

/* ---- ctx: reading the program ---- */

static const char *const kind_words[] = {"input", "param", "grad", "state", "value", NULL};   /* ORDER TAC_SEL */
_Static_assert(sizeof kind_words / sizeof kind_words[0] == TAC_SEL_VALUE + 2, "ORDER TAC_SEL: kind_words");

static int selected(const ir_value *v, int sel) {
  switch (sel) {
  case TAC_SEL_INPUT: return v->kind == IR_INPUT;
  case TAC_SEL_PARAM: return v->kind == IR_PARAM;
  case TAC_SEL_GRAD: return v->role == ROLE_GRAD;
  case TAC_SEL_STATE: return v->kind == IR_STATE;
  default: return v->kind != IR_CONST;
  }
}

/* ctx:values([kind [, glob]]) */
static int ctx_values(lua_State *L) {
  lapi_state *S = check_ctx(L);
  int sel = TAC_SEL_VALUE;
  if (!lua_isnoneornil(L, 2)) {
    const char *k = luaL_checkstring(L, 2);
    size_t n = strlen(k);
    for (sel = 0; kind_words[sel]; sel++) {
      size_t m = strlen(kind_words[sel]);
      if ((n == m || (n == m + 1 && k[m] == 's')) && !strncmp(k, kind_words[sel], m)) break;
    }
    if (!kind_words[sel]) return lapi_raise(L, S, "values", "ctx:values: unknown kind '%s' (input, param, grad, state or value)", k);
  }
  const char *glob = luaL_optstring(L, 3, NULL);
  const ir_graph *g = S->c->g;
  charge(L, S, per_value(S, LAPI_LIST_STEPS));
  lua_newtable(L);
  int n = 0;
  for (int v = 0; v < g->nvals; v++) {
    if (!selected(g->vals[v], sel) || (glob && fnmatch(glob, g->vals[v]->name, 0))) continue;
    push_value(L, S, v);
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

/* ctx:value(name): the value, or nil */
static int ctx_value(lua_State *L) {
  lapi_state *S = check_ctx(L);
  const ir_value *v = ir_lookup(S->c->g, luaL_checkstring(L, 2));
  if (!v) return 0;
  push_value(L, S, v->id);
  return 1;
}

/* ctx:outputs(): the program's results, the loss first */
static int ctx_outputs(lua_State *L) {
  lapi_state *S = check_ctx(L);
  const ir_graph *g = S->c->g;
  lua_createtable(L, g->nouts, 0);
  for (int i = 0; i < g->nouts; i++) {
    push_value(L, S, g->outputs[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static void push_axes(lua_State *L, const sh_plan *p, uint32_t mask) {
  lua_newtable(L);
  int n = 0;
  for (int a = 0; a < p->mesh.n; a++)
    if ((mask >> a) & 1) {
      lua_pushstring(L, p->mesh.name[a]);
      lua_rawseti(L, -2, ++n);
    }
}

/* Partial sums are derived from the whole plan (shard_partials); actions
** must see none, so they are computed, copied and cleared again, once
** for each state that asks. */
static void refresh_partials(lapi_state *S) {
  if (S->partial_ok) return;
  sh_plan *p = S->c->p;
  shard_partials(p);
  for (int v = 0; v < p->g->nvals; v++) S->partial[v] = p->lay[v].partial;
  shard_unpartial(p);
  S->partial_ok = 1;
}

static const char partial_key = 0;     /* address: the hidden key holding a lazy list's value id */

/* ctx:sharding's second result is computed when first read: a list with
** the value's id under a hidden key, filled and made plain on first use */
static void push_partial(lua_State *L, int v) {
  lua_createtable(L, 0, 1);
  lua_pushlightuserdata(L, (void *)&partial_key);
  lua_pushinteger(L, v);
  lua_rawset(L, -3);
  luaL_setmetatable(L, "carve.partial");
}

static void fill_partial(lua_State *L) {
  lapi_state *S = live(L);
  lua_pushlightuserdata(L, (void *)&partial_key);
  if (lua_rawget(L, 1) != LUA_TNUMBER) {
    lua_pop(L, 1);
    return;
  }
  lua_Integer v = lua_tointeger(L, -1);
  lua_pop(L, 1);
  if (v < 0 || v >= S->c->g->nvals) return;      /* the script reached the hidden key (next) and changed it */
  lua_pushlightuserdata(L, (void *)&partial_key);
  lua_pushnil(L);
  lua_rawset(L, 1);
  if (!S->partial_ok) charge(L, S, per_value(S, LAPI_PARTIAL_STEPS));
  refresh_partials(S);
  const sh_plan *p = S->c->p;
  int n = 0;
  for (int a = 0; a < p->mesh.n; a++)
    if ((S->partial[v] >> a) & 1) {
      lua_pushstring(L, p->mesh.name[a]);
      lua_rawseti(L, 1, ++n);
    }
  lua_pushnil(L);
  lua_setmetatable(L, 1);
}

static int partial_index(lua_State *L) {
  fill_partial(L);
  lua_rawget(L, 1);
  return 1;
}

static int partial_len(lua_State *L) {
  fill_partial(L);
  lua_pushinteger(L, (lua_Integer)lua_rawlen(L, 1));
  return 1;
}

static int partial_pairs(lua_State *L) {
  fill_partial(L);
  lua_getglobal(L, "next");
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

/* ctx:sharding(v): per dim the axes it is split over; the partial-sum axes
** (computed when first read); per dim the axes a replicate keeps it whole on */
static int ctx_sharding(lua_State *L) {
  lapi_state *S = check_ctx(L);
  int v = check_value(L, S, 2, "sharding");
  const sh_plan *p = S->c->p;
  const sh_layout *l = &p->lay[v];
  int rank = p->g->vals[v]->shape.rank;
  lua_createtable(L, rank, 0);
  for (int i = 0; i < rank; i++) {
    lua_createtable(L, l->dim[i].n, 0);
    for (int k = 0; k < l->dim[i].n; k++) {
      lua_pushstring(L, p->mesh.name[l->dim[i].ax[k]]);
      lua_rawseti(L, -2, k + 1);
    }
    lua_rawseti(L, -2, i + 1);
  }
  push_partial(L, v);
  lua_createtable(L, rank, 0);
  for (int i = 0; i < rank; i++) {
    push_axes(L, p, l->forbid[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 3;
}

/* ctx:factors(op): the factor view of the op (rules.c) */
static int ctx_factors(lua_State *L) {
  lapi_state *S = check_ctx(L);
  int id = check_op(L, S, 2, "factors");
  sh_rule r;
  if (shard_rule_of(S->c->p, id, &r) < 0) return 0;
  static const char *const fkind[] = {"pass", "contract", "whole"};   /* F_PASS, F_CONTRACT, F_WHOLE */
  lua_createtable(L, 0, 3);
  lua_createtable(L, r.nops - 1, 0);
  for (int k = 0; k < r.nops; k++) {
    lua_createtable(L, r.rank[k], 0);
    for (int i = 0; i < r.rank[k]; i++) {
      if (r.map[k][i] < 0) lua_pushboolean(L, 0);
      else lua_pushinteger(L, r.map[k][i] + 1);
      lua_rawseti(L, -2, i + 1);
    }
    if (k < r.nops - 1) {
      lua_rawseti(L, -2, k + 1);
      continue;
    }
    lua_setfield(L, -3, "result");
    lua_setfield(L, -2, "operands");
  }
  lua_createtable(L, r.nf, 0);
  for (int f = 0; f < r.nf; f++) {
    lua_pushstring(L, fkind[r.kind[f]]);
    lua_rawseti(L, -2, f + 1);
  }
  lua_setfield(L, -2, "kind");
  return 1;
}

/* ctx:mesh(): {axis = size}, and the names in order */
static int ctx_mesh(lua_State *L) {
  lapi_state *S = check_ctx(L);
  const sh_mesh *m = &S->c->p->mesh;
  lua_createtable(L, 0, m->n);
  lua_createtable(L, m->n, 0);
  for (int i = 0; i < m->n; i++) {
    lua_pushinteger(L, (lua_Integer)m->size[i]);
    lua_setfield(L, -3, m->name[i]);
    lua_pushstring(L, m->name[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 2;
}

/* ---- ctx: actions ---- */

/* After an action: propagate, unless ctx:together holds it back. */
static void acted(lua_State *L, lapi_state *S) {
  S->partial_ok = 0;
  if (S->held) return;
  charge(L, S, per_value(S, LAPI_PROP_STEPS));
  shard_propagate(S->c->p);
}

/* A refused action: the conflict message it recorded (or, when the same
** refusal was recorded before, the same message made again). */
static void push_refusal(lua_State *L, const sh_plan *p, int ncon, int v, int dim, int axis, int replicate) {
  if (p->ncon > ncon) { lua_pushstring(L, p->con[p->ncon - 1].message); return; }
  const ir_value *x = p->g->vals[v];
  const sh_layout *l = &p->lay[v];
  int used = shard_uses_axis(l, x->shape.rank, axis);
  const char *ax = p->mesh.name[axis];
  if (replicate) lua_pushfstring(L, "replicate '%s' on '%s' refused: it is already split on '%s' (dim %d)", x->name, ax, ax, used);
  else
    lua_pushfstring(L, "split dim %d of '%s' on '%s' refused: '%s' %s", dim, x->name, ax, x->name,
                    used == dim ? "is already split on that axis" : used >= 0 ? "already uses that axis on another dim"
                                                                    : "is kept whole on that axis by a replicate");
}

/* ctx:shard(v, dim, axis [, "split" | "storage"]) */
static int ctx_shard(lua_State *L) {
  lapi_state *S = check_ctx(L);
  int v = check_value(L, S, 2, "shard");
  const ir_value *x = S->c->g->vals[v];
  if (x->kind == IR_CONST) return lapi_raise(L, S, "shard", "ctx:shard: '%s' is a literal, not a tensor to split", x->name);
  int dim = check_dim(L, S, 3, v, "shard");
  int axis = check_axis(L, S, 4, "shard");
  const char *how = luaL_optstring(L, 5, "split");
  if (strcmp(how, "split") && strcmp(how, "storage"))
    return lapi_raise(L, S, "shard", "ctx:shard: the fourth argument is \"split\" or \"storage\" (ZeRO's: only the "
                      "optimizer's update reads the pieces; every other op reads the value gathered), not \"%s\"", how);
  sh_plan *p = S->c->p;
  p->at = call_loc(L, S, "shard");
  int ncon = p->ncon;
  diag scratch;
  diag_init(&scratch);
  p->storage = !strcmp(how, "storage");
  int rc = shard_split(p, v, dim, axis, &scratch);
  p->storage = 0;
  diag_free(&scratch);
  if (rc < 0) {
    int64_t pieces = layout_pieces(p, &p->lay[v].dim[dim]) * p->mesh.size[axis];
    return lapi_raise(L, S, "shard", "cannot split dim %d of '%s' (size %lld) into %lld pieces on '%s': it is not divisible", dim, x->name,
                 (long long)x->shape.d[dim], (long long)pieces, p->mesh.name[axis]);
  }
  if (rc > 0) {
    lua_pushboolean(L, 0);
    push_refusal(L, p, ncon, v, dim, axis, 0);
    return 2;
  }
  acted(L, S);
  lua_pushboolean(L, 1);
  return 1;
}

/* ctx:replicate(v, axis [, dim]) */
static int ctx_replicate(lua_State *L) {
  lapi_state *S = check_ctx(L);
  int v = check_value(L, S, 2, "replicate");
  if (S->c->g->vals[v]->kind == IR_CONST) return lapi_raise(L, S, "replicate", "ctx:replicate: '%s' is a literal", S->c->g->vals[v]->name);
  int axis = check_axis(L, S, 3, "replicate");
  int dim = lua_isnoneornil(L, 4) ? -1 : check_dim(L, S, 4, v, "replicate");
  sh_plan *p = S->c->p;
  p->at = call_loc(L, S, "replicate");
  int ncon = p->ncon;
  if (shard_replicate(p, v, dim, axis) > 0) {
    lua_pushboolean(L, 0);
    push_refusal(L, p, ncon, v, dim, axis, 1);
    return 2;
  }
  acted(L, S);
  lua_pushboolean(L, 1);
  return 1;
}

static int together_close(lua_State *L) {
  lapi_state *S = state_of(L);
  if (--S->held == 0 && !S->closed) {
    S->c->p->at = S->together_at;     /* propagation's conflicts point at the call */
    acted(L, S);
  }
  return 0;
}

/* ctx:together(fn): fn's actions propagate once, when it returns (or
** raises), as a tactic file's block does: many decisions for the price
** of one propagation, each seeing the plan without the others' effects */
static int ctx_together(lua_State *L) {
  lapi_state *S = check_ctx(L);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_newuserdatauv(L, 0, 0);
  luaL_setmetatable(L, "carve.together");
  lua_toclose(L, -1);            /* held is given back however fn ends */
  if (S->held++ == 0) S->together_at = call_loc(L, S, "together");
  lua_pushvalue(L, 2);
  lua_call(L, 0, 0);
  return 0;
}

/* ctx:mark(): a point to come back to */
static int ctx_mark(lua_State *L) {
  lapi_state *S = check_ctx(L);
  charge(L, S, per_value(S, LAPI_MARK_STEPS));
  lapi_mark *m = lua_newuserdatauv(L, sizeof *m, 0);
  luaL_setmetatable(L, "carve.mark");
  lua_getfield(L, LUA_REGISTRYINDEX, K_MARKS);
  lua_Integer serial = S->serial + 1;
  lua_pushinteger(L, serial);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  lua_pop(L, 1);
  S->serial = serial;
  m->serial = serial;
  m->m = shard_mark(S->c->p);
  return 1;
}

/* ctx:rollback(mark): back to the state at mark; later marks are discarded */
static int ctx_rollback(lua_State *L) {
  lapi_state *S = check_ctx(L);
  lapi_mark *m = luaL_checkudata(L, 2, "carve.mark");
  charge(L, S, per_value(S, LAPI_MARK_STEPS));
  lua_getfield(L, LUA_REGISTRYINDEX, K_MARKS);
  lua_Integer n = (lua_Integer)lua_rawlen(L, -1), at = 0;
  for (lua_Integer i = n; i >= 1 && !at; i--) {
    lua_rawgeti(L, -1, i);
    if (lua_tointeger(L, -1) == m->serial) at = i;
    lua_pop(L, 1);
  }
  if (!at) return lapi_raise(L, S, "rollback", "ctx:rollback: this mark was discarded by a rollback to an earlier one");
  for (lua_Integer i = n; i > at; i--) {
    lua_pushnil(L);
    lua_rawseti(L, -2, i);
  }
  lua_pop(L, 1);
  shard_rollback(S->c->p, m->m);
  S->partial_ok = 0;
  return 0;
}

/* ctx:cost(): {time = s, memory = bytes, ...} of the plan now, on the device profile */
static int ctx_cost(lua_State *L) {
  lapi_state *S = check_ctx(L);
  charge(L, S, per_value(S, LAPI_COST_STEPS));
  char err[600] = "";
  tactic_ctx *c = S->c;
  if (!S->have_prof) {
    const char *dev = c->o->device ? c->o->device : LAPI_PROFILE;
    diag d;
    diag_init(&d);
    if (sim_profile_load(c->mem, &d, dev, c->o->profile_dir ? c->o->profile_dir : sim_profile_dir(), &S->prof) == 0) S->have_prof = 1;
    else snprintf(err, sizeof err, "%s", diag_text(&d));
    diag_free(&d);
    if (!S->have_prof) {
      char *nl = strchr(err, '\n');
      if (nl) *nl = 0;
      return lapi_raise(L, S, "cost", "ctx:cost: no device profile: %s", err);
    }
  }
  sim_result r;
  arena a;
  diag d;
  arena_init(&a);
  diag_init(&d);
  shard_partials(c->p);
  int rc = sim_plan(c->g, c->p, &S->prof, NULL, 0, 0, &a, &r, &d);
  shard_unpartial(c->p);
  double time = r.total, memory = r.mem.peak, compute = r.compute, comm = r.communication;
  if (rc < 0) snprintf(err, sizeof err, "%s", diag_text(&d));
  else sim_result_free(&r);
  diag_free(&d);
  arena_free(&a);
  if (rc < 0) {
    char *nl = strchr(err, '\n');
    if (nl) *nl = 0;
    return lapi_raise(L, S, "cost", "ctx:cost: %s", err);
  }
  lua_createtable(L, 0, 4);
  lua_pushnumber(L, time);
  lua_setfield(L, -2, "time");
  lua_pushnumber(L, memory);
  lua_setfield(L, -2, "memory");
  lua_pushnumber(L, compute);
  lua_setfield(L, -2, "compute");
  lua_pushnumber(L, comm);
  lua_setfield(L, -2, "communication");
  return 1;
}

/* ---- ctx: messages in carve's own words ---- */

/* where a message about argument `key` points: its value, else the declaration */
static loc arg_loc(const lapi_tactic *t, const char *key) {
  for (int i = t->nargs - 1; key && i >= 0; i--)
    if (!strcmp(t->args[i].key, key)) return t->args[i].at;
  return t->decl;
}

/* An error at argument key (printf-style), and the script stops. */
static int ctx_fail(lua_State *L, lapi_state *S, const char *key, const char *fmt, ...) {
  char msg[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_error(S->c->d, arg_loc(S->t, key), "%s", msg);
  S->reported = 1;
  lua_pushlightuserdata(L, (void *)&lapi_reported);
  return lua_error(L);
}

/* ctx:error(msg [, arg]): a carve error at the tactic's declaration (or
** the argument's value); the script stops */
static int ctx_error(lua_State *L) {
  lapi_state *S = check_ctx(L);
  const char *msg = luaL_checkstring(L, 2);
  return ctx_fail(L, S, luaL_optstring(L, 3, NULL), "%s", msg);
}

/* ctx:axis(args): the tactic's `axis` argument checked against the mesh;
** returns its name and size. A missing one is an error at the use line
** that says what to write; a wrong one, at the argument. */
static int ctx_axis(lua_State *L) {
  lapi_state *S = check_ctx(L);
  luaL_checktype(L, 2, LUA_TTABLE);
  const sh_mesh *m = &S->c->p->mesh;
  lua_getfield(L, 2, "axis");
  int type = lua_type(L, -1);
  if (type == LUA_TSTRING) {
    const char *a = lua_tostring(L, -1);
    for (int i = 0; i < m->n; i++)
      if (!strcmp(m->name[i], a)) {
        lua_pushinteger(L, (lua_Integer)m->size[i]);
        return 2;
      }
  }
  if (type == LUA_TNIL) {
    const char *base = strrchr(S->t->path, '/');
    base = base ? base + 1 : S->t->path;
    size_t n = strlen(base);
    if (n > 4 && !strcmp(base + n - 4, ".lua")) n -= 4;
    diag_error(S->c->d, arg_loc(S->t, NULL), "%.*s needs an axis: use \"%.*s\" as %s (axis = ...)", (int)n, base, (int)n, base, S->t->name);
  } else if (type != LUA_TSTRING) {
    diag_error(S->c->d, arg_loc(S->t, "axis"), "axis must be an axis name");
  } else {
    strbuf b;
    sb_init(&b);
    for (int i = 0; i < m->n; i++) sb_printf(&b, "%s%s", i ? ", " : "", m->name[i]);
    diag_error(S->c->d, arg_loc(S->t, "axis"), "unknown axis '%s'; the mesh has %s", lua_tostring(L, -1), sb_str(&b));
    sb_free(&b);
  }
  S->reported = 1;
  lua_pushlightuserdata(L, (void *)&lapi_reported);
  return lua_error(L);
}

/* ctx:pipeline(args): the program placed on stages along args.axis, the
** batch run in args.microbatches microbatches in turn on each device, in
** the order args.order ("1f1b", the default, "gpipe", "interleaved":
** each stage holds args.chunks parts, default 2, part k on stage k mod
** stages, as Megatron's virtual stages; or "zb-h1", zero-bubble: the
** weights' gradients apart from the rest of the backward); the parts end at the values
** args.at names (one fewer than the parts), else where the
** program is cut by the fewest values into parts of equal work. Returns
** the name of the microbatch axis: a virtual axis of the mesh, its pieces
** run one after another, over which the tactic splits the batch (nil for
** one microbatch), and the batch: the first dim most inputs share, which
** each device's rows of must divide into the microbatches. */
static int ctx_pipeline(lua_State *L) {
  lapi_state *S = check_ctx(L);
  luaL_checktype(L, 2, LUA_TTABLE);
  sh_plan *p = S->c->p;
  const ir_graph *g = p->g;
  lua_getfield(L, 2, "axis");
  const char *an = lua_tostring(L, -1);
  int axis = an ? shard_axis(p, an) : -1;
  if (axis < 0) return ctx_fail(L, S, "axis", "pipeline: the stage axis '%s' is not an axis of the mesh", an ? an : "?");
  if (p->pipe.axis >= 0) return ctx_fail(L, S, NULL, "pipeline: the program is pipelined already (over '%s'); one pipeline a plan",
                                         p->mesh.name[p->pipe.axis]);
  if (p->mesh.size[axis] > 64) return ctx_fail(L, S, "axis", "pipeline: '%s' has %lld stages; at most 64", an, (long long)p->mesh.size[axis]);
  for (int v = 0; v < g->nvals; v++)
    if (shard_uses_axis(&p->lay[v], g->vals[v]->shape.rank, axis) >= 0)
      return ctx_fail(L, S, "axis", "pipeline: the stage axis splits '%s' already; give the stages an axis of their own",
                      g->vals[v]->name);
  lua_getfield(L, 2, "microbatches");
  int isnum = 0;
  lua_Integer m = lua_tointegerx(L, -1, &isnum);
  if (lua_type(L, -1) != LUA_TNUMBER) isnum = 0;   /* (not "4", a string Lua would take for a number) */
  if (lua_isnil(L, -1)) m = p->mesh.size[axis], isnum = 1;
  if (!isnum || m < 1 || m > 4096)
    return ctx_fail(L, S, "microbatches", "pipeline: microbatches must be a whole number from 1 to 4096");
  lua_getfield(L, 2, "order");
  const char *order = lua_isnil(L, -1) ? "1f1b" : lua_tostring(L, -1);
  int ord = order && !strcmp(order, "1f1b") ? SH_1F1B : order && !strcmp(order, "gpipe") ? SH_GPIPE
          : order && !strcmp(order, "interleaved") ? SH_INTERLEAVED : order && !strcmp(order, "zb-h1") ? SH_ZB : -1;
  if (ord < 0)
    return ctx_fail(L, S, "order", "pipeline: unknown order '%s'; use \"1f1b\", \"gpipe\", \"interleaved\" or \"zb-h1\"", order ? order : "?");
  lua_Integer chunks = 1;
  lua_getfield(L, 2, "chunks");
  if (!lua_isnil(L, -1)) {
    chunks = lua_tointegerx(L, -1, &isnum);
    if (!isnum || lua_type(L, -1) != LUA_TNUMBER || chunks < 1 || chunks > 64)
      return ctx_fail(L, S, "chunks", "pipeline: chunks (the parts of the program each stage holds) must be a whole number from 1 to 64");
    if (ord != SH_INTERLEAVED && chunks > 1)
      return ctx_fail(L, S, "chunks", "pipeline: chunks is the interleaved schedule's; give order = \"interleaved\" with it");
  } else if (ord == SH_INTERLEAVED) {
    chunks = 2;
  }
  if (ord == SH_INTERLEAVED && m % p->mesh.size[axis])
    return ctx_fail(L, S, "microbatches", "pipeline: the interleaved schedule runs the microbatches in groups of one a stage: %lld "
                    "microbatches do not divide among %lld stages", (long long)m, (long long)p->mesh.size[axis]);
  if (p->mesh.size[axis] * chunks > 4096)
    return ctx_fail(L, S, "chunks", "pipeline: %lld stages of %lld chunks each: at most 4096 parts", (long long)p->mesh.size[axis],
                    (long long)chunks);
  int64_t parts = p->mesh.size[axis] * chunks;
  if (p->mesh.n >= SH_MAXAXES)
    return ctx_fail(L, S, NULL, "pipeline: the mesh has %d axes already, and the microbatches need one more", SH_MAXAXES);
  int ncuts = 0, *cuts = NULL;
  lua_getfield(L, 2, "at");
  if (!lua_isnil(L, -1)) {
    if (!lua_istable(L, -1)) return ctx_fail(L, S, "at", "pipeline: at must be a list of value names");
    ncuts = (int)luaL_len(L, -1);
    if (ncuts != parts - 1)
      return ctx_fail(L, S, "at", "pipeline: at names the values that end each %s but the last: %lld of them",
                      chunks > 1 ? "part (stages x chunks)" : "stage", (long long)parts - 1);
    cuts = arena_alloc(&p->mem, sizeof *cuts * (size_t)(ncuts + 1));
    for (int i = 0; i < ncuts; i++) {
      lua_geti(L, -1, i + 1);
      const char *nm = lua_tostring(L, -1);
      const ir_value *v = nm ? ir_lookup(g, nm) : NULL;
      if (!v || v->kind != IR_OP) return ctx_fail(L, S, "at", "pipeline: at: '%s' is not a value of the program's ops", nm ? nm : "?");
      if (i && v->id <= cuts[i - 1])
        return ctx_fail(L, S, "at", "pipeline: at: '%s' comes before the value that ends the stage before it; name them in program order", nm);
      cuts[i] = v->id;
      lua_pop(L, 1);
    }
  }
  /* the batch: the first dim most inputs share (the larger on a tie); an
     input without it (a bias fed as data) stays whole on every microbatch */
  int64_t batch = 0;
  int most = 0, nin = 0, *in = arena_alloc(S->c->mem, sizeof(int) * (size_t)(g->nvals + 1));
  for (int v = 0; v < g->nvals; v++) if (g->vals[v]->kind == IR_INPUT && g->vals[v]->shape.rank >= 1) in[nin++] = v;
  for (int i = 0; i < nin; i++) {
    int64_t d0 = g->vals[in[i]]->shape.d[0];
    int n = 0;
    for (int j = 0; j < nin; j++) n += g->vals[in[j]]->shape.d[0] == d0;
    if (n > most || (n == most && d0 > batch)) most = n, batch = d0;
  }
  for (int i = 0; i < nin && m > 1; i++) {          /* each device's rows of it divide into the microbatches */
    int v = in[i];
    const ir_value *x = g->vals[v];
    if (x->shape.d[0] != batch) continue;
    ir_shape local = x->shape;
    shard_local(p, v, &local);
    if (local.d[0] % m)
      return ctx_fail(L, S, "microbatches", "pipeline: %lld microbatches do not divide the %lld rows of the batch a device holds "
                      "('%s', dim 0 of %lld%s); give a number of microbatches that divides %lld", (long long)m, (long long)local.d[0],
                      x->name, (long long)batch, local.d[0] < batch ? ", split over other axes" : "", (long long)local.d[0]);
  }
  if (m == 1) {                     /* one microbatch: the stages alone, no axis to split the batch over */
    p->pipe = (sh_pipe){axis, -1, ord, (int)chunks, ncuts, cuts, S->t->name, S->t->decl};
    lua_pushnil(L);
    return 1;
  }
  char name[32];
  snprintf(name, sizeof name, "micro");
  for (int k = 2; shard_axis(p, name) >= 0; k++) snprintf(name, sizeof name, "micro%d", k);
  int micro = p->mesh.n++;
  p->mesh.name[micro] = arena_intern_cstr(&p->mem, name);
  p->mesh.size[micro] = m;
  p->mesh.virt |= 1u << micro;
  p->pipe = (sh_pipe){axis, micro, ord, (int)chunks, ncuts, cuts, S->t->name, S->t->decl};
  lua_pushstring(L, name);
  lua_pushinteger(L, batch);
  return 2;
}

/* ctx:ring([args]): fused attention may keep its sequence split from now
** on: its keys and values then pass around the devices that split it (ring
** attention) rather than being gathered. With args, args.balance says how
** args.axis deals its pieces: "zigzag" (the default: each device two
** blocks of 2P, q and 2P-1-q, so that under a causal mask every device
** does the same work) or "none" (block q of P). */
static int ctx_ring(lua_State *L) {
  lapi_state *S = check_ctx(L);
  sh_plan *p = S->c->p;
  shard_set_ring(p, 1);
  if (lua_isnoneornil(L, 2)) return 0;
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_getfield(L, 2, "axis");
  const char *an = lua_tostring(L, -1);
  int axis = an ? shard_axis(p, an) : -1;
  if (axis < 0) return ctx_fail(L, S, "axis", "ring: axis must name a mesh axis");
  lua_getfield(L, 2, "balance");
  const char *bal = lua_isnil(L, -1) ? "zigzag" : lua_tostring(L, -1);
  if (!bal || (strcmp(bal, "zigzag") && strcmp(bal, "none")))
    return ctx_fail(L, S, "balance", "context: unknown balance '%s'; use \"zigzag\" (each device two blocks, q and 2P-1-q, so "
                    "that the causal mask leaves every device the same work) or \"none\" (block q of P)", bal ? bal : "?");
  if (!strcmp(bal, "zigzag")) p->mesh.zigzag |= 1u << axis;
  else p->mesh.zigzag &= ~(1u << axis);
  return 0;
}

/* ctx:warn(msg [, arg]): a warning there (an error, and the end, unless --lenient) */
static int ctx_warn(lua_State *L) {
  lapi_state *S = check_ctx(L);
  const char *msg = luaL_checkstring(L, 2);
  const char *key = luaL_optstring(L, 3, NULL);
  if (diag_warning(S->c->d, arg_loc(S->t, key), "%s", msg) == 0) return 0;
  S->reported = 1;
  lua_pushlightuserdata(L, (void *)&lapi_reported);
  return lua_error(L);
}

/* ctx:note(v, msg): why the tactic left v as it is, for carve explain
** (kept in the plan: a rollback to an earlier mark takes it back) */
static int ctx_note(lua_State *L) {
  lapi_state *S = check_ctx(L);
  int v = check_value(L, S, 2, "note");
  const char *msg = luaL_checkstring(L, 3);
  sh_plan *p = S->c->p;
  p->at = call_loc(L, S, "note");
  shard_note(p, v, msg);
  return 0;
}

static int ctx_tostring(lua_State *L) {
  lua_pushfstring(L, "ctx of tactic '%s'", state_of(L)->t->name);
  return 1;
}

static const luaL_Reg ctx_methods[] = {
  {"values", ctx_values}, {"value", ctx_value}, {"outputs", ctx_outputs},
  {"sharding", ctx_sharding}, {"factors", ctx_factors}, {"mesh", ctx_mesh}, {"axis", ctx_axis},
  {"shard", ctx_shard}, {"replicate", ctx_replicate},
  {"together", ctx_together}, {"mark", ctx_mark}, {"rollback", ctx_rollback}, {"cost", ctx_cost},
  {"error", ctx_error}, {"warn", ctx_warn}, {"note", ctx_note}, {"pipeline", ctx_pipeline}, {"ring", ctx_ring},
  {NULL, NULL}
};

/* ---- the sandbox ---- */

/* print, to stderr: stdout carries carve's own output (--json); a byte
** written counts as an instruction */
static int lapi_print(lua_State *L) {
  lapi_state *S = state_of(L);
  int n = lua_gettop(L);
  for (int i = 1; i <= n; i++) {
    size_t len;
    const char *s = luaL_tolstring(L, i, &len);
    charge(L, S, (long long)len);
    if (i > 1) fputc('\t', stderr);
    fwrite(s, 1, len, stderr);
    lua_pop(L, 1);
  }
  fputc('\n', stderr);
  return 0;
}

/* collectgarbage: counting and collecting; the collector's settings stay carve's */
static int lapi_collectgarbage(lua_State *L) {
  const char *o = luaL_optstring(L, 1, "collect");
  if (!strcmp(o, "collect")) {
    lua_gc(L, LUA_GCCOLLECT);
    lua_pushinteger(L, 0);
  } else if (!strcmp(o, "step")) {
    lua_pushboolean(L, lua_gc(L, LUA_GCSTEP, 0));
  } else if (!strcmp(o, "count")) {
    lua_pushnumber(L, (lua_Number)lua_gc(L, LUA_GCCOUNT) + (lua_Number)lua_gc(L, LUA_GCCOUNTB) / 1024);
  } else if (!strcmp(o, "isrunning")) {
    lua_pushboolean(L, lua_gc(L, LUA_GCISRUNNING));
  } else {
    return luaL_error(L, "collectgarbage('%s') is not available to a tactic script", o);
  }
  return 1;
}

/* setmetatable, refusing a metatable with a __gc field: Lua runs
** finalisers with hooks off (during any collection, and at close), where
** no limit could stop them. The field is what Lua looks at when the
** metatable is set; one added later makes no finaliser. */
static int lapi_setmetatable(lua_State *L) {
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    if (lua_rawget(L, 2) != LUA_TNIL)
      return luaL_error(L, "setmetatable: a metatable with __gc is refused: a tactic script may not have finalisers "
                        "(Lua runs them outside the script's limits); release what you hold before the function returns");
    lua_pop(L, 1);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

/* string.find, match, gmatch and gsub run in C, where the count hook cannot
** stop them, and a pattern with k quantifiers can take (length)^(k+1)
** steps to fail ('.-.-b' over 10^5 characters: hours). Each call is
** charged its worst case before it runs: (subject length + 1) raised to
** the pattern's quantifiers (one more when the pattern is not anchored by
** a leading '^'), times the pattern's length; a plain search is subject
** times pattern. What the limit cannot afford stops the script at once. */
#define LAPI_MATCH_STEPS 4            /* pattern-matching steps to one instruction */
static int lapi_match(lua_State *L) {
  size_t ls = 0, lp = 0;
  luaL_checklstring(L, 1, &ls);
  const char *pat = luaL_checklstring(L, 2, &lp);
  int plain = lua_toboolean(L, lua_upvalueindex(2)) && lua_toboolean(L, 4);   /* find's fourth argument */
  int quant = 0;
  for (size_t i = 0; i < lp && !plain; i++) {
    if (pat[i] == '%') { i++; continue; }
    quant += pat[i] == '*' || pat[i] == '+' || pat[i] == '-' || pat[i] == '?';
  }
  int power = plain ? 1 : quant + (lp && pat[0] == '^' ? 0 : 1);
  double work = (double)lp + 1;
  for (int i = 0; i < power && work < 1e18; i++) work *= (double)ls + 1;
  charge(L, state_of(L), work / LAPI_MATCH_STEPS >= 1e18 ? (long long)1e18 : (long long)(work / LAPI_MATCH_STEPS));
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

static void open_sandbox(lua_State *L) {
  static const struct { const char *name; lua_CFunction open; } libs[] = {
    {LUA_GNAME, luaopen_base}, {LUA_TABLIBNAME, luaopen_table}, {LUA_STRLIBNAME, luaopen_string},
    {LUA_MATHLIBNAME, luaopen_math}, {LUA_UTF8LIBNAME, luaopen_utf8},
  };
  for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
    luaL_requiref(L, libs[i].name, libs[i].open, 1);
    lua_pop(L, 1);
  }
  static const char *const gone[] = {"load", "loadfile", "dofile", "require", "loadstring", NULL};
  for (int i = 0; gone[i]; i++) {
    lua_pushnil(L);
    lua_setglobal(L, gone[i]);
  }
  lua_pushcfunction(L, lapi_print);
  lua_setglobal(L, "print");
  lua_pushcfunction(L, lapi_collectgarbage);
  lua_setglobal(L, "collectgarbage");
  lua_getglobal(L, "setmetatable");
  lua_pushcclosure(L, lapi_setmetatable, 1);
  lua_setglobal(L, "setmetatable");
  lua_getglobal(L, LUA_STRLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");
  static const char *const matchers[] = {"find", "match", "gmatch", "gsub", NULL};
  for (int i = 0; matchers[i]; i++) {           /* the same table strings index: s:find() too */
    lua_getfield(L, -1, matchers[i]);
    lua_pushboolean(L, i == 0);
    lua_pushcclosure(L, lapi_match, 2);
    lua_setfield(L, -2, matchers[i]);
  }
  lua_pop(L, 1);
  /* the same numbers every run: a tactic that draws them plans alike */
  lua_getglobal(L, LUA_MATHLIBNAME);
  lua_getfield(L, -1, "randomseed");
  lua_pushinteger(L, 0);
  lua_call(L, 1, 0);
  lua_pop(L, 1);
}

static void push_tvalue(lua_State *L, const tac_value *v) {
  luaL_checkstack(L, 4, "tactic argument nested too deeply");
  switch (v->kind) {
  case TAC_VNAME: case TAC_VSTR: lua_pushstring(L, v->text); break;
  case TAC_VINT: case TAC_VSIZE: lua_pushinteger(L, (lua_Integer)v->i); break;
  case TAC_VNUM: case TAC_VSECONDS: lua_pushnumber(L, v->num); break;   /* durations in seconds */
  case TAC_VLIST:
    lua_createtable(L, v->nitems, 0);
    for (int i = 0; i < v->nitems; i++) {
      push_tvalue(L, &v->items[i]);
      lua_rawseti(L, -2, i + 1);
    }
    break;
  case TAC_VRANGE:
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, (lua_Integer)v->i);
    lua_setfield(L, -2, "lo");
    lua_pushinteger(L, (lua_Integer)v->hi);
    lua_setfield(L, -2, "hi");
    break;
  }
}

static void new_metatable(lua_State *L, const char *name, const luaL_Reg *fns) {
  luaL_newmetatable(L, name);
  luaL_setfuncs(L, fns, 0);
  lua_pushstring(L, name);
  lua_setfield(L, -2, "__metatable");   /* scripts cannot swap it */
}

/* Everything that can raise runs here, under lapi_run's lua_pcall. */
static int lapi_main(lua_State *L) {
  lapi_state *S = state_of(L);
  const tactic_ctx *c = S->c;
  open_sandbox(L);
  static const luaL_Reg value_mt[] = {{"__index", value_index}, {"__tostring", value_tostring}, {NULL, NULL}};
  static const luaL_Reg op_mt[] = {{"__tostring", op_tostring}, {NULL, NULL}};
  static const luaL_Reg ctx_mt[] = {{"__tostring", ctx_tostring}, {NULL, NULL}};
  static const luaL_Reg mark_mt[] = {{NULL, NULL}};
  static const luaL_Reg together_mt[] = {{"__close", together_close}, {NULL, NULL}};
  static const luaL_Reg partial_mt[] = {{"__index", partial_index}, {"__len", partial_len}, {"__pairs", partial_pairs}, {NULL, NULL}};
  new_metatable(L, "carve.value", value_mt);
  new_metatable(L, "carve.op", op_mt);
  new_metatable(L, "carve.mark", mark_mt);
  new_metatable(L, "carve.together", together_mt);
  new_metatable(L, "carve.partial", partial_mt);   /* a filled list drops it (from C) */
  lua_pop(L, 2);
  new_metatable(L, "carve.ctx", ctx_mt);
  luaL_newlib(L, ctx_methods);
  lua_pushstring(L, S->t->name);
  lua_setfield(L, -2, "tactic");
  static const char *const kinds[] = {NULL, "sgd", "adam", "step", "adamw"};   /* ORDER train_kind */
  lua_pushstring(L, c->g->train >= 0 && c->g->train < (int)(sizeof kinds / sizeof kinds[0]) ? kinds[c->g->train] : NULL);
  lua_setfield(L, -2, "train");
  lua_setfield(L, -2, "__index");
  lua_pop(L, 4);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, K_VALUES);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, K_OPS);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, K_MARKS);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, K_IDS);
  S->partial = lua_newuserdatauv(L, sizeof(uint32_t) * (size_t)(c->g->nvals + 1), 0);
  lua_setfield(L, LUA_REGISTRYINDEX, K_PARTIAL);

  /* the chunk: text only (no precompiled code), named @path so messages carry it */
  S->loading = 1;
  const char *chunkname = lua_pushfstring(L, "@%s", S->src->name);
  if (luaL_loadbufferx(L, S->src->text, S->src->len, chunkname, "t") != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    lua_Debug ar;      /* the name messages start with: compile an empty chunk of the same name */
    if (luaL_loadbufferx(L, "", 0, chunkname, "t") == LUA_OK && lua_getinfo(L, ">S", &ar))
      snprintf(S->chunk, sizeof S->chunk, "%s", ar.short_src);
    lua_pushstring(L, msg);
    return lua_error(L);
  }
  S->loading = 0;
  lua_Debug ar;
  lua_pushvalue(L, -1);
  lua_getinfo(L, ">S", &ar);
  snprintf(S->chunk, sizeof S->chunk, "%s", ar.short_src);
  lua_sethook(L, lapi_hook, LUA_MASKCALL | LUA_MASKCOUNT, LAPI_HOOK_EVERY);
  S->line = 1;                 /* until a hook sees one: where the running function begins */
  lua_call(L, 0, 1);
  if (!lua_isfunction(L, -1)) {
    diag_error(c->d, S->t->path_at, "'%s' must return a function(ctx, args), not %s", S->src->name, luaL_typename(L, -1));
    diag_note(c->d, S->t->decl, "for tactic '%s'", S->t->name);
    S->reported = 1;
    lua_pushlightuserdata(L, (void *)&lapi_reported);
    return lua_error(L);
  }
  lua_pushvalue(L, -1);
  if (lua_getinfo(L, ">S", &ar) && ar.linedefined > 0) S->line = ar.linedefined;
  lua_newuserdatauv(L, 0, 0);
  luaL_setmetatable(L, "carve.ctx");
  lua_newtable(L);
  for (int i = 0; i < S->t->nargs; i++) {
    push_tvalue(L, S->t->args[i].val);
    lua_setfield(L, -2, S->t->args[i].key);
  }
  lua_call(L, 2, 0);
  return 0;
}

/* ---- running a script, and its errors as carve's ---- */

/* "chunk:12: text" -> 12 and text; 0 and msg when it does not begin so */
static int split_where(const lapi_state *S, const char *msg, const char **rest) {
  size_t n = strlen(S->chunk);
  *rest = msg;
  if (!n || strncmp(msg, S->chunk, n) || msg[n] != ':' || !isdigit((unsigned char)msg[n + 1])) return 0;
  const char *p = msg + n + 1;
  int line = 0;
  while (isdigit((unsigned char)*p) && line < 100000000) line = line * 10 + (*p++ - '0');
  if (*p != ':') return 0;
  p++;
  if (*p == ' ') p++;
  *rest = p;
  return line;
}

/* The traceback as notes read: one frame a line, indented, without the
** frames of carve's own entry (the "[C]: in ?" at the bottom). */
static const char *tidy_traceback(arena *a, const char *tb) {
  strbuf b;
  sb_init(&b);
  const char *p = strchr(tb, '\n');
  p = p ? p + 1 : tb;
  while (*p) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    const char *s = p;
    while (n && (*s == '\t' || *s == ' ')) s++, n--;
    if (n && strncmp(s, "[C]: in ?", n)) sb_printf(&b, "%s    %.*s", b.n ? "\n" : "", (int)n, s);
    p = e ? e + 1 : p + strlen(p);
  }
  const char *r = arena_strndup(a, sb_str(&b), b.n);
  sb_free(&b);
  return r;
}

int lapi_run(tactic_ctx *c, const lapi_tactic *t) {
  lapi_state S;
  memset(&S, 0, sizeof S);
  S.c = c;
  S.t = t;
  S.limit = c->o->lua_memory ? c->o->lua_memory : LAPI_MEMORY;
  S.max_steps = c->o->lua_steps > 0 ? c->o->lua_steps : LAPI_STEPS;
  S.src = diag_load_file_at(c->mem, c->d, t->path, t->path_at);
  if (!S.src) return -1;
  lua_State *L = lua_newstate(lapi_alloc, &S);
  if (!L) return diag_error(c->d, t->decl, "cannot start Lua for tactic '%s': out of memory", t->name);
  *(lapi_state **)lua_getextraspace(L) = &S;
  c->p->at = t->decl;
  lua_pushcfunction(L, lapi_msgh);
  lua_pushcfunction(L, lapi_main);
  size_t limit = S.limit;
  int status = lua_pcall(L, 0, 0, 1);
  settle(L, &S);                       /* a refusal the script caught, or one that ended it: the limit? */
  S.closed = 1;                        /* the allocator refuses nothing more: what follows copies messages out */
  c->p->at = t->decl;                  /* what propagates after the script is the tactic's */
  /* copy what the messages need out of Lua, then close it */
  const char *msg = NULL, *tb = NULL;
  int reported = S.reported || (status != LUA_OK && lua_touserdata(L, -1) == &lapi_reported);
  if (status != LUA_OK && !reported && S.over != OVER_MEMORY) {
    const char *m = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    msg = arena_strndup(c->mem, m ? m : "(no message)", m ? strlen(m) : 12);
    if (status == LUA_ERRRUN && lua_getfield(L, LUA_REGISTRYINDEX, K_TRACE) == LUA_TSTRING) tb = tidy_traceback(c->mem, lua_tostring(L, -1));
  }
  lua_close(L);
  if (reported) return -1;
  if (status == LUA_OK && S.over == OVER_NONE) return 0;
  /* a limit reached is the error, whatever error (or none: a pcall caught it and the function returned) came out */
  const char *text = "";
  int line = S.line;
  if (S.over == OVER_STEPS) {
    text = arena_printf(c->mem, "the script ran too long (more than %lld instructions)", (long long)S.max_steps);
  } else if (S.over == OVER_MEMORY || status == LUA_ERRMEM) {
    text = arena_printf(c->mem, "the script ran out of memory (a tactic script may use %zu MiB)", limit >> 20);
    tb = NULL;
  } else {
    line = split_where(&S, msg, &text);
    if (!line) line = S.err_line;
    if (status == LUA_ERRERR) text = arena_printf(c->mem, "error while reporting an error: %s", text);
  }
  loc where = S.hint && S.hint_line == line ? line_loc(&S, line, S.hint, 'r') : message_loc(&S, line, text);
  diag_error(c->d, where, "%s", text);
  diag_note(c->d, t->decl, "in Lua tactic '%s'", t->name);
  if (tb && *tb) diag_note(c->d, LOC_NONE, "Lua traceback:\n%s", tb);
  return -1;
}

/*
** tactic.c: the tactic interpreter. A schedule entry names a tactic: a
** block in the file, a block in a stdlib or user file brought in by
** `use`, or a Lua script (declared with `tactic x = lua "..."`, or found
** by `use`; lua.c runs it). Each tactic applies all its statements, then
** propagation runs, then the next tactic starts, so that schedule order
** is priority.
*/
#include "interp/tactic/tactic.h"
#include "util/mem.h"
#include "interp/tactic/lua.h"
#include "interp/shard/layout.h"
#include "runtime/mesh.h"
#include "util/datadir.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct binding { const char *key; const tac_value *val; const tac_file *file; } binding;   /* file: where the value is written */


static loc at(const tac_file *f, uint32_t off) { return (loc){f->src, off}; }

/* ---- mesh ---- */

static void mesh_release(sh_mesh *m) { for (int i = 0; i < m->n; i++) free((char *)m->name[i]); }

/* The axes of a mesh declaration (a file's mesh line or --mesh). */
static int mesh_of(const tac_file *f, const tac_decl *x, sh_mesh *m, arena *names, diag *d) {
  int64_t total = 1;
  for (int i = 0; i < x->nargs; i++) {
    const tac_arg *a = &x->args[i];
    if (m->n == SH_MAXAXES) return diag_error(d, at(f, a->off), "at most %d mesh axes", SH_MAXAXES);
    if (a->val.kind != TAC_VINT || a->val.i < 1) return diag_error(d, at(f, a->off), "mesh axis '%s' must have a size of at least 1", a->key);
    if (__builtin_mul_overflow(total, a->val.i, &total) || total > RT_MAX_DEVICES)
      return diag_error(d, at(f, a->off), "the mesh has more than 2^20 devices (%d), the most carve plans for; make axis '%s' smaller",
                        RT_MAX_DEVICES, a->key);
    m->name[m->n] = names ? arena_strndup(names, a->key, strlen(a->key)) : strcpy(mem_alloc(strlen(a->key) + 1), a->key);
    m->size[m->n++] = a->val.i;
  }
  m->at = at(f, x->off);
  return 0;
}

/* --mesh, names in the arena (names NULL: malloc'd, for mesh_release) */
static int parse_mesh(arena *a, const char *text, sh_mesh *m, arena *names, diag *d) {
  memset(m, 0, sizeof *m);
  const diag_src *src = diag_src_string(a, "--mesh", text, strlen(text));
  tac_file *f = tac_parse_option(a, d, src, TAC_OPT_MESH);
  return f ? mesh_of(f, &f->decls[0], m, names, d) : -1;
}

int tactic_parse_mesh(arena *a, const char *text, sh_mesh *m, diag *d) { return parse_mesh(a, text, m, a, d); }

static int file_mesh(const tac_file *f, sh_mesh *m, diag *d) {
  const tac_decl *found = NULL;
  memset(m, 0, sizeof *m);
  for (int i = 0; i < f->ndecls; i++) {
    const tac_decl *x = &f->decls[i];
    if (x->kind != TAC_MESH) continue;
    if (found) {
      diag_error(d, at(f, x->off), "a second mesh line; a tactic file has one mesh");
      diag_note(d, at(f, found->off), "the first is here");
      return -1;
    }
    found = x;
  }
  if (!found) return diag_error(d, (loc){f->src, 0}, "no mesh: add a line like 'mesh batch = 2, model = 2' or pass --mesh");
  return mesh_of(f, found, m, NULL, d);
}

/* ---- tactic lookup ---- */

typedef struct resolved {
  const tac_file *file;          /* where the block lives */
  const tac_decl *block;         /* TAC_TACTIC, or the LUA/AUTO declaration; NULL for a script found by use */
  const char *script;            /* a Lua script to run (a LUA declaration's, or found by use) */
  const tac_decl *use;           /* the use declaration giving arguments, if any */
} resolved;

static const tac_decl *find_decl(const tac_file *f, const char *name) {
  for (int i = 0; i < f->ndecls; i++) {
    const tac_decl *x = &f->decls[i];
    if ((x->kind == TAC_TACTIC || x->kind == TAC_LUA || x->kind == TAC_AUTO) && x->name && !strcmp(x->name, name)) return x;
  }
  return NULL;
}

static const char *dir_of(arena *a, const char *path) {
  const char *s = strrchr(path, '/');
  return s ? arena_strndup(a, path, (size_t)(s - path)) : ".";
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n > k && !strcmp(s + n - k, suffix);
}

static const char *base_of(arena *a, const char *path) {
  const char *s = strrchr(path, '/');
  s = s ? s + 1 : path;
  size_t n = strlen(s);
  if (ends_with(s, ".tac") || ends_with(s, ".lua")) n -= 4;
  return arena_strndup(a, s, n);
}

/* path as written in file f: relative to f's folder */
static const char *beside(arena *a, const tac_file *f, const char *path) {
  if (path[0] == '/') return path;
  const char *dir = dir_of(a, f->src->name);
  return strcmp(dir, ".") ? arena_printf(a, "%s/%s", dir, path) : path;
}

static int file_exists(const char *p) { return access(p, F_OK) == 0; }   /* no open: a FIFO would block it */

/* "batch, embedding, megatron, zero": the tactics (.tac and .lua) of the
** stdlib folders, sorted, each once; "" when there are none. */
static const char *stdlib_list(arena *a, const char *const *dirs, int ndirs) {
  strbuf list;
  sb_init(&list);
  for (int i = 0; i < ndirs; i++) sb_printf(&list, "%s%s", i ? ":" : "", dirs[i]);
  static const char *const ext[] = {".tac", ".lua", NULL};
  const char *r = datadir_names(a, sb_str(&list), ext);
  sb_free(&list);
  return r;
}

static int resolve_use(tactic_ctx *c, const tac_decl *u, resolved *r) {
  const char *path = u->path;
  int is_lua = ends_with(path, ".lua");
  int is_path = strchr(path, '/') || strstr(path, ".tac") || is_lua;
  const char *file = NULL;
  r->use = u;
  if (is_path) {
    file = path[0] == '/' ? path : arena_printf(c->mem, "%s/%s", dir_of(c->mem, c->f->src->name), path);
    if (!file_exists(file)) return diag_error(c->d, at(c->f, u->path_off), "cannot open tactic file '%s'", file);
    if (is_lua) { r->script = file; return 0; }
  } else {          /* the stdlib: name.tac, else name.lua, in the first of its folders that has either */
    const char *list = c->o->stdlib_dir ? c->o->stdlib_dir : datadir_path(DATADIR_STDLIB), *x;
    const char *dirs[64];
    int ndirs = 0;
    size_t n;
    while (ndirs < 64 && (n = datadir_next(&list, &x))) {
      const char *dir = arena_strndup(c->mem, x, n);
      char *real = realpath(dir, NULL);          /* messages show build/../stdlib-tactics plainly */
      if (real) { dir = arena_strndup(c->mem, real, strlen(real)); free(real); }
      dirs[ndirs++] = dir;
      const char *cand = arena_printf(c->mem, "%s/%s.tac", dir, path), *lua = arena_printf(c->mem, "%s/%s.lua", dir, path);
      if (file_exists(cand)) { file = cand; break; }
      if (file_exists(lua)) { r->script = lua; return 0; }
    }
    if (!file) {
      strbuf where;
      sb_init(&where);
      for (int i = 0; i < ndirs; i++) sb_printf(&where, "%s%s", i ? ", " : "", dirs[i]);
      const char *has = stdlib_list(c->mem, dirs, ndirs);
      diag_suggest sg;                           /* "megatorn": did you mean 'megatron'? */
      diag_suggest_init(&sg, path);
      for (const char *h = has; *h; h += strspn(h, ", ")) {
        size_t w = strcspn(h, ",");
        diag_suggest_add(&sg, arena_strndup(c->mem, h, w));
        h += w;
      }
      if (*has)
        diag_error(c->d, at(c->f, u->path_off), "no stdlib tactic '%s'%s (the stdlib has %s); looked for %s.tac and %s.lua in %s; "
                   "CARVE_PATH can name more folders holding stdlib-tactics/", path, diag_suggest_text(c->mem, &sg), has, path, path,
                   sb_str(&where));
      else
        diag_error(c->d, at(c->f, u->path_off), "no stdlib tactic '%s': no stdlib tactics in %s; set CARVE_PATH to a folder "
                   "holding stdlib-tactics/ ('carve --version' shows where carve looks)", path, ndirs ? sb_str(&where) : "any folder");
      sb_free(&where);
      return -1;
    }
  }
  diag_src *src = diag_load_file_at(c->mem, c->d, file, at(c->f, u->path_off));
  if (!src) return -1;
  tac_file *tf = tac_parse(c->mem, c->d, src);
  if (!tf) return -1;
  if (tf->version > TAC_LANG_VERSION)
    return diag_error(c->d, at(tf, tf->version_off), "this file needs tactic-language version %d; this carve reads up to %d", tf->version, TAC_LANG_VERSION);
  const char *want = base_of(c->mem, path);
  const tac_decl *b = find_decl(tf, want);
  if (!b) {
    int n = 0;
    for (int i = 0; i < tf->ndecls; i++) if (tf->decls[i].kind == TAC_TACTIC && tf->decls[i].name) { b = &tf->decls[i]; n++; }
    if (n != 1) return diag_error(c->d, at(c->f, u->path_off), "'%s' has no tactic named '%s' to use", file, want);
  }
  r->file = tf;
  r->block = b;
  return 0;
}

static int resolve(tactic_ctx *c, const char *name, uint32_t off, resolved *r) {
  memset(r, 0, sizeof *r);
  for (int i = 0; i < c->f->ndecls; i++) {
    const tac_decl *x = &c->f->decls[i];
    if (x->kind == TAC_USE) {
      const char *alias = x->name ? x->name : base_of(c->mem, x->path);
      if (!strcmp(alias, name)) return resolve_use(c, x, r);
    }
  }
  const tac_decl *b = find_decl(c->f, name);
  if (b) { r->file = c->f; r->block = b; return 0; }
  return diag_error(c->d, at(c->f, off), "unknown tactic '%s' in the schedule; define it with 'tactic %s { ... }' or 'use \"...\" as %s'", name, name, name);
}

/* ---- statements ---- */

static const binding *find_binding(const binding *b, int n, const char *key) {
  for (int i = n - 1; i >= 0; i--) if (!strcmp(b[i].key, key)) return &b[i];
  return NULL;
}

static const tac_value *lookup(const binding *b, int n, const char *key) {
  const binding *x = find_binding(b, n, key);
  return x ? x->val : NULL;
}

static const char *axis_list(const sh_plan *p, arena *a) {
  strbuf b;
  sb_init(&b);
  for (int i = 0; i < p->mesh.n; i++) sb_printf(&b, "%s%s", i ? ", " : "", p->mesh.name[i]);
  const char *r = arena_strndup(a, sb_str(&b), b.n);
  sb_free(&b);
  return r;
}

static int axis_of(tactic_ctx *c, const tac_file *f, const char *name, uint32_t off, const binding *b, int nb) {
  const tac_value *v = lookup(b, nb, name);
  const char *nm = name;
  if (v) {
    if (v->kind != TAC_VNAME && v->kind != TAC_VSTR)
      return diag_error(c->d, at(f, off), "'%s' holds %s, not an axis name", name, v->kind == TAC_VINT ? "a number" : "a value");
    nm = v->text;
  }
  int a = shard_axis(c->p, nm);
  if (a < 0) {
    if (v) {   /* the value was written where the tactic was given its arguments: point there */
      const binding *bd = find_binding(b, nb, name);
      diag_error(c->d, at(bd->file, v->off), "unknown axis '%s' given as '%s'; the mesh has %s", nm, name, axis_list(c->p, c->mem));
      diag_note(c->d, at(f, off), "'%s' is used here", name);
      return -1;
    }
    return diag_error(c->d, at(f, off), "unknown axis '%s'; the mesh has %s", nm, axis_list(c->p, c->mem));
  }
  return a;
}

static const char *sel_word[] = {"input", "param", "grad", "state", "value"};   /* ORDER TAC_SEL */
_Static_assert(sizeof sel_word / sizeof sel_word[0] == TAC_SEL_VALUE + 1, "ORDER TAC_SEL: sel_word");

static int selected(const ir_value *v, tac_sel s) {
  switch (s) {
  case TAC_SEL_INPUT: return v->kind == IR_INPUT;
  case TAC_SEL_PARAM: return v->kind == IR_PARAM;
  case TAC_SEL_GRAD: return v->role == ROLE_GRAD;
  case TAC_SEL_STATE: return v->kind == IR_STATE;
  case TAC_SEL_VALUE: return v->kind != IR_CONST;
  }
  return 0;
}

/* a dim for this value, or -1 to skip it (first/last/largest: none fits;
** a plural selector's value without that dim, as a scalar input to
** 'inputs dim 0') */
static int pick_dim(tactic_ctx *c, const tac_file *f, const tac_stmt *s, int v, int axis, int *err) {
  const ir_value *x = c->g->vals[v];
  int r = x->shape.rank;
  *err = 0;
  if (s->dim == TAC_DIM_INDEX) {
    int64_t i = s->index < 0 ? s->index + r : s->index;
    if ((i < 0 || i >= r) && s->plural) return -1;
    if (i < 0 || i >= r) {
      *err = diag_error(c->d, at(f, s->dim_off), "dim %lld is out of range for '%s' of rank %d", (long long)s->index, x->name, r);
      return -1;
    }
    return (int)i;
  }
  int best = -1;
  for (int i = 0; i < r; i++) {
    int64_t pieces = layout_pieces(c->p, &c->p->lay[v].dim[i]) * c->p->mesh.size[axis];
    if (x->shape.d[i] % pieces || ((c->p->lay[v].forbid[i] >> axis) & 1)) continue;
    if (s->dim == TAC_DIM_FIRST && best < 0) best = i;
    if (s->dim == TAC_DIM_LAST) best = i;
    if (s->dim == TAC_DIM_LARGEST && (best < 0 || x->shape.d[i] > x->shape.d[best])) best = i;
  }
  return best;
}

static int run_stmt(tactic_ctx *c, const tac_file *f, const tac_stmt *s, const binding *b, int nb) {
  c->p->at = at(f, s->off);
  int axis = axis_of(c, f, s->axis, s->axis_off, b, nb);
  if (axis < 0) return -1;
  int matched = 0;
  for (int v = 0; v < c->g->nvals; v++) {
    const ir_value *x = c->g->vals[v];
    if (!selected(x, s->sel)) continue;
    if (!s->plural && fnmatch(s->glob, x->name, 0) != 0) continue;
    matched++;
    if (s->kind == TAC_REPLICATE) {
      int dim = -1;
      if (s->dim == TAC_DIM_INDEX) {
        int e;
        dim = pick_dim(c, f, s, v, axis, &e);
        if (e < 0) return -1;
        if (dim < 0) continue;                  /* no such dim: nothing to keep whole */
      }
      shard_replicate(c->p, v, dim, axis);
      continue;
    }
    int e, dim = pick_dim(c, f, s, v, axis, &e);
    if (e < 0) return -1;
    if (dim < 0) continue;                      /* no divisible dim: stays whole */
    if (shard_split(c->p, v, dim, axis, c->d) < 0) return -1;
  }
  if (!matched) {
    const char *what = sel_word[s->sel];
    if (s->plural) return diag_warning(c->d, at(f, s->off), "no %s in this program; the statement does nothing", what) < 0 ? -1 : 0;
    const struct ir_fused *fu = ir_fused_match(c->g, s->glob);
    if (fu)
      return diag_warning(c->d, at(f, s->glob_off), "no %s matches '%s': '%s' was fused into the attention op '%s' "
                          "(docs/execution.md, \"Fused attention\"); name '%s', or run with --no-fuse to keep the model as written%s",
                          what, s->glob, fu->name, fu->into, fu->into, c->o->lenient ? "" : " (--lenient makes this a warning)") < 0 ? -1 : 0;
    diag_suggest sg;                             /* a misspelt name: the closest of its kind */
    diag_suggest_init(&sg, s->glob);
    if (!strpbrk(s->glob, "*?["))
      for (int v = 0; v < c->g->nvals; v++) if (selected(c->g->vals[v], s->sel)) diag_suggest_add(&sg, c->g->vals[v]->name);
    return diag_warning(c->d, at(f, s->glob_off), "no %s matches '%s'%s%s", what, s->glob, diag_suggest_text(c->mem, &sg),
                        c->o->lenient ? "" : " (--lenient makes this a warning)") < 0 ? -1 : 0;
  }
  return 0;
}

/* The tactic's defaults, then what its use gives (later bindings win). */
static int bind_args(tactic_ctx *c, const resolved *r, binding **out, int *nb) {
  const tac_decl *blk = r->block;
  int cap = (blk ? blk->nargs : 0) + (r->use ? r->use->nargs : 0) + 1;
  binding *b = arena_alloc(c->mem, sizeof *b * (size_t)cap);
  *out = b;
  *nb = 0;
  for (int i = 0; blk && (blk->kind == TAC_TACTIC || blk->kind == TAC_LUA) && i < blk->nargs; i++)
    if (blk->args[i].has_val) b[(*nb)++] = (binding){blk->args[i].key ? blk->args[i].key : "", &blk->args[i].val, r->file};
  if (r->use) {
    for (int i = 0; i < r->use->nargs; i++) {
      const tac_arg *a = &r->use->args[i];
      int known = r->script || blk->kind == TAC_LUA;   /* a script takes any argument */
      for (int j = 0; blk && j < blk->nargs; j++) if (blk->args[j].key && !strcmp(blk->args[j].key, a->key)) known = 1;
      if (!known) return diag_error(c->d, at(c->f, a->off), "tactic '%s' takes no argument '%s'", blk->name, a->key);
      b[(*nb)++] = (binding){a->key, &a->val, c->f};
    }
  }
  return 0;
}

/* Apply `use "LIB" as NAME (ARGS)` to c's plan: a line of the tactic
** language, run as a file holding it would run it. */
static int apply_use(tactic_ctx *c, const char *name, const char *line, diag *d) {
  const char *text = arena_printf(c->mem, "version 1\n%s\nschedule %s\n", line, name);
  const diag_src *src = diag_src_string(c->mem, "(auto)", text, strlen(text));
  tac_file *f = tac_parse(c->mem, d, src);
  if (!f) return -1;
  tactic_ctx w = *c;
  w.f = f;
  w.d = d;
  return tactic_run(&w, name, 0);
}

/* One plan of an auto tactic with try = [...]: t's strategy applied (none
** for the search alone), then the search over the axes left, into r; or,
** with t->after, the search first and the strategy after it (a pipeline,
** which must come after what splits the batch), the plan then simulated
** whole. With quiet, errors go nowhere and only the figures are kept. */
static int try_plan(tactic_ctx *c, tactic_found *x, tactic_tried *t, uint32_t axes, int quiet, search_result *r) {
  diag scratch, *d = c->d;
  if (quiet) { diag_init(&scratch); d = &scratch; }
  memset(r, 0, sizeof *r);
  loc decl = c->p->at;                   /* the auto tactic's: what is said after is said there */
  search_opts o = x->opts;
  o.axes = axes;
  int rc = 0, applied = 1, whole = !axes;   /* whole: figures taken of the plan as it stands, not the search's */
  if (t->use && !t->after) applied = (rc = apply_use(c, t->name, t->use, d)) == 0;
  c->p->at = decl;
  if (rc == 0 && axes) rc = search_run(c->p, &o, x->name, c->mem, r, d);
  if (t->use && t->after && (rc == 0 || r->mem_found > 0)) {   /* (a search over the limit still leaves its plan) */
    applied = (rc = apply_use(c, t->name, t->use, d)) == 0;
    c->p->at = decl;
    whole = 1;
  }
  if (applied && rc == 0 && whole && (rc = search_simulate(c->p, &o, c->mem, &r->sim_found, &r->mem_found, d)) == 0) {
    if (!axes) { r->sim_start = r->sim_found; r->mem_start = r->mem_found; }
    r->fits = r->mem_found <= o.memory_limit;
    if (!r->fits && !quiet)
      rc = diag_error(d, decl, "nothing auto tried fits in %.1f MiB a device: the smallest plan (%s) needs %.1f MiB; raise "
                      "memory_limit, add devices, or search more axes", o.memory_limit / 1048576, t->use ? t->use : "the search alone",
                      r->mem_found / 1048576);
  }
  /* a plan over the limit still has its figures (the search says so by failing) */
  t->ok = applied && (rc == 0 || r->mem_found > 0);
  t->applied = applied;
  t->seconds = r->sim_found;
  t->memory = r->mem_found;
  if (quiet && !t->ok) {                 /* the first error's message, for the list of what was tried */
    const char *m = strstr(diag_text(&scratch), "error: "), *end = m ? strchr(m, '\n') : NULL;
    if (m) t->why = arena_strndup(c->mem, m + 7, end ? (size_t)(end - m - 7) : strlen(m + 7));
  }
  if (quiet) diag_free(&scratch);
  return rc;
}

/* Is plan a better than b: under the limit first, then the objective, then the other figure. */
static int better_tried(const search_opts *o, const tactic_tried *a, const tactic_tried *b) {
  if (a->ok != b->ok) return a->ok;
  int fa = a->memory <= o->memory_limit, fb = b->memory <= o->memory_limit;
  if (fa != fb) return fa;
  if (!fa) return a->memory < b->memory;
  double pa = o->objective == SEARCH_MEMORY ? a->memory : a->seconds, pb = o->objective == SEARCH_MEMORY ? b->memory : b->seconds;
  double sa = o->objective == SEARCH_MEMORY ? a->seconds : a->memory, sb = o->objective == SEARCH_MEMORY ? b->seconds : b->memory;
  return pa < pb * (1 - 1e-9) || (pa <= pb * (1 + 1e-9) && sa < sb);
}

/* With try = [...]: the search alone, and each strategy on each axis it
** may take (context; pipeline with as many microbatches as stages, twice
** and four times as many, each under 1F1B and under the zero-bubble
** schedule) followed by the search over the other axes, each
** simulated; the best is applied again, as it will be when the file that
** carve auto writes is loaded. */
static int run_whole(tactic_ctx *c, tactic_found *x) {
  const sh_plan *p = c->p;
  int cap = 1 + 7 * p->mesh.n, n = 0;
  tactic_tried *t = arena_alloc(c->mem, sizeof *t * (size_t)cap);
  t[n++] = (tactic_tried){NULL, NULL, -1, 0, 0, 0};
  for (int a = 0; a < p->mesh.n; a++) {
    if (!(x->opts.axes >> a & 1) || p->mesh.size[a] < 2) continue;
    const char *ax = p->mesh.name[a];
    if (x->opts.try_whole & SEARCH_TRY_CONTEXT)
      t[n++] = (tactic_tried){arena_printf(c->mem, "use \"context\" as %s_cp (axis = %s)", x->name, ax), arena_printf(c->mem, "%s_cp", x->name),
                              a, 0, 0, 0, .strategy = SEARCH_TRY_CONTEXT};
    for (int k = 1; k <= 4 && (x->opts.try_whole & SEARCH_TRY_PIPELINE); k *= 2)
      for (int zb = 0; zb < 2; zb++)
        t[n++] = (tactic_tried){arena_printf(c->mem, "use \"pipeline\" as %s_pp (axis = %s, microbatches = %lld%s)", x->name, ax,
                                             (long long)(k * p->mesh.size[a]), zb ? ", order = \"zb-h1\"" : ""),
                                arena_printf(c->mem, "%s_pp", x->name), a, 0, 0, 0, .strategy = SEARCH_TRY_PIPELINE};
  }
  sh_mark m0 = shard_mark(c->p);
  int best = 0;
  double start_s = 0, start_m = 0;       /* the plan before it all */
  for (int i = 0; i < n; i++) {
    search_result r;
    uint32_t axes = t[i].axis >= 0 ? x->opts.axes & ~(1u << t[i].axis) : x->opts.axes;
    try_plan(c, x, &t[i], axes, 1, &r);
    shard_rollback(c->p, m0);
    /* a pipeline that applied but whose plan failed (the search split the batch after it): the pipeline after the search */
    if (!t[i].ok && t[i].applied && t[i].strategy == SEARCH_TRY_PIPELINE && axes) {
      tactic_tried again = t[i];
      again.after = 1;
      again.why = NULL;
      try_plan(c, x, &again, axes, 1, &r);
      shard_rollback(c->p, m0);
      if (again.ok) t[i] = again;
    }
    if (i == 0) { start_s = r.sim_start; start_m = r.mem_start; }
    if (i && better_tried(&x->opts, &t[i], &t[best])) best = i;
  }
  x->tried = t;
  x->ntried = n;
  x->chosen = best;
  int rc = try_plan(c, x, &t[best], t[best].axis >= 0 ? x->opts.axes & ~(1u << t[best].axis) : x->opts.axes, 0, &x->r);
  x->r.sim_start = start_s;
  x->r.mem_start = start_m;
  return rc;
}

/* An auto tactic: search, apply what it finds (the search propagates
** after each action), and hand the result to whoever asked. */
static int run_auto(tactic_ctx *c, const resolved *r, const char *name) {
  tactic_found *x = arena_alloc(c->mem, sizeof *x);
  memset(x, 0, sizeof *x);
  sim_profile *prof = arena_alloc(c->mem, sizeof *prof);
  if (search_opts_read(c->p, r->file, r->block, c->o->profile_dir ? c->o->profile_dir : sim_profile_dir(), c->o->device, c->mem, prof, &x->opts, c->d) < 0) return -1;
  if (c->o->ranks > 1 && x->opts.seconds > 0)
    return diag_error(c->d, at(r->file, r->block->off), "auto tactic '%s' has a time budget, and each of the %d ranks would search "
                      "on its own and may stop at a different plan: give budget in evaluations (budget = 2000), or run "
                      "'carve auto' once and run the file it writes", name, c->o->ranks);
  x->opts.progress = c->o->progress;
  x->opts.progress_ud = c->o->progress_ud;
  x->name = arena_strndup(c->mem, name, strlen(name));
  x->file = r->file;
  x->decl = r->block;
  x->prof = prof;
  c->p->at = at(r->file, r->block->off);
  if (x->opts.try_whole ? run_whole(c, x) < 0 : search_run(c->p, &x->opts, x->name, c->mem, &x->r, c->d) < 0) return -1;
  if (c->o->found) {
    tactic_found **end = c->o->found;
    while (*end) end = &(*end)->next;
    *end = x;
  }
  return 0;
}

int tactic_run(tactic_ctx *c, const char *name, uint32_t off) {
  resolved r;
  if (resolve(c, name, off, &r) < 0) return -1;
  binding *b;
  int nb;
  if (bind_args(c, &r, &b, &nb) < 0) return -1;
  c->p->tactic = arena_strndup(c->mem, name, strlen(name));
  c->p->at = at(c->f, off);
  if (r.script || r.block->kind == TAC_LUA) {
    loc decl = r.use ? at(c->f, r.use->off) : at(r.file, r.block->off);
    loc path_at = r.use ? at(c->f, r.use->path_off) : at(r.file, r.block->path_off);
    if (!r.script) {
      r.script = beside(c->mem, r.file, r.block->path);
      if (!file_exists(r.script)) return diag_error(c->d, path_at, "cannot open Lua script '%s'", r.script);
    }
    lapi_arg *la = arena_alloc(c->mem, sizeof *la * (size_t)(nb + 1));
    for (int i = 0; i < nb; i++) la[i] = (lapi_arg){b[i].key, b[i].val, at(b[i].file, b[i].val->off)};
    lapi_tactic t = {c->p->tactic, r.script, decl, path_at, la, nb};
    if (lapi_run(c, &t) < 0) return -1;
  } else if (r.block->kind == TAC_AUTO) {
    return run_auto(c, &r, name);
  } else {
    for (int i = 0; i < r.block->nargs; i++)
      if (!r.block->args[i].has_val && !lookup(b, nb, r.block->args[i].key))
        return diag_error(c->d, at(c->f, off), "tactic '%s' needs a value for '%s'", name, r.block->args[i].key);
    for (int i = 0; i < r.block->nstmts; i++)
      if (run_stmt(c, r.file, &r.block->stmts[i], b, nb) < 0) {
        if (r.file != c->f)       /* a library's statement: say which line of this file brought it in */
          diag_note(c->d, at(c->f, r.use ? r.use->off : off), "in tactic '%s', used here", name);
        return -1;
      }
  }
  shard_propagate(c->p);
  return 0;
}

int tactic_run_stmt(tactic_ctx *c, const tac_file *f, const tac_stmt *s, const char *who) {
  c->p->tactic = arena_strndup(c->mem, who, strlen(who));
  if (run_stmt(c, f, s, NULL, 0) < 0) return -1;
  shard_propagate(c->p);
  return 0;
}

sh_plan *tactic_plan_new(const ir_graph *g, const tac_file *f, const tactic_opts *o, arena *mem, diag *d) {
  if (f->version > TAC_LANG_VERSION) {
    diag_error(d, at(f, f->version_off), "this file needs tactic-language version %d, but this carve reads versions up to %d; upgrade carve",
               f->version, TAC_LANG_VERSION);
    return NULL;
  }
  sh_mesh m;
  int rc = o->mesh ? parse_mesh(mem, o->mesh, &m, NULL, d) : file_mesh(f, &m, d);
  if (rc < 0) { mesh_release(&m); return NULL; }
  sh_plan *p = shard_new(g, &m);
  p->mesh.at = m.at;
  mesh_release(&m);
  return p;
}

int tactic_finish(tactic_ctx *c) {
  sh_plan *p = c->p;
  if (c->o->strict)
    for (int i = 0; i < p->ncon; i++) {
      const sh_conflict *k = &p->con[i];
      if (!k->from_tactic) continue;
      diag_error(c->d, k->at, "conflict (--strict): %s", k->message);
      if (k->lost_to >= 0 && p->dec[k->lost_to].at.src)
        diag_note(c->d, p->dec[k->lost_to].at, "the decision that won, by tactic '%s'", p->dec[k->lost_to].tactic);
      return -1;
    }
  shard_partials(p);
  return 0;
}

sh_plan *tactic_apply(const ir_graph *g, const tac_file *f, const tactic_opts *o, arena *mem, diag *d) {
  sh_plan *p = tactic_plan_new(g, f, o, mem, d);
  if (!p) return NULL;
  int rc = 0;
  tactic_ctx c = {g, p, f, o, mem, d};
  int werror = d->werror;
  d->werror = !o->lenient;
  const tac_decl *sched = NULL;
  for (int i = 0; i < f->ndecls && rc == 0; i++) {
    const tac_decl *x = &f->decls[i];
    if (x->kind == TAC_SCHEDULE) {
      if (sched) { rc = diag_error(d, at(f, x->off), "a second schedule; a tactic file has one"); break; }
      sched = x;
    }
  }
  if (rc == 0 && !sched) rc = diag_error(d, (loc){f->src, 0}, "no schedule: add a line like 'schedule bp, mp' naming the tactics to apply in order");
  for (int i = 0; rc == 0 && i < sched->nnames; i++) {
    for (int j = 0; j < i; j++)
      if (!strcmp(sched->names[j], sched->names[i])) { rc = diag_error(d, at(f, sched->name_offs[i]), "'%s' is scheduled twice", sched->names[i]); break; }
    if (rc == 0) rc = tactic_run(&c, sched->names[i], sched->name_offs[i]);
  }
  d->werror = werror;
  if (rc == 0) rc = tactic_finish(&c);
  if (rc < 0) { shard_free(p); return NULL; }
  return p;
}

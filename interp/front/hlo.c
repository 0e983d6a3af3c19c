/*
** hlo.c: StableHLO and MHLO syntax trees -> IR (see hlo.h): the module's
** entry function, its arguments (names, parameters or inputs, their
** sdy.sharding or GSPMD mhlo.sharding, which make the mesh), the body
** built by hlo_flow.c, and the tactic file of the shardings. Ops are read
** in either printed form: the pretty form's items (dims = [..],
** contracting_dims = [..] x [..]) or the generic form's properties
** (broadcast_dimensions, dot_dimension_numbers = #mhlo.dot<..>),
** whichever is present (hlo_int.h says which file reads which op).
*/
#include "interp/front/hlo_int.h"
#include "util/mem.h"
#include "interp/ir/ops.h"
#include "interp/train/train.h"
#include "util/strbuf.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the entry function's arguments ---- */

static const char *arg_name(hctx *b, const mlir_func *fn, int k) {
  const mlir_arg *a = &fn->args[k];
  const mlir_attr *info = mlir_attr_get(a->attrs, "jax.arg_info");
  const char *n = info && info->kind == MLIR_A_STRING ? hlo_clean_name(b, info->text) : NULL;
  const mlir_loc *l = a->loc;
  while (!n && l && l->kind == MLIR_L_ALIAS && l->child) l = l->child;
  if (!n && l && l->kind == MLIR_L_NAME && l->text) n = hlo_clean_name(b, l->text);
  if (!n && a->name) n = hlo_clean_name(b, a->name);
  if (!n) n = arena_printf(&b->tmp, "arg%d", k);
  return n;
}

static int is_param(const hlo_opts *o, const char *name, const ir_value *v) {
  if (!o || !o->params) return ir_dtype_isfloat(v->dtype) && v->shape.rank >= 1;
  char pat[256];
  for (const char *p = o->params; *p; ) {
    size_t n = strcspn(p, ",");
    while (n && *p == ' ') { p++; n--; }
    size_t m = n;
    while (m && p[m - 1] == ' ') m--;
    if (m && m < sizeof pat) {
      memcpy(pat, p, m);
      pat[m] = 0;
      if (!fnmatch(pat, name, 0)) return 1;
    }
    p += n;
    if (*p == ',') p++;
  }
  return 0;
}

static int arg_sharding(hctx *b, const mlir_arg *a, int id, hlo_info *info) {
  return hlo_sdy_sharding(b, mlir_attr_get(a->attrs, "sdy.sharding"), id, info);
}

/* ---- GSPMD's mhlo.sharding strings ----
** "{devices=[1,2]<=[2]}", "{devices=[2,1]0,1}", "{replicated}",
** "{devices=[2,1,2]<=[4] last_tile_dim_replicate}": tile counts per dim
** over the devices in row-major order. A mesh is made from them all
** (axes _axis_0, _axis_1, ... major first), so that each split dim is a
** run of its axes, as an sdy mesh would say. */

typedef struct hlo_tiles {
  int arg;                 /* the argument's value id */
  uint32_t off;            /* the string, for messages */
  int n;                   /* tile dims (the value's rank, plus one when the last replicates) */
  int64_t t[IR_MAXRANK + 1];
  int64_t devices;
} hlo_tiles;

typedef struct shparse { const char *s; size_t i; } shparse;

static void sp_ws(shparse *p) { while (p->s[p->i] == ' ') p->i++; }
static int sp_lit(shparse *p, const char *w) {
  sp_ws(p);
  size_t n = strlen(w);
  if (strncmp(p->s + p->i, w, n)) return 0;
  p->i += n;
  return 1;
}
static int sp_int(shparse *p, int64_t *x) {
  sp_ws(p);
  if (p->s[p->i] < '0' || p->s[p->i] > '9') return 0;
  *x = 0;
  while (p->s[p->i] >= '0' && p->s[p->i] <= '9') {
    if (*x > ((int64_t)1 << 40)) return 0;
    *x = *x * 10 + (p->s[p->i++] - '0');
  }
  return 1;
}
/* "[a,b,c]" (brackets optional: a bare device list) */
static int sp_ints(shparse *p, int64_t *out, int max, int bracket) {
  int n = 0;
  if (bracket && !sp_lit(p, "[")) return -1;
  do {
    int64_t x;
    if (!sp_int(p, &x)) return -1;
    if (n < max) out[n] = x;
    n++;
  } while (sp_lit(p, ","));
  if (bracket && !sp_lit(p, "]")) return -1;
  return n;
}

/* 0: read into t (t->n = 0: replicated); 1: a form carve cannot express
** (warned); -1: malformed (an error) */
static int read_hlo_sharding(hctx *b, const mlir_attr *a, int rank, hlo_tiles *t) {
  const char *str = a->text;
  shparse p = {str, 0};
  memset(t, 0, sizeof *t);
  t->off = a->off;
#define BAD(what) return diag_error(b->d, L(b, a->off + 1 + (uint32_t)p.i), "mhlo.sharding \"%s\": %s", str, what)
#define UNSUPPORTED(what) return diag_warning(b->d, L(b, a->off), "mhlo.sharding \"%s\": %s; the argument is imported unsplit", str, what), 1
  if (!sp_lit(&p, "{")) BAD("expected '{'");
  if (sp_lit(&p, "replicated")) { if (!sp_lit(&p, "}")) BAD("expected '}' after replicated"); sp_ws(&p); if (str[p.i]) BAD("text after the sharding"); return 0; }
  if (sp_lit(&p, "maximal")) UNSUPPORTED("a value on one device (maximal) is not supported; carve splits values over a mesh");
  if (sp_lit(&p, "manual")) UNSUPPORTED("manual shardings are not supported");
  if (sp_lit(&p, "{")) UNSUPPORTED("tuple shardings are not supported");
  if (!sp_lit(&p, "devices=")) BAD("expected 'replicated', 'maximal' or 'devices=[...]'");
  int64_t dims[IR_MAXRANK + 2], list[IR_MAXRANK + 2];
  int n = sp_ints(&p, dims, IR_MAXRANK + 2, 1);
  if (n < 0) BAD("expected the tile counts [n, ...]");
  if (n > IR_MAXRANK + 1) BAD("too many tile dims");
  int64_t total = 1;
  for (int i = 0; i < n; i++) {
    if (dims[i] < 1) BAD("tile counts must be positive");
    if (total > ((int64_t)1 << 30) / dims[i]) BAD("too many devices");
    total *= dims[i];
  }
  int iota = 1;
  if (sp_lit(&p, "<=")) {
    int m = sp_ints(&p, list, IR_MAXRANK + 2, 1);
    if (m < 0) BAD("expected the device shape <=[n, ...]");
    int64_t cnt = 1;
    for (int i = 0; i < m && i < IR_MAXRANK + 2; i++) cnt *= list[i] ? list[i] : 1;
    if (cnt != total) BAD("the device shape does not hold as many devices as the tiles");
    if (sp_lit(&p, "T(")) {
      int64_t perm[IR_MAXRANK + 2];
      int k = sp_ints(&p, perm, IR_MAXRANK + 2, 0);
      if (k < 0 || !sp_lit(&p, ")")) BAD("expected T(i, ...)");
      for (int i = 0; i < k && i < IR_MAXRANK + 2; i++) iota &= perm[i] == i || list[perm[i]] == 1;
    }
  } else {
    int64_t dev = 0;
    int64_t k = 0;
    do {
      if (!sp_int(&p, &dev)) BAD("expected the device list");
      iota &= dev == k;
      k++;
    } while (sp_lit(&p, ","));
    if (k != total) BAD("the device list does not hold one device per tile");
  }
  int repl = 0;
  for (;;) {
    if (sp_lit(&p, "last_tile_dim_replicate")) { repl = 1; continue; }
    if (sp_lit(&p, "last_tile_dims=")) UNSUPPORTED("last_tile_dims (manual or subgroup tiles) is not supported");
    break;
  }
  if (!sp_lit(&p, "}")) BAD("expected '}'");
  sp_ws(&p);
  if (str[p.i]) BAD("text after the sharding");
  if (!iota) UNSUPPORTED("devices in an order other than the mesh's (a transposed or listed permutation) are not supported");
  if (n != rank + repl) {
    p.i = 0;
    BAD(arena_printf(&b->tmp, "%d tile counts for a value of rank %d%s", n, rank, repl ? " (plus the replicated one)" : ""));
  }
#undef BAD
#undef UNSUPPORTED
  t->n = n;
  for (int i = 0; i < n; i++) t->t[i] = dims[i];
  t->devices = total;
  if (repl) t->t[n - 1] = -t->t[n - 1];     /* marks the replicated tile dim */
  return 0;
}

/* The mesh of every argument's tiles and each one's axes, into info. */
static int hlo_sharding_mesh(hctx *b, const hlo_tiles *ts, int nts, hlo_info *info) {
  int64_t bound[64];
  int nb = 0;
  int64_t total = 0;
  for (int k = 0; k < nts; k++) {
    const hlo_tiles *t = &ts[k];
    if (total && t->devices != total)
      return diag_error(b->d, L(b, t->off), "mhlo.sharding: this argument is tiled over %lld devices, an earlier one over %lld; "
                        "carve needs one mesh", (long long)t->devices, (long long)total);
    total = t->devices;
    int64_t stride = 1;
    for (int i = t->n - 1; i >= 0; i--) {
      int64_t c = t->t[i] < 0 ? -t->t[i] : t->t[i];
      int64_t marks[2] = {stride, stride * c};
      for (int m = 0; m < 2; m++) {
        int have = 0;
        for (int j = 0; j < nb; j++) have |= bound[j] == marks[m];
        if (!have && nb < 64) bound[nb++] = marks[m];
      }
      stride *= c;
    }
  }
  if (!nts || total <= 1) return 0;
  for (int i = 1; i < nb; i++)
    for (int j = i; j > 0 && bound[j - 1] < bound[j]; j--) { int64_t x = bound[j]; bound[j] = bound[j - 1]; bound[j - 1] = x; }
  /* bound: N, ..., 1 (descending); each must divide the one before */
  for (int i = 1; i < nb; i++)
    if (bound[i - 1] % bound[i])
      return diag_error(b->d, L(b, ts[0].off), "mhlo.sharding: the arguments' tilings do not nest into one mesh (%lld devices cut by %lld and %lld)",
                        (long long)total, (long long)bound[i - 1], (long long)bound[i]);
  if (nb - 1 > HLO_MAXAXES) return diag_error(b->d, L(b, ts[0].off), "mhlo.sharding: the tilings need a mesh of more than %d axes", HLO_MAXAXES);
  for (int i = 0; i + 1 < nb; i++) {
    info->axis[i] = ir_intern(b->g, arena_printf(&b->tmp, "_axis_%d", i));
    info->size[i] = bound[i] / bound[i + 1];
  }
  info->naxes = nb - 1;
  for (int k = 0; k < nts; k++) {
    const hlo_tiles *t = &ts[k];
    const ir_value *v = b->g->vals[t->arg];
    hlo_sharding sh = {.value = t->arg, .rank = v->shape.rank};
    int64_t stride = 1, any = 0;
    for (int i = t->n - 1; i >= 0; i--) {
      int64_t c = t->t[i] < 0 ? -t->t[i] : t->t[i];
      if (t->t[i] > 1 && i < v->shape.rank)
        for (int a = 0; a < info->naxes; a++)
          if (bound[a + 1] >= stride && bound[a] <= stride * c) { sh.axes[i][sh.naxes[i]++] = info->axis[a]; any = 1; }
      stride *= c;
    }
    if (!any) continue;
    info->shardings = arena_grow(&b->g->mem, info->shardings, (size_t)info->nshardings, (size_t)info->nshardings + 1, sizeof(hlo_sharding));
    info->shardings[info->nshardings++] = sh;
  }
  return 0;
}

/* carve.kind = "param" | "input" | "state" and carve.init = "zeros" |
** "ones" | "normal(s)" | "uniform(lo, hi)", as 'carve export' writes them,
** so that an exported program imports as the model it came from.
** --params-from-args, when given, still decides. */
static int carve_kind(hctx *b, const mlir_arg *a, const hlo_opts *o, ir_kind *kind, ir_init *init) {
  const mlir_attr *k = mlir_attr_get(a->attrs, "carve.kind"), *in = mlir_attr_get(a->attrs, "carve.init");
  if (k && !(o && o->params)) {
    if (k->kind != MLIR_A_STRING) return diag_error(b->d, L(b, k->off), "carve.kind must be a string: \"param\", \"input\" or \"state\"");
    if (!strcmp(k->text, "param")) *kind = IR_PARAM;
    else if (!strcmp(k->text, "input")) *kind = IR_INPUT;
    else if (!strcmp(k->text, "state")) *kind = IR_STATE;
    else return diag_error(b->d, L(b, k->off), "carve.kind \"%s\": expected \"param\", \"input\" or \"state\"", k->text);
  }
  if (!in) return 0;
  double x = 0, y = 0;
  char end = 0;
  if (in->kind == MLIR_A_STRING && !strcmp(in->text, "zeros")) *init = (ir_init){INIT_ZEROS, 0, 0};
  else if (in->kind == MLIR_A_STRING && !strcmp(in->text, "ones")) *init = (ir_init){INIT_ONES, 0, 0};
  else if (in->kind == MLIR_A_STRING && sscanf(in->text, "normal(%lf%c", &x, &end) == 2 && end == ')') *init = (ir_init){INIT_NORMAL, x, 0};
  else if (in->kind == MLIR_A_STRING && sscanf(in->text, "uniform(%lf ,%lf%c", &x, &y, &end) == 3 && end == ')') *init = (ir_init){INIT_UNIFORM, x, y};
  else return diag_error(b->d, L(b, in->off), "carve.init: expected \"zeros\", \"ones\", \"normal(std)\" or \"uniform(lo, hi)\"");
  return 0;
}

/* ---- a training step's new values, and which arguments are parameters ---- */

/* A JAX path without its first part: "params['w1']" -> "['w1']" (an
** argument's name), "[1]['w1']" -> "['w1']" (a result's place in the
** returned tuple); NULL when nothing is left. */
static const char *path_rest(const char *p, int result) {
  if (!p) return NULL;
  if (result) {
    if (p[0] != '[' || p[1] < '0' || p[1] > '9') return NULL;
    p = strchr(p, ']');
    p = p ? p + 1 : NULL;
  } else {
    p += strcspn(p, "[.");
  }
  return p && *p ? p : NULL;
}

static const char *info_text(const mlir_attr *attrs, const char *key) {
  const mlir_attr *a = mlir_attr_get(attrs, key);
  return a && a->kind == MLIR_A_STRING ? a->text : NULL;
}

/* Whether value `from` reads leaf `to` through elementwise and layout ops
** alone: an update (p - lr u, b1 m + (1 - b1) g, count + 1), not a value
** computed from it by a contraction or a reduction (its gradient). seen[]
** holds stamp for the values visited this time. */
static int updates(const ir_graph *g, int from, int to, int *seen, int stamp, int *stack) {
  int n = 0;
  stack[n++] = from;
  seen[from] = stamp;
  while (n) {
    const ir_value *v = g->vals[stack[--n]];
    if (v->id == to) return 1;
    if (v->kind != IR_OP) continue;
    unsigned fl = ir_opinfo_of(v->op)->flags;
    if (!(fl & (OPF_UNARY | OPF_BINARY | OPF_TERNARY)) && v->op != IR_RESHAPE && v->op != IR_BROADCAST && v->op != IR_TRANSPOSE) continue;
    for (int k = 0; k < v->nargs; k++)
      if (seen[v->args[k]] != stamp) { seen[v->args[k]] = stamp; stack[n++] = v->args[k]; }
  }
  return 0;
}

/* The optimizer's update of an imported step: the ops a new value of a
** leaf depends on that neither the loss nor a gradient depends on (where
** storage splits, ZeRO's, propagate). Only where every trained
** parameter's gradient is known: else the backward pass would pass for it. */
static void mark_updates(ir_graph *g) {
  int n = g->nvals, grads = 0, trained = 0;
  for (int i = 0; i < n; i++) {
    grads += g->vals[i]->role == ROLE_GRAD;
    trained += g->vals[i]->carry >= 0 && g->vals[g->vals[i]->carry]->kind == IR_PARAM;
  }
  if (!g->nouts || grads < trained) return;
  char *core = mem_calloc((size_t)n + 1, 1), *upd = mem_calloc((size_t)n + 1, 1);
  core[g->outputs[0]] = 1;
  for (int i = 0; i < n; i++) { core[i] |= g->vals[i]->role == ROLE_GRAD; upd[i] = g->vals[i]->carry >= 0; }
  for (int i = n - 1; i >= 0; i--)
    for (int k = 0; k < g->vals[i]->nargs; k++) {
      core[g->vals[i]->args[k]] |= core[i];
      upd[g->vals[i]->args[k]] |= upd[i];
    }
  for (int i = 0; i < n; i++) g->vals[i]->update = g->vals[i]->kind == IR_OP && upd[i] && !core[i];
  free(core);
  free(upd);
}

/* The results that are new values of arguments carry into them in the next
** step: carve's new.NAME, or a result whose JAX path inside the returned
** tuple is an argument's path inside its pytree ([1]['w1'] and
** params['w1']), of its shape and type, that updates it. Then which float
** arguments are parameters, where nothing said (--params-from-args,
** carve.kind): in a training step those it returns new values of (the
** rest is data); in a forward program named by JAX those inside a pytree
** (params['w1']; x and y alone are data); else each of rank 1 or more. */
static void params_and_data(hctx *b, const mlir_func *fn, const int *args, const char *told, const int *outs, int nouts) {
  ir_graph *g = b->g;
  int *seen = arena_alloc(&b->tmp, sizeof(int) * (size_t)(g->nvals + 1)), *stack = arena_alloc(&b->tmp, sizeof(int) * (size_t)(g->nvals + 1));
  char *carried = arena_alloc(&b->tmp, (size_t)fn->nargs + 1);
  int ncarried = 0, named = 0;
  for (int k = 0; k < nouts; k++) {
    ir_value *v = g->vals[outs[k]];
    const char *rest = path_rest(info_text(fn->results[k].attrs, "jax.result_info"), 1);
    if (!rest || v->kind != IR_OP || v->carry >= 0) continue;
    for (int a = 0; a < fn->nargs; a++) {
      const ir_value *x = g->vals[args[a]];
      const char *arest = path_rest(info_text(fn->args[a].attrs, "jax.arg_info"), 0);
      if (carried[a] || !arest || strcmp(rest, arest) || x->dtype != v->dtype || !ir_shape_eq(&x->shape, &v->shape) ||
          !updates(g, v->id, x->id, seen, k + 1, stack)) continue;
      const char *nm = arena_printf(&b->tmp, "new.%s", x->name);
      if (ir_lookup(g, nm) || ir_rename(g, v, ir_intern(g, nm)) < 0) continue;
      carried[a] = 1;
      break;
    }
  }
  ncarried = ir_carry_new_values(g);     /* those, and carve's own new.NAME */
  for (int k = 0; k < g->nvals; k++)
    if (g->vals[k]->carry >= 0)
      for (int a = 0; a < fn->nargs; a++) if (args[a] == g->vals[k]->carry) carried[a] = 1;
  for (int a = 0; a < fn->nargs; a++) named |= info_text(fn->args[a].attrs, "jax.arg_info") != NULL;
  /* the leaves the first output (the loss) reads: a carried argument it
  ** does not read is optimizer state (Adam's moments, the step count) */
  char *loss_reads = arena_alloc(&b->tmp, (size_t)g->nvals + 1);
  memset(loss_reads, 0, (size_t)g->nvals + 1);
  if (ncarried && nouts > 0 && g->vals[outs[0]]->carry < 0) {
    int n = 0;
    stack[n++] = outs[0];
    loss_reads[outs[0]] = 1;
    while (n) {
      const ir_value *v = g->vals[stack[--n]];
      for (int k = 0; k < v->nargs; k++)
        if (!loss_reads[v->args[k]]) { loss_reads[v->args[k]] = 1; stack[n++] = v->args[k]; }
    }
  } else {
    memset(loss_reads, 1, (size_t)g->nvals + 1);
  }
  for (int a = 0; a < fn->nargs; a++) {
    ir_value *x = g->vals[args[a]];
    /* integers are data, but for a counter the step carries and the loss does not read (optax's count) */
    int counter = ncarried && carried[a] && !loss_reads[x->id];
    if (told[a] || (!ir_dtype_isfloat(x->dtype) && !counter)) continue;
    int param = ncarried ? carried[a] : named ? path_rest(info_text(fn->args[a].attrs, "jax.arg_info"), 0) != NULL : x->kind == IR_PARAM;
    if (param && x->kind != IR_PARAM) x->init = (ir_init){INIT_NORMAL, 0.02, 0};
    x->kind = param ? (loss_reads[x->id] ? IR_PARAM : IR_STATE) : IR_INPUT;
    x->role = param ? (loss_reads[x->id] ? ROLE_PARAM : ROLE_STATE) : ROLE_INPUT;
    if (x->kind == IR_STATE) x->init = (ir_init){INIT_ZEROS, 0, 0};       /* as optimizers start theirs */
  }
  if (!ncarried) return;
  g->train = TRAIN_STEP;
  /* each parameter's gradient: the one value of its shape its update reads
  ** through elementwise ops that is made by a contraction or reduction */
  for (int k = 0; k < nouts; k++) {
    const ir_value *v = g->vals[outs[k]];
    if (v->carry < 0 || g->vals[v->carry]->kind != IR_PARAM) continue;
    const ir_value *p = g->vals[v->carry];
    ir_value *named_grad = ir_lookup(g, arena_printf(&b->tmp, "grad.%s", p->name));    /* carve export's name */
    if (named_grad && named_grad->kind == IR_OP && ir_shape_eq(&named_grad->shape, &p->shape)) { named_grad->role = ROLE_GRAD; continue; }
    int n = 0, found = -1, many = 0, stamp = -(k + 2);
    stack[n++] = v->id;
    seen[v->id] = stamp;
    while (n) {
      const ir_value *x = g->vals[stack[--n]];
      unsigned fl = x->kind == IR_OP ? ir_opinfo_of(x->op)->flags : 0;
      if (x->id != v->id && x->kind == IR_OP && !(fl & (OPF_UNARY | OPF_BINARY | OPF_TERNARY)) && x->op != IR_BROADCAST && x->op != IR_RESHAPE) {
        if (x->dtype == p->dtype && ir_shape_eq(&x->shape, &p->shape)) { many |= found >= 0 && found != x->id; found = x->id; }
        continue;
      }
      if (x->kind != IR_OP) continue;
      for (int j = 0; j < x->nargs; j++)
        if (seen[x->args[j]] != stamp) { seen[x->args[j]] = stamp; stack[n++] = x->args[j]; }
    }
    if (found >= 0 && !many && g->vals[found]->role == ROLE_VALUE) g->vals[found]->role = ROLE_GRAD;
  }
  mark_updates(g);
}

static const mlir_func *entry_func(hctx *b, const hlo_opts *o) {
  const char *want = o && o->entry ? o->entry : NULL;
  const mlir_func *pub = NULL;
  int npub = 0;
  for (int m = 0; m < b->f->nmodules; m++) {
    const mlir_module *mod = b->f->modules[m];
    for (int i = 0; i < mod->nfuncs; i++) {
      const mlir_func *fn = mod->funcs[i];
      if (want ? !strcmp(fn->name, want) : !strcmp(fn->name, "main")) { b->m = mod; return fn; }
      if (!fn->visibility || !strcmp(fn->visibility, "public")) { pub = fn; npub++; b->m = mod; }
    }
  }
  if (want) { diag_error(b->d, (loc){b->src, 0}, "this program has no function @%s (--model names the function to import)", want); return NULL; }
  if (npub == 1) return pub;
  if (npub) diag_error(b->d, (loc){b->src, 0}, "this program has %d public functions and none is @main; pick one with --model NAME", npub);
  else diag_error(b->d, (loc){b->src, 0}, "this program has no function to import");
  return NULL;
}

ir_graph *hlo_build(const mlir_file *f, const hlo_opts *o, hlo_info *info, diag *d) {
  hctx bb = {.d = d, .src = f->src, .f = f, .prefix = "", .info = info, .run_region = hlo_run_elementwise}, *b = &bb;
  if (info) memset(info, 0, sizeof *info);
  b->as_written = o && o->as_written;
  arena_init(&b->tmp);
  for (int m = 0; m < f->nmodules; m++)
    if (hlo_check_module(b, f->modules[m]) < 0) { arena_free(&b->tmp); return NULL; }
  const mlir_func *fn = entry_func(b, o);
  if (!fn || hlo_check_size(b, fn) < 0) { arena_free(&b->tmp); return NULL; }
  if (info && b->m->nmeshes) {
    const mlir_mesh *me = b->m->meshes[0];
    for (int i = 0; i < me->naxes && i < HLO_MAXAXES; i++) {
      info->axis[info->naxes] = me->axes[i].name;
      info->size[info->naxes++] = me->axes[i].size;
    }
  }
  const char *gname = b->m->name ? hlo_clean_name(b, b->m->name) : NULL;
  b->g = ir_graph_new(f->src, gname ? gname : fn->name);
  if (info && info->naxes)
    for (int i = 0; i < info->naxes; i++) info->axis[i] = ir_intern(b->g, info->axis[i]);
  scope top = {0};
  b->sc = &top;
  int *args = arena_alloc(&b->tmp, sizeof(int) * (size_t)(fn->nargs + 1));
  char *told = arena_alloc(&b->tmp, (size_t)fn->nargs + 1);     /* the kind was given (--params-from-args, carve.kind) */
  int rc = 0, ntiles = 0;
  hlo_tiles *tiles = NULL;
  for (int k = 0; k < fn->nargs && rc == 0; k++) {
    const mlir_arg *a = &fn->args[k];
    ir_shape s;
    ir_dtype dt;
    if (hlo_tensor_type(b, a->type, a->off, &s, &dt) < 0) { rc = -1; break; }
    const char *nm = arg_name(b, fn, k);
    if (ir_lookup(b->g, nm)) nm = ir_fresh_name(b->g, nm);
    ir_value tmpv = {.dtype = dt, .shape = s};
    int param = is_param(o, nm, &tmpv);
    ir_kind kind = param ? IR_PARAM : IR_INPUT;
    ir_init init = {INIT_NORMAL, 0.02, 0};
    told[k] = (char)((o && o->params) || mlir_attr_get(a->attrs, "carve.kind"));
    if (carve_kind(b, a, o, &kind, &init) < 0) { rc = -1; break; }
    param = kind != IR_INPUT;
    if (param && !ir_dtype_isfloat(dt)) {
      rc = diag_error(d, L(b, a->off), "argument '%s' is %s; parameters are trained and must be float (leave it out of --params-from-args)",
                      nm, ir_dtype_name(dt));
      break;
    }
    ir_value *v = ir_add(b->g, nm, kind, IR_LEAF, NULL, 0, NULL, L(b, a->off));
    v->dtype = dt;
    v->shape = s;
    if (param) v->init = init;
    args[k] = v->id;
    rc = arg_sharding(b, a, v->id, info);
    const mlir_attr *ms = mlir_attr_get(a->attrs, "mhlo.sharding");
    if (rc == 0 && ms && ms->kind == MLIR_A_STRING) {
      hlo_tiles t;
      int r = read_hlo_sharding(b, ms, s.rank, &t);
      if (r < 0) rc = -1;
      else if (r == 0 && t.n) {
        t.arg = v->id;
        tiles = arena_grow(&b->tmp, tiles, (size_t)ntiles, (size_t)ntiles + 1, sizeof *tiles);
        tiles[ntiles++] = t;
      }
    }
  }
  /* GSPMD strings make the mesh where the module has no sdy.mesh */
  if (rc == 0 && ntiles && info && !info->naxes) rc = hlo_sharding_mesh(b, tiles, ntiles, info);
  int nouts = 0, *outs = arena_alloc(&b->tmp, sizeof(int) * (size_t)(fn->nresults + 1));
  if (rc == 0) rc = hlo_build_body(b, fn, args, outs, fn->nresults, &nouts);
  if (rc == 0 && nouts != fn->nresults)
    rc = diag_error(d, L(b, fn->off), "@%s declares %d results but returns %d", fn->name, fn->nresults, nouts);
  if (rc == 0 && nouts == 0 && !b->nchecks) rc = diag_error(d, L(b, fn->off), "@%s returns nothing; carve needs a result", fn->name);
  for (int k = 0; rc == 0 && k < nouts; k++) {
    ir_value *v = b->g->vals[outs[k]];
    ir_shape s;
    ir_dtype dt;
    if (hlo_tensor_type(b, fn->results[k].type, fn->off, &s, &dt) < 0) { rc = -1; break; }
    if (v->dtype != dt || !ir_shape_eq(&v->shape, &s)) {
      rc = diag_error(d, L(b, fn->off), "@%s: result %d is %s%s but the function declares %s%s", fn->name, k, ir_dtype_name(v->dtype),
                      ir_shape_str(&b->tmp, &v->shape), ir_dtype_name(dt), ir_shape_str(&b->tmp, &s));
      break;
    }
    if (v->is_output || v->kind == IR_CONST) {        /* returned twice, or a literal: a copy of its own */
      int x = v->id;
      ir_attrs at = hlo_no_attrs();
      at.to = v->shape;
      b->op = NULL;
      ir_value *c = ir_op(b->g, d, ir_fresh_name(b->g, "out"), IR_BROADCAST, &x, 1, &at, L(b, fn->off));
      if (!c) { rc = -1; break; }
      v = c;
    }
    /* results take the name jax.result_info gives them, else out, out1, ... */
    const mlir_attr *ri = mlir_attr_get(fn->results[k].attrs, "jax.result_info");
    const char *rn = ri && ri->kind == MLIR_A_STRING ? hlo_clean_name(b, ri->text) : NULL;
    if (rn && rn[0] == 'v' && rn[1] >= '0' && rn[1] <= '9') rn = NULL;   /* "[0]": no name in it */
    if (!rn) rn = k ? arena_printf(&b->tmp, "out%d", k) : "out";
    if (v->kind == IR_OP && !ir_lookup(b->g, rn)) ir_rename(b->g, v, ir_intern(b->g, rn));
    ir_add_output(b->g, v->id);
  }
  if (rc == 0) params_and_data(b, fn, args, told, outs, nouts);
  for (int k = 0; rc == 0 && k < b->nchecks; k++) ir_add_output(b->g, b->checks[k]);   /* after the results */
  if (rc < 0 && !d->nerrors)     /* every failure says why; this one did not */
    diag_error(d, L(b, fn->off), "@%s: the import stopped without a message (a carve bug; please report it with this program)", fn->name);
  arena_free(&b->tmp);
  if (rc < 0) { ir_graph_free(b->g); return NULL; }
  ir_simplify_broadcasts(b->g);
  ir_link(b->g);
  return b->g;
}

/* ---- the tactic file of the argument shardings ---- */

char *hlo_tactics(const ir_graph *g, const hlo_info *info, arena *a) {
  if (!info || !info->naxes) return NULL;
  strbuf sb;
  sb_init(&sb);
  sb_puts(&sb, "# the argument shardings of the imported program (sdy.sharding or mhlo.sharding) and its\n"
              "# sdy.sharding_constraints\nversion 1\nmesh ");
  for (int i = 0; i < info->naxes; i++) sb_printf(&sb, "%s%s = %lld", i ? ", " : "", info->axis[i], (long long)info->size[i]);
  sb_puts(&sb, "\n\ntactic imported {\n");
  for (int i = 0; i < info->nshardings; i++) {
    const hlo_sharding *s = &info->shardings[i];
    const ir_value *v = g->vals[s->value];
    for (int d = 0; d < s->rank; d++)
      for (int j = 0; j < s->naxes[d]; j++)
        sb_printf(&sb, "  shard %s \"%s\" dim %d on %s\n", v->kind == IR_PARAM ? "param" : v->kind == IR_INPUT ? "input" : "value",
                  v->name, d, s->axes[d][j]);
  }
  if (!info->nshardings) sb_puts(&sb, "  # no argument is split\n");
  sb_puts(&sb, "}\n\nschedule imported\n");
  char *out = arena_strndup(a, sb_str(&sb), strlen(sb_str(&sb)));
  sb_free(&sb);
  return out;
}

int hlo_import(arena *a, diag *d, const char *path, const hlo_opts *o, char **cir, char **tac) {
  *cir = *tac = NULL;
  const diag_src *src = diag_load_file(a, d, path);
  mlir_file *f = src ? mlir_parse(a, d, src) : NULL;
  if (!f) return -1;
  hlo_info info;
  ir_graph *g = hlo_build(f, o, &info, d);
  if (!g) return -1;
  *cir = ir_print(g, a);
  *tac = hlo_tactics(g, &info, a);
  ir_graph_free(g);
  return 0;
}

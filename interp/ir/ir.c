/*
** ir.c: graph construction, the name index, and small shape helpers.
*/
#include "interp/ir/ir.h"
#include "interp/ir/ops.h"
#include "runtime/dtype.h"
#include "util/mem.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

ir_graph *ir_graph_new(const diag_src *src, const char *name) {
  ir_graph *g = mem_calloc(1, sizeof *g);
  arena_init(&g->mem);
  g->src = src;
  g->name = name ? arena_intern_cstr(&g->mem, name) : "model";
  return g;
}

void ir_graph_free(ir_graph *g) {
  if (!g) return;
  free(g->index);
  arena_free(&g->mem);
  free(g);
}

const char *ir_intern(ir_graph *g, const char *s) { return arena_intern_cstr(&g->mem, s); }

static size_t ptr_hash(const char *p, int n) {
  uintptr_t x = (uintptr_t)p;
  x ^= x >> 17; x *= 0xed5ad4bbu; x ^= x >> 11;
  return (size_t)x & (size_t)(n - 1);
}

static void index_put(ir_graph *g, const char *name, int id) {
  if ((g->nvals + g->ntomb + 1) * 2 > g->nindex) {
    int n = g->nindex ? g->nindex * 2 : 1024;
    int *ix = malloc(sizeof(int) * (size_t)n);
    if (!ix) mem_oom();
    for (int i = 0; i < n; i++) ix[i] = -1;
    for (int i = 0; i < g->nindex; i++) {
      int v = g->index[i];
      if (v < 0) continue;
      size_t j = ptr_hash(g->vals[v]->name, n);
      while (ix[j] >= 0) j = (j + 1) & (size_t)(n - 1);
      ix[j] = v;
    }
    free(g->index);
    g->index = ix;
    g->nindex = n;
    g->ntomb = 0;
  }
  size_t j = ptr_hash(name, g->nindex);
  while (g->index[j] != -1) j = (j + 1) & (size_t)(g->nindex - 1);
  g->index[j] = id;
}

/* Index slots: >= 0 a value, -1 empty, -2 deleted (probes go on past it). */
int ir_rename(ir_graph *g, ir_value *v, const char *name) {
  const char *nm = ir_intern(g, name);
  if (ir_lookup(g, nm)) return -1;
  size_t j = ptr_hash(v->name, g->nindex);
  while (g->index[j] != v->id) j = (j + 1) & (size_t)(g->nindex - 1);
  g->index[j] = -2;
  g->ntomb++;
  v->name = nm;
  index_put(g, nm, v->id);
  return 0;
}

ir_value *ir_lookup(const ir_graph *g, const char *name) {
  if (!g->nindex) return NULL;
  /* interned pointers are canonical: a name never interned is not defined */
  const char *key = arena_find_interned(&g->mem, name, strlen(name));
  if (!key) return NULL;
  size_t j = ptr_hash(key, g->nindex);
  while (g->index[j] != -1) {
    ir_value *v = g->index[j] >= 0 ? g->vals[g->index[j]] : NULL;
    if (v && v->name == key) return v;
    j = (j + 1) & (size_t)(g->nindex - 1);
  }
  return NULL;
}

ir_value *ir_val(const ir_graph *g, int id) { return id >= 0 && id < g->nvals ? g->vals[id] : NULL; }

ir_value *ir_add(ir_graph *g, const char *name, ir_kind kind, ir_opkind op,
                 const int *args, int nargs, const ir_attrs *attr, loc at) {
  const char *nm = ir_intern(g, name);
  if (ir_lookup(g, nm)) return NULL;
  if (g->nvals == g->cap) {
    int ncap = g->cap ? g->cap * 2 : 256;
    g->vals = arena_grow(&g->mem, g->vals, (size_t)g->cap, (size_t)ncap, sizeof *g->vals);
    g->cap = ncap;
  }
  ir_value *v = arena_alloc(&g->mem, sizeof *v);
  v->id = g->nvals;
  v->name = nm;
  v->kind = kind;
  v->role = kind == IR_INPUT ? ROLE_INPUT : kind == IR_PARAM ? ROLE_PARAM
          : kind == IR_STATE ? ROLE_STATE : ROLE_VALUE;
  v->op = op;
  v->nargs = nargs;
  if (nargs) v->args = arena_dup(&g->mem, args, sizeof(int) * (size_t)nargs);
  if (attr) v->attr = *attr;
  v->at = at;
  v->carry = -1;
  v->origin = -1;
  g->vals[g->nvals++] = v;
  index_put(g, nm, v->id);
  return v;
}

const char *ir_fresh_name(ir_graph *g, const char *prefix) {
  if (!ir_lookup(g, prefix)) return ir_intern(g, prefix);
  strbuf b;
  sb_init(&b);
  for (int i = 2;; i++) {
    sb_clear(&b);
    sb_printf(&b, "%s.%d", prefix, i);
    if (!ir_lookup(g, b.p)) {
      const char *r = ir_intern(g, b.p);
      sb_free(&b);
      return r;
    }
  }
}

void ir_add_output(ir_graph *g, int id) {
  if (g->nouts == g->outcap) {
    int ncap = g->outcap ? g->outcap * 2 : 16;
    g->outputs = arena_grow(&g->mem, g->outputs, (size_t)g->outcap, (size_t)ncap, sizeof(int));
    g->outcap = ncap;
  }
  g->outputs[g->nouts++] = id;
  g->vals[id]->is_output = 1;
}

int ir_carry_new_values(ir_graph *g) {
  int n = 0;
  char *taken = mem_calloc((size_t)g->nvals + 1, 1);
  for (int j = 0; j < g->nvals; j++) if (g->vals[j]->carry >= 0) taken[g->vals[j]->carry] = 1;
  for (int k = 0; k < g->nouts; k++) {
    ir_value *v = g->vals[g->outputs[k]];
    if (v->kind != IR_OP || v->carry >= 0 || strncmp(v->name, "new.", 4)) continue;
    const ir_value *leaf = ir_lookup(g, v->name + 4);
    if (!leaf || leaf->kind == IR_OP || leaf->kind == IR_CONST || taken[leaf->id] || leaf->dtype != v->dtype ||
        !ir_shape_eq(&leaf->shape, &v->shape)) continue;
    v->carry = leaf->id;
    taken[leaf->id] = 1;
    n++;
  }
  free(taken);
  return n;
}

void ir_link(ir_graph *g) {
  int *count = mem_calloc((size_t)g->nvals + 1, sizeof(int));
  for (int i = 0; i < g->nvals; i++) {
    ir_value *v = g->vals[i];
    for (int k = 0; k < v->nargs; k++) {
      int a = v->args[k], dup = 0;
      for (int j = 0; j < k; j++) dup |= v->args[j] == a;
      if (!dup) count[a]++;
    }
  }
  for (int i = 0; i < g->nvals; i++) {
    g->vals[i]->users = count[i] ? arena_alloc(&g->mem, sizeof(int) * (size_t)count[i]) : NULL;
    g->vals[i]->nusers = 0;
  }
  for (int i = 0; i < g->nvals; i++) {
    ir_value *v = g->vals[i];
    for (int k = 0; k < v->nargs; k++) {
      int a = v->args[k], dup = 0;
      for (int j = 0; j < k; j++) dup |= v->args[j] == a;
      if (!dup) { ir_value *u = g->vals[a]; u->users[u->nusers++] = i; }
    }
  }
  free(count);
}

/* the field of a boolean attribute of the op signatures */
static int *flag_of(ir_attrs *a, const char *name) {
  if (!strcmp(name, "total")) return &a->total;
  if (!strcmp(name, "causal")) return &a->causal;
  if (!strcmp(name, "rms")) return &a->rms;
  return &a->keepdims;
}

int ir_attr_flag(const ir_attrs *a, const char *name) { return *flag_of((ir_attrs *)a, name); }

void ir_attr_set_flag(ir_attrs *a, const char *name, int on) { *flag_of(a, name) = on != 0; }

double ir_attr_number(const ir_attrs *a, const char *name) { return !strcmp(name, "scale") ? a->scale : a->eps; }

/* Keep the n values listed in order, renumbered in that order. */
static void renumber(ir_graph *g, const int *order, int n) {
  int *to = mem_alloc(sizeof(int) * ((size_t)g->nvals + 1));
  ir_value **vals = mem_alloc(sizeof *vals * ((size_t)n + 1));
  for (int i = 0; i < g->nvals; i++) to[i] = -1;
  for (int i = 0; i < n; i++) { to[order[i]] = i; vals[i] = g->vals[order[i]]; }
  memcpy(g->vals, vals, sizeof *vals * (size_t)n);
  free(vals);
  for (int i = 0; i < n; i++) {
    ir_value *v = g->vals[i];
    v->id = i;
    for (int k = 0; k < v->nargs; k++) v->args[k] = to[v->args[k]];
    if (v->carry >= 0) v->carry = to[v->carry];
    if (v->origin >= 0) v->origin = to[v->origin];
  }
  for (int i = 0; i < g->nouts; i++) g->outputs[i] = to[g->outputs[i]];
  free(to);
  free(g->index);             /* the names stay interned; only their slots move */
  g->index = NULL;
  g->nindex = g->ntomb = 0;
  g->nvals = 0;
  for (int i = 0; i < n; i++) { g->nvals = i; index_put(g, g->vals[i]->name, i); }
  g->nvals = n;
  ir_link(g);
}

void ir_compact(ir_graph *g, const char *dead) {
  int *order = mem_alloc(sizeof(int) * ((size_t)g->nvals + 1));
  int n = 0;
  for (int i = 0; i < g->nvals; i++) if (!dead[i]) order[n++] = i;
  renumber(g, order, n);
  free(order);
}

void ir_reorder(ir_graph *g, const int *order) { renumber(g, order, g->nvals); }

static const char *dtype_names[] = {"f32", "bf16", "f16", "i32", "f64", "i64", "i1", "i8", "ui8", "i16", "ui16", "ui32"};   /* ORDER IR_DTYPE */
_Static_assert(sizeof dtype_names / sizeof dtype_names[0] == IR_NDTYPES, "ORDER IR_DTYPE: dtype_names");

const char *ir_dtype_name(ir_dtype t) { return dtype_names[t]; }

int ir_dtype_parse(const char *s, ir_dtype *t) {
  for (int i = 0; i < IR_NDTYPES; i++)
    if (strcmp(s, dtype_names[i]) == 0) { *t = (ir_dtype)i; return 0; }
  return -1;
}

size_t ir_dtype_size(ir_dtype t) {
  static const size_t sz[] = {4, 2, 2, 4, 8, 8, 1, 1, 1, 2, 2, 4};   /* ORDER IR_DTYPE */
  _Static_assert(sizeof sz / sizeof sz[0] == IR_NDTYPES, "ORDER IR_DTYPE: sizes");
  return (unsigned)t < IR_NDTYPES ? sz[t] : 4;
}

int ir_dtype_isfloat(ir_dtype t) { return t == IR_F32 || t == IR_BF16 || t == IR_F16 || t == IR_F64; }
int ir_dtype_isint(ir_dtype t) { return t != IR_I1 && !ir_dtype_isfloat(t) && (unsigned)t < IR_NDTYPES; }
int ir_dtype_isunsigned(ir_dtype t) { return t == IR_UI8 || t == IR_UI16 || t == IR_UI32; }

int64_t ir_nelem(const ir_shape *s) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) n *= s->d[i];
  return n;
}

int ir_shape_eq(const ir_shape *a, const ir_shape *b) {
  if (a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++) if (a->d[i] != b->d[i]) return 0;
  return 1;
}

const char *ir_shape_str(arena *a, const ir_shape *s) {
  char buf[256];
  size_t k = 0;
  buf[k++] = '[';
  for (int i = 0; i < s->rank; i++)
    k += (size_t)snprintf(buf + k, sizeof buf - k, i ? ", %lld" : "%lld", (long long)s->d[i]);
  buf[k++] = ']'; buf[k] = 0;
  return arena_strndup(a, buf, k);
}

int ir_computes_low(const ir_graph *g) {
  for (int i = 0; i < g->nvals; i++)
    if (g->vals[i]->kind == IR_OP && (g->vals[i]->dtype == IR_BF16 || g->vals[i]->dtype == IR_F16)) return 1;
  return 0;
}

int ir_const(ir_graph *g, double x) { return ir_const_typed(g, x, IR_F32); }

int ir_const_typed(ir_graph *g, double x, ir_dtype t) {
  char nm[64];
  if (t == IR_F32) snprintf(nm, sizeof nm, "lit:%.17g", x);
  else snprintf(nm, sizeof nm, "lit:%s:%.17g", ir_dtype_name(t), x);
  ir_value *v = ir_lookup(g, nm);
  if (v) return v->id;
  v = ir_add(g, nm, IR_CONST, IR_LEAF, NULL, 0, NULL, LOC_NONE);
  v->attr.scalar = x;
  v->dtype = t;
  v->shape.rank = 0;
  return v->id;
}

/* Whether the literal x is a value of type t (any float type holds it) */
int ir_literal_fits(double x, ir_dtype t) {
  double lo, hi;    /* the type's range, both ends included */
  switch (t) {
  case IR_F32: case IR_BF16: case IR_F16: case IR_F64: return 1;
  case IR_I1: lo = 0; hi = 1; break;
  case IR_I8: lo = -128; hi = 127; break;
  case IR_UI8: lo = 0; hi = 255; break;
  case IR_I16: lo = -32768; hi = 32767; break;
  case IR_UI16: lo = 0; hi = 65535; break;
  case IR_I32: lo = -2147483648.0; hi = 2147483647.0; break;
  case IR_UI32: lo = 0; hi = 4294967295.0; break;
  default: return x == floor(x) && x >= -0x1p63 && x < 0x1p63;    /* i64 */
  }
  return x == floor(x) && x >= lo && x <= hi;
}

void ir_type_literals(ir_graph *g, ir_opkind op, int *args, int nargs) {
  int flags = ir_opinfo_of(op)->flags;
  if (!(flags & (OPF_UNARY | OPF_BINARY | OPF_TERNARY)) || nargs < 1) return;
  if (flags & OPF_TERNARY) { args++; nargs--; }      /* select's predicate is no operand to match */
  int have = 0;
  ir_dtype t = IR_F32;
  for (int k = 0; k < nargs; k++) {
    const ir_value *a = g->vals[args[k]];
    if (a->kind == IR_CONST && a->dtype == IR_F32) continue;
    t = a->dtype;
    have = 1;
    break;
  }
  if (!have || t == IR_F32 || t == IR_BF16 || t == IR_F16) return;   /* f32 literals serve these as they are */
  for (int k = 0; k < nargs; k++) {
    const ir_value *a = g->vals[args[k]];
    /* one that t cannot hold stays as it is, for the shape rule to refuse */
    if (a->kind == IR_CONST && a->dtype == IR_F32 && ir_literal_fits(a->attr.scalar, t)) args[k] = ir_const_typed(g, a->attr.scalar, t);
  }
}

static rt_dtype rt_of(ir_dtype t) {
  static const rt_dtype m[] = {RT_F32, RT_BF16, RT_F16, RT_I32, RT_F64, RT_I64, RT_I1, RT_I8, RT_UI8, RT_I16, RT_UI16, RT_UI32};   /* ORDER IR_DTYPE */
  _Static_assert(sizeof m / sizeof m[0] == IR_NDTYPES, "ORDER IR_DTYPE: runtime types");
  return m[t];
}

double ir_value_at(const ir_value *v, int64_t k) {
  if (!v->attr.data) return 0;
  return rt_load_f(rt_of(v->attr.dtype), v->attr.data, k);
}

int64_t ir_value_at_int(const ir_value *v, int64_t k) {
  if (!v->attr.data) return 0;
  return rt_load_i(rt_of(v->attr.dtype), v->attr.data, k);
}

void *ir_values_new(ir_graph *g, ir_dtype t, int64_t n) {
  size_t bytes = (size_t)(n > 0 ? n : 1) * ir_dtype_size(t);
  void *p = arena_alloc(&g->mem, bytes);
  memset(p, 0, bytes);
  return p;
}

void ir_values_set(void *data, ir_dtype t, int64_t k, double x) {
  rt_store_f(rt_of(t), data, k, x);
}

void ir_values_set_int(void *data, ir_dtype t, int64_t k, int64_t x) {
  rt_store_i(rt_of(t), data, k, x);
}

const struct ir_fused *ir_fused_match(const ir_graph *g, const char *glob) {
  for (int i = 0; i < g->nfused; i++)
    if (fnmatch(glob, g->fused[i].name, 0) == 0) return &g->fused[i];
  return NULL;
}

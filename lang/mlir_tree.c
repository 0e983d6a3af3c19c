/*
** mlir_tree.c: the syntax tree of StableHLO text: the helpers the
** grammar's actions build it with (attributes, item lists, pretty ops,
** modules, functions of the generic form, meshes, aliases), and the
** readers the IR builder uses (locations, attributes and items by key).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lang/mlir_int.h"
#include "lang/mlir_gram.h"

/* ---- building the tree ---- */

mlir_attr *mlir_new_attr(mlir_pctx *p, mlir_akind k, uint32_t off, uint32_t end) {
  mlir_attr *a = arena_alloc(p->a, sizeof *a);
  a->kind = k;
  a->off = off;
  a->end = end;
  a->i = k == MLIR_A_VALUE ? -1 : 0;
  return a;
}

void mlir_items_begin(mlir_pctx *p, mlir_itemv *v) {
  v->start = p->nscratch;
  v->n = 0;
}

void mlir_item_push(mlir_pctx *p, mlir_itemv *v, mlir_item it) {
  if (v->start + v->n != p->nscratch) {   /* cannot happen: lists close in order */
    mlir_error(p, it.val->off, "internal error: attribute lists out of order");
    return;
  }
  if (p->nscratch == p->scratchcap) {
    p->scratchcap = p->scratchcap ? 2 * p->scratchcap : 256;
    p->scratch = mem_realloc(p->scratch, (size_t)p->scratchcap * sizeof *p->scratch);
  }
  p->scratch[p->nscratch++] = it;
  v->n++;
}

mlir_item *mlir_items_end(mlir_pctx *p, const mlir_itemv *v) {
  if (v->n == 0 || v->start + v->n > p->nscratch) return NULL;
  mlir_item *out = arena_dup(p->a, p->scratch + v->start, (size_t)v->n * sizeof *out);
  p->nscratch = v->start;
  return out;
}

/* The values among a pretty op's items, in order (into out when not NULL); their number. */
static int collect(mlir_attr *a, mlir_attr **out, int n) {
  if (a->kind == MLIR_A_VALUE) {
    if (out) out[n] = a;
    return n + 1;
  }
  if (a->kind == MLIR_A_GROUP || a->kind == MLIR_A_SEQ)
    for (int i = 0; i < a->nitems; i++) n = collect(a->items[i].val, out, n);
  return n;
}

void mlir_pretty_done(mlir_pctx *p, mlir_op *op) {
  int n = 0;
  for (int i = 0; i < op->nitems; i++) n = collect(op->items[i].val, NULL, n);
  if (n) {
    op->operands = arena_alloc(p->a, (size_t)n * sizeof *op->operands);
    for (int i = 0, k = 0; i < op->nitems; i++) k = collect(op->items[i].val, op->operands, k);
  }
  op->noperands = n;
  if (!op->sig.has && n > 0 && !p->syn.failed) {
    /* Reduced on the token after the op: that is where the ':' is missing. */
    const mlir_tok *t = &p->tok;
    const mlir_item *last = &op->items[op->nitems - 1];
    int line_l, col_l, line_t, col_t;
    diag_linecol(p->syn.src, last->val->end, &line_l, &col_l);
    diag_linecol(p->syn.src, t->off, &line_t, &col_t);
    const char *comma = p->code == TK_VALUE && line_l == line_t ? "',' or " : "";
    char what[64];
    if (p->code == 0) {
      p->syn.incomplete = 1;
      snprintf(what, sizeof what, "end of input");
    } else if (p->code == TK_STRING) {
      snprintf(what, sizeof what, "string");
    } else {
      snprintf(what, sizeof what, "'%.*s%s'", (int)(t->len > 40 ? 40 : t->len), p->syn.src->text + t->off,
               t->len > 40 ? "..." : "");
    }
    mlir_error(p, t->off, "unexpected %s, expected %s':' and the types of '%s'", what, comma, op->name);
  }
}

void mlir_check_dense(mlir_pctx *p, const mlir_attr *lit) {
  switch (lit->kind) {
  case MLIR_A_INT: case MLIR_A_FLOAT: case MLIR_A_BOOL: case MLIR_A_STRING:
    return;
  case MLIR_A_LIST: case MLIR_A_GROUP:
    for (int i = 0; i < lit->nitems && !p->syn.failed; i++) {
      if (lit->items[i].key)
        mlir_error(p, lit->items[i].key_off, "dense elements cannot have keys");
      else
        mlir_check_dense(p, lit->items[i].val);
    }
    return;
  default: {
    uint32_t n = lit->end - lit->off;
    mlir_error(p, lit->off, "unexpected '%.*s%s' in dense<...>, expected numbers, true or false, "
               "lists of them, or a hex string such as \"0x0000803F\"", (int)(n > 40 ? 40 : n),
               p->syn.src->text + lit->off, n > 40 ? "..." : "");
    return;
  }
  }
}

mlir_modb mlir_module_open(mlir_pctx *p, uint32_t off) {
  mlir_modb b = {0};
  b.m = arena_alloc(p->a, sizeof *b.m);
  b.m->off = off;
  mlir_file *f = p->file;
  MLIR_PUSH(p->a, f->modules, f->nmodules, p->modcap, b.m);
  return b;
}

/* An item's value by key among items (NULL if none). */
static mlir_item *find_item(mlir_item *items, int n, const char *key) {
  for (int i = 0; i < n; i++)
    if (items[i].key && strcmp(items[i].key, key) == 0) return &items[i];
  return NULL;
}

/* A generic op's attribute, from its properties then its dictionary. */
static mlir_item *op_attr_item(const mlir_op *op, const char *key) {
  mlir_item *it = NULL;
  if (op->props) it = find_item(op->props->items, op->props->nitems, key);
  if (!it && op->attrs) it = find_item(op->attrs->items, op->attrs->nitems, key);
  return it;
}

/* A copy of dict d without the keys in drop (NULL if nothing is left). */
static mlir_attr *dict_without(mlir_pctx *p, const mlir_attr *d, const char *const *drop) {
  if (!d) return NULL;
  mlir_attr *c = arena_dup(p->a, d, sizeof *d);
  c->items = arena_alloc(p->a, (size_t)(d->nitems + 1) * sizeof *c->items);
  c->nitems = 0;
  for (int i = 0; i < d->nitems; i++) {
    int keep = 1;
    for (const char *const *k = drop; *k; k++)
      if (d->items[i].key && strcmp(d->items[i].key, *k) == 0) keep = 0;
    if (keep) c->items[c->nitems++] = d->items[i];
  }
  return c->nitems ? c : NULL;
}

/* The types of a function_type's side: (T, ...) items, or one TYPE. */
static int fn_types(mlir_pctx *p, const mlir_attr *a, mlir_type ***out, int *n) {
  if (a->kind == MLIR_A_TYPE) {
    *out = arena_alloc(p->a, sizeof **out);
    (*out)[0] = a->type;
    *n = 1;
    return 0;
  }
  if (a->kind != MLIR_A_GROUP && a->kind != MLIR_A_ARROW) return -1;
  *out = arena_alloc(p->a, (size_t)(a->nitems + 1) * sizeof **out);
  *n = a->nitems;
  for (int i = 0; i < a->nitems; i++) {
    if (a->items[i].key || a->items[i].val->kind != MLIR_A_TYPE) return -1;
    (*out)[i] = a->items[i].val->type;
  }
  return 0;
}

/* "func.func"() <{function_type = (...) -> (...), sym_name = "f"}> ({ ^bb0(...): ... }) : () -> () */
static mlir_func *generic_func(mlir_pctx *p, mlir_op *op) {
  mlir_item *name = op_attr_item(op, "sym_name"), *ft = op_attr_item(op, "function_type");
  mlir_item *vis = op_attr_item(op, "sym_visibility");
  mlir_item *aa = op_attr_item(op, "arg_attrs"), *ra = op_attr_item(op, "res_attrs");
  if (!name || name->val->kind != MLIR_A_STRING) {
    mlir_error(p, op->name_off, "a generic func.func needs sym_name = \"name\"");
    return NULL;
  }
  mlir_type **ins, **outs;
  int nins, nouts;
  if (!ft || ft->val->kind != MLIR_A_ARROW || fn_types(p, ft->val, &ins, &nins) < 0 ||
      fn_types(p, ft->val->out, &outs, &nouts) < 0) {
    mlir_error(p, ft ? ft->val->off : op->name_off, "a generic func.func needs function_type = "
               "(argument types) -> (result types)");
    return NULL;
  }
  if (op->nregions > 1) {
    mlir_error(p, op->regions[1]->off, "a func.func has one region, its body");
    return NULL;
  }
  mlir_func *f = arena_alloc(p->a, sizeof *f);
  f->generic = 1;
  f->off = op->off;
  f->name_off = name->val->off;
  f->name = arena_intern(p->a, name->val->text, name->val->len);
  if (vis && vis->val->kind == MLIR_A_STRING) f->visibility = arena_intern(p->a, vis->val->text, vis->val->len);
  f->loc = op->loc;
  f->body = op->nregions ? op->regions[0] : NULL;
  if (f->body && f->body->nblocks == 1 && !f->body->blocks[0]->label && f->body->blocks[0]->nops == 0)
    f->body = NULL;          /* ({}): a declaration, whose region has no block */
  if (f->body) {
    mlir_block *entry = f->body->blocks[0];
    if (entry->nargs != nins) {
      mlir_error(p, ft->val->off, "function_type of @%s has %d argument types but its body's "
                 "first block takes %d arguments", f->name, nins, entry->nargs);
      return NULL;
    }
    f->args = entry->args;
    f->nargs = entry->nargs;
  } else {
    f->args = arena_alloc(p->a, (size_t)(nins + 1) * sizeof *f->args);
    f->nargs = nins;
    for (int i = 0; i < nins; i++) {
      f->args[i].type = ins[i];
      f->args[i].off = ins[i]->off;
    }
  }
  f->results = arena_alloc(p->a, (size_t)(nouts + 1) * sizeof *f->results);
  f->nresults = nouts;
  for (int i = 0; i < nouts; i++) f->results[i].type = outs[i];
  if (aa && aa->val->kind == MLIR_A_LIST)
    for (int i = 0; i < aa->val->nitems && i < f->nargs; i++)
      if (aa->val->items[i].val->kind == MLIR_A_DICT) f->args[i].attrs = aa->val->items[i].val;
  if (ra && ra->val->kind == MLIR_A_LIST)
    for (int i = 0; i < ra->val->nitems && i < f->nresults; i++)
      if (ra->val->items[i].val->kind == MLIR_A_DICT) f->results[i].attrs = ra->val->items[i].val;
  static const char *const drop[] = {
    "sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs", NULL
  };
  f->attrs = dict_without(p, op->attrs, drop);
  if (op->props) {
    mlir_attr *rest = dict_without(p, op->props, drop);
    if (rest && !f->attrs) f->attrs = rest;
    else if (rest) {   /* both: properties first */
      mlir_attr *both = arena_dup(p->a, rest, sizeof *rest);
      both->items = arena_alloc(p->a, (size_t)(rest->nitems + f->attrs->nitems) * sizeof *both->items);
      memcpy(both->items, rest->items, (size_t)rest->nitems * sizeof *both->items);
      memcpy(both->items + rest->nitems, f->attrs->items, (size_t)f->attrs->nitems * sizeof *both->items);
      both->nitems = rest->nitems + f->attrs->nitems;
      f->attrs = both;
    }
  }
  return f;
}

/* sdy.mesh @mesh = <["x"=2, "y"=4]>, the older <"x"=2, "y"=4>, and device_ids=[...]. */
static mlir_mesh *make_mesh(mlir_pctx *p, mlir_op *op) {
  mlir_item *def = NULL;
  for (int i = 0; i < op->nitems && !def; i++)
    if (op->items[i].key && op->items[i].key[0] == '@' && op->items[i].sep == '=') def = &op->items[i];
  if (!def || def->val->kind != MLIR_A_ANGLE) {
    mlir_error(p, op->name_off, "sdy.mesh needs a name and axes, as in sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>");
    return NULL;
  }
  mlir_mesh *m = arena_alloc(p->a, sizeof *m);
  m->name = arena_intern_cstr(p->a, def->key + 1);
  m->off = op->off;
  m->op = op;
  mlir_attr *body = def->val;
  mlir_item *axes = body->items;
  int naxes = body->nitems;
  if (naxes > 0 && !axes[0].key && axes[0].val->kind == MLIR_A_LIST) {
    for (int i = 1; i < naxes; i++) {
      if (axes[i].key && strcmp(axes[i].key, "device_ids") == 0) {
        m->device_ids = axes[i].val;
      } else {
        mlir_error(p, axes[i].key ? axes[i].key_off : axes[i].val->off,
                   "unexpected item in sdy.mesh; after the axes only device_ids=[...] may follow");
        return NULL;
      }
    }
    naxes = axes[0].val->nitems;
    axes = axes[0].val->items;
  }
  m->axes = arena_alloc(p->a, (size_t)(naxes + 1) * sizeof *m->axes);
  for (int i = 0; i < naxes; i++) {
    if (axes[i].key && strcmp(axes[i].key, "device_ids") == 0 && body->items == axes) {
      m->device_ids = axes[i].val;
      continue;
    }
    if (!axes[i].key || axes[i].val->kind != MLIR_A_INT || axes[i].val->i < 1) {
      mlir_error(p, axes[i].key ? axes[i].key_off : axes[i].val->off,
                 "a mesh axis is written \"name\"=size with a size of at least 1");
      return NULL;
    }
    mlir_axis ax = {axes[i].key, axes[i].val->i, axes[i].key_off};
    m->axes[m->naxes++] = ax;
  }
  return m;
}

void mlir_module_add(mlir_pctx *p, mlir_modb *m, mlir_op *op) {
  if (!m) {
    if (op->generic && op->name == p->s_module) {
      mlir_modb b = mlir_module_open(p, op->off);
      b.m->generic = 1;
      b.m->loc = op->loc;
      mlir_item *name = op_attr_item(op, "sym_name");
      if (name && name->val->kind == MLIR_A_STRING) b.m->name = arena_intern(p->a, name->val->text, name->val->len);
      static const char *const drop[] = {"sym_name", NULL};
      b.m->attrs = dict_without(p, op->attrs, drop);
      if (op->nregions != 1 || op->regions[0]->nblocks != 1) {
        mlir_error(p, op->name_off, "a builtin.module has one region of one block");
        return;
      }
      mlir_block *body = op->regions[0]->blocks[0];
      for (int i = 0; i < body->nops; i++) mlir_module_add(p, &b, body->ops[i]);
      return;
    }
    if (!p->implicit.m) {
      p->implicit = mlir_module_open(p, op->off);
      p->implicit.m->implicit = 1;
    }
    m = &p->implicit;
  }
  mlir_module *mod = m->m;
  mlir_func *f = op->func;
  if (!f && op->generic && op->name == p->s_func) f = generic_func(p, op);
  if (f) {
    MLIR_PUSH(p->a, mod->funcs, mod->nfuncs, m->funccap, f);
  } else if (op->name == p->s_mesh && !op->generic) {
    mlir_mesh *mesh = make_mesh(p, op);
    if (mesh) MLIR_PUSH(p->a, mod->meshes, mod->nmeshes, m->meshcap, mesh);
  } else if (!p->syn.failed) {
    MLIR_PUSH(p->a, mod->ops, mod->nops, m->opcap, op);
  }
}

void mlir_alias_add(mlir_pctx *p, mlir_tok name, mlir_loc *l, mlir_attr *a, mlir_type *t) {
  mlir_alias al = {arena_intern(p->a, name.s, name.len), name.off, l, a, t};
  mlir_file *f = p->file;
  MLIR_PUSH(p->a, f->aliases, f->naliases, p->aliascap, al);
}

/* ---- reading the tree ---- */

/* The first FILE location (want_file) or the first NAME under l. Aliases
** are followed in a loop (chains can be long); the recursion through fused
** and callsite is bounded in depth, and the whole walk in visits (aliases
** may share definitions, which could otherwise cost exponential time). */
static const mlir_loc *loc_find(const mlir_loc *l, int want_file, int depth, long *budget) {
  while (l && l->kind == MLIR_L_ALIAS && --*budget >= 0) l = l->child;
  if (!l || --*budget < 0 || depth > 1000) return NULL;
  const mlir_loc *r = NULL;
  switch (l->kind) {
  case MLIR_L_FILE: return want_file ? l : NULL;
  case MLIR_L_NAME: return want_file ? loc_find(l->child, 1, depth + 1, budget) : l;
  case MLIR_L_CALLSITE:
    r = loc_find(l->child, want_file, depth + 1, budget);
    return r ? r : loc_find(l->caller, want_file, depth + 1, budget);
  case MLIR_L_FUSED:
    for (int i = 0; i < l->nlocs && !r; i++) r = loc_find(l->locs[i], want_file, depth + 1, budget);
    return r;
  case MLIR_L_UNKNOWN: case MLIR_L_ALIAS: return NULL;
  }
  return NULL;
}

const char *mlir_loc_text(arena *a, const mlir_loc *l) {
  long budget = 1L << 20;
  const mlir_loc *r = loc_find(l, 1, 0, &budget);
  if (r && !r->col) return arena_printf(a, "%s:%lld", r->text, (long long)r->line);   /* a line alone */
  if (r) return arena_printf(a, "%s:%lld:%lld", r->text, (long long)r->line, (long long)r->col);
  budget = 1L << 20;
  r = loc_find(l, 0, 0, &budget);
  return r ? r->text : NULL;
}

mlir_attr *mlir_attr_get(const mlir_attr *a, const char *key) {
  if (!a) return NULL;
  mlir_item *it = find_item(a->items, a->nitems, key);
  return it ? it->val : NULL;
}

const mlir_item *mlir_op_item(const mlir_op *op, const char *key) {
  return find_item(op->items, op->nitems, key);
}

mlir_attr *mlir_op_attr(const mlir_op *op, const char *key) {
  mlir_item *it = op_attr_item(op, key);
  return it ? it->val : NULL;
}

const mlir_alias *mlir_alias_find(const mlir_file *f, const char *name) {
  for (int i = 0; i < f->naliases; i++)
    if (strcmp(f->aliases[i].name, name) == 0) return &f->aliases[i];
  return NULL;
}

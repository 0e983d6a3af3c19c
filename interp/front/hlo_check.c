/*
** hlo_check.c: what a module must be before carve reads it: ops only
** inside functions, each function name once, and each SSA value defined
** once where it is visible (MLIR's rule: a region's values are visible in
** the regions nested in it, which may not define them again; sibling
** regions may reuse a name). A file that breaks one gets one located
** error, not a program that silently reads the wrong definition.
*/
#include "interp/front/hlo_int.h"

#include <string.h>

/* the names defined in the regions being walked, innermost last */
typedef struct names {
  scope sc;              /* name -> offset of its definition + 1 (0: not visible now) */
  const char **stack;
  int n, cap;
} names;

static int define(hctx *b, names *ns, const char *name, uint32_t off) {
  if (!name) return 0;
  int at = hlo_scope_get(&ns->sc, name, 0);
  if (at > 0) {
    diag_error(b->d, L(b, off), "%s is defined twice; each value takes one name", name);
    diag_note(b->d, L(b, (uint32_t)(at - 1)), "%s is first defined here", name);
    return -1;
  }
  if (ns->n == ns->cap) {
    int cap = ns->cap ? 2 * ns->cap : 64;
    const char **s = arena_alloc(&b->tmp, sizeof *s * (size_t)cap);
    if (ns->n) memcpy(s, ns->stack, sizeof *s * (size_t)ns->n);
    ns->stack = s;
    ns->cap = cap;
  }
  ns->stack[ns->n++] = name;
  hlo_scope_put(&b->tmp, &ns->sc, name, 0, (int)off + 1);
  return 0;
}

/* forget the names defined since mark */
static void leave(hctx *b, names *ns, int mark) {
  while (ns->n > mark) hlo_scope_put(&b->tmp, &ns->sc, ns->stack[--ns->n], 0, 0);
}

static int region_once(hctx *b, names *ns, const mlir_region *r);

static int op_once(hctx *b, names *ns, const mlir_op *op) {
  for (int i = 0; i < op->nregions; i++) if (region_once(b, ns, op->regions[i]) < 0) return -1;
  for (int i = 0; i < op->nresults; i++) if (define(b, ns, op->results[i].name, op->results[i].off) < 0) return -1;
  return 0;
}

static int region_once(hctx *b, names *ns, const mlir_region *r) {
  int mark = ns->n;
  for (int k = 0; k < r->nblocks; k++) {
    const mlir_block *bl = r->blocks[k];
    for (int i = 0; i < bl->nargs; i++) if (define(b, ns, bl->args[i].name, bl->args[i].off) < 0) return -1;
    for (int i = 0; i < bl->nops; i++) if (op_once(b, ns, bl->ops[i]) < 0) return -1;
  }
  leave(b, ns, mark);
  return 0;
}

static int func_once(hctx *b, const mlir_func *fn) {
  names ns = {{0}};
  /* a generic function's arguments are its entry block's, defined there */
  int in_block = fn->body && fn->body->nblocks && fn->body->blocks[0]->nargs;
  for (int i = 0; i < fn->nargs && !in_block; i++) if (define(b, &ns, fn->args[i].name, fn->args[i].off) < 0) return -1;
  return fn->body ? region_once(b, &ns, fn->body) : 0;
}

int hlo_check_module(hctx *b, const mlir_module *m) {
  if (m->nops) {
    const mlir_op *op = m->ops[0];
    return hlo_error(b, op, "%s at module level: a module holds functions (func.func) and meshes; the ops belong inside a function", op->name);
  }
  scope fns = {0};
  for (int i = 0; i < m->nfuncs; i++) {
    const mlir_func *fn = m->funcs[i];
    const char *nm = arena_intern_cstr(&b->tmp, fn->name);
    int at = hlo_scope_get(&fns, nm, 0);
    if (at > 0) {
      diag_error(b->d, L(b, fn->name_off), "@%s is defined twice in this module; give each function its own name", fn->name);
      diag_note(b->d, L(b, (uint32_t)(at - 1)), "@%s is first defined here", fn->name);
      return -1;
    }
    hlo_scope_put(&b->tmp, &fns, nm, 0, (int)fn->name_off + 1);
    if (func_once(b, fn) < 0) return -1;
  }
  return 0;
}

/* ---- the size of the program as read: calls inlined ---- */

typedef struct expand {
  hctx *b;
  scope fns;             /* function name -> index + 1 */
  scope memo;            /* function name -> its size + 2 (1: being measured) */
} expand;

/* the function an op runs: a call's callee, a composite's decomposition */
static const mlir_func *callee_of(expand *e, const mlir_op *op) {
  const char *name = NULL;
  for (int i = 0; i < op->nitems && !name; i++) if (op->items[i].val->kind == MLIR_A_SYMBOL) name = op->items[i].val->text;
  const mlir_attr *a = name ? NULL : mlir_op_attr(op, "callee");
  if (!a) a = name ? NULL : mlir_op_attr(op, "decomposition");
  if (a && a->kind == MLIR_A_SYMBOL) name = a->text;
  int k = name ? hlo_scope_get(&e->fns, arena_intern_cstr(&e->b->tmp, name), 0) : -1;
  return k > 0 ? e->b->m->funcs[k - 1] : NULL;
}

static int64_t func_size(expand *e, const mlir_func *fn, const mlir_op *at);

static int64_t region_size(expand *e, const mlir_region *r) {
  int64_t n = 0;
  for (int k = 0; k < r->nblocks; k++)
    for (int i = 0; i < r->blocks[k]->nops; i++) {
      const mlir_op *op = r->blocks[k]->ops[i];
      int64_t s = 1;
      for (int j = 0; j < op->nregions && s >= 0; j++) { int64_t x = region_size(e, op->regions[j]); s = x < 0 ? -1 : s + x; }
      const mlir_func *f = s >= 0 ? callee_of(e, op) : NULL;
      if (f) { int64_t x = func_size(e, f, op); s = x < 0 ? -1 : s + x; }
      if (s < 0) return -1;
      n += s;
      if (n > HLO_MAX_OPS) {
        hlo_error(e->b, op, "the program grows beyond %d ops here as carve reads it: every call is inlined, and %s",
                  HLO_MAX_OPS, f ? "this call brings its function's ops again" : "the ops up to here add up");
        return -1;
      }
    }
  return n;
}

static int64_t func_size(expand *e, const mlir_func *fn, const mlir_op *at) {
  const char *nm = arena_intern_cstr(&e->b->tmp, fn->name);
  int m = hlo_scope_get(&e->memo, nm, 0);
  if (m == 1) {
    hlo_error(e->b, at, "@%s calls itself (directly or through others); carve inlines calls and cannot import recursion", fn->name);
    return -1;
  }
  if (m > 1) return m - 2;
  hlo_scope_put(&e->b->tmp, &e->memo, nm, 0, 1);
  int64_t n = fn->body ? region_size(e, fn->body) : 0;
  if (n >= 0) hlo_scope_put(&e->b->tmp, &e->memo, nm, 0, (int)n + 2);
  return n;
}

int hlo_check_size(hctx *b, const mlir_func *entry) {
  expand e = {b, {0}, {0}};
  for (int i = 0; i < b->m->nfuncs; i++) hlo_scope_put(&b->tmp, &e.fns, arena_intern_cstr(&b->tmp, b->m->funcs[i]->name), 0, i + 1);
  return func_size(&e, entry, NULL) < 0 ? -1 : 0;
}

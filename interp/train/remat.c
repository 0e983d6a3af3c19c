/*
** remat.c: activation recomputation. The backward pass reads forward
** values (a layer's input, its normalised input, its MLP's hidden state),
** and every one of them stays alive from the forward pass to its last
** backward reader: that is most of a training step's memory. Here a
** forward value the backward pass reads may instead be computed again
** just before its first backward reader, from values kept anyway, so that
** the forward copy dies in the forward pass.
**
**   cheap  recompute only elementwise and row-wise values (gelu, layernorm,
**          adds, softmax...) whose operands are kept anyway: memory for
**          a few elementwise passes, no GEMMs;
**   full   keep only some of the values every later value depends on
**          through them (cuts: the residual stream between and within
**          blocks), about the square root of their number (thin_cuts),
**          and recompute everything else the backward pass reads from the
**          last kept cut, GEMMs included: about one more forward pass.
**
** The clones are ordinary values named remat.NAME; they follow their
** operands' shardings like any other value, so a plan applies unchanged.
*/
#include "interp/train/train.h"
#include "interp/ir/ops.h"
#include "util/mem.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct rctx {
  ir_graph *g;
  diag *d;
  int nfwd;            /* values of the forward pass: ids below */
  char *saved;         /* forward value read by the backward pass */
  char *cut;           /* full: kept because later values depend on it only through it */
  char *rec;           /* may be computed again from kept values */
  int *clone;          /* forward id -> its recomputed value (-1: none yet) */
  int *stack;          /* recompute's depth-first walk */
  int *order, norder;  /* the new order of values */
  int failed;
} rctx;

static int is_cheap(const ir_value *v) {
  unsigned f = ir_opinfo_of(v->op)->flags;
  if (f & (OPF_UNARY | OPF_BINARY | OPF_TERNARY)) return 1;
  switch (v->op) {
  case IR_LAYERNORM: case IR_RMSNORM: case IR_NORMALIZE: case IR_SOFTMAX: case IR_LOG_SOFTMAX:
  case IR_CAUSAL_MASK: case IR_RESHAPE: case IR_BROADCAST: case IR_TRANSPOSE:
    return 1;
  default:
    return 0;
  }
}

/* remat = "GLOB, GLOB": which forward values [0, nfwd) the globs (split
** at commas and blanks) name, into named; -1 with a located error for a
** glob that names none. */
static int match_globs(const ir_graph *g, int nfwd, const train_spec *t, char *named, diag *d) {
  size_t len = strlen(t->remat_names);
  char *text = mem_alloc(len + 1), *rest = NULL;   /* strtok_r: devices may be threads building their steps at once */
  memcpy(text, t->remat_names, len + 1);
  int rc = 0;
  for (char *glob = strtok_r(text, ", \t", &rest); glob && rc == 0; glob = strtok_r(NULL, ", \t", &rest)) {
    int hits = 0;
    for (int i = 0; i < nfwd; i++)
      if (g->vals[i]->kind == IR_OP && fnmatch(glob, g->vals[i]->name, 0) == 0) { named[i] = 1; hits++; }
    if (!hits) rc = diag_error(d, t->remat_at, "remat: '%s' names no value of the forward pass; 'carve check --print MODEL' lists them", glob);
  }
  free(text);
  return rc;
}

/* Cuts: no value before one is read by a value after it (leaves aside,
** which are always at hand). One sweep over the reach of each value. */
static void find_cuts(rctx *c) {
  int reach = -1;
  for (int i = 0; i < c->nfwd; i++) {
    const ir_value *v = c->g->vals[i];
    if (v->kind != IR_OP) continue;
    c->cut[i] = reach <= i;
    for (int k = 0; k < v->nusers; k++) {
      int u = v->users[k];
      if (u < c->nfwd && u > reach) reach = u;
    }
  }
}

static double value_bytes(const ir_value *v) { return (double)ir_nelem(&v->shape) * (double)ir_dtype_size(v->dtype); }

/* Keep fewer cuts, as Chen et al. do (sublinear memory): with S the bytes
** the backward pass reads and c a cut's mean bytes, keeping n cuts costs
** n c and leaves segments of about S / n alive at once while one is
** recomputed; n = sqrt(S / c) makes the two equal. Walking the forward
** pass, a cut is kept once the bytes read since the last kept one reach
** sqrt(S c), and always when it is that large itself (the logits:
** recomputing them would save nothing). */
static void thin_cuts(rctx *c) {
  double S = 0, C = 0;
  int nc = 0;
  for (int i = 0; i < c->nfwd; i++) {
    const ir_value *v = c->g->vals[i];
    if (v->kind != IR_OP) continue;
    if (c->saved[i] || c->cut[i]) S += value_bytes(v);
    if (c->cut[i]) { C += value_bytes(v); nc++; }
  }
  if (nc < 2) return;
  double budget = sqrt(S * C / nc), since = 0;
  for (int i = 0; i < c->nfwd; i++) {
    const ir_value *v = c->g->vals[i];
    if (v->kind != IR_OP) continue;
    double b = value_bytes(v);
    if (c->cut[i] && (since + b >= budget || b >= budget)) since = 0;
    else {
      c->cut[i] = 0;
      if (c->saved[i]) since += b;
    }
  }
}

/* Is forward value a at hand when recomputing (a leaf, kept, or recomputable)? */
static int at_hand(const rctx *c, int a, int full) {
  const ir_value *v = c->g->vals[a];
  if (v->kind != IR_OP) return 1;
  return full ? c->cut[a] || c->rec[a] : c->saved[a] || c->rec[a];
}

static int dropped(const rctx *c, int a, int full) {
  return a < c->nfwd && c->saved[a] && c->rec[a] && !(full && c->cut[a]);
}

/* Is forward op value x alive in the backward pass as it is? */
static int kept(const rctx *c, int x, int full) {
  return full ? c->cut[x] : c->saved[x] && !dropped(c, x, full);
}

/* Clone forward value a, whose operands are at hand (kept or cloned). */
static void make_clone(rctx *c, int a, int full) {
  ir_value *v = c->g->vals[a];
  int args[8], *av = v->nargs <= 8 ? args : mem_alloc(sizeof(int) * (size_t)v->nargs);
  for (int k = 0; k < v->nargs; k++) {
    int x = v->args[k];
    av[k] = c->g->vals[x]->kind != IR_OP || kept(c, x, full) ? x : c->clone[x];
  }
  const char *name = ir_fresh_name(c->g, arena_printf(&c->g->mem, "remat.%s", v->name));
  ir_value *r = ir_op(c->g, c->d, name, v->op, av, v->nargs, &v->attr, v->at);
  if (av != args) free(av);
  if (!r) { c->failed = 1; return; }
  c->order[c->norder++] = r->id;
  c->clone[a] = r->id;
}

/* The recomputed value of forward value a, made with what it needs (depth
** first, on a stack of its own: a chain may be as long as the model) and
** placed in the order on first need. */
static int recompute(rctx *c, int a, int full) {
  int sp = 0;
  c->stack[sp++] = a;
  while (sp > 0 && !c->failed) {
    int top = c->stack[sp - 1], next = -1;
    if (c->clone[top] >= 0) { sp--; continue; }
    const ir_value *v = c->g->vals[top];
    for (int k = 0; k < v->nargs && next < 0; k++) {
      int x = v->args[k];
      if (c->g->vals[x]->kind == IR_OP && !kept(c, x, full) && c->clone[x] < 0) next = x;
    }
    if (next >= 0) c->stack[sp++] = next;
    else { make_clone(c, top, full); sp--; }
  }
  return c->failed ? -1 : c->clone[a];
}

int remat_build(ir_graph *g, int nfwd, const train_spec *t, diag *d) {
  train_remat policy = t->remat;
  if (policy == REMAT_NONE) return 0;
  int full = policy == REMAT_FULL, n0 = g->nvals;
  char *named = mem_calloc((size_t)nfwd + 1, 1);
  if (policy == REMAT_NAMED && match_globs(g, nfwd, t, named, d) < 0) {
    free(named);
    return -1;
  }
  ir_link(g);
  rctx c = {g, d, nfwd};
  c.saved = mem_calloc((size_t)n0 + 1, 1);
  c.cut = mem_calloc((size_t)n0 + 1, 1);
  c.rec = mem_calloc((size_t)n0 + 1, 1);
  c.clone = mem_alloc(sizeof(int) * ((size_t)n0 + 1));
  c.order = mem_alloc(sizeof(int) * (2 * (size_t)n0 + 1));
  c.stack = mem_alloc(sizeof(int) * ((size_t)n0 + 1));
  for (int i = 0; i < n0; i++) c.clone[i] = -1;
  for (int i = nfwd; i < n0; i++) {
    const ir_value *u = g->vals[i];
    for (int k = 0; k < u->nargs; k++) if (u->args[k] < nfwd) c.saved[u->args[k]] = 1;
  }
  if (full) { find_cuts(&c); thin_cuts(&c); }
  int ndrop = 0;
  for (int i = 0; i < nfwd; i++) {
    const ir_value *v = g->vals[i];
    if (v->kind != IR_OP || v->is_output) continue;
    if (!full && !is_cheap(v) && !named[i]) continue;
    int ok = 1;
    for (int k = 0; k < v->nargs && ok; k++) ok = at_hand(&c, v->args[k], full);
    c.rec[i] = (char)ok;
    ndrop += dropped(&c, i, full);
  }
  if (ndrop) {
    for (int i = 0; i < nfwd; i++) c.order[c.norder++] = i;
    for (int i = nfwd; i < n0 && !c.failed; i++) {
      ir_value *u = g->vals[i];
      for (int k = 0; k < u->nargs && !c.failed; k++)
        if (dropped(&c, u->args[k], full)) u->args[k] = recompute(&c, u->args[k], full);
      c.order[c.norder++] = i;
    }
    if (!c.failed) ir_reorder(g, c.order);
  }
  free(c.saved);
  free(c.cut);
  free(c.rec);
  free(c.clone);
  free(c.order);
  free(c.stack);
  free(named);
  return c.failed ? -1 : ndrop;
}

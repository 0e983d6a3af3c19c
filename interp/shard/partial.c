/*
** partial.c: how each op computes under the plan (the computation layout
** that the lowering and the reports share) and which partial sums are
** passed on unreduced.
*/
#include "interp/shard/shard_int.h"
#include "interp/shard/layout.h"

#include <stdlib.h>
#include <string.h>

static int64_t gcd(int64_t a, int64_t b) {
  while (b) { int64_t t = a % b; a = b; b = t; }
  return a;
}

/* What each factor of an op asks for: the longest split its operands
** agree on (from_ops) and its result's split (from_res). */
typedef struct asks {
  sh_dim ops[SH_MAXF], res[SH_MAXF];
  int have_res[SH_MAXF];
  int64_t room[SH_MAXF];          /* what each factor's pieces must divide: its dims' sizes' gcd */
  uint32_t used;                  /* axes taken by operands passed on as partial sums */
} asks;

/* Axes to factors. Operands keep their splits (no communication for
** them): pass factors first, then contracting ones; an axis goes to the
** first factor that asks, unless owner names another factor for it
** (owner[a] < 0: any). Then the result's extra axes, which only slice
** the operands. */
static void assign(const sh_plan *p, const asks *q, const int *owner, sh_oplayout *o) {
  const sh_rule *r = &o->r;
  uint32_t used = q->used;
  memset(o->fac, 0, sizeof o->fac);
  o->contract = 0;
  for (int phase = 0; phase < 3; phase++)
    for (int f = 0; f < r->nf; f++) {
      if (r->kind[f] == F_WHOLE) continue;
      int pass = r->kind[f] == F_PASS;
      if ((phase == 1) == pass) continue;
      sh_dim *got = &o->fac[f];
      const sh_dim *want = phase < 2 ? &q->ops[f] : &q->res[f];
      if (phase == 2 && !(q->have_res[f] && got->n == q->ops[f].n && sh_prefix_of(&q->ops[f], &q->res[f]))) continue;
      int64_t pieces = 1;
      for (int j = 0; j < got->n; j++) pieces *= p->mesh.size[got->ax[j]];
      for (int j = got->n; j < want->n; j++) {
        int a = want->ax[j];
        if ((used >> a) & 1 || (owner && owner[a] >= 0 && owner[a] != f)) break;
        /* a reshape's group splits as its leading dims allow: [32] split
        ** in 8 is not [4, 8] split in 8 */
        pieces *= p->mesh.size[a];
        if (q->room[f] % pieces) break;
        got->ax[got->n++] = (int8_t)a;
        used |= 1u << a;
      }
      if (r->kind[f] == F_CONTRACT) o->contract |= sh_axes_of(got);
    }
}

/* Bytes one device moves taking a value of shape s (elements of elem
** bytes) from layout from, a partial sum over partial, to layout to. */
static double move_bytes(const sh_plan *p, const ir_shape *s, size_t elem, const sh_dim *from, uint32_t partial, const sh_dim *to) {
  if (!partial && layout_same(from, to, s->rank)) return 0;
  layout_step st[LAYOUT_MAXSTEPS];
  int n = layout_steps(p, s->rank, from, partial, to, st);
  ir_shape at;
  layout_local_shape(p, s, from, &at);
  double bytes = 0;
  for (int i = 0; i < n; i++) {
    bytes += (double)layout_step_bytes(p, &st[i], &at, elem);
    ir_shape next;
    layout_step_shape(p, &st[i], &at, &next);
    at = next;
  }
  return bytes;
}

int sh_param_like(const ir_graph *g, int x) {
  for (int hops = 0; hops < 8; hops++) {
    const ir_value *v = g->vals[x];
    if (v->kind == IR_PARAM) return 1;
    if (v->kind != IR_OP || v->nargs != 1 || (v->op != IR_RESHAPE && v->op != IR_TRANSPOSE && v->op != IR_CONVERT)) return 0;
    x = v->args[0];
  }
  return 0;
}

/* What computing op u as o costs in communication: the bytes of
** parameters moved (a tactic's split of a weight is kept where it can
** be: Megatron moves activations, not weights), then all bytes moved,
** operands to o's layout and the result from it to its own. */
static void op_cost(const sh_plan *p, int u, const sh_oplayout *o, double *params, double *all) {
  const ir_value *v = p->g->vals[u];
  sh_dim seen[IR_MAXRANK], want[IR_MAXRANK];
  *params = *all = 0;
  for (int k = 0; k <= v->nargs; k++) {
    int x = sh_operand_value(v, k);
    const ir_value *a = p->g->vals[x];
    if (a->kind == IR_CONST) continue;
    shard_required(p, o, k, want, a->shape.rank);
    double b;
    if (k < v->nargs) {
      for (int i = 0; i < a->shape.rank; i++) seen[i] = sh_seen_dim(p, v, x, i);
      b = move_bytes(p, &a->shape, ir_dtype_size(a->dtype), seen, 0, want);
      if (b > 0 && sh_param_like(p->g, x)) *params += b;
    } else {
      b = move_bytes(p, &a->shape, ir_dtype_size(a->dtype), want, o->contract, p->lay[u].dim);
    }
    *all += b;
  }
}

#define OPL_MAXTRIES 64   /* assignments of contested axes tried per op */

/* What each factor of op u asks for, under the rule o->r (set). */
static void oplayout_asks(const sh_plan *p, int u, const sh_oplayout *o, asks *q) {
  const ir_value *v = p->g->vals[u];
  const sh_rule *r = &o->r;
  int res = r->nops - 1;
  memset(q, 0, sizeof *q);
  for (int k = 0; k < r->nops; k++)
    for (int i = 0; i < r->rank[k]; i++) {
      int f = r->map[k][i];
      if (f < 0) continue;
      q->room[f] = gcd(q->room[f], p->g->vals[sh_operand_value(v, k)]->shape.d[i]);
      sh_dim d = sh_seen_dim(p, v, sh_operand_value(v, k), i);     /* storage axes gathered */
      if (k == res) { q->res[f] = d; q->have_res[f] = 1; }
      else if (d.n > q->ops[f].n && sh_prefix_of(&q->ops[f], &d)) q->ops[f] = d;
    }
  /* operands passed on as partial sums: their axes are taken (a piece of a
  ** partial sum is not the partial sum of a piece) */
  for (int k = 0; k < v->nargs; k++)
    if (p->keep[v->args[k]]) q->used |= p->lay[v->args[k]].partial;
}

void shard_oplayout(const sh_plan *p, int u, sh_oplayout *o) {
  memset(o, 0, sizeof *o);
  if (shard_rule_of(p, u, &o->r) < 0) return;
  sh_rule *r = &o->r;
  asks q;
  oplayout_asks(p, u, o, &q);
  assign(p, &q, NULL, o);
  /* An axis two factors ask for (the operands disagree, or the result
  ** wants it on another factor than the operands give it): try each
  ** asker and keep the cheapest, first by parameter bytes moved, then by
  ** all bytes; on a tie the first factor keeps it. */
  int nc = 0, cax[SH_MAXAXES], cand[SH_MAXAXES][SH_MAXF], ncand[SH_MAXAXES];
  int64_t tries = 1;
  for (int a = 0; a < p->mesh.n; a++) {
    if ((q.used >> a) & 1) continue;
    int n = 0;
    for (int f = 0; f < r->nf; f++) {
      if (r->kind[f] == F_WHOLE) continue;
      int asks_a = 0;
      for (int j = 0; j < q.ops[f].n; j++) asks_a |= q.ops[f].ax[j] == a;
      for (int j = 0; j < q.res[f].n && q.have_res[f]; j++) asks_a |= q.res[f].ax[j] == a;
      if (asks_a) cand[nc][n++] = f;
    }
    if (n < 2) continue;
    ncand[nc] = n;
    cax[nc++] = a;
    tries *= n;
  }
  if (!nc || tries > OPL_MAXTRIES) return;
  double best_params, best_all;
  op_cost(p, u, o, &best_params, &best_all);
  if (best_all == 0) return;
  sh_oplayout t = *o;
  for (int64_t c = 0; c < tries; c++) {
    int owner[SH_MAXAXES];
    for (int a = 0; a < SH_MAXAXES; a++) owner[a] = -1;
    int64_t rest = c;
    for (int i = 0; i < nc; i++) { owner[cax[i]] = cand[i][rest % ncand[i]]; rest /= ncand[i]; }
    assign(p, &q, owner, &t);
    double pb, ab;
    op_cost(p, u, &t, &pb, &ab);
    if (pb < best_params || (pb == best_params && ab < best_all)) { *o = t; best_params = pb; best_all = ab; }
  }
}

int shard_reduced_into(const sh_plan *p, int v, sh_dim *into) {
  const ir_value *x = p->g->vals[v];
  uint32_t part = p->lay[v].partial;
  if (x->kind != IR_OP || !part || shard_keeps_partial(p, v) || x->is_output || x->carry >= 0 || x->role == ROLE_GRAD || !x->nusers)
    return 0;
  sh_dim want[IR_MAXRANK];
  int seen = 0;
  for (int k = 0; k < x->nusers; k++) {
    const ir_value *u = p->g->vals[x->users[k]];
    if (u->kind != IR_OP) return 0;
    sh_oplayout o;
    shard_oplayout(p, u->id, &o);
    for (int j = 0; j < u->nargs; j++) {
      if (u->args[j] != v) continue;
      shard_required(p, &o, j, want, x->shape.rank);
      if (!seen++) memcpy(into, want, sizeof(sh_dim) * (size_t)x->shape.rank);
      else if (!layout_same(into, want, x->shape.rank)) return 0;
    }
  }
  if (!seen || layout_same(into, p->lay[v].dim, x->shape.rank)) return 0;
  uint32_t splits = 0;
  for (int i = 0; i < x->shape.rank; i++) splits |= sh_axes_of(&into[i]);
  for (int i = x->shape.rank; i < IR_MAXRANK; i++) into[i].n = 0;
  return (splits & part) != 0;
}

int shard_axis_choice(const sh_plan *p, int u, int axis, int factor, sh_choice *c) {
  memset(c, 0, sizeof *c);
  c->factor = c->from_op = c->from_dim = -1;
  const ir_value *v = p->g->vals[u];
  sh_oplayout o;
  shard_oplayout(p, u, &o);
  for (int f = 0; f < o.r.nf && c->factor < 0; f++)
    for (int j = 0; j < o.fac[f].n; j++) if (o.fac[f].ax[j] == axis) c->factor = f;
  if (c->factor < 0) return -1;
  for (int k = 0; k < v->nargs && c->from_op < 0; k++)
    for (int i = 0; i < o.r.rank[k]; i++) {
      if (o.r.map[k][i] != c->factor) continue;
      sh_dim d = sh_seen_dim(p, v, v->args[k], i);
      int has = 0;
      for (int j = 0; j < d.n; j++) has |= d.ax[j] == axis;
      if (has) { c->from_op = k; c->from_dim = i; break; }
    }
  op_cost(p, u, &o, &c->params, &c->all);
  c->alt_factor = -1;
  if (factor < 0 || factor == c->factor) return 0;
  /* the same op with the axis on the other factor */
  asks q;
  sh_oplayout t = o;
  oplayout_asks(p, u, &t, &q);
  int owner[SH_MAXAXES];
  for (int a = 0; a < SH_MAXAXES; a++) owner[a] = -1;
  owner[axis] = factor;
  assign(p, &q, owner, &t);
  c->alt_factor = factor;
  op_cost(p, u, &t, &c->alt_params, &c->alt_all);
  return 0;
}

void shard_required(const sh_plan *p, const sh_oplayout *o, int k, sh_dim *dims, int rank) {
  for (int i = 0; i < rank; i++) {
    int f = o->r.map[k][i];
    if (f < 0) dims[i].n = 0;
    else dims[i] = o->fac[f];
  }
}

/* What op u does with operand k's partial sum. `seen` is what each value
** is seen as now; `low` and `high` bound the partial sum it may end with
** (its own contraction, and what it computes now; both only shrink).
** 1: linear in it as things stand; 0: not now, but it might be;
** -1: not for any outcome (a certain rejection). */
static int accepts(const sh_plan *p, int u, int k, const uint32_t *seen, const uint32_t *low) {
  const ir_value *v = p->g->vals[u];
  int me = v->args[k];
  uint32_t mine = seen[me];
  int ok = 1, certain = 0;
  for (int j = 0; j < v->nargs; j++) {
    if (j == k) continue;
    const ir_value *a = p->g->vals[v->args[j]];
    /* a literal is complete: added to a partial sum it would be added once
    ** per device; it only scales one (mul, div by it) */
    if (a->kind == IR_CONST && v->op != IR_ADD && v->op != IR_SUB && v->op != IR_CONCAT) continue;
    uint32_t sx = seen[a->id];
    switch (v->op) {
    case IR_ADD: case IR_SUB: case IR_CONCAT:          /* partial + partial, over the same axes */
      if (sx != mine) ok = 0;
      if (a->kind != IR_OP) certain = 1;                /* a leaf is never a partial sum */
      if ((low[me] | low[a->id]) & ~(p->lay[me].partial & p->lay[a->id].partial)) certain = 1;
      break;
    case IR_MUL: case IR_MATMUL: case IR_EINSUM:        /* linear in one operand */
      if (sx & mine) ok = 0;
      break;
    case IR_DIV:
      if (k != 0) certain = 1;
      if (sx & mine) ok = 0;
      break;
    default: break;
    }
  }
  switch (v->op) {
  case IR_ADD: case IR_SUB: case IR_CONCAT: case IR_MUL: case IR_MATMUL: case IR_EINSUM: case IR_DIV:
    return certain ? -1 : ok;
  case IR_NEG: case IR_RESHAPE: case IR_TRANSPOSE: case IR_BROADCAST: case IR_SLICE: case IR_PAD:
  case IR_SUM_TO: case IR_SUM: case IR_MEAN: case IR_CAUSAL_MASK_GRAD:
    return 1;
  case IR_EMBEDDING_GRAD: return k == 1 ? 1 : -1;
  default: return -1;
  }
}

/* A value can be passed on as a partial sum only if nothing forces it whole. */
static int keepable(const sh_plan *p, int u, uint32_t part) {
  const ir_value *v = p->g->vals[u];
  if (!part || v->is_output || v->carry >= 0 || v->role == ROLE_GRAD) return 0;   /* gradients are reduced where they are made */
  for (int i = 0; i < v->shape.rank; i++) if (sh_axes_of(&p->lay[u].dim[i]) & part) return 0;
  return 1;
}

/* A min-heap of value ids, each at most once (in[] says which are in). */
typedef struct idheap { int *h, n; char *in; } idheap;

static void heap_push(idheap *q, int v) {
  if (q->in[v]) return;
  q->in[v] = 1;
  int i = q->n++;
  while (i > 0 && q->h[(i - 1) / 2] > v) { q->h[i] = q->h[(i - 1) / 2]; i = (i - 1) / 2; }
  q->h[i] = v;
}

static int heap_pop(idheap *q) {
  int top = q->h[0], last = q->h[--q->n], i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= q->n) break;
    if (c + 1 < q->n && q->h[c + 1] < q->h[c]) c++;
    if (q->h[c] >= last) break;
    q->h[i] = q->h[c];
    i = c;
  }
  if (q->n) q->h[i] = last;
  q->in[top] = 0;
  return top;
}

typedef struct judge {
  uint32_t *low;      /* a value's own contraction */
  uint32_t *seen;     /* what its users see now */
  uint32_t *low0;     /* ... with no operand passed on */
  char *allowed;      /* may still pass its sum on */
  signed char *verdict;         /* every user linear in it: 1, 0 (not now, but it might be), -1 (never) */
  idheap dirty;       /* to judge again, in definition order */
  idheap stale;       /* verdicts to work out again */
  idheap unsure;      /* kept values whose verdict was 0 (checked again when taken) */
  /* a trial (reduce_at_forks): each value's state before its first change, to go back */
  struct jold { int u; uint32_t low, part, seen; char keep, allowed; signed char verdict; } *trail;
  int ntrail, captrail, trial, *mark;
} judge;

/* Before value u's state changes in a trial: remember it, once a trial. */
static void remember(sh_plan *p, judge *j, int u) {
  if (!j->trial || j->mark[u] == j->trial) return;
  j->mark[u] = j->trial;
  if (j->ntrail == j->captrail) {
    j->captrail = j->captrail ? 2 * j->captrail : 64;
    j->trail = mem_realloc(j->trail, sizeof *j->trail * (size_t)j->captrail);
  }
  j->trail[j->ntrail++] = (struct jold){u, j->low[u], p->lay[u].partial, j->seen[u], p->keep[u], j->allowed[u], j->verdict[u]};
}

static idheap heap_new(int n) {
  return (idheap){mem_alloc(sizeof(int) * ((size_t)n + 1)), 0, mem_calloc((size_t)n + 1, 1)};
}

static void heap_free(idheap *q) {
  free(q->h);
  free(q->in);
}

/* Value u's partial sum and whether it is passed on, from its operands as
** they stand; 1 when anything its users read of it changed. */
static int judge_value(sh_plan *p, judge *j, int u) {
  const ir_value *v = p->g->vals[u];
  /* an operand passed on takes its axes from the op's factors
  ** (shard_oplayout), so the op's own contraction follows what its
  ** operands carry now: the heads of an input gradient left to a
  ** contraction when a partial k takes the model axis */
  int carries = 0;
  for (int k = 0; k < v->nargs; k++) carries |= p->keep[v->args[k]] && p->lay[v->args[k]].partial;
  uint32_t low = j->low0[u];
  if (carries) {
    sh_oplayout o;
    shard_oplayout(p, u, &o);
    low = o.contract;
  }
  uint32_t part = low;
  for (int k = 0; k < v->nargs; k++) part |= j->seen[v->args[k]];
  char keep = (char)(j->allowed[u] && keepable(p, u, part));
  uint32_t seen = keep ? part : 0;
  int changed = low != j->low[u] || part != p->lay[u].partial || keep != p->keep[u] || seen != j->seen[u];
  if (changed) remember(p, j, u);
  j->low[u] = low;
  p->lay[u].partial = part;
  p->keep[u] = keep;
  j->seen[u] = seen;
  return changed;
}

/* Whether every user of u is linear in it: 1, 0 (not now, but it might
** be), -1 (for no outcome). */
static int verdict_of(sh_plan *p, const judge *j, int u) {
  const ir_graph *g = p->g;
  const ir_value *v = g->vals[u];
  int verdict = 1;
  for (int k = 0; k < v->nusers && verdict > -1; k++) {
    const ir_value *w = g->vals[v->users[k]];
    for (int a = 0; a < w->nargs; a++) {
      if (w->args[a] != u) continue;
      int ok = accepts(p, w->id, a, j->seen, j->low);
      if (ok < verdict) verdict = ok;
    }
  }
  return verdict;
}

/*
** The rounds, from the rights in j->allowed to the largest consistent
** choice, from the values in j->dirty (every op, the first time). Each
** round judges again only what can have changed: a value whose right or
** operands changed (then its users, in definition order), and the
** verdicts that read them (every operand of an op that reads a changed
** value); the first unsure value comes from a heap. A long program whose
** rights fall one a round (an imported backward's chains of partial sums)
** costs what changes, not rounds times the program.
*/
static void settle(sh_plan *p, judge *j, int first) {
  const ir_graph *g = p->g;
  for (int round = 0; round < 100000; round++) {
    while (j->dirty.n) {
      int u = heap_pop(&j->dirty);
      const ir_value *v = g->vals[u];
      if (v->kind != IR_OP) continue;
      heap_push(&j->stale, u);
      if (!judge_value(p, j, u) && !(first && round == 0)) continue;
      for (int k = 0; k < v->nusers; k++) {
        const ir_value *w = g->vals[v->users[k]];
        heap_push(&j->dirty, w->id);
        for (int a = 0; a < w->nargs; a++) heap_push(&j->stale, w->args[a]);
      }
    }
    int dropped = 0;
    while (j->stale.n) {
      int u = heap_pop(&j->stale);
      signed char vd = (signed char)(p->keep[u] ? verdict_of(p, j, u) : 1);
      if (vd != j->verdict[u]) { remember(p, j, u); j->verdict[u] = vd; }
      if (!p->keep[u]) continue;
      if (vd < 0) { remember(p, j, u); j->allowed[u] = 0; heap_push(&j->dirty, u); dropped = 1; }
      else if (j->verdict[u] == 0) heap_push(&j->unsure, u);
    }
    if (dropped) continue;
    int unsure = -1;
    while (j->unsure.n && unsure < 0) {
      int u = heap_pop(&j->unsure);
      if (p->keep[u] && j->allowed[u] && j->verdict[u] == 0) unsure = u;
    }
    if (unsure < 0) break;
    remember(p, j, unsure);
    j->allowed[unsure] = 0;
    heap_push(&j->dirty, unsure);
  }
}

/* Bytes a device reduces for value u (its local piece), when it is reduced. */
static double reduce_bytes(const sh_plan *p, int u) {
  const ir_value *v = p->g->vals[u];
  ir_shape at;
  layout_local_shape(p, &v->shape, p->lay[u].dim, &at);
  double n = (double)ir_dtype_size(v->dtype);
  for (int i = 0; i < at.rank; i++) n *= (double)at.d[i];
  return n;
}

/* What the plan's reductions cost: bytes, then how many. */
typedef struct rcost { double bytes; int count; } rcost;

static rcost reductions(const sh_plan *p) {
  rcost c = {0, 0};
  for (int u = 0; u < p->g->nvals; u++)
    if (p->g->vals[u]->kind == IR_OP && p->lay[u].partial && !p->keep[u]) { c.bytes += reduce_bytes(p, u); c.count++; }
  return c;
}

/* The bytes reduced further on, where the partial sum u passes on (kept
** values, through their users) is reduced, and in how many places; stamp
** marks what was seen, stack has room for every value. */
static double reduced_after(const sh_plan *p, int u, int *stamp, int mark, int *stack, int *count) {
  double b = 0;
  int top = 0;
  stack[top++] = u;
  while (top) {
    const ir_value *v = p->g->vals[stack[--top]];
    for (int k = 0; k < v->nusers; k++) {
      int w = v->users[k];
      if (stamp[w] == mark || !(p->lay[w].partial & p->lay[u].partial)) continue;
      stamp[w] = mark;
      if (p->keep[w]) stack[top++] = w;
      else { b += reduce_bytes(p, w); (*count)++; }
    }
  }
  return b;
}

/*
** Reduce where it is cheapest. The largest choice passes a partial sum on
** as far as it goes, which is not always best: where it forks into chains
** that are each reduced further on (an RMS norm's backward as JAX writes
** it: the output gradient, a partial sum, feeds two elementwise chains,
** each reduced where it meets the residual's gradient), or where it is
** broadcast and reduced bigger, reducing it once, before, moves less. Each
** kept partial sum whose sum is reduced further on in more bytes than its
** own (or as many, in two or more places) is tried reduced where it is
** made, the latest first; the choice stays when the plan's reductions then
** move fewer bytes (or as many, in fewer collectives).
*/
static void reduce_at_forks(sh_plan *p, judge *j) {
  const ir_graph *g = p->g;
  int n = g->nvals;
  int *stamp = mem_calloc((size_t)n + 1, sizeof(int)), *stack = mem_alloc(sizeof(int) * ((size_t)n + 1));
  j->mark = mem_calloc((size_t)n + 1, sizeof(int));
  rcost now = reductions(p);
  /* the last first: partial sums merge on the way down (the input
  ** gradients of two GEMMs added), so the latest place before the
  ** costly reductions holds every piece */
  for (int u = n - 1; u >= 0; u--) {
    if (!p->keep[u] || !p->lay[u].partial) continue;
    int count = 0;
    double after = reduced_after(p, u, stamp, u + 1, stack, &count), mine = reduce_bytes(p, u);
    if (after < mine || (after == mine && count < 2)) continue;
    j->trial = u + 1;
    j->ntrail = 0;
    remember(p, j, u);
    j->allowed[u] = 0;
    heap_push(&j->dirty, u);
    settle(p, j, 0);
    /* what the trial changed, in the reductions' bytes and count */
    rcost t = now;
    for (int k = 0; k < j->ntrail; k++) {
      const struct jold *o = &j->trail[k];
      int was = o->part && !o->keep, is = p->lay[o->u].partial && !p->keep[o->u];
      if (g->vals[o->u]->kind != IR_OP || was == is) continue;
      double b = reduce_bytes(p, o->u);
      t.bytes += is ? b : -b;
      t.count += is - was;
    }
    j->trial = 0;
    if (t.bytes < now.bytes - 0.5 || (t.bytes <= now.bytes + 0.5 && t.count < now.count)) { now = t; p->early[u] = (float)after; continue; }
    for (int k = j->ntrail - 1; k >= 0; k--) {   /* back as it was */
      const struct jold *o = &j->trail[k];
      j->low[o->u] = o->low;
      p->lay[o->u].partial = o->part;
      j->seen[o->u] = o->seen;
      p->keep[o->u] = o->keep;
      j->allowed[o->u] = o->allowed;
      j->verdict[o->u] = o->verdict;
    }
  }
  free(stamp);
  free(stack);
  free(j->mark);
  free(j->trail);
}

/*
** Which partial sums are passed on (partial + partial, a linear op) and which
** are reduced where they are made. Every op starts allowed to pass its sum
** on. Each round works out again, in definition order, what the values a
** change reaches carry and whether they can be passed on (settle); then the
** values some user cannot take, for any outcome of the others, lose the
** right for good. When only uncertain cases are left, the first of them
** does, and the rounds go on. Rights only shrink, so this ends, at the
** largest consistent choice; then partial sums are reduced earlier where
** that moves fewer bytes (reduce_at_forks).
*/
void shard_partials(sh_plan *p) {
  const ir_graph *g = p->g;
  int n = g->nvals;
  judge j = {mem_calloc((size_t)n + 1, sizeof(uint32_t)), mem_calloc((size_t)n + 1, sizeof(uint32_t)),
             mem_calloc((size_t)n + 1, sizeof(uint32_t)), mem_calloc((size_t)n + 1, 1), mem_calloc((size_t)n + 1, 1),
             heap_new(n), heap_new(n), heap_new(n), NULL, 0, 0, 0, NULL};
  shard_unpartial(p);             /* a plan judged before is judged afresh: its old choices must not steer shard_oplayout */
  for (int u = 0; u < n; u++) {
    if (g->vals[u]->kind != IR_OP) continue;
    sh_oplayout o;
    shard_oplayout(p, u, &o);
    j.low[u] = j.low0[u] = o.contract;
    j.allowed[u] = 1;
    heap_push(&j.dirty, u);
  }
  settle(p, &j, 1);
  reduce_at_forks(p, &j);
  free(j.low);
  free(j.low0);
  free(j.seen);
  free(j.allowed);
  free(j.verdict);
  heap_free(&j.dirty);
  heap_free(&j.stale);
  heap_free(&j.unsure);
}

int shard_keeps_partial(const sh_plan *p, int v) { return p->keep[v] && p->lay[v].partial; }

void shard_unpartial(sh_plan *p) {
  for (int v = 0; v < p->g->nvals; v++) { p->lay[v].partial = 0; p->keep[v] = 0; p->early[v] = 0; }
}


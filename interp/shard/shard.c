/*
** shard.c: sharding state, actions, propagation, partial sums.
**
** Propagation is a worklist over ops. Visiting an op projects the splits
** of its operands and result onto its factors; where every dim of a
** factor agrees (each list a prefix of the longest), the dims that lack
** axes are extended to the longest, one axis at a time, each extension a
** decision that remembers the op and value it came from. Where they do
** not agree, or an extension would reuse an axis, break a replicate or
** split indivisibly, nothing changes and the conflict is recorded: the
** first decision wins and schedule order is priority. Splits only grow,
** so the fixed point is reached.
*/
#include "interp/shard/shard.h"
#include "interp/shard/layout.h"
#include "interp/ir/ops.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


sh_plan *shard_new(const ir_graph *g, const sh_mesh *m) {
  sh_plan *p = mem_calloc(1, sizeof *p);
  arena_init(&p->mem);
  p->g = g;
  p->mesh = *m;
  for (int i = 0; i < m->n; i++) p->mesh.name[i] = arena_intern_cstr(&p->mem, m->name[i]);
  p->lay = arena_alloc(&p->mem, sizeof(sh_layout) * (size_t)(g->nvals ? g->nvals : 1));
  for (int v = 0; v < g->nvals; v++)
    for (int a = 0; a < SH_MAXAXES; a++) { p->lay[v].why[a] = -1; p->lay[v].forbid_why[a] = -1; }
  p->keep = arena_alloc(&p->mem, (size_t)g->nvals + 1);
  p->logged = mem_calloc((size_t)g->nvals + 1, sizeof *p->logged);
  p->epoch = 1;
  p->tactic = "";
  return p;
}

void shard_free(sh_plan *p) {
  if (!p) return;
  free(p->dec);
  free(p->con);
  free(p->log);
  free(p->logged);
  arena_free(&p->mem);
  free(p);
}

int shard_axis(const sh_plan *p, const char *name) {
  for (int i = 0; i < p->mesh.n; i++) if (!strcmp(p->mesh.name[i], name)) return i;
  return -1;
}


int shard_uses_axis(const sh_layout *l, int rank, int axis) {
  for (int i = 0; i < rank; i++)
    for (int k = 0; k < l->dim[i].n; k++) if (l->dim[i].ax[k] == axis) return i;
  return -1;
}

void shard_local(const sh_plan *p, int v, ir_shape *out) {
  layout_local_shape(p, &p->g->vals[v]->shape, p->lay[v].dim, out);
}

const char *shard_axes_str(const sh_plan *p, uint32_t mask, arena *a) {
  char buf[256] = "";
  size_t k = 0;
  for (int i = 0; i < p->mesh.n; i++)
    if ((mask >> i) & 1) k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s", k ? ", " : "", p->mesh.name[i]);
  return arena_printf(a, "{%s}", buf);
}

const char *shard_str(const sh_plan *p, int v, arena *a) {
  const ir_value *x = p->g->vals[v];
  char buf[512];
  size_t k = 0;
  buf[k++] = '[';
  for (int i = 0; i < x->shape.rank; i++) {
    const sh_dim *d = &p->lay[v].dim[i];
    if (i) { buf[k++] = ','; buf[k++] = ' '; }
    if (!d->n) { buf[k++] = '-'; continue; }
    for (int j = 0; j < d->n && k < 400; j++)
      k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s", j ? "+" : "", p->mesh.name[d->ax[j]]);
  }
  buf[k++] = ']';
  buf[k] = 0;
  return arena_strndup(a, buf, k);
}

int shard_record(sh_plan *p, sh_decision d) {
  if (p->ndec == p->deccap) {
    p->deccap = p->deccap ? p->deccap * 2 : 256;
    p->dec = mem_realloc(p->dec, sizeof *p->dec * (size_t)p->deccap);
  }
  p->dec[p->ndec] = d;
  return p->ndec++;
}

void shard_conflict(sh_plan *p, int value, int op, int axis, int from_tactic, int lost_to, const char *fmt, ...) {
  /* one record per (value, op, axis): propagation may revisit the same edge */
  for (int i = 0; i < p->ncon; i++)
    if (p->con[i].value == value && p->con[i].op == op && p->con[i].axis == axis && p->con[i].from_tactic == from_tactic) return;
  if (p->ncon == p->concap) {
    p->concap = p->concap ? p->concap * 2 : 64;
    p->con = mem_realloc(p->con, sizeof *p->con * (size_t)p->concap);
  }
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  p->con[p->ncon++] = (sh_conflict){value, op, axis, from_tactic, p->tactic, p->at, arena_strndup(&p->mem, msg, strlen(msg)), lost_to};
}

/* ---- undo ---- */

/* v's layout, saved in the undo log before its first change since the last mark */
static sh_layout *edit(sh_plan *p, int v) {
  if (p->logged[v] != p->epoch) {
    if (p->nlog == p->logcap) {
      p->logcap = p->logcap ? 2 * p->logcap : 256;
      p->log = mem_realloc(p->log, sizeof *p->log * (size_t)p->logcap);
    }
    p->log[p->nlog++] = (sh_undo){v, p->lay[v]};
    p->logged[v] = p->epoch;
  }
  return &p->lay[v];
}

sh_mark shard_mark(sh_plan *p) {
  p->epoch++;
  return (sh_mark){p->ndec, p->ncon, p->nlog};
}

void shard_rollback(sh_plan *p, sh_mark m) {
  while (p->nlog > m.nlog) {
    const sh_undo *u = &p->log[--p->nlog];
    p->lay[u->value] = u->old;
  }
  if (m.ndec < p->ndec) p->ndec = m.ndec;
  if (m.ncon < p->ncon) p->ncon = m.ncon;
  p->epoch++;            /* what changes next is saved again */
}

void shard_unpartial(sh_plan *p) {
  for (int v = 0; v < p->g->nvals; v++) { p->lay[v].partial = 0; p->keep[v] = 0; }
}

/* ---- actions ---- */

/* Can axis be appended to dim of v? 0 yes; else a reason (and the decision it loses to). */
static const char *blocked(const sh_plan *p, int v, int dim, int axis, int *lost_to) {
  const ir_value *x = p->g->vals[v];
  const sh_layout *l = &p->lay[v];
  int used = shard_uses_axis(l, x->shape.rank, axis);
  *lost_to = -1;
  if (used >= 0) {
    *lost_to = l->why[axis];
    return used == dim ? "is already split on that axis" : "already uses that axis on another dim";
  }
  if ((l->forbid[dim] >> axis) & 1) { *lost_to = l->forbid_why[axis]; return "is kept whole on that axis by a replicate"; }
  if (l->partial & (1u << axis)) return "is a partial sum over that axis";
  int64_t pieces = layout_pieces(p, &l->dim[dim]) * p->mesh.size[axis];
  if (x->shape.d[dim] % pieces) return "is not divisible";
  return NULL;
}

static void put_axis(sh_plan *p, int v, int dim, int axis, int why) {
  sh_layout *l = edit(p, v);
  l->dim[dim].ax[l->dim[dim].n++] = (int8_t)axis;
  l->why[axis] = why;
}

int shard_split(sh_plan *p, int v, int dim, int axis, diag *d) {
  const ir_value *x = p->g->vals[v];
  int lost;
  const char *why = blocked(p, v, dim, axis, &lost);
  if (why && !strcmp(why, "is not divisible")) {
    int64_t pieces = layout_pieces(p, &p->lay[v].dim[dim]) * p->mesh.size[axis];
    return diag_error(d, p->at, "cannot split dim %d of '%s' (size %lld) into %lld pieces on '%s': it is not divisible",
                      dim, x->name, (long long)x->shape.d[dim], (long long)pieces, p->mesh.name[axis]);
  }
  if (why) {
    shard_conflict(p, v, -1, axis, 1, lost, "split dim %d of '%s' on '%s' refused: '%s' %s",
                   dim, x->name, p->mesh.name[axis], x->name, why);
    return 1;
  }
  int id = shard_record(p, (sh_decision){SRC_TACTIC, v, dim, axis, p->tactic, p->at, -1, -1, -1, 0});
  put_axis(p, v, dim, axis, id);
  return 0;
}

int shard_replicate(sh_plan *p, int v, int dim, int axis) {
  const ir_value *x = p->g->vals[v];
  sh_layout *l = &p->lay[v];
  int used = shard_uses_axis(l, x->shape.rank, axis);
  if (used >= 0 && (dim < 0 || used == dim)) {
    shard_conflict(p, v, -1, axis, 1, l->why[axis], "replicate '%s' on '%s' refused: it is already split on '%s' (dim %d)",
                   x->name, p->mesh.name[axis], p->mesh.name[axis], used);
    return 1;
  }
  int id = shard_record(p, (sh_decision){SRC_TACTIC, v, dim, axis, p->tactic, p->at, -1, -1, -1, 1});
  l = edit(p, v);
  for (int i = 0; i < x->shape.rank; i++)
    if (dim < 0 || i == dim) l->forbid[i] |= 1u << axis;
  if (x->shape.rank == 0 || dim < 0) l->forbid[0] |= 1u << axis;
  l->forbid_why[axis] = id;
  return 0;
}

/* ---- propagation ---- */

typedef struct wl { int *q; char *in; int head, tail, cap; } wl;

static void push(wl *w, int v) {
  if (w->in[v]) return;
  w->in[v] = 1;
  w->q[w->tail] = v;
  w->tail = (w->tail + 1) % w->cap;
}

static void touch(const sh_plan *p, wl *w, int v) {
  const ir_value *x = p->g->vals[v];
  if (x->kind == IR_OP) push(w, v);
  for (int k = 0; k < x->nusers; k++) push(w, x->users[k]);
}

static int prefix_of(const sh_dim *a, const sh_dim *b) {   /* a is a prefix of b */
  if (a->n > b->n) return 0;
  for (int i = 0; i < a->n; i++) if (a->ax[i] != b->ax[i]) return 0;
  return 1;
}

static int operand_value(const ir_value *v, int k) { return k < v->nargs ? v->args[k] : v->id; }

/* Axes op u sums over, as its operands are split now. */
static uint32_t contract_axes(const sh_plan *p, int u) {
  const ir_value *v = p->g->vals[u];
  sh_rule r;
  if (v->kind != IR_OP || shard_rule(p->g, v, &r) < 0) return 0;
  uint32_t m = 0;
  for (int k = 0; k < v->nargs; k++)
    for (int i = 0; i < r.rank[k]; i++) {
      int f = r.map[k][i];
      if (f < 0 || r.kind[f] != F_CONTRACT) continue;
      const sh_dim *d = &p->lay[v->args[k]].dim[i];
      for (int j = 0; j < d->n; j++) m |= 1u << d->ax[j];
    }
  return m;
}

static void visit(sh_plan *p, wl *w, int u) {
  const ir_value *v = p->g->vals[u];
  sh_rule r;
  if (shard_rule(p->g, v, &r) < 0) return;
  for (int f = 0; f < r.nf; f++) {
    if (r.kind[f] == F_WHOLE) continue;
    /* the longest split among the dims of f, and whether all agree */
    const sh_dim *best = NULL;
    int bv = -1, agree = 1;
    for (int k = 0; k < r.nops; k++)
      for (int i = 0; i < r.rank[k]; i++) {
        if (r.map[k][i] != f) continue;
        const sh_dim *d = &p->lay[operand_value(v, k)].dim[i];
        if (!best || d->n > best->n) {
          if (best && !prefix_of(best, d)) agree = 0;
          if (d->n) { best = d; bv = operand_value(v, k); }
        } else if (!prefix_of(d, best)) agree = 0;
      }
    if (!best || !best->n) continue;
    if (!agree) {
      shard_conflict(p, bv, u, best->ax[0], 0, -1, "operands of %s '%s' are split differently along one factor; propagation stops there",
                     ir_opinfo_of(v->op)->name, v->name);
      continue;
    }
    sh_dim want = *best;
    for (int k = 0; k < r.nops; k++)
      for (int i = 0; i < r.rank[k]; i++) {
        if (r.map[k][i] != f) continue;
        int x = operand_value(v, k);
        sh_dim *d = &p->lay[x].dim[i];
        int changed = 0;
        for (int j = d->n; j < want.n; j++) {
          int axis = want.ax[j], lost;
          /* a value its producer sums over an axis stays a partial sum there (reduced
          ** once, or scattered): splitting it on that axis is not propagated */
          if ((contract_axes(p, x) >> axis) & 1) break;
          const char *why = blocked(p, x, i, axis, &lost);
          if (why) {
            /* an axis this op sums over, already used elsewhere by the value: the
            ** lowering gathers or scatters there; that is no conflict */
            int quiet = !strcmp(why, "already uses that axis on another dim") && ((contract_axes(p, u) >> axis) & 1);
            if (!quiet && p->g->vals[x]->kind != IR_CONST)
              shard_conflict(p, x, u, axis, 0, lost, "'%s' dim %d not split on '%s' through %s '%s': '%s' %s",
                             p->g->vals[x]->name, i, p->mesh.name[axis], ir_opinfo_of(v->op)->name, v->name,
                             p->g->vals[x]->name, why);
            break;
          }
          int id = shard_record(p, (sh_decision){SRC_PROP, x, i, axis, p->tactic, p->at, u, bv, p->lay[bv].why[axis], 0});
          put_axis(p, x, i, axis, id);
          changed = 1;
        }
        if (changed) touch(p, w, x);
      }
  }
}

void shard_propagate(sh_plan *p) {
  int n = p->g->nvals;
  wl w = {mem_alloc(sizeof(int) * (size_t)(n + 1)), mem_calloc((size_t)n + 1, 1), 0, 0, n + 1};
  for (int v = 0; v < n; v++) if (p->g->vals[v]->kind == IR_OP) push(&w, v);
  while (w.head != w.tail) {
    int u = w.q[w.head];
    w.head = (w.head + 1) % w.cap;
    w.in[u] = 0;
    visit(p, &w, u);
  }
  free(w.q);
  free(w.in);
}

/* ---- computation layouts and partial sums ---- */

static uint32_t axes_of(const sh_dim *d) {
  uint32_t m = 0;
  for (int i = 0; i < d->n; i++) m |= 1u << d->ax[i];
  return m;
}

void shard_oplayout(const sh_plan *p, int u, sh_oplayout *o) {
  const ir_value *v = p->g->vals[u];
  memset(o, 0, sizeof *o);
  if (shard_rule(p->g, v, &o->r) < 0) return;
  sh_rule *r = &o->r;
  int res = r->nops - 1;
  sh_dim from_ops[SH_MAXF], from_res[SH_MAXF];
  int have_res[SH_MAXF] = {0};
  memset(from_ops, 0, sizeof from_ops);
  memset(from_res, 0, sizeof from_res);
  for (int k = 0; k < r->nops; k++)
    for (int i = 0; i < r->rank[k]; i++) {
      int f = r->map[k][i];
      if (f < 0) continue;
      const sh_dim *d = &p->lay[operand_value(v, k)].dim[i];
      if (k == res) { from_res[f] = *d; have_res[f] = 1; }
      else if (d->n > from_ops[f].n && prefix_of(&from_ops[f], d)) from_ops[f] = *d;
    }
  /* Operands keep their splits (no communication for them): pass factors
  ** first, then contracting ones; an axis goes to the first factor that
  ** asks. Then the result's extra axes, which only slice the operands. */
  /* operands passed on as partial sums: their axes are taken (a piece of a
  ** partial sum is not the partial sum of a piece) */
  uint32_t used = 0;
  for (int k = 0; k < v->nargs; k++)
    if (p->keep[v->args[k]]) used |= p->lay[v->args[k]].partial;
  for (int phase = 0; phase < 3; phase++)
    for (int f = 0; f < r->nf; f++) {
      if (r->kind[f] == F_WHOLE) continue;
      int pass = r->kind[f] == F_PASS;
      if ((phase == 1) == pass) continue;
      sh_dim *got = &o->fac[f];
      const sh_dim *want = phase < 2 ? &from_ops[f] : &from_res[f];
      if (phase == 2 && !(have_res[f] && got->n == from_ops[f].n && prefix_of(&from_ops[f], &from_res[f]))) continue;
      for (int j = got->n; j < want->n; j++) {
        if ((used >> want->ax[j]) & 1) break;
        got->ax[got->n++] = want->ax[j];
        used |= 1u << want->ax[j];
      }
      if (r->kind[f] == F_CONTRACT) o->contract |= axes_of(got);
    }
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
    if (a->kind == IR_CONST) continue;
    uint32_t sx = seen[a->id];
    switch (v->op) {
    case IR_ADD: case IR_SUB: case IR_CONCAT:          /* partial + partial, over the same axes */
      if (sx != mine) ok = 0;
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
  for (int i = 0; i < v->shape.rank; i++) if (axes_of(&p->lay[u].dim[i]) & part) return 0;
  return 1;
}

/*
** Which partial sums are passed on (partial + partial, a linear op) and which
** are reduced where they are made: the largest consistent choice. Every op
** starts allowed to pass its sum on. Each round recomputes, in definition
** order, what each value carries and whether it can be passed on; then the
** values some user cannot take, for any outcome of the others, lose the
** right for good. When only uncertain cases are left, the first of them
** does, and the rounds go on. Rights only shrink, so this ends.
*/
void shard_partials(sh_plan *p) {
  const ir_graph *g = p->g;
  int n = g->nvals;
  uint32_t *low = mem_calloc((size_t)n + 1, sizeof(uint32_t));    /* a value's own contraction */
  uint32_t *seen = mem_calloc((size_t)n + 1, sizeof(uint32_t));   /* what its users see now */
  char *allowed = mem_calloc((size_t)n + 1, 1);
  for (int u = 0; u < n; u++) {
    if (g->vals[u]->kind != IR_OP) continue;
    sh_oplayout o;
    shard_oplayout(p, u, &o);
    low[u] = o.contract;
    allowed[u] = 1;
  }
  for (int round = 0; round < 100000; round++) {
    for (int u = 0; u < n; u++) {
      const ir_value *v = g->vals[u];
      uint32_t part = low[u];
      for (int k = 0; k < v->nargs; k++) part |= seen[v->args[k]];
      p->lay[u].partial = part;
      p->keep[u] = (char)(allowed[u] && keepable(p, u, part));
      seen[u] = p->keep[u] ? part : 0;
    }
    int dropped = 0, first_unsure = -1;
    for (int u = 0; u < n; u++) {
      if (!p->keep[u]) continue;
      const ir_value *v = g->vals[u];
      int verdict = 1;
      for (int k = 0; k < v->nusers && verdict > -1; k++) {
        const ir_value *w = g->vals[v->users[k]];
        for (int j = 0; j < w->nargs; j++) {
          if (w->args[j] != u) continue;
          int a = accepts(p, w->id, j, seen, low);
          if (a < verdict) verdict = a;
        }
      }
      if (verdict < 0) { allowed[u] = 0; dropped = 1; }
      else if (verdict == 0 && first_unsure < 0) first_unsure = u;
    }
    if (dropped) continue;
    if (first_unsure < 0) break;
    allowed[first_unsure] = 0;
  }
  free(low);
  free(seen);
  free(allowed);
}

int shard_keeps_partial(const sh_plan *p, int v) { return p->keep[v] && p->lay[v].partial; }

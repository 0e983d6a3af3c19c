/*
** prop.c: propagation. A worklist over ops. Visiting an op projects the
** splits of its operands and result onto its factors; where every dim of
** a factor agrees (each list a prefix of the longest), the dims that lack
** axes are extended to the longest, one axis at a time, each extension a
** decision that remembers the op and value it came from. Where they do
** not agree, or an extension would reuse an axis, break a replicate or
** split indivisibly, nothing changes and the conflict is recorded: the
** first decision wins and schedule order is priority. Splits only grow,
** so the fixed point is reached.
*/
#include "interp/shard/shard_int.h"
#include "interp/ir/ops.h"

#include <stdlib.h>
#include <string.h>

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

/* Axes op u sums over, as its operands are split now. A contracted dim
** that a replicate keeps whole on an axis (the experts' dim of a combine
** mask) says the sum is not split there, and so does an axis an operand
** also splits a passing dim on (a context-parallel p's queries beside v's
** keys): the lowering chooses by cost which keeps it. */
static uint32_t contract_axes(const sh_plan *p, int u) {
  const ir_value *v = p->g->vals[u];
  sh_rule r;
  if (v->kind != IR_OP || shard_rule_of(p, u, &r) < 0) return 0;
  uint32_t m[SH_MAXF] = {0}, kept[SH_MAXF] = {0}, all = 0, passing = 0;
  for (int k = 0; k < v->nargs; k++)
    for (int i = 0; i < r.rank[k]; i++) {
      int f = r.map[k][i];
      if (f < 0 || r.kind[f] == F_WHOLE) continue;
      const sh_layout *l = &p->lay[v->args[k]];
      uint32_t axes = 0;
      for (int j = 0; j < l->dim[i].n; j++) axes |= 1u << l->dim[i].ax[j];
      if (r.kind[f] == F_PASS) { passing |= axes; continue; }
      m[f] |= axes;
      kept[f] |= l->forbid[i];
    }
  for (int f = 0; f < r.nf; f++) all |= m[f] & ~kept[f];
  return all & ~passing;
}

/* a propagation a replicate stopped: noted on x once */
static void note_stop(sh_plan *p, int x, int i, int axis, const ir_value *v, int rep) {
  const char *text = arena_printf(&p->mem, "dim %d stays whole on '%s' (the replicate by tactic '%s'), where %s '%s' would split it; "
                                  "the op computes as moves the fewest bytes there", i, p->mesh.name[axis], p->dec[rep].tactic, ir_opinfo_of(v->op)->name, v->name);
  for (int k = 0; k < p->nnote; k++) if (p->note[k].value == x && !strcmp(p->note[k].text, text)) return;
  shard_note(p, x, text);
}

static void visit(sh_plan *p, wl *w, int u) {
  const ir_value *v = p->g->vals[u];
  sh_rule r;
  if (shard_rule_of(p, u, &r) < 0) return;
  for (int f = 0; f < r.nf; f++) {
    if (r.kind[f] == F_WHOLE) continue;
    /* the longest split among the dims of f, and whether all agree */
    sh_dim best = {0};
    int bv = -1, agree = 1;
    for (int k = 0; k < r.nops; k++)
      for (int i = 0; i < r.rank[k]; i++) {
        if (r.map[k][i] != f) continue;
        sh_dim d = sh_seen_dim(p, v, sh_operand_value(v, k), i);
        if (bv < 0 || d.n > best.n) {
          if (bv >= 0 && !sh_prefix_of(&best, &d)) agree = 0;
          if (d.n) { best = d; bv = sh_operand_value(v, k); }
        } else if (!sh_prefix_of(&d, &best)) agree = 0;
      }
    if (bv < 0 || !best.n) continue;
    if (!agree) {
      shard_conflict(p, bv, u, best.ax[0], 0, -1, "operands of %s '%s' are split differently along one factor; propagation stops there",
                     ir_opinfo_of(v->op)->name, v->name);
      continue;
    }
    sh_dim want = best;
    for (int k = 0; k < r.nops; k++)
      for (int i = 0; i < r.rank[k]; i++) {
        if (r.map[k][i] != f) continue;
        int x = sh_operand_value(v, k);
        int changed = 0;
        for (int j = sh_seen_dim(p, v, x, i).n; j < want.n; j++) {
          int axis = want.ax[j], lost;
          /* a value its producer sums over an axis stays a partial sum there (reduced
          ** once, or scattered): splitting it on that axis is not propagated */
          if ((contract_axes(p, x) >> axis) & 1) break;
          const char *why = sh_blocked(p, x, i, axis, &lost);
          if (why) {
            /* a replicate keeps x whole there, as a tactic asked: the lowering gathers
            ** where x is made; that is no conflict (explain notes it) */
            if (lost >= 0 && p->dec[lost].replicate) { note_stop(p, x, i, axis, v, lost); break; }
            /* an axis this op sums over, already used elsewhere by the value: the
            ** lowering gathers or scatters there; that is no conflict */
            int quiet = !strcmp(why, "already uses that axis on another dim") && ((contract_axes(p, u) >> axis) & 1);
            if (!quiet && p->g->vals[x]->kind != IR_CONST)
              shard_conflict(p, x, u, axis, 0, lost, "'%s' dim %d not split on '%s' through %s '%s': '%s' %s",
                             p->g->vals[x]->name, i, p->mesh.name[axis], ir_opinfo_of(v->op)->name, v->name,
                             p->g->vals[x]->name, why);
            break;
          }
          int from = p->lay[bv].why[axis];
          int id = shard_record(p, (sh_decision){SRC_PROP, x, i, axis, p->tactic, p->at, u, bv, from, 0, from >= 0 && p->dec[from].storage});
          sh_put_axis(p, x, i, axis, id);
          changed = 1;
        }
        if (changed) touch(p, w, x);
      }
  }
}

static void drain(sh_plan *p, wl *w) {
  while (w->head != w->tail) {
    int u = w->q[w->head];
    w->head = (w->head + 1) % w->cap;
    w->in[u] = 0;
    visit(p, w, u);
  }
  free(w->q);
  free(w->in);
}

static wl wl_new(int n) { return (wl){mem_alloc(sizeof(int) * (size_t)(n + 1)), mem_calloc((size_t)n + 1, 1), 0, 0, n + 1}; }

void shard_propagate(sh_plan *p) {
  wl w = wl_new(p->g->nvals);
  for (int v = 0; v < p->g->nvals; v++) if (p->g->vals[v]->kind == IR_OP) push(&w, v);
  drain(p, &w);
}

void shard_propagate_from(sh_plan *p, sh_mark m) {
  wl w = wl_new(p->g->nvals);
  for (int i = m.nlog; i < p->nlog; i++) touch(p, &w, p->log[i].value);
  drain(p, &w);
}

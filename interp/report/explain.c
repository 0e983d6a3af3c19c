/*
** explain.c: carve explain: why a value is split as it is (the chain of
** decisions from a tactic statement through the ops propagation went
** through, what kept it whole, its partial sum, its conflicts), and why it
** moves: for each op that reads it in another layout than its own, the
** collectives that take it there, and which factor of the op holds the
** axis it gives up (with the bytes that choice moves against the other).
*/
#include "interp/report/report.h"
#include "interp/shard/layout.h"
#include "interp/shard/shard_int.h"
#include "interp/ir/ops.h"
#include "util/mem.h"

#include <string.h>

static const char *steps_str(arena *a, const sh_plan *p, const ir_value *x, const sh_dim *from, const sh_dim *to) {
  layout_step st[LAYOUT_MAXSTEPS];
  int n = layout_steps(p, x->shape.rank, from, 0, to, st);
  ir_shape at;
  layout_local_shape(p, &x->shape, from, &at);
  strbuf b;
  sb_init(&b);
  for (int i = 0; i < n; i++) {
    static const char *const kind[] = {[RT_ALL_GATHER] = "all_gather", [RT_ALL_TO_ALL] = "all_to_all", [RT_SHARD_SLICE] = "a local slice",
                                       [RT_ALL_REDUCE] = "all_reduce", [RT_REDUCE_SCATTER] = "reduce_scatter"};
    const char *k = (unsigned)st[i].op < sizeof kind / sizeof kind[0] && kind[st[i].op] ? kind[st[i].op] : "a move";
    sb_printf(&b, "%s%s over %s on dim %d", i ? ", then " : "", k, shard_axes_str(p, st[i].axes, a), st[i].dim);
    int64_t by = layout_step_bytes(p, &st[i], &at, ir_dtype_size(x->dtype));
    if (by) sb_printf(&b, " (%s a device)", report_bytes(a, (double)by));
    ir_shape next;
    layout_step_shape(p, &st[i], &at, &next);
    at = next;
  }
  const char *s = arena_strndup(a, sb_str(&b), b.n);
  sb_free(&b);
  return s;
}

/* why op u does not read operand k (value x) with axis ax on dim i */
static void why_axis(strbuf *b, arena *a, const sh_plan *p, const ir_value *u, int k, int i, int ax) {
  sh_oplayout o;
  shard_oplayout(p, u->id, &o);
  int mine = o.r.map[k][i];
  sh_choice c;
  if (shard_axis_choice(p, u->id, ax, mine, &c) < 0) {
    sb_printf(b, "      %s '%s' computes with '%s' on none of its dims there", ir_opinfo_of(u->op)->name, u->name, p->mesh.name[ax]);
    sb_puts(b, mine < 0 ? " (that dim of the operand is whole in it)\n" : " (the split does not divide, or a partial sum holds it)\n");
    return;
  }
  if (c.from_op >= 0) {
    const ir_value *w = p->g->vals[u->args[c.from_op]];
    sb_printf(b, "      '%s' stays on dim %d of '%s'%s, which %s '%s' computes with", p->mesh.name[ax], c.from_dim, w->name,
              sh_param_like(p->g, w->id) ? " (a parameter: carve keeps a tactic's split of a weight and moves activations)" : "",
              ir_opinfo_of(u->op)->name, u->name);
  } else {
    sb_printf(b, "      %s '%s' computes with '%s' on the dim its result '%s' is split on", ir_opinfo_of(u->op)->name, u->name, p->mesh.name[ax], u->name);
  }
  if (c.alt_factor >= 0 && c.alt_params == c.params && c.alt_all == c.all)
    sb_printf(b, ";\n      keeping it here instead moves as much (%s): on a tie the op's first dim keeps the axis", report_bytes(a, c.all));
  else if (c.alt_factor >= 0)
    sb_printf(b, ";\n      keeping it here instead would move %s (%s of parameters), against %s (%s)", report_bytes(a, c.alt_all),
              report_bytes(a, c.alt_params), report_bytes(a, c.all), report_bytes(a, c.params));
  sb_puts(b, "\n");
}

static void report_moves(strbuf *b, const sh_plan *p, int id) {
  const ir_value *x = p->g->vals[id];
  arena a;
  arena_init(&a);
  sh_dim have[IR_MAXRANK], want[IR_MAXRANK];
  for (int i = 0; i < x->shape.rank; i++) have[i] = p->lay[id].dim[i];
  sh_dim into[IR_MAXRANK];
  if (shard_reduced_into(p, id, into)) memcpy(have, into, sizeof(sh_dim) * (size_t)x->shape.rank);   /* where it is reduced to */
  int header = 0;
  for (int n = 0; n < x->nusers; n++) {
    const ir_value *u = p->g->vals[x->users[n]];
    if (u->kind != IR_OP) continue;
    sh_oplayout o;
    shard_oplayout(p, u->id, &o);
    for (int k = 0; k < u->nargs; k++) {
      if (u->args[k] != id) continue;
      shard_required(p, &o, k, want, x->shape.rank);
      if (layout_same(have, want, x->shape.rank)) continue;
      if (!header++) sb_puts(b, "  moved where it is read (once per pass for the ops that read it alike; parameters at each use):\n");
      sh_dim seen[IR_MAXRANK];
      for (int i = 0; i < x->shape.rank; i++) seen[i] = sh_seen_dim(p, u, id, i);
      int storage = !layout_same(have, seen, x->shape.rank);
      sb_printf(b, "    %s '%s' reads it as %s: %s%s\n", ir_opinfo_of(u->op)->name, u->name, shard_dims_str(p, want, x->shape.rank, &a),
                steps_str(&a, p, x, have, want), storage ? " (a storage split: only the optimizer's update reads the pieces)" : "");
      if (storage) continue;
      for (int i = 0; i < x->shape.rank; i++)
        for (int j = 0; j < have[i].n; j++) {
          int ax = have[i].ax[j], kept = 0;
          for (int m = 0; m < want[i].n; m++) kept |= want[i].ax[m] == ax;
          if (!kept) why_axis(b, &a, p, u, k, i, ax);
        }
    }
  }
  arena_free(&a);
}

static void chain(strbuf *b, const sh_plan *p, int dec) {
  const ir_graph *g = p->g;
  arena a;
  arena_init(&a);
  for (int depth = 0; dec >= 0 && depth < 200; depth++) {
    const sh_decision *d = &p->dec[dec];
    const ir_value *v = g->vals[d->value];
    if (d->src == SRC_TACTIC) {
      if (d->replicate && d->dim < 0)
        sb_printf(b, "    %s: tactic '%s' keeps '%s' whole on '%s'\n", diag_where(&a, d->at), d->tactic, v->name, p->mesh.name[d->axis]);
      else if (d->replicate)
        sb_printf(b, "    %s: tactic '%s' keeps dim %d of '%s' whole on '%s'\n", diag_where(&a, d->at), d->tactic, d->dim, v->name, p->mesh.name[d->axis]);
      else
        sb_printf(b, "    %s: tactic '%s' split dim %d of '%s' on '%s'\n", diag_where(&a, d->at), d->tactic, d->dim, v->name, p->mesh.name[d->axis]);
      break;
    }
    const ir_value *op = g->vals[d->op];
    sb_printf(b, "    <- dim %d of '%s' follows %s '%s' from '%s'", d->dim, v->name, ir_opinfo_of(op->op)->name, op->name, g->vals[d->from]->name);
    if (op->at.src) sb_printf(b, " (%s)", diag_where(&a, op->at));
    sb_putc(b, '\n');
    dec = d->from_decision;
  }
  arena_free(&a);
}

/* A pipelined plan: where v runs, and why there. */
static void explain_stage(strbuf *b, const sh_plan *p, int id) {
  const ir_graph *g = p->g;
  int P = (int)p->mesh.size[p->pipe.axis];
  sh_stages st;
  diag d;
  diag_init(&d);
  if (shard_stages(p, &st, &d) == 0) {
    const uint64_t *mask = st.mask;
    const char *fwd = st.fwd;
    const int *cuts = st.cuts;
    const ir_value *v = g->vals[id];
    sb_puts(b, "  on stage");
    int n = 0;
    for (int s = 0; s < P; s++) if (mask[id] >> s & 1) sb_printf(b, "%s %d", n++ ? "," : "", s);
    if (v->kind != IR_OP) sb_printf(b, ": each stage that reads it holds its own copy%s\n", n > 1 ? " (updated alike on each)" : "");
    else if (v->origin >= 0 && !fwd[id] && mask[v->origin] == mask[id])
      sb_printf(b, ": the backward pass of '%s', where that runs\n", g->vals[v->origin]->name);
    else if (v->origin >= 0 && !fwd[id] && g->vals[v->origin]->kind != IR_OP && (mask[v->origin] & (mask[v->origin] - 1))) {
      /* a weight two stages read (a tied embedding): each adds its own part over the microbatches */
      sb_printf(b, ": the gradient of '%s', which stages", g->vals[v->origin]->name);
      for (int s = 0, k = 0; s < P; s++) if (mask[v->origin] >> s & 1) sb_printf(b, "%s %d", k++ ? "," : "", s);
      sb_puts(b, " read: each sums its own part over the microbatches, the others' sums come here once a step, and the "
                 "whole gradient goes back to them (each updates its copy alike)\n");
    }
    else if (v->origin >= 0 && !fwd[id])
      sb_printf(b, ": the backward pass of '%s', a sum of gradients that all come from here; taken here, one value "
                "travels back rather than each part\n", g->vals[v->origin]->name);
    else if (fwd[id] && n == 1 && st.part[id] >= 0) {
      int k = st.part[id], parts = st.n;
      const char *unit = parts > P ? "part" : "stage";
      sb_printf(b, ": the forward pass %s%s%s%s", k ? "after '" : "up to the first cut", k ? g->vals[cuts[k - 1]]->name : "",
                k ? "' ends the " : "", k ? unit : "");
      if (k && parts > P) sb_printf(b, " before (part %d of the program)", k);
      else if (k) sb_puts(b, " before");
      sb_putc(b, '\n');
      if (k < parts - 1 && cuts[k] == id)
        sb_printf(b, "  it ends %s %d: each microbatch's piece goes to stage %d, and its gradient comes back\n", unit, k, (k + 1) % P);
    } else {
      sb_puts(b, ": where it is read\n");
    }
  }
  diag_free(&d);
  shard_stages_free(&st);
}

void report_explain(strbuf *b, const sh_plan *p, int id) {
  const ir_value *v = p->g->vals[id];
  const sh_layout *l = &p->lay[id];
  arena a;
  arena_init(&a);
  ir_shape ls;
  shard_local(p, id, &ls);
  sb_printf(b, "%s: %s%s, split %s, local %s\n", v->name, ir_dtype_name(v->dtype), ir_shape_str(&a, &v->shape),
            shard_str(p, id, &a), ir_shape_str(&a, &ls));
  if (p->pipe.axis >= 0) explain_stage(b, p, id);
  int any = 0;
  for (int i = 0; i < v->shape.rank; i++)
    for (int k = 0; k < l->dim[i].n; k++) {
      int ax = l->dim[i].ax[k];
      sb_printf(b, "  dim %d on '%s':\n", i, p->mesh.name[ax]);
      chain(b, p, l->why[ax]);
      any = 1;
    }
  if (shard_keeps_partial(p, id))
    sb_printf(b, "  a partial sum over %s, passed on to its users as it is (they are linear in it)\n", shard_axes_str(p, l->partial, &a));
  else if (l->partial) {
    sh_dim into[IR_MAXRANK];
    if (shard_reduced_into(p, id, into))
      sb_printf(b, "  computed as a partial sum over %s and reduce-scattered where it is made, into %s: the layout every reader wants\n",
                shard_axes_str(p, l->partial, &a), shard_dims_str(p, into, v->shape.rank, &a));
    else
      sb_printf(b, "  computed as a partial sum over %s and reduced where it is made\n", shard_axes_str(p, l->partial, &a));
    if (p->early[id] > 0)
      sb_printf(b, "  reduced here, not passed on: its readers would carry the sum to reductions of %s further on (it forks, "
                   "or is broadcast), against %s here\n", report_bytes(&a, p->early[id]),
                report_bytes(&a, (double)ir_nelem(&ls) * (double)ir_dtype_size(v->dtype)));
  }
  int noted = 0;
  for (int i = 0; i < p->nnote; i++) noted += p->note[i].value == id;
  if (!any) sb_puts(b, noted ? "  not split on any axis\n" : "  not split on any axis: no tactic split it and no propagation reached it\n");
  for (int i = 0; i < p->nnote; i++) {
    const sh_note *n = &p->note[i];
    if (n->value == id) sb_printf(b, "  %s: tactic '%s': %s\n", diag_where(&a, n->at), n->tactic, n->text);
  }
  for (int ax = 0; ax < p->mesh.n; ax++) {
    int d = l->forbid_why[ax];
    if (d >= 0) sb_printf(b, "  kept whole on '%s' by tactic '%s' at %s\n", p->mesh.name[ax], p->dec[d].tactic, diag_where(&a, p->dec[d].at));
  }
  for (int i = 0; i < p->ncon; i++) {
    const sh_conflict *k = &p->con[i];
    if (k->value != id) continue;
    sb_printf(b, "  conflict: %s\n", k->message);
    if (k->lost_to >= 0) { sb_puts(b, "    it lost to:\n"); chain(b, p, k->lost_to); }
  }
  report_moves(b, p, id);
  arena_free(&a);
}

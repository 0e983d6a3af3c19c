/*
** shard.c: the sharding state: layouts, decisions, conflicts, the undo
** log, and the two actions (split, replicate). prop.c propagates them,
** partial.c works out how each op computes and which sums stay partial.
*/
#include "interp/shard/shard_int.h"
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
  p->pipe.axis = p->pipe.micro = -1;
  p->lay = arena_alloc(&p->mem, sizeof(sh_layout) * (size_t)(g->nvals ? g->nvals : 1));
  for (int v = 0; v < g->nvals; v++)
    for (int a = 0; a < SH_MAXAXES; a++) { p->lay[v].why[a] = -1; p->lay[v].forbid_why[a] = -1; }
  p->keep = arena_alloc(&p->mem, (size_t)g->nvals + 1);
  p->early = arena_alloc(&p->mem, sizeof(float) * ((size_t)g->nvals + 1));
  p->logged = mem_calloc((size_t)g->nvals + 1, sizeof *p->logged);
  p->rules = mem_calloc((size_t)g->nvals + 1, sizeof *p->rules);
  p->con_last = mem_alloc(sizeof *p->con_last * ((size_t)g->nvals + 1));
  for (int v = 0; v <= g->nvals; v++) p->con_last[v] = -1;
  p->epoch = 1;
  p->tactic = "";
  return p;
}

void shard_free(sh_plan *p) {
  if (!p) return;
  free(p->dec);
  free(p->con);
  free(p->note);
  free(p->log);
  free(p->logged);
  free(p->con_last);
  free(p->rules);
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
  strbuf b;
  sb_init(&b);
  sb_putc(&b, '{');
  for (int i = 0, k = 0; i < p->mesh.n; i++)
    if ((mask >> i) & 1) sb_printf(&b, "%s%s", k++ ? ", " : "", p->mesh.name[i]);
  sb_putc(&b, '}');
  const char *r = arena_strndup(a, b.p, b.n);
  sb_free(&b);
  return r;
}

const char *shard_str(const sh_plan *p, int v, arena *a) { return shard_dims_str(p, p->lay[v].dim, p->g->vals[v]->shape.rank, a); }

const char *shard_dims_str(const sh_plan *p, const sh_dim *dims, int rank, arena *a) {
  strbuf b;
  sb_init(&b);
  sb_putc(&b, '[');
  for (int i = 0; i < rank; i++) {
    const sh_dim *d = &dims[i];
    if (i) sb_puts(&b, ", ");
    if (!d->n) { sb_putc(&b, '-'); continue; }
    for (int j = 0; j < d->n; j++) sb_printf(&b, "%s%s", j ? "+" : "", p->mesh.name[d->ax[j]]);
  }
  sb_putc(&b, ']');
  const char *r = arena_strndup(a, b.p, b.n);
  sb_free(&b);
  return r;
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
  for (int i = p->con_last[value]; i >= 0; i = p->con[i].next)
    if (p->con[i].op == op && p->con[i].axis == axis && p->con[i].from_tactic == from_tactic) return;
  if (p->ncon == p->concap) {
    p->concap = p->concap ? p->concap * 2 : 64;
    p->con = mem_realloc(p->con, sizeof *p->con * (size_t)p->concap);
  }
  strbuf msg;
  sb_init(&msg);
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(&msg, fmt, ap);
  va_end(ap);
  p->con[p->ncon] = (sh_conflict){value, op, axis, from_tactic, p->tactic, p->at, arena_strndup(&p->mem, sb_str(&msg), msg.n), lost_to,
                                  p->con_last[value]};
  sb_free(&msg);
  p->con_last[value] = p->ncon++;
}

void shard_note(sh_plan *p, int v, const char *text) {
  if (p->nnote == p->notecap) {
    p->notecap = p->notecap ? p->notecap * 2 : 16;
    p->note = mem_realloc(p->note, sizeof *p->note * (size_t)p->notecap);
  }
  p->note[p->nnote++] = (sh_note){v, p->tactic, p->at, arena_strndup(&p->mem, text, strlen(text))};
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
  return (sh_mark){p->ndec, p->ncon, p->nlog, p->nnote, p->mesh.n, p->mesh.virt, p->mesh.zigzag, p->pipe, p->ring};
}

int64_t shard_devices(const sh_plan *p) {
  int64_t n = 1;
  for (int i = 0; i < p->mesh.n; i++) if (!(p->mesh.virt >> i & 1)) n *= p->mesh.size[i];
  return n;
}

void shard_rollback(sh_plan *p, sh_mark m) {
  while (p->nlog > m.nlog) {
    const sh_undo *u = &p->log[--p->nlog];
    p->lay[u->value] = u->old;
  }
  if (m.ndec < p->ndec) p->ndec = m.ndec;
  if (m.nnote < p->nnote) p->nnote = m.nnote;
  if (m.nmesh) { p->mesh.n = m.nmesh; p->mesh.virt = m.virt; p->mesh.zigzag = m.zigzag; p->pipe = m.pipe; }   /* (a zeroed mark: nothing to restore) */
  if (m.nmesh && m.ring != p->ring) shard_set_ring(p, m.ring);
  while (p->ncon > m.ncon) {     /* conflicts come off in the order they went on */
    const sh_conflict *k = &p->con[--p->ncon];
    p->con_last[k->value] = k->next;
  }
  p->epoch++;            /* what changes next is saved again */
}

/* ---- actions ---- */

/* Can axis be appended to dim of v? 0 yes; else a reason (and the decision it loses to). */
const char *sh_blocked(const sh_plan *p, int v, int dim, int axis, int *lost_to) {
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

sh_dim sh_seen_dim(const sh_plan *p, const ir_value *u, int x, int i) {
  const sh_layout *l = &p->lay[x];
  sh_dim d = l->dim[i];
  if (u->update || !l->store) return d;
  int n = 0;
  for (int j = 0; j < d.n; j++) if (!((l->store >> d.ax[j]) & 1)) d.ax[n++] = d.ax[j];
  d.n = n;
  return d;
}

void sh_put_axis(sh_plan *p, int v, int dim, int axis, int why) {
  sh_layout *l = edit(p, v);
  l->dim[dim].ax[l->dim[dim].n++] = (int8_t)axis;
  l->why[axis] = why;
  if (why >= 0 && p->dec[why].storage) l->store |= 1u << axis;
}

int shard_split(sh_plan *p, int v, int dim, int axis, diag *d) {
  const ir_value *x = p->g->vals[v];
  int lost;
  if (shard_uses_axis(&p->lay[v], x->shape.rank, axis) == dim) return 0;   /* what holds already: nothing to do */
  const char *why = sh_blocked(p, v, dim, axis, &lost);
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
  int id = shard_record(p, (sh_decision){SRC_TACTIC, v, dim, axis, p->tactic, p->at, -1, -1, -1, 0, p->storage});
  sh_put_axis(p, v, dim, axis, id);
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


/*
** lower_reshard.c: the collectives that take a value from one layout to
** another: partial sums reduced (or reduce-scattered where the target
** splits that axis next), a minor axis moved between dims by one
** all-to-all, axes gathered minor first, new axes sliced locally.
*/
#include "interp/lower/lower_int.h"
#include "runtime/mesh.h"
#include "util/mem.h"

#include <stdlib.h>
#include <string.h>

/* ---- collectives and resharding ---- */

int lw_group(lctx *c, uint32_t axes) {
  if (c->group_cache[axes] >= 0) return c->group_cache[axes];
  int ax[SH_MAXAXES], n = 0;
  for (int i = 0; i < c->plan->mesh.n; i++) if ((axes >> i) & 1) ax[n++] = i;
  return c->group_cache[axes] = rt_prog_group(c->p, n, ax);
}

int lw_dim_group(lctx *c, const sh_dim *d) {
  if (!d->n) return -1;
  /* a dim split over several axes: the group lists them major to minor */
  uint32_t m = 0;
  int inorder = 1;
  for (int i = 0; i < d->n; i++) { m |= 1u << d->ax[i]; if (i && d->ax[i] < d->ax[i - 1]) inorder = 0; }
  if (inorder) return lw_group(c, m);
  int ax[SH_MAXAXES];
  for (int i = 0; i < d->n; i++) ax[i] = d->ax[i];
  return rt_prog_group(c->p, d->n, ax);
}

/* tests only: a planted wrong collective (opt.drop_collective: the k-th
** all-reduce left undone, a copy) */
static rt_op planted(lctx *c, rt_op op) {
  return op == RT_ALL_REDUCE && ++c->nall_reduce == c->opt.drop_collective ? RT_COPY : op;
}

void lw_all_reduce(lctx *c, int in, int out, int group, int fn) {
  rt_op op = planted(c, RT_ALL_REDUCE);
  rt_instr *x = rt_prog_emit(c->p, op, out);
  x->nin = 1;
  x->in[0] = in;
  x->group = op == RT_COPY ? -1 : group;
  if (op == RT_ALL_REDUCE) x->fn = (uint8_t)fn;
  x->outer = 1; x->n = c->p->bufs[in].nelem; x->inner = 1;
  x->rank = 1; x->shape[0] = x->n;
}

/* A collective over an axis that deals its pieces zig-zag moves blocks of
** 2P: its dims must split so (check_zigzag in lower.c holds the values'
** layouts to it, this the layouts a reshard passes through). 0 after a
** located error when they do not. */
static int zigzag_fits(lctx *c, const rt_instr *x) {
  int64_t P = rt_mesh_group_size(c->p, x->group), rows = x->n;
  int ok = 1;
  if (x->op == RT_ALL_GATHER) ok = rows % 2 == 0;
  else if (x->op == RT_REDUCE_SCATTER || x->op == RT_SHARD_SLICE) ok = rows % (2 * P) == 0;
  else if (x->op == RT_ALL_TO_ALL) { rows = x->shape[x->split_dim]; ok = rows % (2 * P) == 0 && x->shape[x->concat_dim] % 2 == 0; }
  if (ok || c->failed) return ok;
  const ir_value *v = c->cur >= 0 ? c->g->vals[c->cur] : NULL;
  int ax = c->p->groups[x->group].axes[0];
  c->failed = diag_error(c->d, v ? v->at : LOC_NONE, "'%s' moves a piece between layouts over '%s', which deals its pieces zig-zag "
                         "(the context tactic's balance), and one of its dims does not split into the %lld blocks that needs; "
                         "give lengths divisible by %lld, or the context tactic balance = \"none\"", v ? v->name : "?",
                         c->p->axis_names[ax], 2 * (long long)P, 2 * (long long)P) < 0;
  return 0;
}

/* Emit the steps from buffer `in` (local shape s); the last writes `dst` (or a new temp). */
int lw_emit_steps(lctx *c, int in, ir_shape s, const layout_step *st, int n, int dst, const char *name, rt_dtype dt) {
  int cur = in;
  for (int k = 0; k < n; k++) {
    ir_shape t;
    layout_step_shape(c->plan, &st[k], &s, &t);
    int out = k == n - 1 && dst >= 0 ? dst : lw_tmp(c, name, dt, t.rank, t.d);
    rt_op op = planted(c, (rt_op)st[k].op);
    rt_instr *x = rt_prog_emit(c->p, op, out);
    x->nin = 1;
    x->in[0] = cur;
    x->group = lw_group(c, st[k].axes);
    int d0 = st[k].op == RT_ALL_TO_ALL ? 0 : st[k].dim;
    x->outer = lw_prod(s.d, 0, d0);
    x->n = s.d[d0];
    x->inner = lw_prod(s.d, d0 + 1, s.rank);
    x->rank = (uint8_t)s.rank;
    for (int i = 0; i < s.rank; i++) x->shape[i] = s.d[i];
    x->split_dim = (int8_t)st[k].dim;
    x->concat_dim = (int8_t)st[k].dim2;
    if (op == RT_COPY) x->group = -1;
    if (st[k].op == RT_ALL_REDUCE) { x->outer = 1; x->n = ir_nelem(&s); x->inner = 1; }
    if (rt_mesh_zigzag(c->p, x->group) && !zigzag_fits(c, x)) return cur;
    cur = out;
    s = t;
  }
  return cur;
}

const sh_dim *lw_final_dims(lctx *c, int v) {
  const ir_value *x = V(c, v);
  if (x->carry >= 0) return c->plan->lay[x->carry].dim;   /* a new value takes its leaf's layout */
  if (c->fin && c->fin[v]) return c->fin[v];
  return c->plan->lay[v].dim;
}

/* An op lowered as written, reading its operands as their buffers hold them. */
static int plain_user(lctx *c, int w) {
  const ir_value *u = V(c, w);
  return u->kind == IR_OP && !c->skip[w] && c->src[w] == w && !c->isconst[w] && c->axpy[w] < 0 && !c->axpby[w] && c->chain[w] < 0;
}

/* Where a partial sum is reduced: where it is made, into the layout every
** user reads it in when that layout splits an axis of the sum (a
** reduce-scatter, half an all-reduce's bytes, and a smaller buffer):
** Megatron's reduce-scatter after a row-parallel GEMM whose consumer is
** split by sequence. The plan's own layout is kept otherwise. */
void lw_plan_finals(lctx *c) {
  const ir_graph *g = c->g;
  int n = g->nvals;
  c->fin = mem_calloc((size_t)n + 1, sizeof *c->fin);
  for (int v = 0; v < n; v++) {
    const ir_value *x = V(c, v);
    if (x->kind != IR_OP || lw_kept(c, x) || !plain_user(c, v)) continue;
    int plain = 1;
    for (int k = 0; k < x->nusers; k++) plain &= plain_user(c, x->users[k]);
    sh_dim into[IR_MAXRANK];
    if (!plain || !shard_reduced_into(c->plan, v, into)) continue;
    c->fin[v] = mem_alloc(sizeof(sh_dim) * IR_MAXRANK);
    memcpy(c->fin[v], into, sizeof(sh_dim) * IR_MAXRANK);
  }
}

/* Which pass a value belongs to: the forward (the loss depends on it) or
** the rest. A value moved for one op is moved once for the others of its
** pass that read it the same way; the backward moves it again (as
** Megatron-LM gathers a sequence-split input again for the weight
** gradient), so that nothing gathered lives from one pass to the next.
** The backward reuses the forward's move where that costs no memory: the
** moved piece is no bigger than the value's own, and every reader in the
** backward reads it moved so (an expert's output, moved back to the tokens
** by an all-to-all, read so again by the gates' gradient: the moved copy
** lives in place of the value, as GShard's does). */
void lw_plan_passes(lctx *c) {
  const ir_graph *g = c->g;
  int n = g->nvals;
  c->fwd = mem_calloc((size_t)n + 1, 1);
  c->moved = mem_calloc((size_t)n + 1, sizeof *c->moved);
  if (!g->nouts) return;
  c->fwd[g->outputs[0]] = 1;
  for (int v = n - 1; v >= 0; v--)
    if (c->fwd[v]) for (int k = 0; k < V(c, v)->nargs; k++) c->fwd[V(c, v)->args[k]] = 1;
}

void lw_free_passes(lctx *c) {
  for (int v = 0; c->moved && v < c->g->nvals; v++)
    for (lw_moved *m = c->moved[v], *next; m; m = next) { next = m->next; free(m); }
  for (int v = 0; c->fin && v < c->g->nvals; v++) free(c->fin[v]);
  free(c->moved);
  free(c->fin);
  free(c->fwd);
}

/* A value's piece in layout want holds no more elements than in have. */
static int no_bigger(const sh_plan *p, const ir_shape *s, const sh_dim *have, const sh_dim *want) {
  ir_shape a, b;
  layout_local_shape(p, s, have, &a);
  layout_local_shape(p, s, want, &b);
  return ir_nelem(&b) <= ir_nelem(&a);
}

/* Every reader of value id outside the forward reads it in layout want,
** and it is no output (read whole at the end). */
static int read_later_as(lctx *c, int id, const sh_dim *want) {
  const ir_value *x = V(c, id);
  if (x->is_output || x->carry >= 0) return 0;
  for (int k = 0; k < x->nusers; k++) {
    int u = x->users[k];
    if (c->fwd[u]) continue;
    const ir_value *y = V(c, u);
    if (y->kind != IR_OP) return 0;
    sh_oplayout o;
    shard_oplayout(c->plan, u, &o);
    if (o.r.nops == 0) return 0;
    for (int j = 0; j < y->nargs; j++) {
      if (y->args[j] != id) continue;
      sh_dim d[IR_MAXRANK];
      shard_required(c->plan, &o, j, d, x->shape.rank);
      if (!layout_same(d, want, x->shape.rank)) return 0;
    }
  }
  return 1;
}

/* Operand k of op v in the layout `want`. */
int lw_operand_in(lctx *c, int id, const sh_dim *want, ir_shape *shape) {
  if (c->src[id] != id) {             /* a scalar broadcast read in place: its source, as it is */
    int s = c->src[id];
    *shape = V(c, s)->shape;
    return lw_buf(c, s);
  }
  const ir_value *x = V(c, id);
  if (!c->plan) { *shape = x->shape; return lw_buf(c, id); }
  layout_local_shape(c->plan, &x->shape, want, shape);
  if (c->isconst[id]) return lw_literal_in(c, id, shape);
  int b = lw_buf(c, id);
  const sh_dim *have = lw_final_dims(c, id);
  if (layout_same(have, want, x->shape.rank)) return b;
  int pass = c->fwd && c->cur >= 0 ? c->fwd[c->cur] : -1, shared = pass >= 0 && !sh_param_like(c->g, id);
  for (lw_moved *m = shared ? c->moved[id] : NULL; m; m = m->next)
    if ((m->pass == pass || m->later) && layout_same(m->want, want, x->shape.rank)) return m->buf;
  layout_step st[LAYOUT_MAXSTEPS];
  ir_shape hs;
  layout_local_shape(c->plan, &x->shape, have, &hs);
  int n = layout_steps(c->plan, x->shape.rank, have, 0, want, st);
  int first = c->p->ninstrs;
  int r = lw_emit_steps(c, b, hs, st, n, -1, x->name, lw_type(c, x));
  for (int k = first; k < c->p->ninstrs; k++) c->p->instrs[k].src = id;   /* reports name the value moved */
  if (shared && n) {
    lw_moved *m = mem_alloc(sizeof *m);
    memcpy(m->want, want, sizeof(sh_dim) * (size_t)x->shape.rank);
    m->pass = pass;
    m->later = pass == 1 && no_bigger(c->plan, &x->shape, have, want) && read_later_as(c, id, want);
    m->buf = r;
    m->next = c->moved[id];
    c->moved[id] = m;
  }
  return r;
}


/*
** estimate.c: the incremental cost of a plan (see estimate.h).
*/
#include "interp/sim/estimate.h"
#include "interp/shard/layout.h"
#include "interp/ir/ops.h"
#include "interp/lower/lower.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PS 1e12                   /* times are kept in integer picoseconds: sums are exact and undo exactly */

typedef struct est_undo { int v; int64_t time, comm, bytes, tmp; } est_undo;

struct estimator {
  const sh_plan *p;
  const ir_graph *g;
  sim_opts o;
  int n;
  int64_t *time, *comm;           /* per op: compute and communication, ps */
  int64_t *bytes;                 /* per value: local bytes it holds (leaves, or op values over their life) */
  int64_t *tmp;                   /* per op: its operands and result in another layout, alive while it runs */
  int *last;                      /* an op value's last position alive (its buffer's last reader) */
  char *leaf, *alias;             /* leaves; values read in place from their operand (no buffer) */
  signed char *fused;             /* lower_fused_updates: -1 inside an update, its arrays at its result */
  int *lmgrad;                    /* a language model's logits: their cross-entropy gradient (else -1) */
  int *lmlogits;                  /* that gradient: its logits (else -1) */
  int64_t t_time, t_comm, t_leaves;
  /* the live bytes over program order: max tree with lazy adds */
  int size;
  int64_t *mx, *lz;
  est_undo *log;
  int nlog, logcap;
  uint32_t *stamp, epoch;
};

/* ---- the segment tree ---- */

/* Add d over positions l..r: the nodes covering the range take it, then
** the maxima above them are recomputed (mx[i] = max of the children + what
** was added to all of i). size is a power of two; mx[1] is the maximum. */
static void tree_add(estimator *e, int l, int r, int64_t d) {
  int n = e->size, lo = l + n, hi = r + n + 1, l0 = lo, r0 = hi - 1;
  for (; lo < hi; lo >>= 1, hi >>= 1) {
    if (lo & 1) { e->mx[lo] += d; e->lz[lo] += d; lo++; }
    if (hi & 1) { --hi; e->mx[hi] += d; e->lz[hi] += d; }
  }
  for (int i = l0 >> 1; i; i >>= 1) e->mx[i] = (e->mx[2 * i] > e->mx[2 * i + 1] ? e->mx[2 * i] : e->mx[2 * i + 1]) + e->lz[i];
  for (int i = r0 >> 1; i; i >>= 1) e->mx[i] = (e->mx[2 * i] > e->mx[2 * i + 1] ? e->mx[2 * i] : e->mx[2 * i + 1]) + e->lz[i];
}

static void set_bytes(estimator *e, int v, int64_t b) {
  int64_t d = b - e->bytes[v];
  if (!d) return;
  e->bytes[v] = b;
  if (e->leaf[v]) e->t_leaves += d;
  else tree_add(e, v, e->last[v], d);
}

/* the transient bytes of op u, alive at its own position only */
static void set_tmp(estimator *e, int u, int64_t b) {
  int64_t d = b - e->tmp[u];
  if (!d) return;
  e->tmp[u] = b;
  tree_add(e, u, u, d);
}

/* ---- costs ---- */

static double local_elems(const sh_plan *p, const ir_value *x, const sh_dim *dims) {
  ir_shape s;
  layout_local_shape(p, &x->shape, dims, &s);
  return (double)ir_nelem(&s);
}

static sim_dt sim_dt_of(ir_dtype t) { return t == IR_BF16 ? SIM_BF16 : t == IR_F16 ? SIM_F16 : SIM_F32; }

/* Seconds of the reshard steps taking a value of shape global from one
** layout (a partial sum over partial) to another. */
static double reshard(const estimator *e, const ir_value *x, const sh_dim *from, uint32_t partial, const sh_dim *to) {
  if (!partial && layout_same(from, to, x->shape.rank)) return 0;
  const sh_plan *p = e->p;
  layout_step st[LAYOUT_MAXSTEPS];
  int n = layout_steps(p, x->shape.rank, from, partial, to, st);
  ir_shape s, t;
  layout_local_shape(p, &x->shape, from, &s);
  double sz = (double)ir_dtype_size(x->dtype), sec = 0;
  for (int i = 0; i < n; i++) {
    layout_step_shape(p, &st[i], &s, &t);
    double in = (double)ir_nelem(&s) * sz, out = (double)ir_nelem(&t) * sz;
    if (st[i].op == RT_SHARD_SLICE) sec += e->o.prof->launch + (in + out) / e->o.prof->bandwidth;
    else {
      double full = st[i].op == RT_ALL_GATHER || st[i].op == RT_ALL_REDUCE ? out : in;
      int64_t devs = layout_group_devices(p, st[i].axes);
      /* (NaN: an axis with no link, the pipeline's microbatches, whose sums are adds on each device) */
      double c = sim_coll_seconds(&e->o, st[i].op, st[i].axes, devs, full), lat = sim_coll_seconds(&e->o, st[i].op, st[i].axes, devs, 0);
      if (isnan(c)) c = lat = 0;
      /* a tiny gradient's reduction joins the others' (lower.h): its bytes, not its latency */
      if (x->role == ROLE_GRAD && in <= (double)LOWER_TINY_BYTES && (st[i].op == RT_ALL_REDUCE || st[i].op == RT_REDUCE_SCATTER))
        sec += c - lat;
      else
        sec += e->o.prof->launch + c;
    }
    s = t;
  }
  return sec;
}

static int is_contraction(const ir_value *v) { return v->op == IR_MATMUL || v->op == IR_EINSUM; }

/* ---- partial sums passed on ----
** The lowering runs shard_partials first: a contraction's partial sum
** that is only ever added to other partial sums over the same axes is
** reduced once, after the adds (under Megatron the input gradients of q,
** k and v: three contractions over the split heads, one all-reduce). The
** search costs plans before that pass, so the estimator mirrors its
** commonest case: chains of adds and subtractions of contractions, up to
** CHAIN deep. */
enum { CHAIN = 3 };

static int is_sum(const ir_value *v) { return v->kind == IR_OP && (v->op == IR_ADD || v->op == IR_SUB); }

/* The axes u's result is a partial sum over before any reduction: a
** contraction's own; a sum's when each operand carries the same. */
static uint32_t carried(const estimator *e, int u, int depth) {
  const ir_value *v = e->g->vals[u];
  if (v->kind != IR_OP) return 0;
  if (is_contraction(v)) {
    sh_oplayout o;
    shard_oplayout(e->p, u, &o);
    return o.contract;
  }
  if (!is_sum(v) || depth == 0) return 0;
  uint32_t P = 0;
  for (int k = 0; k < v->nargs; k++) {
    uint32_t c = carried(e, v->args[k], depth - 1);
    if (!c || (P && c != P)) return 0;
    P = c;
  }
  return P;
}

/* Whether u's partial sum over P goes on unreduced: nothing needs it whole
** (as shard_partials decides) and each user adds it to sums of its kind. */
static int passes_on(const estimator *e, int u, uint32_t P) {
  const ir_value *v = e->g->vals[u];
  if (!P || v->is_output || v->carry >= 0 || v->role == ROLE_GRAD || !v->nusers) return 0;
  for (int i = 0; i < v->shape.rank; i++)
    for (int j = 0; j < e->p->lay[u].dim[i].n; j++)
      if ((P >> e->p->lay[u].dim[i].ax[j]) & 1) return 0;
  for (int k = 0; k < v->nusers; k++) {
    const ir_value *w = e->g->vals[v->users[k]];
    if (!is_sum(w) || carried(e, w->id, CHAIN) != P) return 0;
  }
  return 1;
}

/* What u's result is reduced over where it is made. */
static uint32_t reduced_here(const estimator *e, int u, uint32_t contract) {
  const ir_value *v = e->g->vals[u];
  if (!is_contraction(v) && !is_sum(v)) return contract;
  uint32_t P = carried(e, u, CHAIN);
  if (!P) return contract;
  return passes_on(e, u, P) ? 0 : P;
}

/* ---- a language model's loss ----
** lmloss.c runs the projection onto the classes, the cross-entropy's
** gradient and the gradient's two GEMMs a chunk of rows at a time when the
** classes are whole and the logits need no reduction: neither the logits
** nor their gradient is ever held, only a scratch of a chunk of rows. */

/* The logits of cross_entropy_grad u when u heads that pattern: a
** contraction read by u and the loss only, u read by two contractions. */
static int lm_logits_of(const ir_graph *g, int u) {
  const ir_value *v = g->vals[u];
  if (v->kind != IR_OP || v->op != IR_CROSS_ENTROPY_GRAD || v->is_output || v->nusers != 2) return -1;
  const ir_value *l = g->vals[v->args[0]];
  if (l->kind != IR_OP || !is_contraction(l) || l->is_output || l->dtype != IR_F32 || v->dtype != IR_F32) return -1;
  for (int k = 0; k < l->nusers; k++) {
    const ir_value *w = g->vals[l->users[k]];
    if (w->id != u && !(w->op == IR_CROSS_ENTROPY && w->args[0] == l->id)) return -1;
  }
  for (int k = 0; k < 2; k++) if (!is_contraction(g->vals[v->users[k]])) return -1;
  return l->id;
}

/* Whether the logits l run fused as laid out now: the classes (the last
** dim) whole, the contraction's sum whole on each device. */
static int lm_fused(const estimator *e, int l) {
  const ir_value *x = e->g->vals[l];
  if (e->lmgrad[l] < 0 || e->p->lay[l].dim[x->shape.rank - 1].n) return 0;
  sh_oplayout o;
  shard_oplayout(e->p, l, &o);
  return o.contract == 0;
}

static int64_t relaid_bytes(const estimator *e, const ir_value *x, const sh_dim *from, uint32_t partial, const sh_dim *to) {
  if (!partial && layout_same(from, to, x->shape.rank)) return 0;
  return (int64_t)(local_elems(e->p, x, from) * (double)ir_dtype_size(x->dtype));
}

static int64_t value_bytes(const estimator *e, int v) {
  const ir_value *x = e->g->vals[v];
  if (x->kind == IR_CONST || e->alias[v] || x->carry >= 0 || e->fused[v] < 0) return 0;   /* literals; read in place; updated in place */
  if (e->lmgrad[v] >= 0 && lm_fused(e, v)) return 0;                           /* run in chunks */
  if (e->lmlogits[v] >= 0 && lm_fused(e, e->lmlogits[v])) return 0;
  return (int64_t)(local_elems(e->p, x, e->p->lay[v].dim) * (double)ir_dtype_size(x->dtype));
}

/* A cross-entropy over split classes (the lowering's vocabulary-parallel
** loss): each row's max and sum of exponentials, two all-reduces of [rows]
** values over the classes' axes (its gradient reuses them). */
static double xent_stats_seconds(const estimator *e, const ir_value *v, const sh_oplayout *o) {
  const ir_value *lg = e->g->vals[v->args[0]];
  int rank = lg->shape.rank;
  sh_dim want[IR_MAXRANK];
  shard_required(e->p, o, 0, want, rank);
  if (layout_pieces(e->p, &want[rank - 1]) < 2) return 0;
  uint32_t axes = 0;
  for (int i = 0; i < want[rank - 1].n; i++) axes |= 1u << want[rank - 1].ax[i];
  double rows = local_elems(e->p, lg, want) / (double)(lg->shape.d[rank - 1] / layout_pieces(e->p, &want[rank - 1]));
  double elem = lg->dtype == IR_F64 ? 8 : 4;    /* (bf16 and f16 in f32) */
  double c = sim_coll_seconds(&e->o, RT_ALL_REDUCE, axes, layout_group_devices(e->p, axes), rows * elem);
  return 2 * (e->o.prof->launch + (isnan(c) ? 0 : c));
}

static void cost_op(const estimator *e, int u, double *compute, double *comm, int64_t *tmp) {
  const sh_plan *p = e->p;
  const ir_value *v = e->g->vals[u];
  sh_oplayout o;
  *compute = *comm = 0;
  *tmp = 0;
  shard_oplayout(p, u, &o);
  const sh_rule *r = &o.r;
  if (!r->nops) return;
  sh_dim want[IR_MAXRANK];
  double bytes = 0, q_elems = 0;
  int64_t over = 0;               /* an operand's relaid copy, dying here, that the result may take */
  int ew = (ir_opinfo_of(v->op)->flags & (OPF_UNARY | OPF_BINARY)) != 0 && v->dtype == IR_F32;
  for (int k = 0; k < v->nargs; k++) {
    const ir_value *a = e->g->vals[v->args[k]];
    if (a->kind == IR_CONST) continue;
    shard_required(p, &o, k, want, a->shape.rank);
    *comm += reshard(e, a, p->lay[a->id].dim, 0, want);
    int64_t rb = relaid_bytes(e, a, want, 0, p->lay[a->id].dim);
    *tmp += rb;
    /* what dies here: the relaid copy, or the operand itself at its last reader */
    int64_t dies = rb ? rb : !e->leaf[a->id] && !e->alias[a->id] && e->last[a->id] == u ? value_bytes(e, a->id) : 0;
    if ((ew || (v->op == IR_CROSS_ENTROPY_GRAD && k == 0)) && a->dtype == IR_F32 && ir_shape_eq(&a->shape, &v->shape) && dies > over)
      over = dies;
    bytes += local_elems(p, a, want) * (double)ir_dtype_size(a->dtype);
    if (k == 0) q_elems = local_elems(p, a, want);
  }
  if (v->op == IR_CROSS_ENTROPY) *comm += xent_stats_seconds(e, v, &o);
  shard_required(p, &o, r->nops - 1, want, v->shape.rank);
  uint32_t part = reduced_here(e, u, o.contract);
  *comm += reshard(e, v, want, part, p->lay[u].dim);
  *tmp += relaid_bytes(e, v, want, part, p->lay[u].dim);
  if (over && over == (int64_t)(local_elems(p, v, want) * (double)ir_dtype_size(v->dtype)))
    *tmp -= over;                 /* the result is written over it (runtime/plan.c): one place, not two */
  if (e->lmlogits[u] >= 0 && lm_fused(e, e->lmlogits[u])) {     /* the chunk's scratch */
    const ir_value *l = e->g->vals[e->lmlogits[u]];
    int64_t classes = l->shape.d[l->shape.rank - 1], rows = (int64_t)local_elems(p, l, p->lay[l->id].dim) / classes;
    *tmp += lower_lm_loss_chunk_rows(rows, classes, 0) * classes * (int64_t)sizeof(float);
  }
  if (e->alias[u]) return;
  if (e->fused[u] < 0) return;    /* computed inside a fused update */
  if (e->fused[u] > 0) {          /* the update: one pass over its arrays */
    *compute = e->o.prof->launch + e->fused[u] * local_elems(p, v, want) * (double)ir_dtype_size(v->dtype) / e->o.prof->bandwidth;
    return;
  }
  if (v->op == IR_ATTENTION || v->op == IR_ATTENTION_GRAD) {    /* seq and head dim are whole: bh is what splits */
    double s = (double)v->shape.d[2], dk = (double)e->g->vals[v->args[0]]->shape.d[3];
    double bh = s * dk > 0 ? q_elems / (s * dk) : 0;
    *compute = sim_attention_seconds(&e->o, bh, s, dk, v->attr.causal, v->op == IR_ATTENTION_GRAD, sim_dt_of(v->dtype));
    return;
  }
  if (is_contraction(v)) {
    /* 2 x the product of every factor's local size; batch: the pass factors every operand has */
    double flops = 2, batch = 1;
    for (int f = 0; f < r->nf; f++) {
      int64_t size = 0;
      int in_all = 1;
      for (int k = 0; k < r->nops; k++) {
        int here = 0;
        for (int i = 0; i < r->rank[k]; i++)
          if (r->map[k][i] == f) { here = 1; size = (k < v->nargs ? e->g->vals[v->args[k]] : v)->shape.d[i]; }
        in_all &= here;
      }
      if (!size) continue;
      double piece = (double)size / (double)layout_pieces(p, &o.fac[f]);
      flops *= piece;
      if (in_all && r->kind[f] == F_PASS) batch *= piece;
    }
    *compute = sim_gemm_seconds(&e->o, flops, batch, sim_dt_of(v->dtype));
    return;
  }
  bytes += local_elems(p, v, want) * (double)ir_dtype_size(v->dtype);
  *compute = e->o.prof->launch + bytes / e->o.prof->bandwidth;
}

static void push_undo(estimator *e, int v) {
  if (e->nlog == e->logcap) {
    e->logcap = e->logcap ? 2 * e->logcap : 1024;
    e->log = mem_realloc(e->log, sizeof *e->log * (size_t)e->logcap);
  }
  e->log[e->nlog++] = (est_undo){v, e->time[v], e->comm[v], e->bytes[v], e->tmp[v]};
}

static void recost(estimator *e, int u, int save) {
  if (e->stamp[u] == e->epoch) return;
  e->stamp[u] = e->epoch;
  if (save) push_undo(e, u);
  set_bytes(e, u, value_bytes(e, u));
  if (e->g->vals[u]->kind != IR_OP) return;
  double c, m;
  int64_t t;
  cost_op(e, u, &c, &m, &t);
  set_tmp(e, u, t);
  /* (seconds held to what integer picoseconds hold: a cost past them would wrap the sums) */
  c = c >= 0 && c < 1e6 ? c : c >= 1e6 ? 1e6 : 0;
  m = m >= 0 && m < 1e6 ? m : m >= 1e6 ? 1e6 : 0;
  int64_t ct = (int64_t)llround(c * PS), mt = (int64_t)llround(m * PS);
  e->t_time += ct - e->time[u];
  e->t_comm += mt - e->comm[u];
  e->time[u] = ct;
  e->comm[u] = mt;
  if (e->lmgrad[u] >= 0) recost(e, e->lmgrad[u], save);    /* whether it fuses is the logits' to say */
}

estimator *est_new(const sh_plan *p, const sim_opts *o) {
  estimator *e = mem_calloc(1, sizeof *e);
  const ir_graph *g = p->g;
  int n = g->nvals;
  e->p = p;
  e->g = g;
  e->o = *o;
  e->n = n;
  e->size = 1;
  while (e->size < n) e->size *= 2;
  e->time = mem_calloc((size_t)n + 1, sizeof *e->time);
  e->comm = mem_calloc((size_t)n + 1, sizeof *e->comm);
  e->bytes = mem_calloc((size_t)n + 1, sizeof *e->bytes);
  e->tmp = mem_calloc((size_t)n + 1, sizeof *e->tmp);
  e->last = mem_calloc((size_t)n + 1, sizeof *e->last);
  e->leaf = mem_calloc((size_t)n + 1, 1);
  e->alias = mem_calloc((size_t)n + 1, 1);
  e->fused = mem_calloc((size_t)n + 1, 1);
  lower_fused_updates(g, e->fused);
  e->lmgrad = mem_alloc(sizeof *e->lmgrad * ((size_t)n + 1));
  e->lmlogits = mem_alloc(sizeof *e->lmlogits * ((size_t)n + 1));
  for (int v = 0; v < n; v++) e->lmgrad[v] = e->lmlogits[v] = -1;
  for (int v = 0; v < n; v++) {
    int l = lm_logits_of(g, v);
    if (l >= 0) { e->lmlogits[v] = l; e->lmgrad[l] = v; }
  }
  e->stamp = mem_calloc((size_t)n + 1, sizeof *e->stamp);
  e->mx = mem_calloc(2 * (size_t)e->size, sizeof *e->mx);
  e->lz = mem_calloc(2 * (size_t)e->size, sizeof *e->lz);
  /* lifetimes: to the last reader, through values read in place */
  for (int v = 0; v < n; v++) {
    const ir_value *x = g->vals[v];
    e->leaf[v] = x->kind != IR_OP;
    e->alias[v] = x->op == IR_RESHAPE || x->op == IR_BROADCAST;
    e->last[v] = v;
    for (int k = 0; k < x->nusers; k++) if (x->users[k] > e->last[v]) e->last[v] = x->users[k];
    if (x->is_output) e->last[v] = n - 1;
  }
  for (int v = n - 1; v >= 0; v--) {
    if (!e->alias[v]) continue;
    int a = g->vals[v]->args[0];
    if (e->last[v] > e->last[a]) e->last[a] = e->last[v];
  }
  e->epoch = 1;
  for (int v = 0; v < n; v++) recost(e, v, 0);
  return e;
}

void est_free(estimator *e) {
  if (!e) return;
  free(e->time);
  free(e->comm);
  free(e->bytes);
  free(e->tmp);
  free(e->last);
  free(e->leaf);
  free(e->alias);
  free(e->fused);
  free(e->lmgrad);
  free(e->lmlogits);
  free(e->stamp);
  free(e->mx);
  free(e->lz);
  free(e->log);
  free(e);
}

/* Only contractions and sums carry partial sums: a change anywhere else
** changes no chain (its direct users are costed anyway). */
static int in_chain(const ir_value *v) { return is_contraction(v) || is_sum(v); }

/* What x's partial sum or reduction may change: the sums above it (up
** the chain), each with its operands, which may pass their sums on or not. */
static void recost_chain(estimator *e, int x, int depth) {
  const ir_value *v = e->g->vals[x];
  if (is_sum(v))
    for (int k = 0; k < v->nargs; k++) recost(e, v->args[k], 1);
  if (depth == 0) return;
  for (int k = 0; k < v->nusers; k++) {
    int w = v->users[k];
    if (!is_sum(e->g->vals[w])) continue;
    recost(e, w, 1);
    recost_chain(e, w, depth - 1);
  }
}

void est_update(estimator *e, sh_mark m) {
  const sh_plan *p = e->p;
  if (++e->epoch == 0) { memset(e->stamp, 0, sizeof *e->stamp * (size_t)(e->n + 1)); e->epoch = 1; }
  for (int i = m.nlog; i < p->nlog; i++) {
    int v = p->log[i].value;
    const ir_value *x = e->g->vals[v];
    recost(e, v, 1);
    if (in_chain(x)) recost_chain(e, v, CHAIN);
    for (int k = 0; k < x->nusers; k++) {
      recost(e, x->users[k], 1);
      if (in_chain(e->g->vals[x->users[k]])) recost_chain(e, x->users[k], CHAIN);
    }
  }
}

est_mark est_mark_now(const estimator *e) { return (est_mark){e->nlog}; }

void est_rollback(estimator *e, est_mark m) {
  while (e->nlog > m.nlog) {
    est_undo *x = &e->log[--e->nlog];
    e->t_time += x->time - e->time[x->v];
    e->t_comm += x->comm - e->comm[x->v];
    e->time[x->v] = x->time;
    e->comm[x->v] = x->comm;
    set_bytes(e, x->v, x->bytes);
    set_tmp(e, x->v, x->tmp);
  }
}

void est_get(const estimator *e, est_cost *c) {
  c->compute = (double)e->t_time / PS;
  c->communication = (double)e->t_comm / PS;
  c->seconds = c->compute + c->communication;
  c->leaves = (double)e->t_leaves;
  c->memory = c->leaves + (double)(e->mx[1] > 0 ? e->mx[1] : 0);
}

double est_op_seconds(const estimator *e, int v) { return (double)(e->time[v] + e->comm[v]) / PS; }

/*
** pipeline.c: a pipelined plan's program, made from its SPMD program.
**
** The plan splits the batch over a virtual axis, the microbatches: the
** lowering makes one device's program as if each microbatch had a device
** of its own, and here the program becomes what one device of each stage
** runs. Every instruction that reads a microbatch's piece (the forward
** and backward passes) is repeated for each microbatch on buffers of its
** own; a sum over the microbatch axis (a gradient's, the loss's) becomes
** an accumulation into one buffer, reduced over the other axes of its
** collective once, after the last microbatch; what reads no piece runs
** once, before (weights' transposes) or after (the optimizer's updates).
** Each stage keeps the instructions of the values it computes
** (shard_stages), in the order of the schedule (GPipe: every forward, then
** every backward; 1F1B: stage s runs stages - s - 1 forwards ahead, then
** one forward and one backward in turn), and a buffer one stage makes and
** another reads travels by a send placed after its last write and a
** receive before its first read. The program lists stage 0's
** instructions, then stage 1's, each marked with its stage; a device runs
** its stage's (rt_prog_keep_stage). The schedules' orders are
** interp/lower/pipe_sched.c's.
*/
#include "interp/lower/pipe_int.h"
#include "runtime/mesh.h"
#include "util/mem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rt_instr *push(ilist *l, const rt_instr *x, int64_t key) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 64;
    l->a = mem_realloc(l->a, sizeof *l->a * (size_t)l->cap);
    l->key = mem_realloc(l->key, sizeof *l->key * (size_t)l->cap);
  }
  l->a[l->n] = *x;
  l->key[l->n] = key;
  return &l->a[l->n++];
}

/* the order keys: instruction i before the microbatches, in microbatch j's
   forward (back 0) or backward pass, after them */
static int64_t key_pre(const pctx *c, int i) { (void)c; return 2 * (int64_t)i; }
static int64_t key_micro(const pctx *c, int i, int j, int back) { return 2 * ((int64_t)(c->n0 + 1) * (1 + 2 * j + back) + i); }
static int64_t key_post(const pctx *c, int i) { return 2 * ((int64_t)(c->n0 + 1) * (1 + 2 * (int64_t)c->M) + i); }


static int group_has(const rt_prog *p, int g, int axis) {
  if (g < 0 || g >= p->ngroups || axis < 0) return 0;
  for (int k = 0; k < p->groups[g].naxes; k++) if (p->groups[g].axes[k] == axis) return 1;
  return 0;
}

/* A buffer of b's shape and layout, named b's name and suffix. */
static int buf_like(rt_prog *p, int b, const char *suffix) {
  rt_buf x = p->bufs[b];
  char name[256];
  snprintf(name, sizeof name, "%s%s", x.name, suffix);
  int y = rt_prog_buf(p, name, x.dtype, x.rank, x.shape, RT_BUF_TEMP);
  memcpy(p->bufs[y].global_shape, x.global_shape, sizeof x.global_shape);
  memcpy(p->bufs[y].dim_group, x.dim_group, sizeof x.dim_group);
  return y;
}

/* ---- what repeats for each microbatch ---- */


/* One pass in program order with each buffer's state: the same in every
   microbatch (0), one per microbatch (1), or their sum (2). A buffer that
   is ever one per microbatch has every write of it repeated too (a bucket
   zeroed before the pieces go in), hence the passes until nothing moves. */
static void classify(pctx *c) {
  rt_prog *p = c->p;
  char *ever = mem_calloc((size_t)c->nb0 + 1, 1), *state = mem_alloc((size_t)c->nb0 + 1);
  for (int b = 0; b < c->nb0; b++) {
    const rt_buf *x = &p->bufs[b];
    for (int d = 0; d < x->rank; d++)
      if (group_has(p, x->dim_group[d], c->micro) && x->kind == RT_BUF_INPUT) ever[b] = 1;
  }
  for (int i = 0; i < c->n0 && !c->failed; i++) {
    const rt_instr *x = &c->ins[i];
    if (!group_has(p, x->group, c->micro)) continue;
    /* a sum over the microbatches, or each microbatch's rows put together
       (a parameter's gradient whose rows the microbatches took apart) */
    if (x->op == RT_ALL_REDUCE || (x->op == RT_ALL_GATHER && p->groups[x->group].naxes == 1)) { c->acc[i] = 1; c->accout[x->out] = 1; }
    else if (x->op != RT_SHARD_SLICE)
      pipe_fail(c, i, "would move values between microbatches (a collective over the microbatch axis other than a sum); "
                 "split the batch over that axis only through the pipeline tactic");
  }
  /* a ring's receive (ring attention) is one per microbatch when its send is */
  int64_t ntag = 1;
  for (int i = 0; i < c->n0; i++) if (c->ins[i].op == RT_SEND && c->ins[i].off >= ntag) ntag = c->ins[i].off + 1;
  char *sent = mem_alloc((size_t)ntag), *vread = mem_alloc((size_t)c->nb0 + 1), *pread = mem_alloc((size_t)c->nb0 + 1);
  for (int changed = 1; changed && !c->failed;) {   /* ever only grows: to the fixed point */
    changed = 0;
    memset(sent, 0, (size_t)ntag);
    memset(vread, 0, (size_t)c->nb0 + 1);
    memset(pread, 0, (size_t)c->nb0 + 1);
    for (int b = 0; b < c->nb0; b++) state[b] = p->bufs[b].kind == RT_BUF_INPUT && ever[b];
    for (int i = 0; i < c->n0 && !c->failed; i++) {
      const rt_instr *x = &c->ins[i];
      if (c->acc[i]) {
        if (state[x->in[0]] != 1) { pipe_fail(c, i, "is summed over the microbatches but is the same in each"); break; }
        state[x->out] = 2;
        continue;
      }
      int v = ever[x->out] || (x->op == RT_SHARD_SLICE && group_has(p, x->group, c->micro)), after = 0;
      if (x->op == RT_RECV && x->off >= 0 && x->off < ntag) v |= sent[x->off];
      for (int k = 0; k < RT_MAXIN; k++) {
        if (x->in[k] < 0) continue;
        v |= state[x->in[k]] == 1;
        after |= state[x->in[k]] == 2;
      }
      if (x->out >= 0 && x->op != RT_SEND && pipe_reads(x, x->out)) {   /* it keeps (or adds to) the rest of its result */
        v |= state[x->out] == 1;
        after |= state[x->out] == 2;
      }
      /* what writes over a value an earlier microbatch's work reads (an
         update in place, moved up to its gradient), or that work after the
         last microbatch reads (a product a GEMM adds into a sum made there),
         waits for them all */
      if (!v) {
        after |= x->out >= 0 && x->op != RT_SEND && (vread[x->out] || pread[x->out]);
        for (int k = 0; k < RT_MAXIN; k++) if (rt_instr_writes_in(x, k) && (vread[x->in[k]] || pread[x->in[k]])) after = 1;
      }
      if (v && after) { pipe_fail(c, i, "needs a sum over every microbatch before a microbatch's own work (a statistic of the whole "
                                   "batch, as batch norm takes): microbatches cannot run one after another through it"); break; }
      c->vary[i] = (char)v;
      c->post[i] = (char)after;
      for (int k = 0; k < RT_MAXIN && v; k++) if (x->in[k] >= 0) vread[x->in[k]] = 1;
      for (int k = 0; k < RT_MAXIN && !v && after; k++) if (x->in[k] >= 0) pread[x->in[k]] = 1;
      if (x->op == RT_SEND && x->off >= 0 && x->off < ntag) sent[x->off] = (char)v;
      char st = v ? 1 : after ? 2 : 0;
      state[x->out] = st;
      for (int k = 0; k < RT_MAXIN; k++) if (rt_instr_writes_in(x, k)) state[x->in[k]] = st;
      if (v && !ever[x->out]) ever[x->out] = changed = 1;
      for (int k = 0; k < RT_MAXIN; k++) if (v && rt_instr_writes_in(x, k) && !ever[x->in[k]]) ever[x->in[k]] = changed = 1;
    }
  }
  memcpy(c->vbuf, ever, (size_t)c->nb0);
  free(vread);
  free(pread);
  free(sent);
  free(ever);
  free(state);
  for (int b = 0; b < c->nb0 && !c->failed && c->M > 1; b++)
    if (c->vbuf[b] && p->bufs[b].kind == RT_BUF_OUTPUT) {
      int w = -1;
      for (int i = 0; i < c->n0; i++) if (rt_instr_writes(&c->ins[i], b)) w = i;
      pipe_fail(c, w, "is returned for each microbatch; a pipelined step returns the loss and the new parameters only");
    }
  /* the backward pass: what a backward value made, and what reads its
     work (a loss the gradient's pass computes on the way, folded into it) */
  char *late = mem_calloc((size_t)c->nb0 + 1, 1);
  for (int i = 0; i < c->n0; i++) {
    const rt_instr *x = &c->ins[i];
    int s = x->src;
    c->bwd[i] = s >= 0 ? !c->fwd[s] : 1;
    for (int k = 0; k < RT_MAXIN; k++) if (x->in[k] >= 0 && late[x->in[k]] && !rt_instr_writes_in(x, k)) c->bwd[i] = 1;
    if (!c->vary[i] && !c->acc[i]) continue;
    late[x->out] = c->bwd[i];
    for (int k = 0; k < RT_MAXIN; k++) if (rt_instr_writes_in(x, k)) late[x->in[k]] = c->bwd[i];
  }
  free(late);
}

/* Each varying buffer's copies; a varying input grows to hold every
   microbatch's rows (the microbatch axis the last of its dim's group). */
static void make_copies(pctx *c) {
  rt_prog *p = c->p;
  c->copy = mem_calloc((size_t)c->nb0 + 1, sizeof *c->copy);
  for (int b = 0; b < c->nb0 && !c->failed; b++) {
    if (!c->vbuf[b]) continue;
    int *cp = c->copy[b] = mem_alloc(sizeof(int) * (size_t)c->M);
    int input = p->bufs[b].kind == RT_BUF_INPUT;
    for (int j = 0; j < c->M; j++) {
      if (j == 0 && !input && !c->accout[b]) { cp[j] = b; continue; }
      char at[16];
      snprintf(at, sizeof at, "@%d", j);
      cp[j] = buf_like(p, b, at);
    }
    if (!input) continue;
    rt_buf *x = &p->bufs[b];
    for (int d = 0; d < x->rank; d++) {
      int g = x->dim_group[d];
      if (!group_has(p, g, c->micro)) continue;
      if (p->groups[g].axes[p->groups[g].naxes - 1] != c->micro) {
        diag_error(c->d, c->plan->pipe.at, "pipeline: input '%s' is split over the microbatches before the other axes of its dim %d; "
                   "schedule the pipeline after the tactics that split the batch", x->name, d);
        c->failed = 1;
        break;
      }
      x->shape[d] *= c->M;
      x->nelem *= c->M;
      x->dim_group[d] = c->rest[g];
    }
  }
}

/* ---- one stage's list ---- */

static int mapped(pctx *c, int b, int j) { return b >= 0 && b < c->nb0 && c->copy[b] ? c->copy[b][j] : b; }

/* A block copy: rows [k, k + n) of in viewed [outer, m, inner] into rows
   [off, off + n) of out viewed [outer, n2, inner] (RT_BLOCK_COPY). */
static rt_instr block_copy(int in, int out, int src, int64_t outer, int64_t m, int64_t k, int64_t n, int64_t n2, int64_t off,
                           int64_t inner) {
  rt_instr y = rt_instr_new(RT_BLOCK_COPY, out);
  y.in[0] = in;
  y.nin = 1;
  y.src = src;
  y.outer = outer; y.m = m; y.k = k; y.n = n; y.n2 = n2; y.off = off; y.inner = inner;
  return y;
}

/* Microbatch j's rows of varying input b, made before their first reader. */
static void slice_input(pctx *c, ilist *l, char *made, int b, int j, int64_t key) {
  rt_prog *p = c->p;
  int out = c->copy[b][j];
  if (made[out]) return;
  made[out] = 1;
  const rt_buf *x = &p->bufs[b];
  int d = 0;
  while (d < x->rank && x->shape[d] == p->bufs[out].shape[d]) d++;
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < d; k++) outer *= x->shape[k];
  for (int k = d + 1; k < x->rank; k++) inner *= x->shape[k];
  int64_t n = d < x->rank ? p->bufs[out].shape[d] : 1;
  rt_instr y = block_copy(b, out, -1, outer, n * c->M, n * j, n, n, 0, inner);
  push(l, &y, key - 1);
}

/* Instruction i for microbatch j on list l. */
static void emit_micro(pctx *c, ilist *l, char *made, int i, int j) {
  const rt_instr *x = &c->ins[i];
  rt_instr y = *x;
  int64_t key = key_micro(c, i, j, c->bwd[i]);
  for (int k = 0; k < RT_MAXIN; k++) {
    int b = x->in[k];
    if (b >= 0 && c->vbuf[b] && c->p->bufs[b].kind == RT_BUF_INPUT) slice_input(c, l, made, b, j, key);
    y.in[k] = mapped(c, b, j);
  }
  y.out = mapped(c, x->out, j);
  if (c->acc[i] && x->op == RT_ALL_GATHER) {   /* microbatch j's rows into their place */
    y = block_copy(mapped(c, x->in[0], j), c->sum[i], x->src, x->outer, x->n, 0, x->n, x->n * c->M, x->n * j, x->inner);
  } else if (c->acc[i]) {             /* the sum: the first copies, the rest add (or keep the larger) */
    int t = c->sum[i];
    y = rt_instr_new(RT_COPY, t);
    y.src = x->src;
    y.in[0] = mapped(c, x->in[0], j);
    y.nin = 1;
    if (j > 0) {
      y.op = RT_EW;
      y.fn = (uint8_t)(x->fn == RT_RMAX ? RT_MAX : x->fn == RT_RMIN ? RT_MIN : RT_ADD);
      y.nin = 2;
      y.in[1] = y.in[0];
      y.in[0] = t;
      y.rank = 1;
      y.shape[0] = c->p->bufs[t].nelem;
      y.stride[0][0] = y.stride[1][0] = 1;
    }
  } else if (x->op == RT_SHARD_SLICE && group_has(c->p, x->group, c->micro)) {
    const rt_group *g = &c->p->groups[x->group];
    if (g->naxes != 1) { pipe_fail(c, i, "is cut into microbatches together with another axis; not supported yet"); return; }
    int64_t piece = x->n / c->M;
    y.op = RT_BLOCK_COPY;
    y.group = -1;
    y.m = x->n;
    y.k = piece * j;
    y.n = piece;
    y.n2 = piece;
    y.off = 0;
  }
  push(l, &y, key);
}

/* Which of its stage's parts each varying instruction belongs to: its
   value's; else (work no part owns: a gradient's accumulation, a value
   the parts share) the first of its readers' in the schedule, else after
   its operands' makers. */
static void chunks_of(pctx *c) {
  int n0 = c->n0, nb = c->p->nbufs, P = c->P;
  char *known = mem_calloc((size_t)n0 + 1, 1);
  int *rd = mem_alloc(sizeof(int) * (size_t)(nb + 1)), *wr = mem_alloc(sizeof(int) * (size_t)(nb + 1));
  for (int i = 0; i < n0; i++) {
    int s = c->ins[i].src;
    c->chunk[i] = 0;
    if ((c->vary[i] || c->acc[i]) && s >= 0 && c->part[s] >= 0) { c->chunk[i] = c->part[s] / P; known[i] = 1; }
  }
  for (int b = 0; b < nb; b++) rd[b] = wr[b] = -1;
  for (int i = n0 - 1; i >= 0; i--) {     /* the readers': forward parts run in order, backward ones in reverse */
    const rt_instr *x = &c->ins[i];
    if (!c->vary[i] && !c->acc[i]) continue;
    if (!known[i] && x->out >= 0 && rd[x->out] >= 0) { c->chunk[i] = rd[x->out]; known[i] = 1; }
    if (!known[i]) continue;
    for (int k = 0; k < RT_MAXIN; k++) {
      int b = x->in[k];
      if (b < 0) continue;
      if (rd[b] < 0 || (c->bwd[i] ? c->chunk[i] > rd[b] : c->chunk[i] < rd[b])) rd[b] = c->chunk[i];
    }
  }
  for (int i = 0; i < n0; i++) {           /* else after its operands' makers */
    const rt_instr *x = &c->ins[i];
    if (!c->vary[i] && !c->acc[i]) continue;
    if (!known[i]) {
      int ch = -1;
      for (int k = 0; k < RT_MAXIN; k++) {
        int b = x->in[k];
        if (b >= 0 && wr[b] >= 0 && (ch < 0 || (c->bwd[i] ? wr[b] < ch : wr[b] > ch))) ch = wr[b];
      }
      c->chunk[i] = ch >= 0 ? ch : 0;
    }
    if (x->out >= 0) wr[x->out] = c->chunk[i];
  }
  free(known);
  free(rd);
  free(wr);
}

static void build_stage(pctx *c, int s) {
  ilist *l = &c->list[s];
  char *made = mem_calloc((size_t)c->p->nbufs + 1, 1);
  uint64_t bit = (uint64_t)1 << s;
  for (int i = 0; i < c->n0; i++)
    if (!c->vary[i] && !c->acc[i] && !c->post[i] && (c->imask[i] & bit)) push(l, &c->ins[i], key_pre(c, i));
  slot *sl = mem_alloc(sizeof *sl * (size_t)(3 * c->M * c->V + 1));
  int nslot = pipe_schedule(c, s, sl);
  /* the stage's varying instructions by pass and part, in program order (a slot runs one list) */
  int nlist = 3 * c->V, *start = mem_calloc((size_t)nlist + 2, sizeof(int)), *at = mem_alloc(sizeof(int) * ((size_t)c->n0 + 1));
  for (int i = 0; i < c->n0; i++)
    if ((c->vary[i] || c->acc[i]) && (c->imask[i] & bit)) start[pipe_pass_of(c, i) * c->V + c->chunk[i] + 2]++;
  for (int k = 0; k < nlist; k++) start[k + 2] += start[k + 1];
  for (int i = 0; i < c->n0; i++)
    if ((c->vary[i] || c->acc[i]) && (c->imask[i] & bit)) at[start[pipe_pass_of(c, i) * c->V + c->chunk[i] + 1]++] = i;
  for (int k = 0; k < nslot; k++) {
    int list = sl[k].back * c->V + sl[k].chunk;
    for (int n = start[list]; n < start[list + 1]; n++) emit_micro(c, l, made, at[n], sl[k].j);
  }
  free(start);
  free(at);
  free(sl);
  for (int i = 0; i < c->n0; i++) {
    if (!(c->imask[i] & bit)) continue;
    if (c->acc[i] && c->sum[i] != c->ins[i].out) {   /* the microbatches' sum reduced over the other axes */
      rt_instr y = c->ins[i];
      y.in[0] = c->sum[i];
      y.group = c->rest[c->ins[i].group];
      push(l, &y, key_post(c, i));
    } else if (c->post[i]) {
      push(l, &c->ins[i], key_post(c, i));
    }
  }
  free(made);
}

/* ---- transfers between stages ---- */

typedef struct xfer { int b, from, to, at_from, at_to; int64_t tag; } xfer;

static rt_instr p2p(rt_op op, int b, int group, int peer, int64_t tag) {
  rt_instr y = rt_instr_new(op, b);
  if (op == RT_SEND) { y.in[0] = b; y.nin = 1; }
  y.group = group;
  y.n2 = peer;
  y.off = tag;
  return y;
}


/* The buffers x writes: its out (not a send's) and what it writes in place. */
static int written(const rt_instr *x, int *w) {
  int n = 0;
  if (x->out >= 0 && x->op != RT_SEND) w[n++] = x->out;
  for (int k = 0; k < RT_MAXIN; k++) if (rt_instr_writes_in(x, k)) w[n++] = x->in[k];
  return n;
}

/* a write of a buffer somewhere: which stage, where in its list, its key */
typedef struct wrec { int b, s, e; int64_t key; } wrec;

static int by_buf_key(const void *a, const void *b) {
  const wrec *x = a, *y = b;
  if (x->b != y->b) return x->b < y->b ? -1 : 1;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->s - y->s;
}

static int by_receiver(const void *a, const void *b) {
  const xfer *x = a, *y = b;
  if (x->to != y->to) return x->to - y->to;
  if (x->at_to != y->at_to) return x->at_to - y->at_to;
  return x->tag < y->tag ? -1 : x->tag > y->tag;
}

static int by_sender(const void *a, const void *b) {
  const xfer *x = a, *y = b;
  if (x->from != y->from) return x->from - y->from;
  if (x->at_from != y->at_from) return x->at_from - y->at_from;
  return x->tag < y->tag ? -1 : x->tag > y->tag;
}

/* Each read of a buffer on a stage needs the write before it in the order
   of one device (its key): when the stage's own copy is another write, the
   one it needs comes from a stage that made it, sent after it was made. */
static void connect(pctx *c, int loss) {
  rt_prog *p = c->p;
  int nb = p->nbufs, P = c->P;
  int axis = c->plan->pipe.axis, group = rt_prog_group(p, 1, &axis);
  wrec *w = NULL;
  int nw = 0, cap = 0, wb[RT_MAXIN + 1];
  for (int s = 0; s < P; s++)
    for (int e = 0; e < c->list[s].n; e++) {
      int n = written(&c->list[s].a[e], wb);
      for (int k = 0; k < n; k++) {
        if (nw == cap) { cap = cap ? 2 * cap : 256; w = mem_realloc(w, sizeof *w * (size_t)cap); }
        w[nw++] = (wrec){wb[k], s, e, c->list[s].key[e]};
      }
    }
  if (nw) qsort(w, (size_t)nw, sizeof *w, by_buf_key);
  int *first = mem_alloc(sizeof(int) * (size_t)(nb + 1));   /* buffer -> its first record in w */
  for (int b = 0, k = 0; b <= nb; b++) { while (k < nw && w[k].b < b) k++; first[b] = k; }
  xfer *xs = NULL;
  int nx = 0, xcap = 0;
  int64_t tag = 0, *held = mem_alloc(sizeof *held * (size_t)(nb + 1));
  const int64_t BOUND = -1, NONE = -2;
  for (int s = 0; s < P && !c->failed; s++) {
    for (int b = 0; b < nb; b++) held[b] = p->bufs[b].kind == RT_BUF_INPUT ? BOUND : NONE;
    int n = c->list[s].n;
    for (int e = 0; e <= n && !c->failed; e++) {
      const rt_instr *x = e < n ? &c->list[s].a[e] : NULL;
      int64_t key = e < n ? c->list[s].key[e] : INT64_MAX;
      int need[RT_MAXIN + 1], own[RT_MAXIN + 1], nn = 0;   /* own: what it adds to (none before: zeros) */
      if (x) {
        for (int k = 0; k < RT_MAXIN; k++)
          if (x->in[k] >= 0 && pipe_reads(x, x->in[k])) { own[nn] = rt_instr_writes_in(x, k); need[nn++] = x->in[k]; }
        if (x->out >= 0 && x->op != RT_SEND && pipe_reads(x, x->out)) { own[nn] = 1; need[nn++] = x->out; }
      } else if (loss >= 0) {
        own[nn] = 0;
        need[nn++] = loss;                /* every stage reports the loss */
      }
      for (int q = 0; q < nn; q++) {
        int b = need[q], lo = first[b], hi = first[b + 1], at = -1;
        for (int k = lo; k < hi && w[k].key < key; k++) at = k;   /* the last write before */
        int64_t want = at >= 0 ? w[at].key : BOUND;
        if (held[b] == want || (at < 0 && own[q] && p->bufs[b].kind != RT_BUF_INPUT)) continue;
        if (at < 0) {
          char what[300];
          snprintf(what, sizeof what, "internal error: stage %d reads buffer '%s' before any stage makes it", s, p->bufs[b].name);
          pipe_fail(c, -1, what);
          break;
        }
        int from = at;                    /* a stage that made it (the first, for a write many stages made alike) */
        while (from > lo && w[from - 1].key == want) from--;
        for (int k = from; k <= at; k++) if (w[k].s == s) from = k;
        if (w[from].s == s) {             /* its own write, but the schedule runs it after this read */
          char what[400];
          snprintf(what, sizeof what, "stage %d would read '%s' before its own work writes it there: the interleaved schedule runs "
                   "the parts of a stage out of the program's order, and two of this stage's parts share it (a gradient both add to); "
                   "use order = \"1f1b\"", s, p->bufs[b].name);
          pipe_fail(c, -1, what);
          break;
        }
        if (xcap == nx) { xcap = xcap ? 2 * xcap : 32; xs = mem_realloc(xs, sizeof *xs * (size_t)xcap); }
        xs[nx++] = (xfer){b, w[from].s, s, w[from].e, e, tag++};
        held[b] = want;
      }
      if (x) {
        int m = written(x, wb);
        for (int k = 0; k < m; k++) held[wb[k]] = key;
      }
    }
  }
  /* the lists again, each transfer in place: a send after the write, a receive before the read */
  xfer *rx = mem_alloc(sizeof *rx * (size_t)(nx + 1)), *tx = mem_alloc(sizeof *tx * (size_t)(nx + 1));
  if (nx) {
    memcpy(rx, xs, sizeof *xs * (size_t)nx);
    memcpy(tx, xs, sizeof *xs * (size_t)nx);
    qsort(rx, (size_t)nx, sizeof *rx, by_receiver);
    qsort(tx, (size_t)nx, sizeof *tx, by_sender);
  }
  int r = 0, t = 0;
  for (int s = 0; s < P && !c->failed; s++) {
    ilist out = {0};
    const ilist *l = &c->list[s];
    for (int e = 0; e <= l->n; e++) {
      for (; r < nx && rx[r].to == s && rx[r].at_to == e; r++) {
        rt_instr y = p2p(RT_RECV, rx[r].b, group, rx[r].from, rx[r].tag);
        push(&out, &y, 0);
      }
      if (e == l->n) break;
      push(&out, &l->a[e], l->key[e]);
      for (; t < nx && tx[t].from == s && tx[t].at_from == e; t++) {
        rt_instr y = p2p(RT_SEND, tx[t].b, group, tx[t].to, tx[t].tag);
        push(&out, &y, 0);
      }
    }
    free(c->list[s].a);
    free(c->list[s].key);
    c->list[s] = out;
  }
  free(rx);
  free(tx);
  free(xs);
  free(held);
  free(first);
  free(w);
}

/* ---- the program ---- */

/* The program without the microbatch axis: it is the mesh's last (the
   pipeline tactic added it), and leaves every group. */
static void drop_micro_axis(pctx *c, uint32_t *partial, int nvals) {
  rt_prog *p = c->p;
  char *had = mem_calloc((size_t)p->ngroups + 1, 1);   /* group -> it held the microbatch axis */
  for (int g = 0; g < p->ngroups; g++) {
    rt_group *gr = &p->groups[g];
    int k = 0;
    for (int a = 0; a < gr->naxes; a++) if (gr->axes[a] != c->micro) gr->axes[k++] = gr->axes[a];
    had[g] = k < gr->naxes;
    gr->naxes = k;
  }
  p->mesh_rank = c->micro;
  for (int v = 0; v < nvals; v++) partial[v] &= ~(1u << c->micro);
  /* a microbatch's buffer: its whole is one microbatch's, over the other axes of its dims' groups */
  for (int b = 0; b < p->nbufs; b++)
    for (int d = 0; d < p->bufs[b].rank; d++) {
      rt_buf *x = &p->bufs[b];
      int g = x->dim_group[d];
      if (g < 0 || !had[g]) continue;
      x->global_shape[d] = x->shape[d] * rt_mesh_group_size(p, g);
      if (p->groups[g].naxes == 0) x->dim_group[d] = -1;
    }
  /* groups that became one ({batch, micro} and {batch}) become one group */
  int *to = mem_alloc(sizeof(int) * (size_t)(p->ngroups + 1)), n = 0;
  for (int g = 0; g < p->ngroups; g++) {
    to[g] = -1;
    for (int h = 0; h < n && to[g] < 0; h++)
      if (p->groups[h].naxes == p->groups[g].naxes && !memcmp(p->groups[h].axes, p->groups[g].axes, sizeof(int) * (size_t)p->groups[g].naxes))
        to[g] = h;
    if (to[g] < 0) { p->groups[n] = p->groups[g]; to[g] = n++; }
  }
  p->ngroups = n;
  for (int i = 0; i < p->ninstrs; i++) if (p->instrs[i].group >= 0) p->instrs[i].group = to[p->instrs[i].group];
  for (int b = 0; b < p->nbufs; b++)
    for (int d = 0; d < p->bufs[b].rank; d++) if (p->bufs[b].dim_group[d] >= 0) p->bufs[b].dim_group[d] = to[p->bufs[b].dim_group[d]];
  free(to);
  free(had);
}

/* Group g without the microbatch axis (-1: no axis left). */
static int without_micro(rt_prog *p, int g, int micro) {
  int axes[RT_MAXRANK], k = 0;
  for (int a = 0; a < p->groups[g].naxes; a++) if (p->groups[g].axes[a] != micro) axes[k++] = p->groups[g].axes[a];
  return k ? rt_prog_group(p, k, axes) : -1;
}

/* Each instruction's stages: its value's, else (a collective, a copy the
   lowering made) those of its operand's last writer, else every stage. */
static void stage_masks(pctx *c) {
  uint64_t all = c->P >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << c->P) - 1;
  uint64_t *wmask = mem_calloc((size_t)c->p->nbufs + 1, sizeof *wmask);   /* buffer -> the stages of its last writer so far */
  c->imask = mem_realloc(c->imask, sizeof *c->imask * (size_t)(c->n0 + 1));
  for (int i = 0; i < c->n0; i++) {
    const rt_instr *x = &c->ins[i];
    uint64_t m = x->src >= 0 ? c->vmask[x->src] : (x->in[0] >= 0 && wmask[x->in[0]] ? wmask[x->in[0]] : all);
    c->imask[i] = m;
    if (x->out >= 0) wmask[x->out] = m;
  }
  free(wmask);
}

/* An add of operands of its own shape and type, read in order. */
static int plain_add(const rt_prog *p, const rt_instr *x) {
  if (x->op != RT_EW || x->fn != RT_ADD || x->nin != 2 || x->out < 0) return 0;
  int64_t n = p->bufs[x->out].nelem;
  for (int k = 0; k < 2; k++) {
    const rt_buf *b = &p->bufs[x->in[k]];
    if (b->nelem != n || b->dtype != p->bufs[x->out].dtype) return 0;
    int64_t step = 1;
    for (int d = x->rank - 1; d >= 0; d--) {
      if (x->shape[d] > 1 && x->stride[k][d] != step) return 0;
      step *= x->shape[d];
    }
  }
  return 1;
}

/* The sum of in over the microbatch axis alone, into out. */
static rt_instr micro_sum(rt_prog *p, int micro, int in, int out) {
  rt_instr y = rt_instr_new(RT_ALL_REDUCE, out);
  y.nin = 1;
  y.in[0] = in;
  y.group = rt_prog_group(p, 1, &micro);
  y.fn = RT_RSUM;
  y.outer = 1; y.n = p->bufs[out].nelem; y.inner = 1;
  y.rank = 1; y.shape[0] = y.n;
  return y;
}

enum { SUM_KEEP, SUM_ADD, SUM_SCATTER, SUM_AFTER };

/* The program's writers and readers, for sum_kind: for each instruction
   the last writer before it of its first two operands (-1: none), and for
   each buffer its last writer so far and how many instructions read it. */
typedef struct flow { int *w_in, *lastw, *nread; } flow;

/* Instruction i written down in f: its buffers' last writer is i. */
static void flow_step(const pctx *c, flow *f, int i) {
  const rt_instr *x = &c->ins[i];
  if (x->out >= 0) f->lastw[x->out] = i;
  for (int k = 0; k < RT_MAXIN; k++) if (x->in[k] >= 0 && rt_instr_writes_in(x, k)) f->lastw[x->in[k]] = i;
}

static void flow_make(const pctx *c, flow *f) {
  int n = c->n0, nb = c->p->nbufs;
  f->w_in = mem_alloc(sizeof(int) * (size_t)(2 * n + 1));
  f->lastw = mem_alloc(sizeof(int) * (size_t)(nb + 1));
  f->nread = mem_calloc((size_t)nb + 1, sizeof(int));
  for (int b = 0; b < nb; b++) f->lastw[b] = -1;
  for (int i = 0; i < n; i++) {
    const rt_instr *x = &c->ins[i];
    for (int q = 0; q < 2; q++) f->w_in[2 * i + q] = x->in[q] >= 0 ? f->lastw[x->in[q]] : -1;
    int seen[RT_MAXIN + 1], ns = 0;     /* each buffer it reads, once */
    for (int k = 0; k <= RT_MAXIN; k++) {
      int b = k < RT_MAXIN ? x->in[k] : x->out, dup = 0;
      for (int j = 0; j < ns; j++) dup |= seen[j] == b;
      if (b >= 0 && !dup && pipe_reads(x, b)) { seen[ns++] = b; f->nread[b]++; }
    }
    flow_step(c, f, i);
  }
  for (int b = 0; b < nb; b++) f->lastw[b] = -1;   /* (again, as sum_kind walks the program) */
}

static void flow_free(flow *f) { free(f->w_in); free(f->lastw); free(f->nread); }

/* What a sum over the microbatches (instruction i, the instructions before
   it written down in f) may be moved across, with k, the last writer of its
   operand: SUM_ADD, an add of two parts made on different stages;
   SUM_SCATTER, a reduce-scatter over other axes; SUM_KEEP, neither. The
   operand must be a temporary only i reads. */
static int sum_kind(const pctx *c, const flow *f, int i, int *kp) {
  const rt_prog *p = c->p;
  const rt_instr *x = &c->ins[i];
  if (x->op != RT_ALL_REDUCE || x->fn != RT_RSUM || !group_has(p, x->group, c->micro)) return SUM_KEEP;
  int t = x->in[0], k = f->lastw[t];
  if (k < 0 || p->bufs[t].kind != RT_BUF_TEMP || f->nread[t] - pipe_reads(&c->ins[k], t) != 1) return SUM_KEEP;
  *kp = k;
  const rt_instr *y = &c->ins[k];
  if (y->op == RT_REDUCE_SCATTER && !group_has(p, y->group, c->micro) && p->groups[x->group].naxes == 1) return SUM_SCATTER;
  if (!plain_add(p, y)) return SUM_KEEP;
  int w0 = f->w_in[2 * k], w1 = f->w_in[2 * k + 1];
  uint64_t m0 = w0 >= 0 ? c->imask[w0] : 0, m1 = w1 >= 0 ? c->imask[w1] : 0;
  return m0 && m1 && !(m0 & m1) ? SUM_ADD : SUM_KEEP;
}

/* A sum over the microbatches moves up through what is linear, so that it
   runs on what each stage makes and what follows it runs once a step:
   - a gradient that adds two parts different stages make (a tied
     weight's: the embedding's part on the first stage, the output
     projection's on the last) becomes each part's sum over the
     microbatches, on its own stage, and one add after the last
     microbatch: one part crosses once a step, as Megatron-LM's all-reduce
     of the embedding's gradient, not each microbatch; the sum over the
     collective's other axes, if any, follows the add;
   - a gradient reduce-scattered over other axes (ZeRO's) is summed whole
     and reduce-scattered once a step, as Megatron-LM's distributed
     optimizer does (its accumulator is the whole gradient, not a piece).
   Until nothing moves (a tied weight's gradient under ZeRO takes both). */
static void sum_once(pctx *c) {
  rt_prog *p = c->p;
  for (int moved = 1; moved;) {
    int n = c->n0, *kind = mem_calloc((size_t)n + 1, sizeof(int)), *mate = mem_alloc(sizeof(int) * (size_t)(n + 1));
    flow f;
    flow_make(c, &f);
    moved = 0;
    for (int i = 0; i < n; i++) {
      int k = -1, how = sum_kind(c, &f, i, &k);
      flow_step(c, &f, i);
      if (how == SUM_KEEP || kind[k] != SUM_KEEP) continue;
      kind[k] = how;
      kind[i] = SUM_AFTER;
      mate[k] = i;
      mate[i] = k;
      moved++;
    }
    flow_free(&f);
    if (!moved) { free(kind); free(mate); break; }
    rt_instr *out = mem_alloc(sizeof *out * (size_t)(n + 2 * moved + 1));
    int *part = mem_alloc(sizeof(int) * (size_t)(2 * n + 1)), no = 0;
    for (int i = 0; i < n; i++) {
      const rt_instr *x = &c->ins[i];
      if (kind[i] == SUM_ADD) {          /* each part summed over the microbatches, where it is made */
        for (int q = 0; q < 2; q++) {
          part[2 * i + q] = buf_like(p, x->out, q ? ".part1" : ".part0");
          out[no++] = micro_sum(p, c->micro, x->in[q], part[2 * i + q]);
        }
      } else if (kind[i] == SUM_SCATTER) {   /* the whole gradient summed */
        part[2 * i] = buf_like(p, x->in[0], ".micro_sum");
        out[no++] = micro_sum(p, c->micro, x->in[0], part[2 * i]);
      } else if (kind[i] == SUM_AFTER && kind[mate[i]] == SUM_SCATTER) {   /* then reduce-scattered once */
        rt_instr y = c->ins[mate[i]];
        y.in[0] = part[2 * mate[i]];
        y.out = x->out;
        out[no++] = y;
      } else if (kind[i] == SUM_AFTER) {   /* the add of the sums, then the sum over the other axes */
        int k = mate[i], rest = without_micro(p, x->group, c->micro);
        rt_instr y = c->ins[k];
        y.in[0] = part[2 * k];
        y.in[1] = part[2 * k + 1];
        y.out = rest >= 0 ? x->in[0] : x->out;
        out[no++] = y;
        if (rest >= 0) {
          out[no] = *x;
          out[no++].group = rest;
        }
      } else {
        out[no++] = *x;
      }
    }
    free(c->ins);
    c->ins = out;
    c->n0 = no;
    free(part);
    free(kind);
    free(mate);
    stage_masks(c);
  }
}

int lw_pipeline(const ir_graph *g, const sh_plan *plan, rt_prog *p, const int *buf_of, uint32_t *partial, diag *d) {
  pctx c = {g, plan, p, d};
  c.P = (int)plan->mesh.size[plan->pipe.axis];
  c.M = plan->pipe.micro >= 0 ? (int)plan->mesh.size[plan->pipe.micro] : 1;
  c.micro = plan->pipe.micro;
  if (c.micro >= 0 && (c.micro != plan->mesh.n - 1 || c.micro != p->mesh_rank - 1))
    return diag_error(d, plan->pipe.at, "internal error: the microbatch axis is not the mesh's last");
  int nv = g->nvals;
  sh_stages st;
  if (shard_stages(plan, &st, d) < 0) c.failed = 1;
  c.vmask = st.mask;
  c.fwd = st.fwd;
  c.part = st.part;
  c.V = plan->pipe.chunks > 1 ? plan->pipe.chunks : 1;
  c.n0 = p->ninstrs;
  c.ins = mem_alloc(sizeof *c.ins * (size_t)(c.n0 + 1));
  memcpy(c.ins, p->instrs, sizeof *c.ins * (size_t)c.n0);
  if (!c.failed) {
    stage_masks(&c);
    if (c.micro >= 0) sum_once(&c);
  }
  int ng = p->ngroups;
  c.rest = mem_alloc(sizeof(int) * (size_t)(ng + 1));
  for (int gi = 0; gi < ng; gi++) c.rest[gi] = without_micro(p, gi, c.micro);
  c.nb0 = p->nbufs;
  c.vary = mem_calloc((size_t)c.n0 + 1, 1);
  c.acc = mem_calloc((size_t)c.n0 + 1, 1);
  c.post = mem_calloc((size_t)c.n0 + 1, 1);
  c.bwd = mem_calloc((size_t)c.n0 + 1, 1);
  c.vbuf = mem_calloc((size_t)c.nb0 + 1, 1);
  c.accout = mem_calloc((size_t)c.nb0 + 1, 1);
  c.sum = mem_alloc(sizeof(int) * (size_t)(c.n0 + 1));
  if (!c.failed) classify(&c);
  /* a sum over the microbatches runs where its last part is made, not on
     every stage that reads the sum (which receives it once a step) */
  for (int i = 0; i < c.n0 && !c.failed; i++) {
    if (!c.acc[i]) continue;
    for (int k = i - 1; k >= 0; k--)
      if (rt_instr_writes(&c.ins[k], c.ins[i].in[0])) {
        uint64_t both = c.imask[i] & c.imask[k];
        c.imask[i] = both ? both : c.imask[k];
        break;
      }
  }
  c.chunk = mem_calloc((size_t)c.n0 + 1, sizeof(int));
  if (!c.failed) chunks_of(&c);
  if (!c.failed && plan->pipe.order == SH_ZB) {
    pipe_weight_pass(&c);
    pipe_zero_bubble(&c);
  }
  if (!c.failed) make_copies(&c);
  for (int i = 0; i < c.n0 && !c.failed; i++) {
    c.sum[i] = c.ins[i].out;
    if (!c.acc[i] || c.rest[c.ins[i].group] < 0) continue;
    c.sum[i] = buf_like(p, c.ins[i].out, ".micro_sum");
  }
  int loss = g->nouts ? buf_of[g->outputs[0]] : -1;
  c.list = mem_calloc((size_t)c.P, sizeof *c.list);
  for (int s = 0; s < c.P && !c.failed; s++) build_stage(&c, s);
  if (!c.failed) connect(&c, loss);
  if (!c.failed) {
    free(p->instrs);               /* (rt_prog_emit starts a new array at a count of 0) */
    p->instrs = NULL;
    p->ninstrs = 0;
    for (int b = 0; b < p->nbufs; b++) p->bufs[b].stages = 0;
    for (int s = 0; s < c.P; s++)
      for (int e = 0; e < c.list[s].n; e++) {
        rt_instr *y = rt_prog_emit(p, RT_FILL, -1);
        *y = c.list[s].a[e];
        y->stages = (uint64_t)1 << s;
        if (y->out >= 0) p->bufs[y->out].stages |= y->stages;
        for (int k = 0; k < RT_MAXIN; k++) if (y->in[k] >= 0) p->bufs[y->in[k]].stages |= y->stages;
      }
    for (int b = 0; b < p->nbufs; b++) {
      rt_buf *x = &p->bufs[b];
      if (x->carry_from >= 0) x->stages = p->bufs[x->carry_from].stages |= x->stages;
      if (!x->stages) x->stages = (uint64_t)1 << (c.P - 1);   /* read by no one: with the loss */
    }
    p->stage_axis = plan->pipe.axis;
    if (c.micro >= 0) drop_micro_axis(&c, partial, nv);
    rt_prog_finish(p);
    char why[512];
    if (rt_prog_check_transfers(p, NULL, why, sizeof why) < 0) pipe_fail(&c, -1, why);
  }
  for (int s = 0; s < c.P; s++) { free(c.list[s].a); free(c.list[s].key); }
  free(c.list);
  for (int b = 0; c.copy && b < c.nb0; b++) free(c.copy[b]);
  free(c.copy);
  shard_stages_free(&st);
  free(c.chunk);
  free(c.wpass);
  for (int s = 0; c.zb && s < c.P; s++) free(c.zb[s]);
  free(c.zb);
  free(c.ins); free(c.imask); free(c.vary); free(c.acc); free(c.post); free(c.bwd);
  free(c.vbuf); free(c.accout); free(c.sum); free(c.rest);
  return c.failed ? -1 : 0;
}

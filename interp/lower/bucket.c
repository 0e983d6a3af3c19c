/*
** bucket.c: gradients reduced in buckets (lower_opts.bucket_bytes).
** Under data parallelism each gradient is all-reduced, or under ZeRO
** reduce-scattered, as the backward pass produces it; most are small, and
** each collective pays its latency. As PyTorch's DDP does, consecutive
** reductions of gradients over the same devices are joined: a gradient is
** copied into the open bucket where it was reduced, the bucket is reduced
** once when it is full or before anything reads a gradient it holds, and
** the sums are copied back out. Every number is the same sum as before
** (the same elements added over the same devices).
**
** A reduce-scatter is bucketed only when it splits its value's first
** dim (the pieces are then contiguous): each gradient's P pieces go to
** the P rows of a bucket viewed [P, C], so that the bucket's scatter
** leaves each device its piece of every gradient, side by side.
**
** Without a bucket size, the tiny reductions alone (biases, norm gains,
** and the small sums of activations a step issues back to back: a few
** KiB, where a collective's latency is all it costs) are joined, as
** Megatron-LM and DDP join every gradient; the others are reduced where
** they are made.
**
** A pipelined program is bucketed after its pass made the stages: only
** reductions of one stage join a bucket, those its stage makes after the
** last microbatch (lw_sink_updates first moves the updates out from
** between them).
*/
#include "interp/lower/lower_int.h"
#include "runtime/mesh.h"
#include "util/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A reduction that can join a bucket: a gradient's; with `tiny`, any
** value's sum but the program's outputs (a router's sums, a norm's
** statistics; the loss is reduced where it is made). */
static int bucketable(const ir_graph *g, const rt_prog *p, const rt_instr *x, int tiny) {
  if (x->src < 0 || x->group < 0 || x->fn != RT_RSUM) return 0;   /* sums only */
  const ir_value *v = g->vals[x->src];
  if (v->role != ROLE_GRAD && (!tiny || v->is_output)) return 0;
  if (x->op == RT_ALL_REDUCE) return 1;
  /* (a reduce-scatter over an axis dealt zig-zag deals each member's blocks: not as one bucket) */
  return x->op == RT_REDUCE_SCATTER && x->outer == 1 && x->in[0] != x->out && !rt_mesh_zigzag(p, x->group) &&
         p->bufs[x->in[0]].nelem == p->bufs[x->out].nelem * rt_mesh_group_size(p, x->group);
}

/* an instruction appended to p, a copy of x */
static rt_instr *append(rt_prog *p, const rt_instr *x) {
  rt_instr *y = rt_prog_emit(p, (rt_op)x->op, x->out);
  *y = *x;
  return y;
}

static void block_copy(rt_prog *p, int in, int out, int64_t outer, int64_t m, int64_t k, int64_t n, int64_t n2, int64_t off, int src,
                       uint64_t stages) {
  rt_instr *y = rt_prog_emit(p, RT_BLOCK_COPY, out);
  y->nin = 1;
  y->in[0] = in;
  y->src = src;
  y->stages = stages;
  y->outer = outer;
  y->m = m;
  y->k = k;
  y->n = n;
  y->n2 = n2;
  y->off = off;
  y->inner = 1;
}

/* A bucket: its members' reductions, in program order, and its buffers. */
typedef struct bucket {
  int n;                  /* members */
  int lead;               /* the first member's instruction */
  int64_t C;              /* elements of the sums: the members' results side by side */
  int64_t filled;         /* bytes of the members' inputs */
  int buf, sum;           /* the bucket, and (a scatter) this device's piece of it */
} bucket;

/* The reduction of bucket k, whose members are old[at[0..n)], and the
** copies of the sums back out into each member's result. */
static void reduce_bucket(rt_prog *p, const rt_instr *old, const int *at, const int64_t *off, const bucket *k) {
  const rt_instr *last = &old[at[k->n - 1]];
  rt_instr *r = rt_prog_emit(p, (rt_op)last->op, k->sum);
  r->nin = 1;
  r->in[0] = k->buf;
  r->group = last->group;
  r->stages = last->stages;
  r->outer = 1;
  r->n = p->bufs[k->buf].nelem;
  r->inner = 1;
  r->rank = 1;
  r->shape[0] = r->n;
  for (int i = 0; i < k->n; i++) {
    const rt_instr *x = &old[at[i]];
    int64_t piece = p->bufs[x->out].nelem;
    block_copy(p, k->sum, x->out, 1, k->C, off[at[i]], piece, piece, 0, x->src, x->stages);
  }
}

/* Which reductions join which bucket: join[i] for instruction i (-1:
** none), the buckets in bk; returns their count. */
static int plan_buckets(const ir_graph *g, const rt_prog *p, int64_t bytes, int64_t most, int *join, int64_t *off, bucket *bk) {
  int n = p->ninstrs, nb = 0, open = -1, readat = n;
  int *next = mem_alloc(sizeof(int) * (size_t)(p->nbufs ? p->nbufs : 1));   /* buffer -> its next reader */
  int *after = mem_alloc(sizeof(int) * (size_t)(n ? n : 1));    /* instruction -> the first later access to its result */
  for (int b = 0; b < p->nbufs; b++) next[b] = n;
  for (int i = n - 1; i >= 0; i--) {
    int o = p->instrs[i].out;
    after[i] = o >= 0 ? next[o] : n;
    /* a later write counts as a read: a GEMM that the add folding made
       accumulate into the buffer (beta 1) reads it without naming it */
    if (o >= 0) next[o] = i;
    for (int k = 0; k < RT_MAXIN; k++) if (p->instrs[i].in[k] >= 0) next[p->instrs[i].in[k]] = i;
  }
  for (int i = 0; i < n; i++) {
    const rt_instr *x = &p->instrs[i];
    join[i] = -1;
    if (open >= 0 && i >= readat) open = -1;      /* a sum it holds is read here: reduced before */
    if (!bucketable(g, p, x, most > 0)) continue;
    int64_t in = p->bufs[x->in[0]].nelem * (int64_t)rt_dtype_size(p->bufs[x->in[0]].dtype);
    if (most > 0 && in > most) continue;          /* not tiny: reduced alone, the bucket stays open */
    if (open >= 0) {
      const rt_instr *l = &p->instrs[bk[open].lead];
      if (l->op != x->op || l->group != x->group || l->stages != x->stages || p->bufs[l->out].dtype != p->bufs[x->out].dtype ||
          bk[open].filled + in > bytes) open = -1;
    }
    if (open < 0) {
      open = nb++;
      bk[open] = (bucket){0, i, 0, 0, -1, -1};
      readat = n;
    }
    join[i] = open;
    off[i] = bk[open].C;
    bk[open].C += p->bufs[x->out].nelem;
    bk[open].filled += in;
    bk[open].n++;
    if (after[i] < readat) readat = after[i];
  }
  free(next);
  free(after);
  return nb;
}

int lw_bucket(const ir_graph *g, rt_prog *p, int64_t bytes, int64_t most) {
  int n = p->ninstrs, made = 0;
  int *join = mem_alloc(sizeof(int) * (size_t)(n ? n : 1));
  int64_t *off = mem_alloc(sizeof(int64_t) * (size_t)(n ? n : 1));   /* where a member's piece sits in its bucket */
  bucket *bk = mem_alloc(sizeof *bk * (size_t)(n ? n : 1));
  int nb = plan_buckets(g, p, bytes, most, join, off, bk);
  for (int b = 0; b < nb; b++) {                  /* buffers for the buckets of two or more */
    if (bk[b].n < 2) continue;
    const rt_instr *x = &p->instrs[bk[b].lead];
    int64_t P = x->op == RT_REDUCE_SCATTER ? rt_mesh_group_size(p, x->group) : 1, whole = P * bk[b].C;
    rt_dtype dt = p->bufs[x->out].dtype;
    char name[48];
    snprintf(name, sizeof name, "bucket%d", made);
    bk[b].buf = bk[b].sum = rt_prog_buf(p, name, dt, 1, &whole, RT_BUF_TEMP);
    if (P > 1) {
      snprintf(name, sizeof name, "bucket%d.piece", made);
      bk[b].sum = rt_prog_buf(p, name, dt, 1, &bk[b].C, RT_BUF_TEMP);
    }
    p->bufs[bk[b].buf].stages = p->bufs[bk[b].sum].stages = x->stages;   /* a pipelined program's: the stage that holds it */
    made++;
  }
  /* the program again, each bucket's copies in where its members' reductions were */
  rt_instr *old = p->instrs;
  p->instrs = NULL;
  p->ninstrs = 0;
  int *at = mem_alloc(sizeof(int) * (size_t)(n ? n : 1)), nat = 0;
  for (int i = 0; i < n; i++) {
    const rt_instr *x = &old[i];
    int b = join[i];
    if (b < 0 || bk[b].n < 2) { append(p, x); continue; }
    int64_t piece = p->bufs[x->out].nelem, P = x->op == RT_REDUCE_SCATTER ? rt_mesh_group_size(p, x->group) : 1;
    block_copy(p, x->in[0], bk[b].buf, P, piece, 0, piece, bk[b].C, off[i], x->src, x->stages);
    at[nat++] = i;
    if (nat == bk[b].n) { reduce_bucket(p, old, at, off, &bk[b]); nat = 0; }
  }
  free(old);
  free(at);
  free(bk);
  free(join);
  free(off);
  rt_prog_finish(p);
  return made;
}

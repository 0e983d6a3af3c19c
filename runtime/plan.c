/*
** plan.c: placing temporaries. Largest first, each goes to the lowest
** offset that no temporary placed before it and alive at the same time
** covers. Only those alive at the same time matter, so the placed ones are
** indexed by time in two segment trees over instruction numbers: one holds
** each temporary at the nodes covering its lifetime (who is alive at an
** instant), the other at the nodes above its first write (who starts in a
** span). A temporary overlaps another exactly when the other is alive at
** its start or starts during its life.
**
** Before placing, an instruction that may write over its input (an f32
** elementwise op whose input is laid out as its output, the gradient of
** cross-entropy over its logits) and whose input dies there shares that
** input's place: the two are one slot, alive from the first's write to
** the second's last read. Peaks like the logits beside their gradient
** are then one tensor, not two.
*/
#include "runtime/plan.h"
#include "util/mem.h"

#include <stdlib.h>
#include <string.h>

typedef struct tslot { int32_t b, start, end; size_t size, off; } tslot;
typedef struct ivec { int *v; int n, cap; } ivec;
typedef struct stree { int size; ivec *node; } stree;   /* node 1 is the root; leaves from size */

static void push(ivec *x, int i) {
  if (x->n == x->cap) {
    x->cap = x->cap ? 2 * x->cap : 4;
    x->v = mem_realloc(x->v, sizeof *x->v * (size_t)x->cap);
  }
  x->v[x->n++] = i;
}

static void tree_init(stree *t, int n) {
  t->size = 1;
  while (t->size < n) t->size *= 2;
  t->node = mem_calloc(2 * (size_t)t->size, sizeof *t->node);
}

static void tree_free(stree *t) {
  for (int i = 0; i < 2 * t->size; i++) free(t->node[i].v);
  free(t->node);
}

/* i at the canonical nodes of [lo, hi] */
static void add_span(stree *t, int lo, int hi, int i) {
  for (lo += t->size, hi += t->size + 1; lo < hi; lo >>= 1, hi >>= 1) {
    if (lo & 1) push(&t->node[lo++], i);
    if (hi & 1) push(&t->node[--hi], i);
  }
}

/* i at every node above the leaf of pos */
static void add_point(stree *t, int pos, int i) {
  for (int x = pos + t->size; x >= 1; x >>= 1) push(&t->node[x], i);
}

static void take(const ivec *x, ivec *out) { for (int k = 0; k < x->n; k++) push(out, x->v[k]); }

/* what add_span stored at nodes covering pos */
static void stab(const stree *t, int pos, ivec *out) {
  for (int x = pos + t->size; x >= 1; x >>= 1) take(&t->node[x], out);
}

/* what add_point stored for positions in [lo, hi] */
static void in_range(const stree *t, int lo, int hi, ivec *out) {
  for (lo += t->size, hi += t->size + 1; lo < hi; lo >>= 1, hi >>= 1) {
    if (lo & 1) take(&t->node[lo++], out);
    if (hi & 1) take(&t->node[--hi], out);
  }
}

static int by_size(const void *x, const void *y) {
  const tslot *a = x, *b = y;
  if (a->size != b->size) return a->size > b->size ? -1 : 1;
  return a->start < b->start ? -1 : a->start > b->start;
}

typedef struct placed { size_t off, size; } placed;

/* Sort by offset: least significant byte first, one counting pass a byte,
** skipping bytes that are the same in every key (offsets are multiples of
** RT_PLAN_ALIGN). Linear in n, where a comparison sort of the thousands of
** neighbours of a long-lived temporary was most of the planning time. */
static void sort_by_offset(placed *a, placed *tmp, int n) {
  if (n < 2) return;                        /* also keeps memcpy away from NULL */
  size_t all_or = 0, all_and = ~(size_t)0;
  for (int i = 0; i < n; i++) { all_or |= a[i].off; all_and &= a[i].off; }
  for (int shift = 0; shift < (int)(8 * sizeof(size_t)); shift += 8) {
    if ((((all_or ^ all_and) >> shift) & 0xff) == 0) continue;     /* the same byte everywhere */
    int count[257] = {0};
    for (int i = 0; i < n; i++) count[((a[i].off >> shift) & 0xff) + 1]++;
    for (int b = 0; b < 256; b++) count[b + 1] += count[b];
    for (int i = 0; i < n; i++) tmp[count[(a[i].off >> shift) & 0xff]++] = a[i];
    memcpy(a, tmp, sizeof *a * (size_t)n);
  }
}

/* Is in[k] of x read element for element where x writes (so that x may
** write over it)? */
static int reads_in_step(const rt_prog *p, const rt_instr *x, int k) {
  int b = x->in[k];
  if (p->bufs[b].dtype != RT_F32 || p->bufs[x->out].dtype != RT_F32 || p->bufs[b].nelem != p->bufs[x->out].nelem) return 0;
  if (x->op == RT_XENT_GRAD) return k == 0;
  if (x->op == RT_FUSED) return !(x->mode & RT_FUSED_REDUCE) && rt_ew_dense(x, k);   /* each block is read before it is written */
  return x->op == RT_EW && x->fn < RT_ABS && k < rt_ewfn_arity((rt_ewfn)x->fn) && rt_ew_dense(x, k);
}

static int root(int32_t *share, int b) {
  while (share[b] != b) b = share[b] = share[share[b]];
  return b;
}

/* share[b]: the buffer whose place b takes (itself when alone). */
static void pair_in_place(const rt_prog *p, const rt_memplan *m, int32_t *share) {
  for (int b = 0; b < p->nbufs; b++) share[b] = b;
  for (int i = 0; i < p->ninstrs; i++) {
    const rt_instr *x = &p->instrs[i];
    int o = x->out;
    if (o < 0 || o >= p->nbufs || p->bufs[o].kind != RT_BUF_TEMP || m->first_write[o] != i || share[o] != o) continue;
    for (int k = 0; k < RT_MAXIN; k++) {
      int b = x->in[k];
      if (b < 0 || b >= p->nbufs || b == o || p->bufs[b].kind != RT_BUF_TEMP || m->last_use[b] != i ||
          m->first_write[b] < 0 || m->first_write[b] >= i || !reads_in_step(p, x, k)) continue;
      int other = 0;                       /* no other input of x is b's slot */
      for (int j = 0; j < RT_MAXIN; j++)
        if (j != k && x->in[j] >= 0 && x->in[j] < p->nbufs && x->in[j] != b && root(share, x->in[j]) == root(share, b)) other = 1;
      if (other) continue;
      share[o] = root(share, b);
      break;
    }
  }
  for (int b = 0; b < p->nbufs; b++) root(share, b);
}

size_t rt_memplan_size(const rt_prog *p, int b) {
  size_t by = (size_t)p->bufs[b].nelem * rt_dtype_size(p->bufs[b].dtype);
  return (by + RT_PLAN_ALIGN - 1) & ~(size_t)(RT_PLAN_ALIGN - 1);
}

void rt_memplan_make(const rt_prog *p, rt_memplan *m) {
  int nb = p->nbufs, ni = p->ninstrs;
  memset(m, 0, sizeof *m);
  m->offset = mem_calloc((size_t)nb + 1, sizeof *m->offset);
  m->first_write = mem_alloc(((size_t)nb + 1) * sizeof *m->first_write);
  m->last_use = mem_alloc(((size_t)nb + 1) * sizeof *m->last_use);
  m->share = mem_alloc(((size_t)nb + 1) * sizeof *m->share);
  m->peak_at = -1;
  for (int b = 0; b < nb; b++) m->first_write[b] = m->last_use[b] = -1;
  for (int i = 0; i < ni; i++) {
    const rt_instr *ins = &p->instrs[i];
    for (int k = 0; k < RT_MAXIN; k++)
      if (ins->in[k] >= 0 && ins->in[k] < nb) {
        m->last_use[ins->in[k]] = i;
        if (rt_instr_writes_in(ins, k) && m->first_write[ins->in[k]] < 0) m->first_write[ins->in[k]] = i;
      }
    if (ins->out >= 0 && ins->out < nb) {
      if (m->first_write[ins->out] < 0) m->first_write[ins->out] = i;
      m->last_use[ins->out] = i;
    }
  }
  pair_in_place(p, m, m->share);
  /* one slot per group of buffers sharing a place: the group's whole life */
  int n = 0;
  int32_t *slot_of = mem_alloc(((size_t)nb + 1) * sizeof *slot_of);
  for (int b = 0; b < nb; b++) {
    slot_of[b] = -1;
    n += p->bufs[b].kind == RT_BUF_TEMP && m->first_write[b] >= 0 && m->share[b] == b;
  }
  if (!n) { free(slot_of); return; }
  tslot *t = mem_alloc((size_t)n * sizeof *t);
  n = 0;
  for (int b = 0; b < nb; b++)
    if (p->bufs[b].kind == RT_BUF_TEMP && m->first_write[b] >= 0 && m->share[b] == b) {
      slot_of[b] = n;
      t[n++] = (tslot){b, m->first_write[b], m->last_use[b], rt_memplan_size(p, b), 0};
    }
  for (int b = 0; b < nb; b++) {
    int r = m->share[b];
    if (r == b || m->first_write[b] < 0) continue;
    tslot *s = &t[slot_of[r]];
    if (m->last_use[b] > s->end) s->end = m->last_use[b];
    if (rt_memplan_size(p, b) > s->size) s->size = rt_memplan_size(p, b);
  }
  mem_sort(t, (size_t)n, sizeof *t, by_size);
  for (int i = 0; i < n; i++) slot_of[t[i].b] = i;
  stree alive, starts;
  tree_init(&alive, ni);
  tree_init(&starts, ni);
  ivec near = {0};
  placed *pl = NULL, *scratch = NULL;
  int plcap = 0;
  for (int i = 0; i < n; i++) {
    near.n = 0;
    stab(&alive, t[i].start, &near);
    if (t[i].start < t[i].end) in_range(&starts, t[i].start + 1, t[i].end, &near);
    if (near.n > plcap) {
      plcap = near.n * 2;
      pl = mem_realloc(pl, sizeof *pl * (size_t)plcap);
      scratch = mem_realloc(scratch, sizeof *scratch * (size_t)plcap);
    }
    for (int k = 0; k < near.n; k++) pl[k] = (placed){t[near.v[k]].off, t[near.v[k]].size};
    sort_by_offset(pl, scratch, near.n);
    size_t off = 0;
    for (int k = 0; k < near.n; k++) {
      if (off + t[i].size <= pl[k].off) break;          /* fits in the gap before it */
      if (pl[k].off + pl[k].size > off) off = pl[k].off + pl[k].size;
    }
    t[i].off = off;
    if (off + t[i].size > m->block) m->block = off + t[i].size;
    add_span(&alive, t[i].start, t[i].end, i);
    add_point(&starts, t[i].start, i);
  }
  for (int b = 0; b < nb; b++)
    if (p->bufs[b].kind == RT_BUF_TEMP && m->first_write[b] >= 0) m->offset[b] = t[slot_of[m->share[b]]].off;
  free(slot_of);
  free(near.v);
  free(pl);
  free(scratch);
  tree_free(&alive);
  tree_free(&starts);
  /* the most bytes alive at once: a sweep over the instructions */
  int64_t *delta = mem_calloc((size_t)ni + 2, sizeof *delta);
  for (int i = 0; i < n; i++) { delta[t[i].start] += (int64_t)t[i].size; delta[t[i].end + 1] -= (int64_t)t[i].size; }
  int64_t live = 0;
  for (int i = 0; i < ni; i++) {
    live += delta[i];
    if ((size_t)live > m->peak_live) { m->peak_live = (size_t)live; m->peak_at = i; }
  }
  free(delta);
  free(t);
}

void rt_memplan_free(rt_memplan *m) {
  free(m->offset);
  free(m->first_write);
  free(m->last_use);
  free(m->share);
  memset(m, 0, sizeof *m);
}

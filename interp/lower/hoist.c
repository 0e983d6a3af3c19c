/*
** hoist.c: optimizer updates moved up to just after their gradient is
** final. The training step is lowered as forward, backward, then one
** update per parameter; but a parameter's update needs only its gradient
** (finished when the backward pass is through with that parameter, its
** all-reduce included), its state, the step's scalars, and the last read
** of the parameter itself. Updating there, as PyTorch's optimizer-in-
** backward hooks do, ends each gradient's life early (the memory plan
** frees it at once) and reads it while it is still in cache.
**
** Each instruction is placed as early as the instructions before it
** allow, where it is an update (RT_ADAM, RT_SGD) or works on scalars only
** (the step counter and the bias corrections the updates read): after the
** last one writing what it reads, and the last one reading or writing
** what it writes (an update also writes its state in place). Everything
** else keeps its order, so the program computes exactly what it did.
**
** A pipelined program's updates go the other way (lw_sink_updates): after
** a stage's last microbatch its gradients are reduced over the other axes
** one after another, each followed by its update, which reads the sum and
** so would close any bucket the reduction joined; each update moves down
** within its stage, past what neither touches what it writes nor writes
** what it reads, to the next update or the stage's end, the updates kept
** in their order. The gradients live through the microbatches anyway.
*/
#include "interp/lower/lower_int.h"
#include "util/mem.h"

#include <stdlib.h>
#include <string.h>

/* A place in the new order: after original instruction `at` (-1: before
** the first), `seq`-th among those moved there (0: the instruction itself). */
typedef struct place { int at, seq; } place;

static int later(place a, place b) { return a.at != b.at ? a.at > b.at : a.seq > b.seq; }

static int movable(const rt_prog *p, const rt_instr *x) {
  if (x->op == RT_ADAM || x->op == RT_SGD) return 1;
  if (x->out < 0 || x->out >= p->nbufs || p->bufs[x->out].nelem != 1 || rt_is_collective((rt_op)x->op)) return 0;
  for (int k = 0; k < RT_MAXIN; k++)
    if (x->in[k] >= 0 && (x->in[k] >= p->nbufs || p->bufs[x->in[k]].nelem != 1)) return 0;
  return 1;
}

/* the buffers x writes: out, and inputs it writes too (an update's state,
** the loss a folded xent_grad writes) */
static int written(const rt_instr *x, int w[1 + RT_MAXIN]) {
  int n = 0;
  if (x->out >= 0) w[n++] = x->out;
  for (int k = 0; k < RT_MAXIN; k++) if (rt_instr_writes_in(x, k)) w[n++] = x->in[k];
  return n;
}

int lw_hoist_updates(rt_prog *p) {
  int ni = p->ninstrs, nb = p->nbufs, moved = 0;
  place none = {-2, 0};
  place *last_w = mem_alloc(sizeof(place) * ((size_t)nb + 1)), *last_r = mem_alloc(sizeof(place) * ((size_t)nb + 1));
  place *where = mem_alloc(sizeof(place) * ((size_t)ni + 1));
  int *count = mem_calloc((size_t)ni + 2, sizeof(int));    /* per slot (at + 1): instructions moved there */
  for (int b = 0; b < nb; b++) last_w[b] = last_r[b] = none;
  for (int i = 0; i < ni; i++) {
    const rt_instr *x = &p->instrs[i];
    int w[1 + RT_MAXIN], nw = written(x, w);
    place at = {i, 0};
    if (movable(p, x)) {
      place after = {-1, 0};               /* the latest instruction it must follow */
      for (int k = 0; k < RT_MAXIN; k++)
        if (x->in[k] >= 0 && x->in[k] < nb && later(last_w[x->in[k]], after)) after = last_w[x->in[k]];
      for (int j = 0; j < nw; j++) {
        if (w[j] >= nb) continue;
        if (later(last_w[w[j]], after)) after = last_w[w[j]];
        if (later(last_r[w[j]], after)) after = last_r[w[j]];
      }
      if (after.at < i - 1) {
        at = (place){after.at, ++count[after.at + 1]};
        moved++;
      }
    }
    where[i] = at;
    for (int k = 0; k < RT_MAXIN; k++)
      if (x->in[k] >= 0 && x->in[k] < nb && later(at, last_r[x->in[k]])) last_r[x->in[k]] = at;
    for (int j = 0; j < nw; j++)
      if (w[j] < nb && later(at, last_w[w[j]])) last_w[w[j]] = at;
  }
  if (moved) {
    /* the new order: slot -1's moved instructions, then each kept one and those moved after it */
    int *order = mem_alloc(sizeof(int) * ((size_t)ni + 1)), *start = mem_calloc((size_t)ni + 3, sizeof(int));
    for (int i = 0; i < ni; i++) start[where[i].at + 2]++;
    for (int s = 0; s <= ni; s++) start[s + 1] += start[s];
    int *fill = mem_calloc((size_t)ni + 2, sizeof(int));
    for (int i = 0; i < ni; i++) {           /* by slot; within one, kept first, then moved in seq order */
      int s = where[i].at + 1;
      order[start[s] + fill[s]++] = i;
    }
    rt_instr *out = mem_alloc(sizeof(rt_instr) * ((size_t)ni + 1));
    for (int k = 0; k < ni; k++) out[k] = p->instrs[order[k]];
    memcpy(p->instrs, out, sizeof(rt_instr) * (size_t)ni);
    free(out);
    free(order);
    free(start);
    free(fill);
    rt_prog_finish(p);
  }
  free(last_w);
  free(last_r);
  free(where);
  free(count);
  return moved;
}

/* What y writes, as sinking an update past it counts (a send's sent buffer is only read). */
static int writes_of(const rt_instr *y, int w[1 + RT_MAXIN]) {
  if (y->op != RT_SEND) return written(y, w);
  int n = 0;
  for (int k = 0; k < RT_MAXIN; k++) if (rt_instr_writes_in(y, k)) w[n++] = y->in[k];
  return n;
}

static int earlier(place a, place b) { return a.at != b.at ? a.at < b.at : a.seq < b.seq; }

/* From the end: each update's place is just before the first of what
** follows it in the new order that reads or writes what it writes or
** writes what it reads, the next update, or the next instruction of
** another stage; one moved before instruction `at` takes seq -1, -2, ..
** (kept ones are seq 0), so that those moved later come first. */
int lw_sink_updates(rt_prog *p) {
  int n = p->ninstrs, nb = p->nbufs, moved = 0;
  place end = {n, 0}, next_update = end, stage_end = end;
  place *first_r = mem_alloc(sizeof(place) * ((size_t)nb + 1)), *first_w = mem_alloc(sizeof(place) * ((size_t)nb + 1));
  place *where = mem_alloc(sizeof(place) * ((size_t)n + 1));
  int *count = mem_calloc((size_t)n + 2, sizeof(int));    /* per slot: instructions moved before it */
  for (int b = 0; b < nb; b++) first_r[b] = first_w[b] = end;
  for (int i = n - 1; i >= 0; i--) {
    const rt_instr *x = &p->instrs[i];
    if (i + 1 < n && p->instrs[i + 1].stages != x->stages) stage_end = (place){i + 1, 0};
    int w[1 + RT_MAXIN], nw = writes_of(x, w);
    place at = {i, 0};
    if (x->op == RT_ADAM || x->op == RT_SGD) {
      place before = earlier(next_update, stage_end) ? next_update : stage_end;
      for (int j = 0; j < nw; j++) {
        if (w[j] >= nb) continue;
        if (earlier(first_r[w[j]], before)) before = first_r[w[j]];
        if (earlier(first_w[w[j]], before)) before = first_w[w[j]];
      }
      for (int k = 0; k < RT_MAXIN; k++)
        if (x->in[k] >= 0 && x->in[k] < nb && earlier(first_w[x->in[k]], before)) before = first_w[x->in[k]];
      if (before.at > i + 1) {            /* (else nothing kept lies between: it stays) */
        at = (place){before.at, -++count[before.at]};
        moved++;
      }
      next_update = at;
    }
    where[i] = at;
    for (int k = 0; k < RT_MAXIN; k++)
      if (x->in[k] >= 0 && x->in[k] < nb && earlier(at, first_r[x->in[k]])) first_r[x->in[k]] = at;
    for (int j = 0; j < nw; j++)
      if (w[j] < nb && earlier(at, first_w[w[j]])) first_w[w[j]] = at;
  }
  if (moved) {
    /* the new order: before each kept instruction (and before the end), those moved there, latest seq first */
    int *start = mem_calloc((size_t)n + 2, sizeof(int));
    for (int i = 0; i < n; i++) start[where[i].at + 1]++;
    for (int s = 0; s <= n; s++) start[s + 1] += start[s];
    rt_instr *out = mem_alloc(sizeof(rt_instr) * ((size_t)n + 1));
    for (int i = 0; i < n; i++) out[start[where[i].at] + count[where[i].at] + where[i].seq] = p->instrs[i];
    memcpy(p->instrs, out, sizeof(rt_instr) * (size_t)n);
    free(out);
    free(start);
    rt_prog_finish(p);
  }
  free(first_r);
  free(first_w);
  free(where);
  free(count);
  return moved;
}

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

/* Does y touch what x writes (w), or write what x reads? */
static int conflicts(const rt_instr *x, const int *w, int nw, const rt_instr *y) {
  int yw[1 + RT_MAXIN], nyw = y->op == RT_SEND ? 0 : written(y, yw);
  if (y->op == RT_SEND) for (int k = 0; k < RT_MAXIN; k++) if (rt_instr_writes_in(y, k)) yw[nyw++] = y->in[k];
  for (int j = 0; j < nw; j++) {
    for (int k = 0; k < RT_MAXIN; k++) if (y->in[k] == w[j]) return 1;
    for (int k = 0; k < nyw; k++) if (yw[k] == w[j]) return 1;
  }
  for (int k = 0; k < RT_MAXIN; k++)
    for (int m = 0; m < nyw && x->in[k] >= 0; m++) if (yw[m] == x->in[k]) return 1;
  return 0;
}

int lw_sink_updates(rt_prog *p) {
  int n = p->ninstrs, moved = 0;
  for (int i = n - 1; i >= 0; i--) {
    rt_instr x = p->instrs[i];
    if (x.op != RT_ADAM && x.op != RT_SGD) continue;
    int w[1 + RT_MAXIN], nw = written(&x, w), j = i + 1;
    while (j < n && p->instrs[j].stages == x.stages && p->instrs[j].op != RT_ADAM && p->instrs[j].op != RT_SGD &&
           !conflicts(&x, w, nw, &p->instrs[j]))
      j++;
    if (j - 1 == i) continue;
    memmove(&p->instrs[i], &p->instrs[i + 1], sizeof x * (size_t)(j - 1 - i));
    p->instrs[j - 1] = x;
    moved++;
  }
  if (moved) rt_prog_finish(p);
  return moved;
}

/*
** fuse.c: chains of elementwise functions into one pass (RT_FUSED), after
** the program is finished and the other folds are done.
**
** A program spelled in primitive ops (an imported JAX step, an optimizer
** update written value by value, a norm written as its formula) is a row
** of f32 elementwise instructions, each reading its operands from memory
** and writing its result back for the next. Here an instruction P whose
** result t is a temporary that one later elementwise instruction C reads,
** element for element, and nothing else reads, is computed inside C: C
** becomes an RT_FUSED whose steps are P's then C's, and P is dropped. C
** then reads P's operands where it stands, so P's operands must not be
** written in between; and so that no buffer lives longer than the memory
** it saves, the temporaries that would now live on to C take no more
** bytes than t. Each step is the same kernel over the same elements
** (runtime/kern_cpu.c), so the program computes exactly what it did.
**
** The functions are the f32 ones, selects of f32 by an i1, and quiet
** comparisons of f32 whose i1 result a later step takes, on the same
** pipeline stages. A reduction
** (RT_REDUCE) of a chain's result that nothing else reads takes the chain
** in too, on the same terms: its sums are made from each block while it is
** in L1, and the chain's values never go to memory. At most
** RT_MAXIN inputs and RT_FUSE_MAXSTEPS steps make one pass; a longer
** chain becomes more than one.
*/
#include "interp/lower/lower_int.h"
#include "util/mem.h"

#include <stdlib.h>
#include <string.h>

typedef struct tape {
  int nin, n;
  int32_t in[RT_MAXIN];
  int64_t st[RT_MAXIN][RT_MAXRANK];
  rt_fstep step[RT_FUSE_MAXSTEPS];
} tape;

typedef struct fuser {
  rt_prog *p;
  tape **tp;            /* per instruction: its steps so far (NULL: not elementwise f32, or taken) */
  char *gone;           /* per instruction: taken into a later one */
  int *wstart, *w;      /* per buffer: the instructions writing it, ascending */
  int *writer;          /* per buffer: its one writer, -1 none, -2 several */
  int *readers;         /* per buffer: instructions reading it */
  int *last_use;        /* per buffer: its last reader, as the fused program has it */
} fuser;

static int is_f32(const rt_prog *p, int b) { return b >= 0 && b < p->nbufs && p->bufs[b].dtype == RT_F32; }

static int is_i1(const rt_prog *p, int b) { return b >= 0 && b < p->nbufs && p->bufs[b].dtype == RT_I1; }

/* an elementwise instruction of the functions RT_FUSED runs: f32 ones, a
** select of f32 by an i1, or a quiet comparison of f32 (whose i1 result
** only a later step can take) */
static int candidate(const rt_prog *p, const rt_instr *x) {
  if (x->op != RT_EW || x->rank > RT_MAXRANK || !rt_fused_fn(x->fn, 0)) return 0;
  int ar = rt_ewfn_arity((rt_ewfn)x->fn), cmp = x->fn >= RT_CMP_EQ && x->fn <= RT_CMP_GE;
  if (cmp ? !is_i1(p, x->out) || x->mode == RT_CMP_TOTAL : !is_f32(p, x->out)) return 0;
  for (int k = 0; k < RT_MAXIN; k++)
    if (k < ar ? !(is_f32(p, x->in[k]) || (x->fn == RT_SELECT && k == 0 && is_i1(p, x->in[k]))) : x->in[k] >= 0)
      return 0;     /* (in3: a sum of rows folded in) */
  return 1;
}

/* the slot of input b read through strides st, added if new; -1 when full */
static int add_input(tape *t, int b, const int64_t *st) {
  for (int k = 0; k < t->nin; k++)
    if (t->in[k] == b && !memcmp(t->st[k], st, sizeof t->st[k])) return k;
  if (t->nin == RT_MAXIN) return -1;
  t->in[t->nin] = b;
  memcpy(t->st[t->nin], st, sizeof t->st[0]);
  return t->nin++;
}

static tape *tape_of(const rt_instr *x) {
  tape *t = mem_calloc(1, sizeof *t);
  int ar = rt_ewfn_arity((rt_ewfn)x->fn);
  rt_fstep s = {x->fn, {0, 0, 0}, x->alpha, x->beta};
  for (int k = 0; k < 3; k++) s.arg[k] = (int8_t)(-1 - add_input(t, x->in[k < ar ? k : 0], x->stride[k < ar ? k : 0]));
  t->step[t->n++] = s;
  return t;
}

/* Is b written by an instruction strictly between lo and hi? */
static int written_between(const fuser *f, int b, int lo, int hi) {
  int a = f->wstart[b], z = f->wstart[b + 1];
  while (a < z) {                       /* the first writer after lo */
    int mid = a + (z - a) / 2;
    if (f->w[mid] <= lo) a = mid + 1; else z = mid;
  }
  return a < f->wstart[b + 1] && f->w[a] < hi;
}

/* P's strides for its input k over C's shape: P's own where the shapes are
** one, else a dense or a scalar input's; 0 when they cannot be said */
static int strides_over(const rt_instr *P, const tape *tp, int k, const rt_instr *C, int64_t *st) {
  if (P->rank == C->rank && !memcmp(P->shape, C->shape, sizeof P->shape[0] * (size_t)P->rank)) {
    memcpy(st, tp->st[k], sizeof tp->st[0]);
    return 1;
  }
  int scalar = 1;
  for (int d = 0; d < P->rank; d++) scalar &= P->shape[d] == 1 || tp->st[k][d] == 0;
  memset(st, 0, sizeof tp->st[0]);
  if (scalar) return 1;
  if (!rt_strides_dense(P->rank, P->shape, tp->st[k])) return 0;
  int64_t step = 1;
  for (int d = C->rank - 1; d >= 0; d--) { st[d] = step; step *= C->shape[d]; }
  return 1;
}


/* C (at j, its shape and out as C says) takes in P, which writes t: 1 when done */
static int absorb(fuser *f, int j, const rt_instr *C, int t) {
  rt_prog *p = f->p;
  int pi = f->writer[t];
  if (t < 0 || p->bufs[t].kind != RT_BUF_TEMP || pi < 0 || pi >= j || !f->tp[pi] || f->readers[t] != 1) return 0;
  const rt_instr *P = &p->instrs[pi];
  if (P->stages != p->instrs[j].stages) return 0;     /* (a pipeline: on the same stages) */
  tape *tc = f->tp[j], *tq = f->tp[pi];
  int k = -1;
  for (int i = 0; i < tc->nin; i++) if (tc->in[i] == t) k = i;
  int64_t cn = 1;
  for (int d = 0; d < C->rank; d++) cn *= C->shape[d];
  if (k < 0 || p->bufs[t].nelem != cn || !rt_strides_dense(C->rank, C->shape, tc->st[k]) || tq->n + tc->n > RT_FUSE_MAXSTEPS) return 0;
  /* what would now live on to C costs no more than t */
  double longer = 0;
  for (int i = 0; i < tq->nin; i++) {
    int b = tq->in[i];
    if (written_between(f, b, pi, j)) return 0;
    int seen = 0;
    for (int e = 0; e < i; e++) seen |= tq->in[e] == b;
    if (!seen && p->bufs[b].kind == RT_BUF_TEMP && f->last_use[b] < j) longer += (double)rt_buf_bytes(p, b);
  }
  if (longer > (double)rt_buf_bytes(p, t)) return 0;
  tape m;
  memset(&m, 0, sizeof m);
  int cmap[RT_MAXIN], pmap[RT_MAXIN];
  for (int i = 0; i < tc->nin; i++)
    if (i != k && (cmap[i] = add_input(&m, tc->in[i], tc->st[i])) < 0) return 0;
  for (int i = 0; i < tq->nin; i++) {
    int64_t st[RT_MAXRANK];
    if (!strides_over(P, tq, i, C, st) || (pmap[i] = add_input(&m, tq->in[i], st)) < 0) return 0;
  }
  for (int i = 0; i < m.nin; i++)        /* C writes over an input: only one read in step is safe */
    if (m.in[i] == C->out && (C->op == RT_REDUCE || !rt_strides_dense(C->rank, C->shape, m.st[i]))) return 0;
  for (int s = 0; s < tq->n; s++) {
    rt_fstep x = tq->step[s];
    for (int a = 0; a < 3; a++) if (x.arg[a] < 0) x.arg[a] = (int8_t)(-1 - pmap[-1 - x.arg[a]]);
    m.step[m.n++] = x;
  }
  for (int s = 0; s < tc->n; s++) {
    rt_fstep x = tc->step[s];
    for (int a = 0; a < 3; a++) {
      int g = x.arg[a];
      if (g >= 0) x.arg[a] = (int8_t)(g + tq->n);
      else x.arg[a] = (int8_t)(-1 - g == k ? tq->n - 1 : -1 - cmap[-1 - g]);
    }
    m.step[m.n++] = x;
  }
  *tc = m;
  for (int i = 0; i < tq->nin; i++) if (f->last_use[tq->in[i]] < j) f->last_use[tq->in[i]] = j;
  free(tq);
  f->tp[pi] = NULL;
  f->gone[pi] = 1;
  return 1;
}

/* a reduction RT_FUSED can end in */
static int reduction(const rt_prog *p, const rt_instr *x) {
  if (x->op != RT_REDUCE || (x->fn != RT_RSUM && x->fn != RT_RMAX && x->fn != RT_RMIN)) return 0;
  if (!is_f32(p, x->in[0]) || !is_f32(p, x->out)) return 0;
  for (int k = 1; k < RT_MAXIN; k++) if (x->in[k] >= 0) return 0;
  return 1;
}

/* reduction R (at j) takes in the chain P that makes its input, computing
** the chain's values a block at a time into its sums: 1 when done */
static int absorb_into_reduction(fuser *f, int j) {
  rt_prog *p = f->p;
  const rt_instr *R = &p->instrs[j];
  int t = R->in[0], pi = t >= 0 && t < p->nbufs ? f->writer[t] : -1;
  if (pi < 0 || pi >= j || !f->tp[pi] || !is_f32(p, p->instrs[pi].out)) return 0;
  const rt_instr *P = &p->instrs[pi];
  rt_instr view = *R;                    /* R over P's shape, reading t element for element */
  view.rank = P->rank;
  memcpy(view.shape, P->shape, sizeof view.shape);
  tape *tr = mem_calloc(1, sizeof *tr);
  int64_t dense[RT_MAXRANK] = {0}, step = 1;
  for (int d = P->rank - 1; d >= 0; d--) { dense[d] = step; step *= P->shape[d]; }
  add_input(tr, t, dense);
  f->tp[j] = tr;
  if (R->outer * R->n * R->inner != p->bufs[t].nelem || !absorb(f, j, &view, t)) {
    free(tr);
    f->tp[j] = NULL;
    return 0;
  }
  rt_instr *x = &p->instrs[j];
  x->rank = P->rank;
  memcpy(x->shape, P->shape, sizeof x->shape);
  x->mode = RT_FUSED_REDUCE;
  return 1;
}

static void index_writers(fuser *f) {
  const rt_prog *p = f->p;
  int nb = p->nbufs, ni = p->ninstrs;
  f->wstart = mem_calloc((size_t)nb + 2, sizeof(int));
  for (int i = 0; i < ni; i++) {
    const rt_instr *x = &p->instrs[i];
    if (x->out >= 0 && x->out < nb) f->wstart[x->out + 1]++;
    for (int k = 0; k < RT_MAXIN; k++) if (rt_instr_writes_in(x, k) && x->in[k] != x->out) f->wstart[x->in[k] + 1]++;
  }
  for (int b = 0; b < nb; b++) f->wstart[b + 1] += f->wstart[b];
  int *fill = mem_alloc(sizeof(int) * ((size_t)nb + 1));
  memcpy(fill, f->wstart, sizeof(int) * (size_t)nb);
  f->w = mem_alloc(sizeof(int) * ((size_t)f->wstart[nb] + 1));
  for (int i = 0; i < ni; i++) {
    const rt_instr *x = &p->instrs[i];
    if (x->out >= 0 && x->out < nb) f->w[fill[x->out]++] = i;
    for (int k = 0; k < RT_MAXIN; k++) if (rt_instr_writes_in(x, k) && x->in[k] != x->out) f->w[fill[x->in[k]]++] = i;
  }
  free(fill);
}

int lw_fuse_elementwise(rt_prog *p) {
  int ni = p->ninstrs, nb = p->nbufs, dropped = 0;
  fuser f = {p};
  f.tp = mem_calloc((size_t)ni + 1, sizeof *f.tp);
  f.gone = mem_calloc((size_t)ni + 1, 1);
  f.writer = mem_alloc(sizeof(int) * ((size_t)nb + 1));
  f.readers = mem_calloc((size_t)nb + 1, sizeof(int));
  f.last_use = mem_alloc(sizeof(int) * ((size_t)nb + 1));
  for (int b = 0; b < nb; b++) f.writer[b] = f.last_use[b] = -1;
  index_writers(&f);
  for (int b = 0; b < nb; b++) {
    int n = f.wstart[b + 1] - f.wstart[b];
    f.writer[b] = n == 0 ? -1 : n == 1 ? f.w[f.wstart[b]] : -2;
  }
  for (int i = 0; i < ni; i++) {
    const rt_instr *x = &p->instrs[i];
    for (int k = 0; k < RT_MAXIN; k++) {
      int b = x->in[k], again = 0;
      if (b < 0 || b >= nb) continue;
      for (int e = 0; e < k; e++) again |= x->in[e] == b;
      if (!again) f.readers[b]++;
      f.last_use[b] = i;
    }
  }
  for (int j = 0; j < ni; j++) {
    const rt_instr *x = &p->instrs[j];
    if (!candidate(p, x)) continue;
    f.tp[j] = tape_of(x);
    if (!is_f32(p, x->out)) continue;   /* a comparison: only taken into a later step */
    int32_t first[RT_MAXIN];          /* the buffers it read as lowered; each may bring its writer in */
    int n0 = f.tp[j]->nin;
    memcpy(first, f.tp[j]->in, sizeof first);
    for (int i = 0; i < n0; i++) dropped += absorb(&f, j, x, first[i]);
  }
  for (int j = 0; j < ni; j++)           /* reductions of what a chain alone makes */
    if (reduction(p, &p->instrs[j])) dropped += absorb_into_reduction(&f, j);
  if (dropped) {
    int n = 0;
    for (int i = 0; i < ni; i++) {
      tape *t = f.tp[i];
      if (f.gone[i]) continue;
      rt_instr *x = &p->instrs[i];
      int reduced = x->op == RT_REDUCE;   /* (absorb_into_reduction set its shape and mode) */
      if (t && is_f32(p, x->out) && (t->n > 1 || reduced || x->fn == RT_SELECT)) {   /* (a select alone: the fused kernel is the fast one) */
        rt_fused *fu = arena_alloc(&p->mem, sizeof *fu);
        memset(fu, 0, sizeof *fu);
        fu->nsteps = t->n;
        memcpy(fu->step, t->step, sizeof t->step[0] * (size_t)t->n);
        memcpy(fu->stride, t->st, sizeof t->st);
        x->op = RT_FUSED;
        if (!reduced) x->fn = 0;
        x->nin = (uint8_t)t->nin;
        for (int k = 0; k < RT_MAXIN; k++) x->in[k] = k < t->nin ? t->in[k] : -1;
        memset(x->stride, 0, sizeof x->stride);
        if (!reduced) x->alpha = x->beta = 0;
        x->data = fu;
      }
      p->instrs[n++] = *x;
    }
    p->ninstrs = n;
    rt_prog_finish(p);
  }
  for (int i = 0; i < ni; i++) free(f.tp[i]);
  free(f.tp);
  free(f.gone);
  free(f.wstart);
  free(f.w);
  free(f.writer);
  free(f.readers);
  free(f.last_use);
  return dropped;
}

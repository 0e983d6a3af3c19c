/*
** exec.c: the executor. Walks the instruction list once per run. A
** temporary lives from its first write to its last read; since the
** program is fixed, those lifetimes are known before the first run, and
** the temporaries are placed once in one block by a liveness plan (the
** largest first, each at the lowest offset free for its whole lifetime),
** so that two temporaries share memory whenever their lifetimes do not
** meet. The block is allocated at the first run and reused by every run:
** a training loop allocates nothing and touches no fresh page per step.
** Inputs get memory when set, outputs at their first write, and both stay.
** The peak is the memory really held: inputs, outputs and the block.
**
** Memory and kernels go through the backend's table alone, so the same
** walk runs on the CPU and on a GPU. On a device backend the kernels are
** queued, a run ends by waiting for them (errors found on the device are
** reported there, naming the instruction), and collectives over a
** communicator that takes host memory are staged through a host buffer.
*/
#include "util/diag.h"
#include "runtime/exec.h"
#include "runtime/zigzag.h"
#include "runtime/kern_index.h"
#include "runtime/mesh.h"
#include "runtime/plan.h"

#include <float.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/arena.h"

struct rt_exec {
  const rt_prog *p;
  const rt_backend *be;
  const rt_comm *comm;
  void **data;            /* per buffer; NULL until written or set, and after a temp's last read */
  rt_memplan plan;        /* where each temporary lives in the block (plan.h) */
  int32_t *free_start;    /* CSR: temps that die after instruction i */
  int32_t *free_list;
  unsigned char *block;   /* every temporary, as planned */
  size_t block_bytes;
  size_t held, peak;
  int checked;            /* program validated (once, at the first run) */
  int collectives;        /* the program has some */
  double *seconds;        /* per instruction, summed over runs (NULL: not profiling) */
  size_t stage_need;      /* host bytes the largest staged collective moves (in + out) */
  char *stage;            /* host staging for collectives on a device backend, made once */
  int watch;              /* look for the first non-finite f32 output (rt_exec_watch) */
  int first_nonfinite;    /* its instruction in the last run, or -1 */
};

/* Under AddressSanitizer every temporary gets an allocation of its own, so
** that a kernel writing past a temporary is caught rather than landing in
** the next one inside the planned block. */
#if defined(__SANITIZE_ADDRESS__)
#define SEPARATE_TEMPS 1
#else
#define SEPARATE_TEMPS 0
#endif


/* With temporaries allocated one by one: the input of instruction i whose
** place the plan gives to its result (plan.share: written over an input
** that dies there), so that the kernels' in-place paths run under the
** sanitizers too; -1 if none. */
static int handed_over(const rt_exec *e, const rt_instr *ins, int i) {
  const rt_prog *p = e->p;
  int o = ins->out;
  if (p->bufs[o].kind != RT_BUF_TEMP || e->plan.share[o] == o) return -1;
  for (int k = 0; k < RT_MAXIN; k++) {
    int b = ins->in[k];
    if (b >= 0 && b < p->nbufs && b != o && e->plan.share[b] == e->plan.share[o] && e->plan.last_use[b] == i && e->data[b])
      return b;
  }
  return -1;
}

static void *mem_get(rt_exec *e, size_t bytes) {
  void *q = e->be->alloc(e->be->ctx, bytes ? bytes : 1);
  if (q) {
    e->held += bytes;
    if (e->held > e->peak) e->peak = e->held;
  }
  return q;
}

/* ---- setup ---- */

rt_exec *rt_exec_new(const rt_prog *p, const rt_backend *be, const rt_comm *comm) {
  rt_exec *e = mem_calloc(1, sizeof *e);
  e->p = p;
  e->be = be;
  e->comm = comm;
  e->first_nonfinite = -1;
  int nb = p->nbufs, ni = p->ninstrs;
  e->data = mem_calloc((size_t)nb + 1, sizeof *e->data);
  rt_memplan_make(p, &e->plan);
  const int32_t *last = e->plan.last_use;
  for (int i = 0; i < ni; i++) {
    const rt_instr *ins = &p->instrs[i];
    if (rt_is_collective((rt_op)ins->op)) {
      e->collectives = 1;
      size_t by = 0;
      if (ins->out >= 0 && ins->out < nb) by += rt_buf_bytes(p, ins->out);
      if (ins->in[0] >= 0 && ins->in[0] < nb) by += rt_buf_bytes(p, ins->in[0]);
      if (by > e->stage_need) e->stage_need = by;
    }
  }
  /* temps to drop after each instruction, as compressed rows */
  e->free_start = mem_calloc((size_t)ni + 1, sizeof *e->free_start);
  int nfree = 0;
  for (int b = 0; b < nb; b++)
    if (p->bufs[b].kind == RT_BUF_TEMP && last[b] >= 0) { e->free_start[last[b] + 1]++; nfree++; }
  for (int i = 0; i < ni; i++) e->free_start[i + 1] += e->free_start[i];
  e->free_list = mem_alloc((size_t)(nfree ? nfree : 1) * sizeof *e->free_list);
  int32_t *fill = mem_calloc((size_t)ni + 1, sizeof *fill);
  for (int b = 0; b < nb; b++)
    if (p->bufs[b].kind == RT_BUF_TEMP && last[b] >= 0)
      e->free_list[e->free_start[last[b]] + fill[last[b]]++] = b;
  free(fill);
  e->block_bytes = e->plan.block;
  return e;
}

void rt_exec_profile(rt_exec *e) {
  if (!e->seconds) e->seconds = mem_calloc((size_t)e->p->ninstrs + 1, sizeof(double));
  else memset(e->seconds, 0, sizeof(double) * (size_t)e->p->ninstrs);   /* restart */
}

const double *rt_exec_seconds(const rt_exec *e) { return e->seconds; }

void rt_exec_free(rt_exec *e) {
  if (!e) return;
  free(e->seconds);
  free(e->stage);
  const rt_backend *be = e->be;
  for (int b = 0; b < e->p->nbufs; b++)
    if (e->data[b] && (SEPARATE_TEMPS || e->p->bufs[b].kind != RT_BUF_TEMP)) be->free(be->ctx, e->data[b]);
  if (e->block) be->free(be->ctx, e->block);
  free(e->data);
  rt_memplan_free(&e->plan);
  free(e->free_start);
  free(e->free_list);
  free(e);
}


static void shape_str(const rt_buf *b, char *s, size_t n) {
  int w = snprintf(s, n, "%s[", rt_dtype_name(b->dtype));
  for (int d = 0; d < b->rank && w > 0 && (size_t)w < n; d++)
    w += snprintf(s + w, n - w, "%s%" PRId64, d ? "," : "", b->shape[d]);
  if (w > 0 && (size_t)w < n) snprintf(s + w, n - w, "]");
}

/* input buf, checked against bytes, with memory of its own; NULL with a message */
static void *input_memory(rt_exec *e, int buf, size_t bytes, char *err, size_t errlen) {
  const rt_prog *p = e->p;
  if (buf < 0 || buf >= p->nbufs) { diag_errbuf(err, errlen, "no buffer b%d", buf); return NULL; }
  const rt_buf *b = &p->bufs[buf];
  if (b->kind != RT_BUF_INPUT) { diag_errbuf(err, errlen, "buffer b%d '%s' is not an input", buf, b->name); return NULL; }
  size_t want = rt_buf_bytes(p, buf);
  if (bytes != want) {
    char sh[160];
    shape_str(b, sh, sizeof sh);
    diag_errbuf(err, errlen, "input '%s' (%s) takes %zu bytes, got %zu", b->name, sh, want, bytes);
    return NULL;
  }
  if (!e->data[buf] && !(e->data[buf] = mem_get(e, want)))
    diag_errbuf(err, errlen, "out of memory for input '%s' (%zu bytes)", b->name, want);
  return e->data[buf];
}

int rt_exec_set(rt_exec *e, int buf, const void *data, size_t bytes, char *err, size_t errlen) {
  void *dst = input_memory(e, buf, bytes, err, errlen);
  if (!dst) return -1;
  if (bytes) return e->be->upload(e->be->ctx, dst, data, bytes, err, errlen);
  return 0;
}

void *rt_exec_input(rt_exec *e, int buf, size_t bytes, char *err, size_t errlen) {
  if (e->be->device_memory) {
    if (errlen) err[0] = 0;
    return NULL;
  }
  return input_memory(e, buf, bytes, err, errlen);
}

int rt_exec_get(rt_exec *e, int buf, void *dst, size_t bytes, char *err, size_t errlen) {
  const rt_prog *p = e->p;
  if (buf < 0 || buf >= p->nbufs) return diag_errbuf(err, errlen, "no buffer b%d", buf);
  const rt_buf *b = &p->bufs[buf];
  if (!e->data[buf]) return diag_errbuf(err, errlen, "buffer b%d '%s' has no value", buf, b->name);
  size_t have = rt_buf_bytes(p, buf);
  if (bytes != have) {
    char sh[160];
    shape_str(b, sh, sizeof sh);
    return diag_errbuf(err, errlen, "buffer '%s' (%s) holds %zu bytes, asked for %zu", b->name, sh, have, bytes);
  }
  if (have) return e->be->download(e->be->ctx, dst, e->data[buf], have, err, errlen);
  return 0;
}

void *rt_exec_data(rt_exec *e, int buf) {
  if (buf < 0 || buf >= e->p->nbufs || e->be->device_memory) return NULL;
  return e->data[buf];
}

size_t rt_exec_peak(const rt_exec *e) { return e->peak; }

void rt_exec_carry(rt_exec *e) {
  const rt_prog *p = e->p;
  for (int b = 0; b < p->nbufs; b++) {
    int c = p->bufs[b].carry_from;
    if (p->bufs[b].kind != RT_BUF_INPUT || c < 0 || c >= p->nbufs || !e->data[c]) continue;
    if (rt_buf_bytes(p, b) != rt_buf_bytes(p, c)) continue;    /* rejected by the check at run */
    void *t = e->data[b];
    e->data[b] = e->data[c];
    e->data[c] = t;          /* the old input's memory is the output's next time */
  }
}

/* ---- validation: sizes the kernels will touch, checked once ---- */

static const char *ins_name(const rt_instr *ins) {
  if (ins->op == RT_EW) return rt_ewfn_name((rt_ewfn)ins->fn);
  return rt_op_name((rt_op)ins->op);
}

static int ins_err(const rt_prog *p, int i, char *err, size_t errlen, const char *why) {
  const rt_instr *ins = &p->instrs[i];
  const char *nm = ins->out >= 0 && ins->out < p->nbufs ? p->bufs[ins->out].name : "?";
  return diag_errbuf(err, errlen, "instruction %d (%s -> b%d '%s'): %s", i, ins_name(ins), ins->out, nm, why);
}

/* slot: 0..3 an input, -1 the output. need < 0: slot optional and absent is fine */
static int want(const rt_prog *p, const rt_instr *ins, int slot, int64_t need, int exact, rt_dtype dt,
                int optional, char *why, size_t n) {
  int b = slot < 0 ? ins->out : ins->in[slot];
  char what[16];
  if (slot < 0) snprintf(what, sizeof what, "out");
  else snprintf(what, sizeof what, "in%d", slot);
  if (b < 0 && optional) return 0;
  if (b < 0 || b >= p->nbufs) return diag_errbuf(why, n, "%s names no buffer (b%d)", what, b);
  const rt_buf *bf = &p->bufs[b];
  if (bf->dtype != dt)
    return diag_errbuf(why, n, "%s b%d '%s' is %s, the op wants %s", what, b, bf->name,
                rt_dtype_name(bf->dtype), rt_dtype_name(dt));
  if (need < 0 || (exact ? bf->nelem != need : bf->nelem < need))
    return diag_errbuf(why, n, "%s b%d '%s' has %" PRId64 " elements, the op %s %" PRId64, what, b, bf->name,
                bf->nelem, slot < 0 || rt_instr_writes_in(ins, slot) ? "writes" : "reads", need);
  return 0;
}

static int64_t span_of(int rank, const int64_t *shape, const int64_t *stride) {
  int64_t hi = 0;
  for (int d = 0; d < rank; d++) {
    if (shape[d] <= 0) return 0;
    if (stride[d] < 0) return -1;
    hi += (shape[d] - 1) * stride[d];
  }
  return hi + 1;
}

/* A cross-entropy over split classes: its rows' max and sums of
** exponentials ([outer] each, both or neither), a group, and no loss
** written by the gradient. */
static int xent_split_ok(const rt_prog *p, const rt_instr *ins, rt_dtype F, char *why, size_t n) {
  if (ins->in[4] < 0 && ins->in[5] < 0) return 0;
  if (ins->group < 0 || ins->group >= p->ngroups) return diag_errbuf(why, n, "split classes need a group (group %d)", ins->group);
  if (ins->n2 < ins->n || ins->n2 < 1) return diag_errbuf(why, n, "%" PRId64 " classes here of %" PRId64 " in all", ins->n, ins->n2);
  if (ins->op == RT_XENT_GRAD && ins->in[3] >= 0) return diag_errbuf(why, n, "over split classes it writes no loss (in3)");
  return want(p, ins, 4, ins->outer, 1, F, 0, why, n) || want(p, ins, 5, ins->outer, 1, F, 0, why, n);
}

static int check_instr(const rt_prog *p, const rt_instr *ins, char *why, size_t n) {
  if (ins->op >= RT_NOPS) return diag_errbuf(why, n, "unknown op %d", ins->op);
  /* F: the float type of a composite op's operands, f64 where it writes f64 */
  int wide = rt_op_has_f64((rt_op)ins->op) && ins->out >= 0 && ins->out < p->nbufs && p->bufs[ins->out].dtype == RT_F64;
  const rt_dtype F = wide ? RT_F64 : RT_F32, I = RT_I32;
  int64_t O = ins->outer, N = ins->n, IN = ins->inner;
  if (O < 0 || N < 0 || IN < 0 || ins->m < 0 || ins->k < 0 || ins->n2 < 0)
    return diag_errbuf(why, n, "negative size");
  switch (ins->op) {
  case RT_FILL: case RT_IOTA:     /* check_prog has checked out */
    if (ins->op == RT_IOTA && O * N * IN != p->bufs[ins->out].nelem) return diag_errbuf(why, n, "iota of %" PRId64 " elements", O * N * IN);
    return want(p, ins, -1, p->bufs[ins->out].nelem, 1, p->bufs[ins->out].dtype, 0, why, n);
  case RT_CONST:
    if (!ins->data && p->bufs[ins->out].nelem > 0) return diag_errbuf(why, n, "a constant without data");
    return 0;
  case RT_COPY: {
    if (ins->out < 0 || ins->out >= p->nbufs) return diag_errbuf(why, n, "out names no buffer");
    const rt_buf *o = &p->bufs[ins->out];
    return want(p, ins, 0, o->nelem, 1, o->dtype, 0, why, n);
  }
  case RT_EW: {
    if (ins->rank > RT_MAXRANK) return diag_errbuf(why, n, "rank %d", ins->rank);
    int ar = rt_ewfn_arity((rt_ewfn)ins->fn);
    if (ar < 1) return diag_errbuf(why, n, "unknown function %d", ins->fn);
    int64_t tot = 1;
    for (int d = 0; d < ins->rank; d++) tot *= ins->shape[d];
    if (want(p, ins, -1, tot, 1, p->bufs[ins->out].dtype, 0, why, n)) return -1;
    for (int k = 0; k < ar; k++) {     /* inputs of any dtype: kernels convert as they read */
      rt_dtype dk = ins->in[k] >= 0 && ins->in[k] < p->nbufs ? p->bufs[ins->in[k]].dtype : F;
      if (want(p, ins, k, span_of(ins->rank, ins->shape, ins->stride[k]), 0, dk, 0, why, n)) return -1;
    }
    if (ins->in[3] >= 0) {             /* and the sum of its rows */
      if (ar > 2 || ins->rank < 1 || p->bufs[ins->out].dtype != F)
        return diag_errbuf(why, n, "a sum of rows needs an f32 result of one or two inputs");
      for (int k = 0; k < ar; k++)
        if (p->bufs[ins->in[k]].dtype != F || !rt_ew_dense(ins, k))
          return diag_errbuf(why, n, "a sum of rows needs dense f32 inputs; in%d is not", k);
      if (ins->in[3] == ins->out) return diag_errbuf(why, n, "in3 (the sum of rows) is also out");
      for (int k = 0; k < ar; k++)
        if (ins->in[3] == ins->in[k]) return diag_errbuf(why, n, "in3 (the sum of rows) is also in%d", k);
      if (want(p, ins, 3, ins->shape[ins->rank - 1], 1, F, 0, why, n)) return -1;
    }
    if ((ins->fn >= RT_CMP_EQ && ins->fn <= RT_CMP_GE) && p->bufs[ins->out].dtype != RT_I1)
      return diag_errbuf(why, n, "a comparison writes i1, not %s", rt_dtype_name(p->bufs[ins->out].dtype));
    if (ins->fn == RT_SELECT && p->bufs[ins->in[0]].dtype != RT_I1)
      return diag_errbuf(why, n, "select's predicate is %s, not i1", rt_dtype_name(p->bufs[ins->in[0]].dtype));
    return 0;
  }
  case RT_FUSED: {
    const rt_fused *fu = ins->data;
    if (!fu) return diag_errbuf(why, n, "fused steps without their list");
    if (ins->rank > RT_MAXRANK) return diag_errbuf(why, n, "rank %d", ins->rank);
    if (ins->nin > RT_MAXIN) return diag_errbuf(why, n, "%d inputs", ins->nin);
    if (fu->nsteps < 1 || fu->nsteps > RT_FUSE_MAXSTEPS) return diag_errbuf(why, n, "%d steps, not 1 to %d", fu->nsteps, RT_FUSE_MAXSTEPS);
    int64_t tot = 1;
    for (int d = 0; d < ins->rank; d++) tot *= ins->shape[d];
    if (ins->mode & RT_FUSED_REDUCE) {     /* the values viewed [outer, n, inner], reduced over n */
      if (ins->fn != RT_RSUM && ins->fn != RT_RMAX && ins->fn != RT_RMIN) return diag_errbuf(why, n, "unknown reduction %d", ins->fn);
      if (O * N * IN != tot) return diag_errbuf(why, n, "a reduction's view [%" PRId64 ", %" PRId64 ", %" PRId64 "] of %" PRId64 " values", O, N, IN, tot);
      if (want(p, ins, -1, O * IN, 1, RT_F32, 0, why, n)) return -1;
    } else if (want(p, ins, -1, tot, 1, RT_F32, 0, why, n)) return -1;
    for (int k = 0; k < ins->nin; k++) {
      int b = ins->in[k];
      rt_dtype dk = b >= 0 && b < p->nbufs && p->bufs[b].dtype == RT_I1 ? RT_I1 : RT_F32;
      if (want(p, ins, k, span_of(ins->rank, ins->shape, fu->stride[k]), 0, dk, 0, why, n)) return -1;
    }
    for (int j = 0; j < fu->nsteps; j++) {
      const rt_fstep *s = &fu->step[j];
      int ar = rt_fused_fn(s->fn, j == fu->nsteps - 1) ? rt_ewfn_arity((rt_ewfn)s->fn) : 0;
      if (ar < 1 || ar > 3) return diag_errbuf(why, n, "step %d: %s is not a fused function%s", j, rt_ewfn_name((rt_ewfn)s->fn),
                                               j == fu->nsteps - 1 ? " to end with" : "");
      for (int a = 0; a < ar; a++)
        if (s->arg[a] >= j || -1 - s->arg[a] >= ins->nin)
          return diag_errbuf(why, n, "step %d reads %s %d, which it cannot", j, s->arg[a] >= 0 ? "step" : "input",
                             s->arg[a] >= 0 ? s->arg[a] : -1 - s->arg[a]);
    }
    return 0;
  }
  case RT_TRANSPOSE: {
    if (ins->rank > RT_MAXRANK) return diag_errbuf(why, n, "rank %d", ins->rank);
    int64_t tot = 1;
    for (int d = 0; d < ins->rank; d++) tot *= ins->shape[d];
    if (ins->out < 0 || ins->out >= p->nbufs) return diag_errbuf(why, n, "out names no buffer");
    rt_dtype dt = p->bufs[ins->out].dtype;
    return want(p, ins, -1, tot, 1, dt, 0, why, n) || want(p, ins, 0, tot, 1, dt, 0, why, n);
  }
  case RT_GEMM: {
    int64_t bt = ins->batch < 1 ? 1 : ins->batch, m = ins->m, k = ins->k;
    rt_dtype dt = p->bufs[ins->out].dtype;      /* one dtype for the three */
    if (ins->stride_a < 0 || ins->stride_b < 0 || ins->stride_c < 0) return diag_errbuf(why, n, "negative stride");
    return want(p, ins, 0, (bt - 1) * ins->stride_a + m * k, 0, dt, 0, why, n) ||
           want(p, ins, 1, (bt - 1) * ins->stride_b + k * N, 0, dt, 0, why, n) ||
           want(p, ins, -1, (bt - 1) * ins->stride_c + m * N, 0, dt, 0, why, n);
  }
  case RT_REDUCE: {
    rt_dtype dt = p->bufs[ins->out].dtype;
    return want(p, ins, 0, O * N * IN, 1, dt, 0, why, n) || want(p, ins, -1, O * IN, 1, dt, 0, why, n);
  }
  case RT_REDUCE_MAX_GRAD:
    return want(p, ins, 0, O * N * IN, 1, F, 0, why, n) || want(p, ins, 1, O * IN, 1, F, 0, why, n) ||
           want(p, ins, -1, O * N * IN, 1, F, 0, why, n);
  case RT_SOFTMAX: case RT_LOG_SOFTMAX:
    return want(p, ins, 0, O * N, 1, F, 0, why, n) || want(p, ins, -1, O * N, 1, F, 0, why, n);
  case RT_SOFTMAX_GRAD: case RT_LOG_SOFTMAX_GRAD:
    return want(p, ins, 0, O * N, 1, F, 0, why, n) || want(p, ins, 1, O * N, 1, F, 0, why, n) ||
           want(p, ins, -1, O * N, 1, F, 0, why, n);
  case RT_LAYERNORM:
    if (ins->mode & ~RT_LN_RMS) return diag_errbuf(why, n, "mode %d", ins->mode);
    return want(p, ins, 0, O * N, 1, F, 0, why, n) || want(p, ins, 1, N, 1, F, 1, why, n) ||
           want(p, ins, 2, N, 1, F, 1, why, n) || want(p, ins, -1, O * N, 1, F, 0, why, n);
  case RT_LAYERNORM_GRAD:
    if (ins->mode & ~(RT_LN_GAMMA | RT_LN_RMS)) return diag_errbuf(why, n, "mode %d", ins->mode);
    if (ins->mode & RT_LN_GAMMA)
      return ins->in[1] >= 0 ? diag_errbuf(why, n, "in1: gamma's gradient reads no gamma") :
             want(p, ins, 0, O * N, 1, F, 0, why, n) || want(p, ins, 2, O * N, 1, F, 0, why, n) ||
             want(p, ins, -1, N, 1, F, 0, why, n);
    return want(p, ins, 0, O * N, 1, F, 0, why, n) || want(p, ins, 1, N, 1, F, 1, why, n) ||
           want(p, ins, 2, O * N, 1, F, 0, why, n) || want(p, ins, -1, O * N, 1, F, 0, why, n);
  case RT_GATHER_ROWS: {
    rt_dtype dt = p->bufs[ins->out].dtype;     /* rows of any dtype */
    if (ins->group >= p->ngroups) return diag_errbuf(why, n, "no group %d", ins->group);
    return want(p, ins, 0, N * IN, 1, dt, 0, why, n) || want(p, ins, 1, O, 1, I, 0, why, n) ||
           want(p, ins, -1, O * IN, 1, dt, 0, why, n);
  }
  case RT_GATHER: case RT_SCATTER:
    return rt_index_check(p, ins, why, n);
  case RT_SCATTER_ROWS:
    if (ins->group >= p->ngroups) return diag_errbuf(why, n, "no group %d", ins->group);
    return want(p, ins, 0, O, 1, I, 0, why, n) || want(p, ins, 1, O * IN, 1, F, 0, why, n) ||
           want(p, ins, -1, N * IN, 1, F, 0, why, n);
  case RT_XENT:
    return xent_split_ok(p, ins, F, why, n) || want(p, ins, 0, O * N, 1, F, 0, why, n) || want(p, ins, 1, O, 1, I, 0, why, n) ||
           want(p, ins, -1, 1, 1, F, 0, why, n);
  case RT_XENT_GRAD:
    return xent_split_ok(p, ins, F, why, n) || want(p, ins, 0, O * N, 1, F, 0, why, n) || want(p, ins, 1, O, 1, I, 0, why, n) ||
           want(p, ins, 2, 1, 1, F, 0, why, n) || want(p, ins, 3, 1, 1, F, 1, why, n) ||
           want(p, ins, -1, O * N, 1, F, 0, why, n);
  case RT_XENT_SUMEXP:
    return want(p, ins, 0, O * N, 1, F, 0, why, n) || want(p, ins, 1, O, 1, F, 0, why, n) || want(p, ins, -1, O, 1, F, 0, why, n);
  case RT_XENT_PROJ: {
    int64_t K = ins->k, R = ins->inner;
    if (K < 1 || R < 1 || R > O || ins->mode > 1) return diag_errbuf(why, n, "k %" PRId64 ", inner %" PRId64 ", mode %d", K, R, ins->mode);
    if (want(p, ins, 0, O * K, 1, F, 0, why, n) || want(p, ins, 1, N * K, 1, F, 0, why, n) ||
        want(p, ins, 2, O, 1, I, 0, why, n) || want(p, ins, 3, 1, 1, F, 0, why, n) || want(p, ins, 4, 1, 1, F, 0, why, n) ||
        want(p, ins, 5, N * K, 1, F, 0, why, n) || want(p, ins, 6, R * N, 1, F, 0, why, n) || want(p, ins, -1, O * K, 1, F, 0, why, n))
      return -1;
    for (int a = 0; a < 7; a++) {    /* read and written a chunk at a time: no two may share */
      if (ins->out == ins->in[a]) return diag_errbuf(why, n, "out is also in%d", a);
      for (int b = a + 1; b < 7; b++)
        if (ins->in[a] == ins->in[b]) return diag_errbuf(why, n, "in%d and in%d share a buffer", a, b);
    }
    return 0;
  }
  case RT_ADAM: case RT_SGD: {
    if (ins->out < 0 || ins->out >= p->nbufs) return diag_errbuf(why, n, "out names no buffer");
    int64_t e = p->bufs[ins->out].nelem;
    int adam = ins->op == RT_ADAM;
    if (ins->mode & ~(adam ? RT_ADAM_DECOUPLED : 0)) return diag_errbuf(why, n, "mode %d", ins->mode);
    for (int k = 1; k <= 2 + adam; k++)     /* out over g or the state: p would be copied over them first */
      if (ins->out != ins->in[0] && ins->in[k] == ins->out)
        return diag_errbuf(why, n, "out is also in%d; an update writes p's buffer (in0) or one of its own", k);
    return want(p, ins, -1, e, 1, F, 0, why, n) || want(p, ins, 0, e, 1, F, 0, why, n) || want(p, ins, 1, e, 1, F, 0, why, n) ||
           want(p, ins, 2, e, 1, F, !adam, why, n) || (adam && (want(p, ins, 3, e, 1, F, 0, why, n) ||
           want(p, ins, 4, 1, 1, F, 0, why, n) || want(p, ins, 5, 1, 1, F, 0, why, n))) ||
           want(p, ins, 6, 1, 1, RT_I1, 1, why, n);      /* a dynamic loss scale's "finite": 0 skips the update */
  }
  case RT_ATTENTION: case RT_ATTENTION_GRAD: {
    int64_t e = O * ins->m * ins->k, grad = ins->op == RT_ATTENTION_GRAD;
    if (ins->mode > 31 || (!grad && (ins->mode & RT_ATTN_BSHD_DY)))
      return diag_errbuf(why, n, "layout bits %d", ins->mode);
    if (ins->mode && (ins->n2 < 1 || O % ins->n2 != 0 || ins->n2 > INT32_MAX / 4 / (ins->k ? ins->k : 1)))
      return diag_errbuf(why, n, "%" PRId64 " heads for %" PRId64 " slices of width %" PRId64, ins->n2, O, ins->k);
    for (int i = 0; i < 3 + grad; i++)
      if (want(p, ins, i, e, 1, F, 0, why, n)) return -1;
    return want(p, ins, -1, grad ? 3 * e : e, 1, F, 0, why, n);
  }
  case RT_ATTN_BLOCK: case RT_ATTN_BLOCK_GRAD: {
    if (ins->group >= p->ngroups) return diag_errbuf(why, n, "no group %d", ins->group);
    int64_t eq = O * ins->m * ins->k, ek = O * ins->n * ins->k;
    if (ins->op == RT_ATTN_BLOCK)
      return want(p, ins, -1, eq, 1, F, 0, why, n) || want(p, ins, 0, eq, 1, F, 0, why, n) || want(p, ins, 1, ek, 1, F, 0, why, n) ||
             want(p, ins, 2, ek, 1, F, 0, why, n) || want(p, ins, 3, O * ins->m, 1, F, 0, why, n) || want(p, ins, 4, O * ins->m, 1, F, 0, why, n);
    return want(p, ins, -1, eq, 1, F, 0, why, n) || want(p, ins, 0, eq, 1, F, 0, why, n) || want(p, ins, 1, ek, 1, F, 0, why, n) ||
           want(p, ins, 2, ek, 1, F, 0, why, n) || want(p, ins, 3, eq, 1, F, 0, why, n) || want(p, ins, 4, O * ins->m, 1, F, 0, why, n) ||
           want(p, ins, 5, O * ins->m, 1, F, 0, why, n) || want(p, ins, 6, ek, 1, F, 0, why, n) || want(p, ins, 7, ek, 1, F, 0, why, n);
  }
  case RT_ATTN_FINISH: {
    int64_t e = O * ins->m * ins->k;
    return want(p, ins, -1, e, 1, F, 0, why, n) || want(p, ins, 0, e, 1, F, 0, why, n) || want(p, ins, 1, O * ins->m, 1, F, 0, why, n) ||
           want(p, ins, 2, O * ins->m, 1, F, 0, why, n) || want(p, ins, 3, O * ins->m, 1, F, 1, why, n);
  }
  case RT_CAUSAL_MASK:
    if (ins->group >= p->ngroups) return diag_errbuf(why, n, "no group %d", ins->group);
    return want(p, ins, 0, O * ins->m * N, 1, F, 0, why, n) || want(p, ins, -1, O * ins->m * N, 1, F, 0, why, n);
  case RT_BLOCK_COPY: {
    int64_t m = ins->m > 0 ? ins->m : N;
    if (ins->off < 0 || ins->off + N > ins->n2)
      return diag_errbuf(why, n, "block [%" PRId64 ", %" PRId64 ") outside [0, %" PRId64 ")", ins->off, ins->off + N, ins->n2);
    if (ins->k < 0 || ins->k + N > m)
      return diag_errbuf(why, n, "rows [%" PRId64 ", %" PRId64 ") outside [0, %" PRId64 ")", ins->k, ins->k + N, m);
    rt_dtype dt = p->bufs[ins->out].dtype;
    return want(p, ins, 0, O * m * IN, 1, dt, 0, why, n) || want(p, ins, -1, O * ins->n2 * IN, 1, dt, 0, why, n);
  }
  case RT_SHARD_SLICE: {
    if (ins->out < 0 || ins->out >= p->nbufs) return diag_errbuf(why, n, "out names no buffer");
    if (ins->group < 0 || ins->group >= p->ngroups) return diag_errbuf(why, n, "no group %d", ins->group);
    rt_dtype dt = p->bufs[ins->out].dtype;
    return want(p, ins, 0, O * N * IN, 1, dt, 0, why, n) || want(p, ins, -1, 0, 0, dt, 0, why, n);
  }
  default:    /* collectives: the communicator checks what it sends */
    if (ins->group < 0 || ins->group >= p->ngroups) return diag_errbuf(why, n, "no group %d", ins->group);
    if (ins->out < 0 || ins->out >= p->nbufs) return diag_errbuf(why, n, "out names no buffer");
    if (ins->op == RT_RECV) return 0;                 /* reads nothing here */
    if (ins->op == RT_SEND && ins->in[0] != ins->out) return diag_errbuf(why, n, "a send writes nothing (out is in0)");
    return want(p, ins, 0, 0, 0, p->bufs[ins->out].dtype, 0, why, n);
  }
}

static int check_prog(const rt_prog *p, const rt_backend *be, char *err, size_t errlen) {
  char why[256];
  for (int b = 0; b < p->nbufs; b++) {
    rt_dtype t = p->bufs[b].dtype;
    if ((unsigned)t >= RT_NDTYPES)
      return diag_errbuf(err, errlen, "buffer b%d '%s' has no known dtype (%d)", b, p->bufs[b].name, (int)t);
    if (!(be->dtypes >> t & 1u))
      return diag_errbuf(err, errlen, "the %s backend has no %s kernels, and '%s' is %s; run the program with --device-kind cpu",
                         be->name, rt_dtype_name(t), p->bufs[b].name, rt_dtype_name(t));
  }
  for (int i = 0; i < p->ninstrs; i++) {
    const rt_instr *ins = &p->instrs[i];
    if (ins->op == RT_EW && ins->fn < RT_NEWFN && ins->fn >= be->newfn) {
      snprintf(why, sizeof why, "the %s backend has no kernel for %s; run the program with --device-kind cpu", be->name,
               rt_ewfn_name((rt_ewfn)ins->fn));
      return ins_err(p, i, err, errlen, why);
    }
    if (ins->out < 0 || ins->out >= p->nbufs) {
      snprintf(why, sizeof why, "writes no buffer (b%d)", ins->out);
      return ins_err(p, i, err, errlen, why);
    }
    for (int k = 0; k < RT_MAXIN; k++)
      if (ins->in[k] < -1 || ins->in[k] >= p->nbufs) {
        snprintf(why, sizeof why, "in%d names no buffer (b%d)", k, ins->in[k]);
        return ins_err(p, i, err, errlen, why);
      }
    if ((rt_xent_split(ins) || ((ins->op == RT_GATHER_ROWS || ins->op == RT_SCATTER_ROWS) && ins->n < ins->n2)) &&
        rt_mesh_zigzag(p, ins->group)) {
      snprintf(why, sizeof why, "its %s are split over an axis dealt zig-zag; use balance = \"none\"",
               ins->op == RT_GATHER_ROWS || ins->op == RT_SCATTER_ROWS ? "table's rows" : "classes");
      return ins_err(p, i, err, errlen, why);
    }
    if (p->zigzag && be->device_memory && rt_is_collective((rt_op)ins->op) && rt_mesh_zigzag(p, ins->group)) {
      snprintf(why, sizeof why, "a sequence dealt zig-zag (the context tactic's balance) runs on the cpu backend only for now; "
               "run with --device-kind cpu");
      return ins_err(p, i, err, errlen, why);
    }
    if ((ins->op == RT_SEND || ins->op == RT_RECV) && be->device_memory) {
      snprintf(why, sizeof why, "point-to-point transfers (pipeline stages, ring attention) run on the cpu backend only for now; "
               "run with --device-kind cpu");
      return ins_err(p, i, err, errlen, why);
    }
    if (check_instr(p, ins, why, sizeof why)) return ins_err(p, i, err, errlen, why);
  }
  for (int b = 0; b < p->nbufs; b++) {
    int c = p->bufs[b].carry_from;
    if (c < 0) continue;
    if (c >= p->nbufs || rt_buf_bytes(p, b) != rt_buf_bytes(p, c) || p->bufs[c].kind == RT_BUF_TEMP)
      return diag_errbuf(err, errlen, "buffer b%d '%s' carries from b%d, which is not an output of its size", b,
                  p->bufs[b].name, c);
  }
  return 0;
}

/* ---- running ---- */

static int group_size(const rt_exec *e, int g) {
  if (e->comm) return e->comm->size(e->comm->impl, g);
  int64_t P = 1;
  for (int i = 0; i < e->p->groups[g].naxes; i++) {
    int ax = e->p->groups[g].axes[i];
    if (ax >= 0 && ax < e->p->mesh_rank) P *= e->p->mesh[ax];
  }
  return (int)P;
}

/* this device's index in a group (0 of 1 on one device) */
static int device_index(const rt_exec *e, int g, int *q, char *why, size_t n) {
  int P = group_size(e, g);
  *q = 0;
  if (P > 1 && !e->comm) return diag_errbuf(why, n, "a split over %d devices needs a communicator", P);
  if (P > 1) *q = e->comm->index(e->comm->impl, g);
  if (P < 1 || *q < 0 || *q >= P) return diag_errbuf(why, n, "device %d of %d", *q, P);
  return 0;
}

/* This device's piece of a shard slice, for the backend's kernel: rows
   [off, off + n2) of in0 [outer, n, inner] (see backend.h); *qp its index
   in the group, *Pp the group's size. */
static int shard_piece(rt_exec *e, rt_instr *fixed, int *qp, int *Pp, char *why, size_t n) {
  int P = group_size(e, fixed->group), q = 0;
  if (device_index(e, fixed->group, &q, why, n)) return -1;
  *qp = q;
  *Pp = P;
  int64_t N = fixed->n, inner = fixed->inner;
  if (N % P) return diag_errbuf(why, n, "%" PRId64 " does not split into %d pieces", N, P);
  int64_t piece = N / P;
  if (e->p->bufs[fixed->out].nelem != fixed->outer * piece * inner)
    return diag_errbuf(why, n, "out has %" PRId64 " elements, the slice is %" PRId64, e->p->bufs[fixed->out].nelem,
                fixed->outer * piece * inner);
  fixed->n2 = piece;
  fixed->off = q * piece;
  return 0;
}

/* A collective whose communicator takes host memory, on a device backend:
   in0 down to host memory, the collective there, out back up. The host
   buffer is made at the first one, as large as the largest needs. */
static int staged_collective(rt_exec *e, const rt_instr *ins, void *out, const void *in, char *why, size_t n) {
  const rt_backend *be = e->be;
  const rt_prog *p = e->p;
  size_t bi = rt_buf_bytes(p, ins->in[0]), bo = rt_buf_bytes(p, ins->out);
  if (!e->stage) {
    e->stage = malloc(e->stage_need ? e->stage_need : 1);
    if (!e->stage) return diag_errbuf(why, n, "out of host memory for staging collectives (%zu bytes)", e->stage_need);
  }
  char *hin = e->stage, *hout = e->stage + bi;
  if (be->download(be->ctx, hin, in, bi, why, n)) return -1;
  if (e->comm->run(e->comm->impl, ins, hout, hin, why, n)) return -1;
  return be->upload(be->ctx, out, hout, bo, why, n);
}

/* An error the device found, reported by sync: name the instruction that
   wrote the buffer it names (the last kernel to write it that can fail). */
static int device_error(const rt_exec *e, int where, const char *msg, char *err, size_t errlen) {
  const rt_prog *p = e->p;
  int at = -1;
  for (int i = 0; i < p->ninstrs; i++)
    if (p->instrs[i].out == where && where >= 0) at = i;
  if (at < 0) return diag_errbuf(err, errlen, "%s", msg);
  return ins_err(p, at, err, errlen, msg);
}

/* No NaN and no +Inf in x. -Inf is left alone: a causal mask writes it on
** purpose, and the softmax after it turns it into zeros. */
static int all_finite(const float *x, int64_t n) {
  int bad = 0;
  for (int64_t k = 0; k < n; k++) bad |= (x[k] != x[k]) | (x[k] > FLT_MAX);
  return !bad;
}

void rt_exec_watch(rt_exec *e, int on) { e->watch = on; }

size_t rt_exec_need(const rt_exec *e) {
  const rt_prog *p = e->p;
  size_t n = e->plan.block;
  for (int b = 0; b < p->nbufs; b++)
    if (p->bufs[b].kind != RT_BUF_TEMP) n += rt_buf_bytes(p, b);
  return n;
}
int rt_exec_first_nonfinite(const rt_exec *e) { return e->first_nonfinite; }

/* memory for b, about to be written: its place in the block, the
** allocation of `from` (written over), or its own; -1: out of memory */
static int place(rt_exec *e, int b, int from) {
  if (e->p->bufs[b].kind == RT_BUF_TEMP && !SEPARATE_TEMPS) {
    e->data[b] = e->block + e->plan.offset[b];
  } else if (from >= 0) {     /* written over its input: the input's allocation is b's now */
    e->data[b] = e->data[from];
    e->data[from] = NULL;
  } else {
    e->data[b] = mem_get(e, rt_buf_bytes(e->p, b));
    if (!e->data[b]) return -1;
  }
  return 0;
}

static int run_program(rt_exec *e, char *err, size_t errlen);

int rt_exec_run(rt_exec *e, char *err, size_t errlen) {
  int rc = run_program(e, err, errlen);
  if (rc && e->comm && e->comm->abandon) e->comm->abandon(e->comm->impl);   /* the mesh's others stop waiting for this device */
  return rc;
}

static int run_program(rt_exec *e, char *err, size_t errlen) {
  const rt_prog *p = e->p;
  if (!e->checked) {
    if (check_prog(p, e->be, err, errlen)) return -1;
    e->checked = 1;
  }
  if (e->collectives && !e->comm) return diag_errbuf(err, errlen, "program needs collectives but runs on one device");
  if (!SEPARATE_TEMPS && !e->block && e->block_bytes) {
    e->block = mem_get(e, e->block_bytes);
    if (!e->block) return diag_errbuf(err, errlen, "out of memory for temporaries (%zu bytes)", e->block_bytes);
  }
  const rt_backend *be = e->be;
  for (int b = 0; b < p->nbufs; b++)          /* temps left over from a failed run */
    if (p->bufs[b].kind == RT_BUF_TEMP) {
      if (SEPARATE_TEMPS && e->data[b]) { be->free(be->ctx, e->data[b]); e->held -= rt_buf_bytes(p, b); }
      e->data[b] = NULL;
    }
  int devsync = be->device_memory && be->sync;   /* kernels are queued: wait at the end */
  int watch = e->watch && !be->device_memory;
  e->first_nonfinite = -1;
  char why[512];
  for (int i = 0; i < p->ninstrs; i++) {
    const rt_instr *ins = &p->instrs[i];
    void *in[RT_MAXIN];
    for (int k = 0; k < RT_MAXIN; k++) {
      int b = ins->in[k];
      if (b >= 0 && !e->data[b] && rt_instr_writes_in(ins, k) && p->bufs[b].kind != RT_BUF_INPUT && place(e, b, -1) < 0) {
        snprintf(why, sizeof why, "out of memory (%zu bytes)", rt_buf_bytes(p, b));
        return ins_err(p, i, err, errlen, why);
      }
      in[k] = b >= 0 ? e->data[b] : NULL;
      if (b >= 0 && !in[k]) {
        snprintf(why, sizeof why, "%s b%d '%s' has no value yet%s", p->bufs[b].kind == RT_BUF_INPUT ? "input" : "buffer",
                 b, p->bufs[b].name, p->bufs[b].kind == RT_BUF_INPUT ? " (not set)" : "");
        return ins_err(p, i, err, errlen, why);
      }
    }
    int o = ins->out;
    if (!e->data[o] && place(e, o, SEPARATE_TEMPS ? handed_over(e, ins, i) : -1) < 0) {
      snprintf(why, sizeof why, "out of memory (%zu bytes)", rt_buf_bytes(p, o));
      return ins_err(p, i, err, errlen, why);
    }
    /* ops that write only part of out (or add to it) start from zeros */
    if (i == e->plan.first_write[o] &&
        ((ins->op == RT_BLOCK_COPY && ins->n < ins->n2) ||
         ((ins->op == RT_GEMM || ins->op == RT_SCATTER_ROWS) && ins->beta != 0.0f)) &&
        be->zero(be->ctx, e->data[o], rt_buf_bytes(p, o), why, sizeof why))
      return ins_err(p, i, err, errlen, why);
    rt_instr fixed;
    if (ins->nelem != p->bufs[o].nelem || ins->odt != p->bufs[o].dtype) {     /* rt_prog_finish not called */
      fixed = *ins;
      fixed.nelem = p->bufs[o].nelem;
      rt_instr_dtypes(p, &fixed);
      ins = &fixed;
    }
    if (rt_xent_split(ins) || ((ins->op == RT_GATHER_ROWS || ins->op == RT_SCATTER_ROWS) && ins->group >= 0 &&
        ins->n < (ins->n2 > 0 ? ins->n2 : ins->n))) {
      /* a table split by rows, or cross-entropy's classes: this device holds
         piece q of the group (a whole table, n == n2, has no piece to offset
         whatever group says) */
      int q = 0, P = group_size(e, ins->group);
      if ((int64_t)P * ins->n != ins->n2) {
        snprintf(why, sizeof why, "%s of %" PRId64 " %s in pieces of %" PRId64 " does not split over the %d "
                 "devices of its group", rt_xent_split(ins) ? "a cross-entropy" : "a table", ins->n2,
                 rt_xent_split(ins) ? "classes" : "rows", ins->n, P);
        return ins_err(p, i, err, errlen, why);
      }
      if (device_index(e, ins->group, &q, why, sizeof why)) return ins_err(p, i, err, errlen, why);
      if (ins != &fixed) { fixed = *ins; ins = &fixed; }
      fixed.off += (int64_t)q * fixed.n;
    }
    int zq = -1, zP = 0;        /* a slice or mask of rows dealt zig-zag: at index zq of zP (runtime/zigzag.c) */
    if (ins->op == RT_CAUSAL_MASK && ins->group >= 0) {
      /* the rows (the queries) split over the group: this device's first
         row is row q m of the whole, and the mask keeps what it keeps there */
      int q = 0, P = group_size(e, ins->group);
      if ((int64_t)P * ins->m != ins->n2) {
        snprintf(why, sizeof why, "a causal mask of %" PRId64 " rows in pieces of %" PRId64 " does not split over the %d devices "
                 "of its group", ins->n2, ins->m, P);
        return ins_err(p, i, err, errlen, why);
      }
      if (device_index(e, ins->group, &q, why, sizeof why)) return ins_err(p, i, err, errlen, why);
      if (rt_mesh_zigzag(p, ins->group)) { zq = q; zP = P; }
      else {
        if (ins != &fixed) { fixed = *ins; ins = &fixed; }
        fixed.off += (int64_t)q * fixed.m;
      }
    }
    if ((ins->op == RT_ATTN_BLOCK || ins->op == RT_ATTN_BLOCK_GRAD) && ins->group >= 0) {
      /* a ring's step: this device's queries, and the key block it holds
         split_dim steps on (the block of the device that many places back) */
      int q = 0;
      if (device_index(e, ins->group, &q, why, sizeof why)) return ins_err(p, i, err, errlen, why);
      if (rt_mesh_ring_block(p, ins, q, &fixed) < 0) return ins_err(p, i, err, errlen, "a ring block that does not halve for the zig-zag order");
      ins = &fixed;
    }
    if (ins->op == RT_SHARD_SLICE) {
      if (ins != &fixed) { fixed = *ins; ins = &fixed; }
      int q, P;
      if (shard_piece(e, &fixed, &q, &P, why, sizeof why)) return ins_err(p, i, err, errlen, why);
      if (rt_mesh_zigzag(p, ins->group)) zq = q, zP = P;
    }
    int rc;
    why[0] = 0;
    struct timespec t0;
    if (e->seconds) clock_gettime(CLOCK_MONOTONIC, &t0);
    if (rt_is_collective((rt_op)ins->op)) {
      if (be->device_memory && !e->comm->device_aware) rc = staged_collective(e, ins, e->data[o], in[0], why, sizeof why);
      else if ((ins->op == RT_ALL_GATHER || ins->op == RT_REDUCE_SCATTER || ins->op == RT_ALL_TO_ALL) && rt_mesh_zigzag(p, ins->group))
        rc = rt_zz_collective(p, e->comm, ins, e->data[o], in[0], why, sizeof why);
      else rc = e->comm->run(e->comm->impl, ins, e->data[o], in[0], why, sizeof why);
    } else if (zP) {
      rc = rt_zz_rows(p, be, ins, zq, zP, e->data[o], in, why, sizeof why);
    } else if (be->kernels[ins->op]) {
      rc = be->kernels[ins->op](be->ctx, ins, e->data[o], in, why, sizeof why);
    } else {
      rc = diag_errbuf(why, sizeof why, "no %s kernel for %s", be->name, rt_op_name((rt_op)ins->op));
    }
    if (e->seconds) {
      if (!rc && devsync) {     /* the time of the work, not of queueing it */
        int where = -1;
        if (be->sync(be->ctx, &where, why, sizeof why)) return ins_err(p, i, err, errlen, why);
      }
      struct timespec t1;
      clock_gettime(CLOCK_MONOTONIC, &t1);
      e->seconds[i] += (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    }
    if (rc) {
      if (!why[0]) snprintf(why, sizeof why, "failed");
      if (devsync) {            /* let queued work finish before the caller reuses memory */
        char ignored[64];
        int where = -1;
        be->sync(be->ctx, &where, ignored, sizeof ignored);
      }
      return ins_err(p, i, err, errlen, why);
    }
    if (watch && e->first_nonfinite < 0 && p->bufs[o].dtype == RT_F32 && !all_finite(e->data[o], p->bufs[o].nelem))
      e->first_nonfinite = i;
    for (int j = e->free_start[i]; j < e->free_start[i + 1]; j++) {
      int b = e->free_list[j];
      if (SEPARATE_TEMPS && e->data[b]) { be->free(be->ctx, e->data[b]); e->held -= rt_buf_bytes(p, b); }
      e->data[b] = NULL;
    }
  }
  if (devsync) {
    int where = -1;
    if (be->sync(be->ctx, &where, why, sizeof why)) return device_error(e, where, why, err, errlen);
  }
  return 0;
}

/*
** pipe_sched.c: the order in which a pipeline stage runs its microbatches'
** passes: GPipe, 1F1B, interleaved 1F1B (Megatron's virtual stages), and
** the zero-bubble ZB-H1 schedule, whose backward work that makes only
** weights' gradients runs apart from the rest, later; and the helpers
** pipeline.c shares with it (a file that depends on no other of the pass).
*/
#include "interp/lower/pipe_int.h"
#include "util/mem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int pipe_fail(pctx *c, int i, const char *what) {
  if (c->failed) return -1;
  c->failed = 1;
  int src = i >= 0 ? c->ins[i].src : -1;
  const ir_value *v = src >= 0 ? c->g->vals[src] : NULL;
  if (v) return diag_error(c->d, v->at.src ? v->at : c->plan->pipe.at, "pipeline: '%s' %s", v->name, what);
  return diag_error(c->d, c->plan->pipe.at, "pipeline: %s", what);
}

/* Does x read b: an operand, or what it adds to or keeps of its own result? */
int pipe_reads(const rt_instr *x, int b) {
  for (int k = 0; k < RT_MAXIN; k++) {
    if (x->in[k] != b) continue;
    if (!rt_instr_writes_in(x, k)) return 1;
    if (x->op == RT_ADAM || x->op == RT_SGD || (x->op == RT_XENT_PROJ && k == 5 && x->mode == 1) || x->op == RT_ATTN_BLOCK ||
        x->op == RT_ATTN_BLOCK_GRAD)
      return 1;
  }
  if (x->out != b) return 0;
  return ((x->op == RT_GEMM || x->op == RT_SCATTER_ROWS) && x->beta != 0.0f) || (x->op == RT_BLOCK_COPY && x->n < x->n2) ||
         x->op == RT_ATTN_BLOCK || x->op == RT_ATTN_BLOCK_GRAD;
}

/* The pass instruction i runs in: 0 forward, 1 backward; under the
   zero-bubble schedule 2 for the backward work that only makes weights'
   gradients, run later to fill what would be idle time. */
int pipe_pass_of(const pctx *c, int i) { return !c->bwd[i] ? 0 : c->wpass && c->wpass[i] ? 2 : 1; }

/* The backward work that makes only weights' gradients (the W pass of the
   zero-bubble schedules): a varying backward instruction whose result
   only such work and the sums over the microbatches read, and no other
   stage (what an earlier stage waits for is the B pass's), that writes
   nothing in place, and whose operands and result nothing outside it
   writes later (so that running it after the rest of the microbatch's
   backward, and after later microbatches' work, reads and writes what it
   did in the program's order). Found in reverse program order. */
void pipe_weight_pass(pctx *c) {
  int nb = c->p->nbufs;
  char *later_read = mem_calloc((size_t)nb + 1, 1), *later_written = mem_calloc((size_t)nb + 1, 1);
  uint64_t *read_on = mem_calloc((size_t)nb + 1, sizeof *read_on);   /* buffer -> the stages that read it later */
  c->wpass = mem_calloc((size_t)c->n0 + 1, 1);
  for (int i = c->n0 - 1; i >= 0; i--) {
    const rt_instr *x = &c->ins[i];
    if (!c->vary[i] && !c->acc[i]) continue;   /* runs before or after every microbatch */
    for (int k = 0; k < RT_MAXIN; k++) if (x->in[k] >= 0) read_on[x->in[k]] |= c->imask[i];
    int w = c->bwd[i] && x->op != RT_SEND && x->op != RT_RECV && x->out >= 0 && !later_read[x->out] && !later_written[x->out] &&
            !(read_on[x->out] & ~c->imask[i]);
    for (int k = 0; k < RT_MAXIN && w; k++)
      if (x->in[k] >= 0 && (rt_instr_writes_in(x, k) || later_written[x->in[k]])) w = 0;
    c->wpass[i] = (char)w;
    if (w) continue;
    for (int k = 0; k < RT_MAXIN; k++) {
      if (x->in[k] < 0) continue;
      if (pipe_reads(x, x->in[k])) later_read[x->in[k]] = 1;
      if (rt_instr_writes_in(x, k)) later_written[x->in[k]] = 1;
    }
    if (x->out >= 0 && x->op != RT_SEND) {
      if (pipe_reads(x, x->out)) later_read[x->out] = 1;
      later_written[x->out] = 1;
    }
  }
  free(later_read);
  free(later_written);
  free(read_on);
}

/* A rough count of an instruction's work, to weigh the passes against
   each other: a contraction's multiply-adds, else its elements. */
static double work_of(const rt_prog *p, const rt_instr *x) {
  double e = (double)rt_instr_elems(p, x);
  switch (x->op) {
  case RT_GEMM: return (double)(x->batch > 1 ? x->batch : 1) * (double)x->m * (double)x->n * (double)x->k;
  case RT_ATTENTION: return 2.0 * (double)x->outer * (double)x->m * (double)x->m * (double)x->k;
  case RT_ATTENTION_GRAD: return 4.0 * (double)x->outer * (double)x->m * (double)x->m * (double)x->k;
  case RT_XENT_PROJ: return 3.0 * (double)x->outer * (double)x->n * (double)x->k;
  default: return e > 1 ? e : 1;
  }
}

/* The zero-bubble schedule (ZB-H1 of Qi et al., "Zero Bubble Pipeline
   Parallelism", 2024), made by playing the stages against each other with
   each pass weighed by its work: a stage runs a backward pass as soon as
   its gradient has come, else a forward pass while it holds fewer than
   stages - s microbatches not yet through their backward (1F1B's bound)
   and fewer than stages not yet through their weights' gradients, else the
   oldest weights' gradients still to make. The W passes so fill the time
   1F1B's stages spend waiting at the end of the step. */
void pipe_zero_bubble(pctx *c) {
  int P = c->P, M = c->M, left = 3 * M * P;
  double (*cost)[3] = mem_calloc((size_t)P, sizeof *cost), total = 0;
  for (int i = 0; i < c->n0; i++)
    if (c->vary[i] || c->acc[i])
      for (int s = 0; s < P; s++)
        if (c->imask[i] >> s & 1) cost[s][pipe_pass_of(c, i)] += work_of(c->p, &c->ins[i]), total += work_of(c->p, &c->ins[i]);
  for (int s = 0; s < P; s++)
    for (int k = 0; k < 3; k++) cost[s][k] += 1e-6 * total + 1;   /* no pass takes no time */
  int *nf = mem_calloc((size_t)P, sizeof(int)), *nbk = mem_calloc((size_t)P, sizeof(int)), *nw = mem_calloc((size_t)P, sizeof(int));
  double *fdone = mem_alloc(sizeof(double) * (size_t)(P * M)), *bdone = mem_alloc(sizeof(double) * (size_t)(P * M));
  double *free_at = mem_calloc((size_t)P, sizeof(double)), t = 0;
  c->zb = mem_calloc((size_t)P, sizeof *c->zb);
  for (int s = 0; s < P; s++) c->zb[s] = mem_alloc(sizeof(slot) * (size_t)(3 * M));
  while (left > 0) {
    for (int moved = 1; moved;) {
      moved = 0;
      for (int s = 0; s < P; s++) {
        if (free_at[s] > t || nw[s] == M) continue;
        int j = nbk[s], back = -1;
        if (j < nf[s] && fdone[s * M + j] <= t && (s == P - 1 || (nbk[s + 1] > j && bdone[(s + 1) * M + j] <= t))) back = 1;
        else if ((j = nf[s]) < M && nf[s] - nbk[s] < P - s && nf[s] - nw[s] < P && (s == 0 || (nf[s - 1] > j && fdone[(s - 1) * M + j] <= t)))
          back = 0;
        else if ((j = nw[s]) < nbk[s]) back = 2;
        if (back < 0) continue;
        free_at[s] = t + cost[s][back];
        if (back == 0) fdone[s * M + nf[s]++] = free_at[s];
        else if (back == 1) bdone[s * M + nbk[s]++] = free_at[s];
        else nw[s]++;
        c->zb[s][nf[s] + nbk[s] + nw[s] - 1] = (slot){back, 0, j};
        left--;
        moved = 1;
      }
    }
    double next = -1;                    /* the next time a stage is free */
    for (int s = 0; s < P; s++) if (free_at[s] > t && (next < 0 || free_at[s] < next)) next = free_at[s];
    if (next < 0 && left > 0) { pipe_fail(c, -1, "internal error: the zero-bubble schedule stalls"); break; }
    t = next;
  }
  free(cost); free(nf); free(nbk); free(nw); free(fdone); free(bdone); free(free_at);
}

/* Stage s's schedule, as (backward?, part, microbatch) slots. GPipe: every
   forward, then every backward. 1F1B: stages - s - 1 forwards ahead, then
   one of each in turn. Interleaved (Megatron's virtual stages): the
   microbatches in groups of one a stage, each group through the stage's
   parts in turn, (stages - s - 1) 2 + (parts - 1) stages forwards ahead. */
int pipe_schedule(const pctx *c, int s, slot *out) {
  int M = c->M, P = c->P, V = c->V, n = 0;
  if (c->zb) {
    memcpy(out, c->zb[s], sizeof *out * (size_t)(3 * M));
    return 3 * M;
  }
  if (V > 1) {
    int total = M * V, warm = (P - s - 1) * 2 + (V - 1) * P;
    if (warm > total) warm = total;
    for (int k = 0; k < 2 * total; k++) {
      int back, f;                      /* the k-th slot: forward f or backward f */
      if (k < warm) back = 0, f = k;
      else if (k < warm + 2 * (total - warm)) back = (k - warm) % 2, f = back ? (k - warm) / 2 : warm + (k - warm) / 2;
      else back = 1, f = total - warm + (k - warm - 2 * (total - warm));
      int ch = (f % (P * V)) / P;
      out[n++] = (slot){back, back ? V - 1 - ch : ch, (f / (P * V)) * P + f % P};
    }
    return n;
  }
  int warm = c->plan->pipe.order == SH_GPIPE ? M : P - s - 1;
  if (warm > M) warm = M;
  for (int j = 0; j < warm; j++) out[n++] = (slot){0, 0, j};
  for (int j = warm; j < M; j++) { out[n++] = (slot){0, 0, j}; out[n++] = (slot){1, 0, j - warm}; }
  for (int j = M - warm; j < M; j++) out[n++] = (slot){1, 0, j};
  return n;
}

/*
** fold.c: transposes and adds taken into the instructions around them,
** after the program is finished.
**
** Transposes. Attention's operands are [b, h, s, dk] in the IR,
** while the projections that make q, k, v (and the one that reads the
** result) work on [b, s, h, dk]; lowering frames attention with
** transposes (0, 2, 1, 3). Here they go:
**
**   - an attention operand written by such a transpose is read from the
**     transpose's input instead, by heads (RT_ATTN_BSHD_* in mode);
**   - an attention result read only by transposes is written straight
**     into the (0, 2, 1, 3) one's buffer; the other transposes read that
**     buffer with their permutation composed;
**   - the same for the gradient, whose result is cut into dq, dk, dv by
**     block copies that each feed one such transpose;
**   - a GEMM of one batch whose operand is a transpose that swaps two
**     groups of dims (a matrix transpose of the data) reads the
**     transpose's input with its transpose flag flipped.
**
** Transposes left with no reader are dropped. Only single-writer
** temporaries are rewritten, so every value the caller sees (inputs,
** outputs, kept values) keeps its layout. The numbers do not change: the
** kernels do the same arithmetic on the same elements.
**
** Adds (lw_fold_adds). A GEMM's result t read only by an f32 add:
**
**   - y = add(t, bias broadcast): y is first filled with the broadcast
**     bias (an affine copy, moved to just before the GEMM) and the GEMM
**     adds its product into y (beta 1); and when such a y is added to a
**     residual r, the fill computes r + bias into the sum instead;
**   - y = add(a, t), a a temporary read only here: what wrote a writes y
**     instead, and the GEMM adds its product to y (moved to where the add
**     was when a is written after it); the gradients reaching x through
**     the q, k, v projections summed, for one. The same for t the scatter of
**     an embedding's gradient (a tied embedding's two gradients summed).
**
** Each saves the add's pass over the result and the pass in which BLAS
** zeroes C; the sums are the same but rounded in another order (BLAS adds
** its partial products into C block by block), so results may differ in
** the last bits from the unfolded program. In a program to be pipelined
** (stage_of given) a fold joins only instructions of one stage: a GEMM
** adding into a sum whose other part another stage makes would wait for
** that stage, and move a partial sum between them each microbatch.
*/
#include "interp/lower/lower_int.h"
#include "util/mem.h"

#include <stdlib.h>
#include <string.h>

typedef struct folds {
  rt_prog *p;
  int *writer;           /* per buffer: the one instruction writing it, -1 none, -2 several */
  int *first_w, *last_w; /* per buffer: its first and last writer, -1 none */
  int *last_r;           /* per buffer: its last reader, -1 none */
  int *readers;          /* per buffer: instructions reading it (kept up to date) */
  int *rd_start, *rd;    /* per buffer: who read it when the lists were made (filter by in[]) */
  char *gone;            /* per instruction: dropped */
  int *before;           /* per instruction: one moved to run just before it, -1 none */
  char *moved;           /* per instruction: runs elsewhere (before[] names where) */
  int *wr_head, *wr_next; /* per buffer, per instruction: the instructions writing it, chained */
  const uint64_t *stage_of; /* a pipeline's: IR value -> its stages (NULL: none) */
} folds;

/* May instructions i and j be joined: one stage's (or no pipeline)? */
static int one_stage(const folds *f, int i, int j) {
  if (!f->stage_of) return 1;
  int a = f->p->instrs[i].src, b = f->p->instrs[j].src;
  return a >= 0 && b >= 0 && f->stage_of[a] == f->stage_of[b];
}

static int reads(const rt_instr *x, int b) {
  for (int k = 0; k < RT_MAXIN; k++) if (x->in[k] == b) return 1;
  return 0;
}

/* in[k] of x: a buffer of p that no earlier input of x names, or -1 */
static int new_input(const rt_prog *p, const rt_instr *x, int k) {
  int b = x->in[k];
  if (b < 0 || b >= p->nbufs) return -1;
  for (int j = 0; j < k; j++) if (x->in[j] == b) return -1;
  return b;
}

/* Reader lists, as compressed rows: instruction order within each. */
static void list_readers(folds *f) {
  rt_prog *p = f->p;
  f->rd_start = mem_calloc((size_t)p->nbufs + 2, sizeof(int));
  for (int b = 0; b < p->nbufs; b++) f->rd_start[b + 1] = f->rd_start[b] + f->readers[b];
  f->rd = mem_alloc(sizeof(int) * (size_t)(f->rd_start[p->nbufs] + 1));
  int *fill = mem_calloc((size_t)p->nbufs + 1, sizeof(int));
  for (int i = 0; i < p->ninstrs; i++)
    for (int k = 0; k < RT_MAXIN && !f->gone[i]; k++) {
      int b = new_input(p, &p->instrs[i], k);
      if (b >= 0) f->rd[f->rd_start[b] + fill[b]++] = i;
    }
  free(fill);
}

static void count(folds *f) {
  rt_prog *p = f->p;
  for (int b = 0; b < p->nbufs; b++) f->writer[b] = f->first_w[b] = f->last_w[b] = f->last_r[b] = -1, f->readers[b] = 0;
  for (int i = 0; i < p->ninstrs; i++) {
    if (f->gone[i]) continue;
    const rt_instr *x = &p->instrs[i];
    for (int k = 0; k < RT_MAXIN; k++) {
      int b = new_input(p, x, k);
      if (b >= 0) f->readers[b]++, f->last_r[b] = i;
    }
    int o = x->out;
    if (o < 0 || o >= p->nbufs) continue;
    f->writer[o] = f->writer[o] == -1 ? i : -2;
    if (f->first_w[o] < 0) f->first_w[o] = i;
    f->last_w[o] = i;
  }
}

static int is_temp(const folds *f, int b) { return b >= 0 && b < f->p->nbufs && f->p->bufs[b].kind == RT_BUF_TEMP; }

/* The transpose that alone writes temporary b, or NULL. */
static rt_instr *transpose_of(folds *f, int b) {
  if (!is_temp(f, b) || f->writer[b] < 0) return NULL;
  rt_instr *t = &f->p->instrs[f->writer[b]];
  return t->op == RT_TRANSPOSE ? t : NULL;
}

/* Does t turn [b, x, y, d] into [b, y, x, d]? Then d4 gets its input's
** [b, x, y, d]. Lowering drops dims of size 1, so b = 1 comes as a
** rank-3 transpose (1, 0, 2). */
static int swaps_middle(const rt_instr *t, int64_t d4[4]) {
  if (t->op != RT_TRANSPOSE) return 0;
  if (t->rank == 4 && t->perm[0] == 0 && t->perm[1] == 2 && t->perm[2] == 1 && t->perm[3] == 3) {
    for (int i = 0; i < 4; i++) d4[i] = t->shape[i];
    return 1;
  }
  if (t->rank == 3 && t->perm[0] == 1 && t->perm[1] == 0 && t->perm[2] == 2) {
    d4[0] = 1;
    for (int i = 0; i < 3; i++) d4[i + 1] = t->shape[i];
    return 1;
  }
  return 0;
}

/* May the instruction at `at` read the input of transpose t (written at
** `tat`) instead of its output? Only if nothing writes that input between. */
static int source_steady(const folds *f, const rt_instr *t, int tat, int at) {
  int s = t->in[0], w = f->writer[s];
  if (s < 0 || s >= f->p->nbufs || w == -2) return 0;
  if (f->p->bufs[s].kind == RT_BUF_INPUT) return w == -1;      /* a leaf updated in place is not steady */
  return w < tat && tat < at;
}

/* Attention's operands that are [b, s, h, dk] data transposed: read the data. */
static void fold_operands(folds *f, int at) {
  rt_instr *a = &f->p->instrs[at];
  int nops = a->op == RT_ATTENTION_GRAD ? 4 : 3;
  static const int bit[4] = {RT_ATTN_BSHD_Q, RT_ATTN_BSHD_K, RT_ATTN_BSHD_V, RT_ATTN_BSHD_DY};
  for (int k = 0; k < nops; k++) {
    rt_instr *t = transpose_of(f, a->in[k]);
    int64_t d4[4];
    if (!t || !swaps_middle(t, d4) || !source_steady(f, t, (int)(t - f->p->instrs), at)) continue;
    int64_t b = d4[0], s = d4[1], h = d4[2], d = d4[3];
    if (b * h != a->outer || s != a->m || d != a->k || (a->mode && a->n2 != h)) continue;
    a->in[k] = t->in[0];
    a->mode |= (uint8_t)bit[k];
    a->n2 = h;
  }
}

/* Rebase transpose t, which read x, on y = transpose(x, p1): its
** permutation composed with p1's inverse, its input shape y's. */
static void rebase(rt_instr *t, const rt_instr *t1) {
  int inv[RT_MAXRANK];
  for (int j = 0; j < t1->rank; j++) inv[t1->perm[j]] = j;
  for (int i = 0; i < t->rank; i++) t->perm[i] = (int8_t)inv[t->perm[i]];
  for (int i = 0; i < t1->rank; i++) t->shape[i] = t1->shape[t1->perm[i]];
  t->in[0] = t1->out;
}

/* The instructions reading buffer b now, in order (at most max; the count). */
static int readers_of(const folds *f, int b, int *out, int max) {
  int n = 0;
  for (int j = f->rd_start[b]; j < f->rd_start[b + 1]; j++) {
    int i = f->rd[j];
    if (f->gone[i] || !reads(&f->p->instrs[i], b)) continue;
    if (n < max) out[n] = i;
    n++;
  }
  return n;
}

enum { MAXR = 8 };

/* Attention's result read only by transposes: write the (0, 2, 1, 3) one. */
static void fold_result(folds *f, int at) {
  rt_prog *p = f->p;
  rt_instr *a = &p->instrs[at];
  int x = a->out, r[MAXR], t1 = -1;
  int64_t d4[4];
  if (!is_temp(f, x) || f->writer[x] != at) return;
  int n = readers_of(f, x, r, MAXR);
  if (n < 1 || n > MAXR) return;
  for (int i = 0; i < n; i++) {
    const rt_instr *t = &p->instrs[r[i]];
    if (t->op != RT_TRANSPOSE || t->in[0] != x) return;
    if (t1 < 0 && swaps_middle(t, d4) && is_temp(f, t->out) && f->writer[t->out] == r[i]) t1 = r[i];
  }
  if (t1 < 0) return;
  rt_instr *t = &p->instrs[t1];
  int64_t b = d4[0], h = d4[1], s = d4[2], d = d4[3];
  if (b * h != a->outer || s != a->m || d != a->k || (a->mode && a->n2 != h)) return;
  for (int i = 0; i < n; i++) if (r[i] != t1) rebase(&p->instrs[r[i]], t);
  a->out = t->out;
  f->writer[x] = -1;
  f->writer[t->out] = at;
  a->mode |= RT_ATTN_BSHD_OUT;
  a->n2 = h;
  f->gone[t1] = 1;
}

/* The gradient's [b, h, s, 3 dk] result cut into dq, dk, dv by block copies,
** each copy read by one (0, 2, 1, 3) transpose: write [b, s, h, 3 dk], and
** let each copy write its transpose's buffer. */
static void fold_grad_result(folds *f, int at) {
  rt_prog *p = f->p;
  rt_instr *a = &p->instrs[at];
  int x = a->out, r[MAXR], tr[MAXR];
  if (!is_temp(f, x) || f->writer[x] != at) return;
  int n = readers_of(f, x, r, MAXR);
  if (n < 1 || n > MAXR) return;
  int64_t h = 0, rows = a->outer * a->m, dk = a->k;
  for (int i = 0; i < n; i++) {
    const rt_instr *c = &p->instrs[r[i]];
    /* a copy of whole rows' pieces: [rows, 3 dk, 1] -> [rows, piece, 1] */
    if (c->op != RT_BLOCK_COPY || c->in[0] != x || c->outer != rows || c->inner != 1 || c->m != 3 * dk ||
        c->off != 0 || c->n != c->n2 || !is_temp(f, c->out) || f->writer[c->out] != r[i]) return;
    int one;
    if (readers_of(f, c->out, &one, 1) != 1) return;
    const rt_instr *t = &p->instrs[one];
    int64_t d4[4];
    if (!swaps_middle(t, d4) || t->in[0] != c->out || !is_temp(f, t->out) || f->writer[t->out] != one) return;
    if (d4[0] * d4[1] != a->outer || d4[2] != a->m || d4[3] != c->n) return;
    if ((h && d4[1] != h) || (a->mode && a->n2 != d4[1])) return;
    h = d4[1];
    tr[i] = one;
  }
  for (int i = 0; i < n; i++) {
    f->writer[p->instrs[r[i]].out] = -1;
    p->instrs[r[i]].out = p->instrs[tr[i]].out;   /* the rows now come in [b, s, h] order */
    f->writer[p->instrs[tr[i]].out] = r[i];
    f->gone[tr[i]] = 1;
  }
  a->mode |= RT_ATTN_BSHD_OUT;
  a->n2 = h;
}

/* Is t a matrix transpose of its data: dims [0, r) moved behind [r, n)?
** Then its output, seen as [rows, cols], is its input seen as [cols, rows]. */
static int64_t matrix_rows(const rt_instr *t) {
  int n = t->rank, r = t->perm[0];
  if (r <= 0 || r >= n) return -1;
  for (int i = 0; i < n; i++) if (t->perm[i] != (r + i) % n) return -1;
  int64_t rows = 1;
  for (int i = r; i < n; i++) rows *= t->shape[i];
  return rows;
}

static void fold_gemm(folds *f, int at) {
  rt_instr *g = &f->p->instrs[at];
  if (g->batch != 1) return;
  for (int k = 0; k < 2; k++) {
    rt_instr *t = transpose_of(f, g->in[k]);
    if (!t || !source_steady(f, t, (int)(t - f->p->instrs), at)) continue;
    int8_t *flag = k ? &g->transb : &g->transa;
    /* the operand as stored: A is [m, k] (or [k, m] transposed), B [k, n] (or [n, k]) */
    int64_t lead = k == 0 ? (*flag ? g->k : g->m) : (*flag ? g->n : g->k);
    if (matrix_rows(t) != lead) continue;
    g->in[k] = t->in[0];
    *flag = (int8_t)!*flag;
  }
}

/* Close the gaps of dropped instructions, and run moved ones where they go. */
static void compact(folds *f) {
  rt_prog *p = f->p;
  rt_instr *out = mem_alloc(sizeof(rt_instr) * ((size_t)p->ninstrs + 1));
  int w = 0;
  for (int i = 0; i < p->ninstrs; i++) {
    if (f->before[i] >= 0) out[w++] = p->instrs[f->before[i]];
    if (!f->gone[i] && !f->moved[i]) out[w++] = p->instrs[i];
  }
  memcpy(p->instrs, out, sizeof(rt_instr) * (size_t)w);
  free(out);
  p->ninstrs = w;
}

/* Drop transposes whose temporaries nobody reads (last first, so that a
** chain of them goes), then close the gaps. */
static void sweep(folds *f) {
  rt_prog *p = f->p;
  count(f);
  for (int i = p->ninstrs - 1; i >= 0; i--) {
    const rt_instr *x = &p->instrs[i];
    if (!f->gone[i] && x->op == RT_TRANSPOSE && is_temp(f, x->out) && f->readers[x->out] == 0) {
      f->gone[i] = 1;
      if (x->in[0] >= 0 && x->in[0] < p->nbufs) f->readers[x->in[0]]--;
    }
  }
  compact(f);
}

static void folds_init(folds *f, rt_prog *p) {
  size_t nb = (size_t)p->nbufs + 1, ni = (size_t)p->ninstrs + 1;
  *f = (folds){p, mem_alloc(sizeof(int) * nb), mem_alloc(sizeof(int) * nb), mem_alloc(sizeof(int) * nb),
               mem_alloc(sizeof(int) * nb), mem_alloc(sizeof(int) * nb), NULL, NULL, mem_calloc(ni, 1),
               mem_alloc(sizeof(int) * ni), mem_calloc(ni, 1)};
  for (int i = 0; i < p->ninstrs; i++) f->before[i] = -1;
  count(f);
}

/* the instructions writing each buffer, chained (for lw_fold_adds) */
static void chain_writers(folds *f) {
  rt_prog *p = f->p;
  f->wr_head = mem_alloc(sizeof(int) * ((size_t)p->nbufs + 1));
  f->wr_next = mem_alloc(sizeof(int) * ((size_t)p->ninstrs + 1));
  for (int b = 0; b < p->nbufs; b++) f->wr_head[b] = -1;
  for (int i = p->ninstrs - 1; i >= 0; i--) {
    int o = p->instrs[i].out;
    f->wr_next[i] = -1;
    if (f->gone[i] || o < 0 || o >= p->nbufs) continue;
    f->wr_next[i] = f->wr_head[o];
    f->wr_head[o] = i;
  }
}

static void folds_free(folds *f) {
  free(f->writer);
  free(f->first_w);
  free(f->last_w);
  free(f->last_r);
  free(f->readers);
  free(f->rd_start);
  free(f->rd);
  free(f->gone);
  free(f->before);
  free(f->moved);
  free(f->wr_head);
  free(f->wr_next);
}

int lw_fold_transposes(rt_prog *p) {
  int n0 = p->ninstrs;
  folds f;
  folds_init(&f, p);
  for (int i = 0; i < p->ninstrs; i++)
    if (p->instrs[i].op == RT_ATTENTION || p->instrs[i].op == RT_ATTENTION_GRAD) fold_operands(&f, i);
  count(&f);
  list_readers(&f);
  for (int i = 0; i < p->ninstrs; i++) {
    if (p->instrs[i].op == RT_ATTENTION) fold_result(&f, i);
    else if (p->instrs[i].op == RT_ATTENTION_GRAD) fold_grad_result(&f, i);
  }
  count(&f);
  for (int i = 0; i < p->ninstrs; i++) if (!f.gone[i] && p->instrs[i].op == RT_GEMM) fold_gemm(&f, i);
  sweep(&f);
  folds_free(&f);
  rt_prog_finish(p);
  return n0 - p->ninstrs;
}

/* ---- adds taken into GEMMs ---- */

static int f32(const folds *f, int b) { return b >= 0 && b < f->p->nbufs && f->p->bufs[b].dtype == RT_F32; }

/* The GEMM (or embedding gradient's scatter) that alone writes all of
** temporary t from zeros (beta 0), in f32, before `at`, when the
** instruction at `at` is t's only reader: its index, else -1. Either can
** add into its result instead (beta 1). */
static int lone_product(const folds *f, int t, int at) {
  if (!is_temp(f, t) || !f32(f, t) || f->writer[t] < 0 || f->writer[t] >= at || f->readers[t] != 1) return -1;
  const rt_instr *g = &f->p->instrs[f->writer[t]];
  int64_t bt = g->batch < 1 ? 1 : g->batch;
  if (g->beta != 0.0f) return -1;
  if (g->op == RT_SCATTER_ROWS) return g->n * g->inner == f->p->bufs[t].nelem ? f->writer[t] : -1;
  if (g->op != RT_GEMM || (bt > 1 && g->stride_c != g->m * g->n) || bt * g->m * g->n != f->p->bufs[t].nelem) return -1;
  return f->writer[t];
}

/* An f32 add whose result only it writes: its result, else -1. */
static int add_result(const folds *f, const rt_instr *x, int at) {
  int y = x->out;
  if (x->op != RT_EW || x->fn != RT_ADD || !f32(f, y) || f->writer[y] != at || f->p->bufs[y].kind == RT_BUF_INPUT) return -1;
  return f32(f, x->in[0]) && f32(f, x->in[1]) && x->in[0] != x->in[1] ? y : -1;
}

/* Does nothing write b from instruction lo to hi? */
static int steady(const folds *f, int b, int lo, int hi) {
  return f->first_w[b] < 0 || f->last_w[b] < lo || f->first_w[b] > hi;
}

/* May the GEMM at gi, whose result t only the add at `at` reads, move to
** `at`? Its operands must hold still until then, and the operands whose
** life that lengthens may not hold more than t, whose life it shortens
** by as much: no point between holds more than before (under
** recomputation, lengthening a big operand's life would undo the memory
** recomputing saves). */
static int may_move(const folds *f, const rt_instr *g, int gi, int at, int t) {
  int64_t longer = 0;
  for (int k = 0; k < 2; k++) {
    int b = g->in[k];
    if (!steady(f, b, gi, at)) return 0;
    if (is_temp(f, b) && f->last_r[b] < at && (k == 0 || b != g->in[0])) longer += f->p->bufs[b].nelem;
  }
  return longer <= f->p->bufs[t].nelem;
}

/* From now on the GEMM (or scatter) at gi adds its product into y: beta
** 1, and y has one writer more. */
static void add_into(folds *f, int gi, int y) {
  rt_instr *g = &f->p->instrs[gi];
  g->out = y;
  g->beta = 1.0f;
  f->wr_next[gi] = f->wr_head[y];
  f->wr_head[y] = gi;
  f->writer[y] = -2;
}

/* y = add(a, t): a's writers write y, and the GEMM writing t adds to y
** instead. When a is written after the GEMM, the GEMM moves to where the
** add was (if its operands hold still until then). */
static void fold_sum(folds *f, int at) {
  rt_prog *p = f->p;
  rt_instr *x = &p->instrs[at];
  int y = add_result(f, x, at);
  if (y < 0) return;
  for (int k = 0; k < 2; k++) {
    int t = x->in[k], a = x->in[1 - k], gi = lone_product(f, t, at);
    if (gi < 0 || !is_temp(f, a) || f->readers[a] != 1 || f->first_w[a] < 0 || f->last_w[a] >= at || f->moved[gi] ||
        a == y || t == y || !rt_ew_dense(x, 0) || !rt_ew_dense(x, 1) || p->bufs[a].nelem != p->bufs[t].nelem) continue;
    rt_instr *g = &p->instrs[gi];
    if (g->in[0] == a || g->in[1] == a || !one_stage(f, gi, at)) continue;
    int apart = 0;                       /* a written on another stage */
    for (int i = f->wr_head[a]; i >= 0; i = f->wr_next[i]) apart |= !one_stage(f, i, at);
    if (apart) continue;
    int late = f->last_w[a] >= gi;      /* the GEMM must run after a is written */
    if (late && (f->before[at] >= 0 || !may_move(f, g, gi, at, t))) continue;
    if (late) {
      f->before[at] = gi;
      f->moved[gi] = 1;
    }
    /* a's writers write y instead, and the product is added to it */
    for (int i = f->wr_head[a]; i >= 0; i = f->wr_next[i]) p->instrs[i].out = y;
    f->wr_head[y] = f->wr_head[a];
    f->wr_head[a] = -1;
    add_into(f, gi, y);
    f->first_w[y] = f->first_w[a];
    f->last_w[y] = late ? at : gi;
    f->readers[a] = f->readers[t] = 0;
    f->writer[a] = f->writer[t] = f->first_w[a] = f->last_w[a] = -1;
    f->gone[at] = 1;
    return;
  }
}

/* y = add(t, bias broadcast): y filled with the bias just before the GEMM
** that wrote t, which then adds into y. */
static void fold_bias(folds *f, int at) {
  rt_prog *p = f->p;
  rt_instr *x = &p->instrs[at];
  int y = add_result(f, x, at);
  if (y < 0) return;
  for (int k = 0; k < 2; k++) {
    int t = x->in[k], b = x->in[1 - k], gi = lone_product(f, t, at);
    if (gi < 0 || !rt_ew_dense(x, k) || rt_ew_dense(x, 1 - k) || !steady(f, b, gi, at) || f->before[gi] >= 0) continue;
    rt_instr *g = &p->instrs[gi];
    if (g->in[0] == y || g->in[1] == y || !one_stage(f, gi, at)) continue;
    x->fn = RT_AFFINE;                 /* y = 1 b + 0, broadcast */
    x->nin = 1;
    x->in[0] = b;
    x->in[1] = -1;
    memcpy(x->stride[0], x->stride[1 - k], sizeof x->stride[0]);
    x->alpha = 1.0f;
    x->beta = 0.0f;
    f->before[gi] = at;
    f->moved[at] = 1;
    add_into(f, gi, y);
    f->readers[t] = 0;
    f->writer[t] = -1;
    f->first_w[y] = f->last_w[y] = gi;
    return;
  }
}

/* The GEMM of a bias fold (fold_bias) that wrote y, when y has no other
** writer and the instruction at `at` is its only reader: its index, else -1. */
static int bias_gemm(const folds *f, int y, int at) {
  if (!is_temp(f, y) || f->readers[y] != 1) return -1;
  int gi = f->wr_head[y], fi = gi >= 0 ? f->wr_next[gi] : -1;
  if (gi < 0 || gi >= at || fi < 0 || f->wr_next[fi] >= 0 || f->before[gi] != fi) return -1;
  const rt_instr *g = &f->p->instrs[gi], *fill = &f->p->instrs[fi];
  return g->op == RT_GEMM && fill->op == RT_EW && fill->fn == RT_AFFINE ? gi : -1;
}

/* z = add(r, y), y a GEMM's product with a bias folded in: the bias fill
** adds r as it fills (z = r + bias), the GEMM adds to z: the residual
** connection after a block's output projection. */
static void fold_residual(folds *f, int at) {
  rt_prog *p = f->p;
  rt_instr *x = &p->instrs[at];
  int z = add_result(f, x, at);
  if (z < 0) return;
  for (int k = 0; k < 2; k++) {
    int y = x->in[k], r = x->in[1 - k], gi = bias_gemm(f, y, at);
    if (gi < 0 || !rt_ew_dense(x, 0) || !rt_ew_dense(x, 1) || p->bufs[r].nelem != p->bufs[y].nelem ||
        f->last_w[r] >= gi || !steady(f, r, gi, at)) continue;
    rt_instr *g = &p->instrs[gi], *fill = &p->instrs[f->before[gi]];
    if (g->in[0] == z || g->in[1] == z || r == z || !one_stage(f, gi, at) || !one_stage(f, f->before[gi], at) ||
        (f->writer[r] >= 0 && !one_stage(f, f->writer[r], at)))
      continue;
    fill->fn = RT_ADD;                 /* z = r + b, the bias broadcast */
    fill->nin = 2;
    fill->in[1] = fill->in[0];
    memcpy(fill->stride[1], fill->stride[0], sizeof fill->stride[0]);
    fill->in[0] = r;
    memcpy(fill->stride[0], x->stride[1 - k], sizeof fill->stride[0]);
    fill->out = g->out = z;
    f->wr_head[z] = gi;                /* z's writers: the GEMM, then the fill */
    f->wr_head[y] = -1;
    f->readers[y] = 0;
    f->writer[y] = f->first_w[y] = f->last_w[y] = -1;
    f->first_w[z] = f->last_w[z] = gi;
    f->gone[at] = 1;
    return;
  }
}

int lw_fold_adds(rt_prog *p, const uint64_t *stage_of) {
  int n0 = p->ninstrs;
  folds f;
  folds_init(&f, p);
  f.stage_of = stage_of;
  chain_writers(&f);
  for (int i = 0; i < p->ninstrs; i++) {
    if (p->instrs[i].op != RT_EW || p->instrs[i].fn != RT_ADD) continue;
    fold_sum(&f, i);
    if (!f.gone[i]) fold_bias(&f, i);
    if (!f.gone[i] && !f.moved[i]) fold_residual(&f, i);
  }
  compact(&f);
  folds_free(&f);
  rt_prog_finish(p);
  return n0 - p->ninstrs;
}

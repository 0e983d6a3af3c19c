/*
** lmloss.c: a language model's loss without its logits.
**
** The last layer of a language model projects each of N positions onto V
** classes and takes the cross-entropy: logits = x w ([N, V]), then its
** gradient (lossgrad.c has already folded the loss into that pass), then
** dx = d w^T and dw = d^T x. The logits and their gradient are the
** largest values of the step (GPT-2 small: 8192 x 50257, 1.5 GiB each,
** one written over the other). Where the four instructions read and write
** nothing else in between, they become one RT_XENT_PROJ that runs them a
** chunk of rows at a time through a scratch of at most chunk_bytes: the
** same GEMMs and row pass, row for row, and the [N, V] values never
** exist whole. dw sums over the chunks, so its rounding differs from the
** unfused program's by the split of that sum (one chunk: the same bits).
**
** Under remat (remat.c) dw's GEMM may read x recomputed: an identical
** instruction on inputs nothing wrote since. The fused instruction reads
** x itself, and the recomputation goes when nothing else reads it.
**
** Runs after lossgrad.c, where values are not kept.
*/
#include "interp/lower/lower_int.h"
#include "util/mem.h"

#include <stdlib.h>
#include <string.h>

static int touches(const rt_instr *x, int b) {
  if (b < 0) return 0;
  if (x->out == b) return 1;
  for (int k = 0; k < RT_MAXIN; k++) if (x->in[k] == b) return 1;
  return 0;
}

/* A one-batch f32 GEMM C = op(A) op(B) with alpha 1 and beta 0 (or 1 when
** beta1 may): m, n, k of its rows; a contiguous stack under a shared B
** counts as one tall GEMM, as the kernel runs it. */
static int plain_gemm(const rt_prog *p, const rt_instr *g, int beta1, int64_t *m, int64_t *n, int64_t *k) {
  if (g->op != RT_GEMM || g->alpha != 1.0f || !(g->beta == 0.0f || (beta1 && g->beta == 1.0f))) return 0;
  if (p->bufs[g->out].dtype != RT_F32 || p->bufs[g->in[0]].dtype != RT_F32 || p->bufs[g->in[1]].dtype != RT_F32) return 0;
  *m = g->m; *n = g->n; *k = g->k;
  if (g->batch > 1) {
    if (g->stride_b != 0 || g->transa || g->stride_a != g->m * g->k || g->stride_c != g->m * g->n) return 0;
    *m *= g->batch;
  }
  return 1;
}

/* The one instruction that writes b, else -1 */
static int only_writer(const rt_prog *p, int b) {
  int at = -1;
  for (int i = 0; i < p->ninstrs; i++)
    if (rt_instr_writes(&p->instrs[i], b)) {
      if (at >= 0) return -1;
      at = i;
    }
  return at;
}

/* Whether buffer c holds what b holds: both made by the same instruction
** on the same inputs, none written between the two (c a recomputation of
** b, as remat.c makes them: GPT-2's final layer norm under remat = cheap).
** The index of c's writer, else -1. */
static int recomputed(const rt_prog *p, int b, int c) {
  int wb = only_writer(p, b), wc = only_writer(p, c);
  if (wb < 0 || wc <= wb || p->bufs[c].kind != RT_BUF_TEMP) return -1;
  rt_instr x, y;
  memcpy(&x, &p->instrs[wb], sizeof x);
  memcpy(&y, &p->instrs[wc], sizeof y);
  if (x.out == x.in[0] || rt_instr_writes(&x, x.in[0])) return -1;    /* not in place */
  x.out = y.out = -1;
  x.src = y.src = -1;
  if (memcmp(&x, &y, sizeof x) != 0) return -1;
  for (int i = wb + 1; i < wc; i++)
    for (int k = 0; k < RT_MAXIN; k++)
      if (x.in[k] >= 0 && rt_instr_writes(&p->instrs[i], x.in[k])) return -1;
  return wc;
}

typedef struct match {
  int g1, xg, g2, g3;        /* logits, their gradient, dx, dw */
  int x, w, lab, seed, loss, dx, dw;
  int64_t rows, classes, width;
  int wt;                    /* w is [classes, width] */
  int x2, x2_writer;         /* dw's GEMM reads x recomputed in x2 (else -1) */
  int accumulate;            /* dw's GEMM adds to what dw holds */
} match;

/* Whether the xent_grad at xg heads the pattern; fills mt. */
static int find(const rt_prog *p, int xg, match *mt) {
  const rt_instr *G = &p->instrs[xg];
  if (G->op != RT_XENT_GRAD || G->in[3] < 0 || rt_xent_split(G) || G->inner > 1) return 0;   /* split classes: not this pattern */
  int L = G->in[0], D = G->out;
  if (p->bufs[L].kind != RT_BUF_TEMP || p->bufs[D].kind != RT_BUF_TEMP || p->bufs[D].dtype != RT_F32) return 0;
  memset(mt, 0, sizeof *mt);
  mt->xg = xg;
  mt->lab = G->in[1]; mt->seed = G->in[2]; mt->loss = G->in[3];
  mt->rows = G->outer; mt->classes = G->n;
  /* the logits: one GEMM x w, before */
  int64_t m, n, k;
  if ((mt->g1 = only_writer(p, L)) < 0 || mt->g1 > xg) return 0;
  const rt_instr *g1 = &p->instrs[mt->g1];
  if (!plain_gemm(p, g1, 0, &m, &n, &k) || g1->transa || m != mt->rows || n != mt->classes) return 0;
  mt->x = g1->in[0]; mt->w = g1->in[1]; mt->wt = g1->transb; mt->width = k;
  /* their gradient read by two GEMMs only: dx = d w^T and dw = d^T x (or x^T d) */
  mt->g2 = mt->g3 = mt->x2 = mt->x2_writer = -1;
  for (int i = 0; i < p->ninstrs; i++) {
    const rt_instr *y = &p->instrs[i];
    if (i == mt->g1 || i == xg || (!touches(y, L) && !touches(y, D))) continue;
    if (touches(y, L) || y->out == D || !plain_gemm(p, y, 1, &m, &n, &k) || i < xg) return 0;
    if (y->in[0] == D && y->in[1] == mt->w && !y->transa && y->transb == !mt->wt && y->beta == 0.0f &&
        m == mt->rows && n == mt->width && mt->g2 < 0)
      mt->g2 = i;
    else if (mt->wt && y->in[0] == D && y->transa && !y->transb && m == mt->classes && n == mt->width && k == mt->rows &&
             mt->g3 < 0)
      mt->g3 = i;
    else if (!mt->wt && y->in[1] == D && y->transa && !y->transb && m == mt->width && n == mt->classes && k == mt->rows &&
             mt->g3 < 0)
      mt->g3 = i;
    else
      return 0;
  }
  if (mt->g2 < 0 || mt->g3 < 0) return 0;
  int xin = p->instrs[mt->g3].in[mt->wt ? 1 : 0];
  if (xin != mt->x) {
    if ((mt->x2_writer = recomputed(p, mt->x, xin)) < 0) return 0;
    mt->x2 = xin;
  }
  mt->dx = p->instrs[mt->g2].out; mt->dw = p->instrs[mt->g3].out;
  mt->accumulate = p->instrs[mt->g3].beta != 0.0f;
  int ids[] = {mt->x, mt->w, mt->lab, mt->seed, mt->loss, mt->dx, mt->dw};
  for (int a = 0; a < 7; a++)           /* seven buffers of their own (exec.c checks it too) */
    for (int b = a + 1; b < 7; b++) if (ids[a] == ids[b]) return 0;
  /* Run where the gradient ran (it writes the loss there, which under
  ** batch parallelism an all-reduce reads next): x and w hold still from
  ** the logits to the last of the four; nothing touches dx before its GEMM
  ** nor dw before its own (which may add to what dw holds). */
  int last = mt->g2 > mt->g3 ? mt->g2 : mt->g3;
  for (int i = mt->g1 + 1; i < last; i++) {
    const rt_instr *y = &p->instrs[i];
    if (i == xg || i == mt->g2 || i == mt->g3 || i == mt->x2_writer) continue;
    if (rt_instr_writes(y, mt->x) || rt_instr_writes(y, mt->w)) return 0;
    if ((i < mt->g2 && touches(y, mt->dx)) || (i < mt->g3 && touches(y, mt->dw))) return 0;
  }
  if (mt->x2 >= 0)                      /* the recomputation goes too when nothing else reads it */
    for (int i = 0; i < p->ninstrs; i++)
      if (i != mt->x2_writer && i != mt->g3 && touches(&p->instrs[i], mt->x2)) mt->x2_writer = -1;
  return 1;
}

/* rows per chunk: equal chunks of at most chunk_bytes of logits */
int64_t lower_lm_loss_chunk_rows(int64_t rows, int64_t classes, int64_t chunk_bytes) {
  if (chunk_bytes <= 0) chunk_bytes = LW_LOSS_CHUNK_BYTES;
  double all = (double)rows * (double)classes * 4;
  int64_t chunks = (int64_t)(all / (double)chunk_bytes);
  if ((double)chunks * (double)chunk_bytes < all) chunks++;
  if (chunks < 1) chunks = 1;
  int64_t r = (rows + chunks - 1) / chunks;
  return r < 1 ? 1 : r;
}

int lw_fold_lm_loss(rt_prog *p, int64_t chunk_bytes) {
  int folded = 0;
  for (int i = 0; i < p->ninstrs; i++) {
    match mt;
    if (!find(p, i, &mt)) continue;
    int64_t R = lower_lm_loss_chunk_rows(mt.rows, mt.classes, chunk_bytes);
    const rt_buf *lb = &p->bufs[p->instrs[mt.g1].out];
    int64_t sshape[2] = {R, mt.classes};
    int scratch = rt_prog_buf(p, arena_printf(&p->mem, "%s.chunk", lb->name), RT_F32, 2, sshape, RT_BUF_TEMP);
    rt_instr f;
    memset(&f, 0, sizeof f);
    f.op = RT_XENT_PROJ;
    f.out = mt.dx;
    int in[RT_MAXIN] = {mt.x, mt.w, mt.lab, mt.seed, mt.loss, mt.dw, scratch, -1};
    memcpy(f.in, in, sizeof in);
    f.nin = 7;
    f.group = -1;
    f.src = p->instrs[mt.xg].src;
    f.outer = mt.rows; f.n = mt.classes; f.k = mt.width; f.inner = R;
    f.transb = (int8_t)mt.wt;
    f.mode = (uint8_t)mt.accumulate;
    f.alpha = p->instrs[mt.xg].alpha;
    f.beta = p->instrs[mt.xg].beta;
    /* the four go; the fused one takes the gradient's place */
    int w = 0;
    for (int k = 0; k < p->ninstrs; k++) {
      if (k == mt.g1 || k == mt.xg || k == mt.g2 || k == mt.g3 || k == mt.x2_writer) {
        if (k == mt.xg) p->instrs[w++] = f;
        continue;
      }
      p->instrs[w++] = p->instrs[k];
    }
    p->ninstrs = w;
    folded++;
    i = -1;                  /* indices moved: look again from the start (a program has few losses) */
  }
  if (folded) rt_prog_finish(p);
  return folded;
}

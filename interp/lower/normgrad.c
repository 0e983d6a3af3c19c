/*
** normgrad.c: a layer norm's gamma gradient in one instruction.
**
** The gradient of layernorm(x, gamma, beta) with respect to gamma is the
** sum over rows of dy * xhat, which the IR writes (grad.c) and lowering
** emits as three instructions over the whole activation:
**
**     xhat = layernorm x                (no gamma, no beta)
**     p    = mul dy, xhat
**     dg   = reduce_sum p               (over the rows)
**
** where xhat and p are temporaries nothing else reads. Here the three
** become one layernorm_grad in mode RT_LN_GAMMA, which reads x and dy once
** and writes only dg: two passes over the activation and two temporaries
** of its size fewer, per layer norm (a GPT has two a block and a final
** one). The kernel adds the same products in the same order, so the
** numbers are the same bits.
**
** Runs after the program is finished, where values are not kept.
*/
#include "interp/lower/lower_int.h"
#include "util/mem.h"

#include <stdlib.h>

typedef struct counts {
  int *writers, *readers;   /* per buffer: how many instructions write it, read it */
  int *writer;              /* per buffer: its last writer */
} counts;

static int f32_temp(const rt_prog *p, int b) {
  return b >= 0 && b < p->nbufs && p->bufs[b].kind == RT_BUF_TEMP && p->bufs[b].dtype == RT_F32;
}

static int f32_buf(const rt_prog *p, int b) { return b >= 0 && b < p->nbufs && p->bufs[b].dtype == RT_F32; }

/* b a temporary written once, by an instruction before `at`, and read once: that writer, else -1 */
static int lone_temp(const rt_prog *p, const counts *c, int b, int at) {
  if (!f32_temp(p, b) || c->writers[b] != 1 || c->readers[b] != 1 || c->writer[b] >= at) return -1;
  return c->writer[b];
}

/* nothing in (lo, hi) writes b */
static int steady(const rt_prog *p, int b, int lo, int hi) {
  for (int i = lo + 1; i < hi; i++) if (rt_instr_writes(&p->instrs[i], b)) return 0;
  return 1;
}

/* instruction at, a reduce_sum: gamma's gradient folded into it where it is one */
static int fold_gamma(rt_prog *p, const counts *c, char *gone, int at) {
  rt_instr *r = &p->instrs[at];
  if (r->fn != RT_RSUM || r->outer != 1 || r->alpha != 1.0f || !f32_buf(p, r->out)) return 0;
  int mi = lone_temp(p, c, r->in[0], at);
  if (mi < 0) return 0;
  const rt_instr *m = &p->instrs[mi];
  if (m->op != RT_EW || m->fn != RT_MUL || m->nin != 2 || !rt_ew_dense(m, 0) || !rt_ew_dense(m, 1)) return 0;
  for (int k = 0; k < 2; k++) {
    int li = lone_temp(p, c, m->in[k], mi), dy = m->in[1 - k];
    if (li < 0 || dy == m->in[k] || !f32_buf(p, dy)) continue;
    const rt_instr *l = &p->instrs[li];
    int x = l->in[0];
    if (l->op != RT_LAYERNORM || l->in[1] >= 0 || l->in[2] >= 0 || l->outer != r->n || l->n != r->inner || !f32_buf(p, x)) continue;
    if (p->bufs[dy].nelem != l->outer * l->n || !steady(p, x, li, at) || !steady(p, dy, mi, at)) continue;
    rt_instr g = {0};                 /* as rt_prog_emit starts one */
    g.op = RT_LAYERNORM_GRAD;
    g.mode = RT_LN_GAMMA | (l->mode & RT_LN_RMS);
    g.out = r->out;
    g.src = r->src;
    g.group = -1;
    for (int j = 0; j < RT_MAXIN; j++) g.in[j] = -1;
    g.nin = 3;
    g.in[0] = x;
    g.in[2] = dy;
    g.outer = l->outer;
    g.n = l->n;
    g.alpha = l->alpha;               /* eps */
    *r = g;
    gone[li] = gone[mi] = 1;
    return 1;
  }
  return 0;
}

int lw_fold_norm_grads(rt_prog *p) {
  int nb = p->nbufs, ni = p->ninstrs, folded = 0;
  counts c = {mem_calloc((size_t)nb + 1, sizeof(int)), mem_calloc((size_t)nb + 1, sizeof(int)), mem_alloc(sizeof(int) * ((size_t)nb + 1))};
  char *gone = mem_calloc((size_t)ni + 1, 1);
  for (int i = 0; i < ni; i++) {
    const rt_instr *x = &p->instrs[i];
    if (x->out >= 0 && x->out < nb) { c.writers[x->out]++; c.writer[x->out] = i; }
    for (int k = 0; k < RT_MAXIN; k++)
      if (x->in[k] >= 0 && x->in[k] < nb) c.readers[x->in[k]]++;
  }
  for (int i = 0; i < ni; i++)
    if (p->instrs[i].op == RT_REDUCE) folded += fold_gamma(p, &c, gone, i);
  if (folded) {
    int w = 0;
    for (int i = 0; i < ni; i++) if (!gone[i]) p->instrs[w++] = p->instrs[i];
    p->ninstrs = w;
    rt_prog_finish(p);
  }
  free(c.writers);
  free(c.readers);
  free(c.writer);
  free(gone);
  return folded;
}

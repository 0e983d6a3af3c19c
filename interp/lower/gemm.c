/*
** lower_gemm.c: einsum and matmul as batched GEMMs. Labels are grouped into
** batch, M, N and K; operand layouts that already read as one of GEMM's
** forms are used as they are (with transpose flags), others are permuted
** once; a result laid out N-major is made by swapping the operands.
*/
#include "interp/lower/lower_int.h"

#include <string.h>

/* ---- einsum and matmul as GEMM ---- */

typedef struct operand {
  int buf;
  int n;                /* labels (size-1 labels dropped) */
  char l[IR_MAXRANK];
  int64_t d[IR_MAXRANK];
} operand;

static int64_t label_size(const operand *o, char l) {
  for (int i = 0; i < o->n; i++) if (o->l[i] == l) return o->d[i];
  return 1;
}

static int has(const char *set, int n, char l) { for (int i = 0; i < n; i++) if (set[i] == l) return 1; return 0; }

/* Lay out operand o as the label sequence want (a transpose unless it already is). */
static int arrange(lctx *c, operand *o, const char *want, int n, const char *name) {
  int perm[IR_MAXRANK], same = 1;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < o->n; j++) if (o->l[j] == want[i]) perm[i] = j;
    same &= perm[i] == i;
  }
  if (same) return o->buf;
  return lw_transpose(c, o->buf, o->d, o->n, perm, -1, name, c->dt);
}

/* Does o read as seq1 ++ seq2 (each in that order)? */
static int reads_as(const operand *o, const char *s1, int n1, const char *s2, int n2) {
  if (o->n != n1 + n2) return 0;
  for (int i = 0; i < n1; i++) if (o->l[i] != s1[i]) return 0;
  for (int i = 0; i < n2; i++) if (o->l[n1 + i] != s2[i]) return 0;
  return 1;
}

/* C = A . B with label groups; chooses transposes flags to avoid copies. */
static void gemm(lctx *c, operand *A, operand *Bo, operand *C, int out, const char *name) {
  char bt[IR_MAXRANK], m[IR_MAXRANK], n[IR_MAXRANK], k[IR_MAXRANK];
  int nb = 0, nm = 0, nn = 0, nk = 0;
  /* batch order from C, M from C, N from C, K from A */
  for (int i = 0; i < C->n; i++) {
    char l = C->l[i];
    int ina = has(A->l, A->n, l), inb = has(Bo->l, Bo->n, l);
    if (ina && inb) bt[nb++] = l; else if (ina) m[nm++] = l; else n[nn++] = l;
  }
  for (int i = 0; i < A->n; i++) if (has(Bo->l, Bo->n, A->l[i]) && !has(C->l, C->n, A->l[i])) k[nk++] = A->l[i];
  /* the result reads batch ++ M ++ N; if C reads batch ++ N ++ M, swap the operands
  ** (C^T = B^T A^T) so that no transpose of the result is needed */
  char want[16];
  int w0 = 0;
  for (int i = 0; i < nb; i++) want[w0++] = bt[i];
  for (int i = 0; i < nn; i++) want[w0++] = n[i];
  for (int i = 0; i < nm; i++) want[w0++] = m[i];
  if (nm && nn && memcmp(want, C->l, (size_t)C->n) == 0) {
    operand *t = A; A = Bo; Bo = t;
    char tl[IR_MAXRANK];
    memcpy(tl, m, (size_t)nm); memcpy(m, n, (size_t)nn); memcpy(n, tl, (size_t)nm);
    int tn = nm; nm = nn; nn = tn;
    nk = 0;
    for (int i = 0; i < A->n; i++) if (has(Bo->l, Bo->n, A->l[i]) && !has(C->l, C->n, A->l[i])) k[nk++] = A->l[i];
  }
  int ta = 0, tb = 0, abuf, bbuf;
  char seq[16];
  /* batch must lead in both operands, in C's batch order */
  operand A2 = *A, B2 = *Bo;
  int a_ok = 1, b_ok = 1;
  for (int i = 0; i < nb; i++) { a_ok &= A->l[i] == bt[i]; b_ok &= Bo->l[i] == bt[i]; }
  if (a_ok) {
    A2.n = A->n - nb; memmove(A2.l, A->l + nb, (size_t)A2.n); memmove(A2.d, A->d + nb, sizeof(int64_t) * (size_t)A2.n);
    if (reads_as(&A2, m, nm, k, nk)) ta = 0;
    else if (reads_as(&A2, k, nk, m, nm)) ta = 1;
    else a_ok = 0;
  }
  if (a_ok) abuf = A->buf;
  else {
    int w = 0;
    for (int i = 0; i < nb; i++) seq[w++] = bt[i];
    for (int i = 0; i < nm; i++) seq[w++] = m[i];
    for (int i = 0; i < nk; i++) seq[w++] = k[i];
    abuf = arrange(c, A, seq, w, name);
    ta = 0;
  }
  if (b_ok) {
    B2.n = Bo->n - nb; memmove(B2.l, Bo->l + nb, (size_t)B2.n); memmove(B2.d, Bo->d + nb, sizeof(int64_t) * (size_t)B2.n);
    if (reads_as(&B2, k, nk, n, nn)) tb = 0;
    else if (reads_as(&B2, n, nn, k, nk)) tb = 1;
    else b_ok = 0;
  }
  if (b_ok) bbuf = Bo->buf;
  else {
    int w = 0;
    for (int i = 0; i < nb; i++) seq[w++] = bt[i];
    for (int i = 0; i < nk; i++) seq[w++] = k[i];
    for (int i = 0; i < nn; i++) seq[w++] = n[i];
    bbuf = arrange(c, Bo, seq, w, name);
    tb = 0;
  }
  int64_t batch = 1, M = 1, N = 1, K = 1;
  for (int i = 0; i < nb; i++) batch *= label_size(C, bt[i]);
  for (int i = 0; i < nm; i++) M *= label_size(A, m[i]);
  for (int i = 0; i < nn; i++) N *= label_size(Bo, n[i]);
  for (int i = 0; i < nk; i++) K *= label_size(A, k[i]);
  /* result laid out batch ++ M ++ N; transpose into C's order if needed */
  char rs[16];
  int64_t rd[16];
  int w = 0;
  for (int i = 0; i < nb; i++) { rs[w] = bt[i]; rd[w++] = label_size(C, bt[i]); }
  for (int i = 0; i < nm; i++) { rs[w] = m[i]; rd[w++] = label_size(C, m[i]); }
  for (int i = 0; i < nn; i++) { rs[w] = n[i]; rd[w++] = label_size(C, n[i]); }
  int direct = memcmp(rs, C->l, (size_t)C->n) == 0;
  int dst = direct ? out : lw_tmp(c, name, c->dt, w ? w : 1, w ? rd : (int64_t[]){1});
  rt_instr *x = rt_prog_emit(c->p, RT_GEMM, dst);
  x->nin = 2; x->in[0] = abuf; x->in[1] = bbuf;
  x->batch = batch; x->m = M; x->n = N; x->k = K;
  x->transa = (int8_t)ta; x->transb = (int8_t)tb;
  x->stride_a = M * K; x->stride_b = K * N; x->stride_c = M * N;
  x->alpha = 1; x->beta = 0;
  if (!direct) {
    operand R = {dst, w};
    memcpy(R.l, rs, (size_t)w);
    memcpy(R.d, rd, sizeof(int64_t) * (size_t)w);
    int perm[IR_MAXRANK];
    for (int i = 0; i < C->n; i++) for (int j = 0; j < w; j++) if (R.l[j] == C->l[i]) perm[i] = j;
    lw_transpose(c, dst, R.d, w, perm, out, name, c->dt);
  }
}

/* Sum away labels of o that appear in neither other nor the result. */
static void presum(lctx *c, operand *o, const operand *other, const operand *res, const char *name) {
  int mark[IR_MAXRANK] = {0}, any = 0;
  for (int i = 0; i < o->n; i++)
    if (!has(other->l, other->n, o->l[i]) && !has(res->l, res->n, o->l[i])) mark[i] = any = 1;
  if (!any) return;
  ir_shape s = {o->n};
  for (int i = 0; i < o->n; i++) s.d[i] = o->d[i];
  operand r = {0};
  for (int i = 0; i < o->n; i++) if (!mark[i]) { r.l[r.n] = o->l[i]; r.d[r.n++] = o->d[i]; }
  r.buf = lw_tmp(c, name, c->dt, r.n ? r.n : 1, r.n ? r.d : (int64_t[]){1});
  lw_reduce(c, o->buf, &s, mark, RT_RSUM, 1.0, r.buf, name);
  *o = r;
}

static void mk_operand(operand *o, int buf, const char *labels, const ir_shape *s) {
  o->buf = buf;
  o->n = 0;
  for (int i = 0; i < s->rank; i++)
    if (s->d[i] != 1) { o->l[o->n] = labels[i]; o->d[o->n++] = s->d[i]; }
}

void lower_contract(lctx *c, const ir_value *v, int out) {
  const ir_shape *as = AS(c, 0), *bs = AS(c, 1);
  char l[3][IR_MAXRANK + 1];
  ir_contraction_labels(c->g, v, l);
  const char *la = l[0], *lb = l[1], *lc = l[2];
  operand A, Bo, C;
  mk_operand(&A, AB(c, 0), la, as);
  mk_operand(&Bo, AB(c, 1), lb, bs);
  mk_operand(&C, out, lc, OS(c));
  presum(c, &A, &Bo, &C, v->name);
  presum(c, &Bo, &A, &C, v->name);
  gemm(c, &A, &Bo, &C, out, v->name);
}


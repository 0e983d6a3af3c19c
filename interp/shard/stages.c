/*
** stages.c: where a pipelined plan computes each value.
**
** The forward pass is cut into as many stages as the stage axis has
** devices: at the values the tactic names, or else where the fewest
** values cross from one part to the next (the residual stream between
** blocks), the places that make the busiest part least busy. A forward value that depends on
** an input runs on its stage; a backward value runs where the forward
** value whose gradient rule made it runs (ir_value.origin), but a sum of
** gradients runs where its last part is made. Everything
** else (weights' transposes, constants, the optimizer's updates, the
** update of a weight two stages read) runs on every stage that reads it,
** so that each stage holds its own copy and no weight travels. The result
** is a mask of stages per value.
*/
#include "interp/shard/shard.h"
#include "util/mem.h"

#include <stdlib.h>
#include <math.h>
#include <string.h>

/* A rough count of a forward value's work: its elements, times what a
   contraction sums over. */
static double work_of(const ir_graph *g, const ir_value *v) {
  double w = (double)ir_nelem(&v->shape);
  if (v->op == IR_MATMUL || v->op == IR_EINSUM) {
    char l[3][IR_MAXRANK + 1];
    ir_contraction_labels(g, v, l);
    const ir_value *a = g->vals[v->args[0]];
    for (int i = 0; l[0][i]; i++)
      if (!strchr(l[2], l[0][i]) && i < a->shape.rank) w *= (double)a->shape.d[i];
  }
  return w > 1 ? w : 1;
}

/* The values that end stages 0 .. n-2, where the fewest values cross into
   the next part, the busiest part as little busy as can be. -1 with an error when the program
   has fewer such places than it needs. */
static int find_cuts(const sh_plan *p, const char *staged, int n, int *cuts, diag *d) {
  const ir_graph *g = p->g;
  int nv = g->nvals;
  int *last = mem_alloc(sizeof(int) * (size_t)(nv + 1)), *cross = mem_calloc((size_t)nv + 2, sizeof(int));
  double *cum = mem_calloc((size_t)nv + 1, sizeof(double));
  for (int v = 0; v < nv; v++) {
    last[v] = -1;
    if (!staged[v]) continue;
    const ir_value *x = g->vals[v];
    for (int k = 0; k < x->nusers; k++) if (staged[x->users[k]] && x->users[k] > last[v]) last[v] = x->users[k];
    if (last[v] > v) { cross[v]++; cross[last[v]]--; }   /* crosses every cut after v and before its last reader */
  }
  double total = 0;
  int run = 0, best = -1, laststaged = -1;
  for (int v = 0; v < nv; v++) {
    run += cross[v];
    cross[v] = run;                       /* values crossing a cut right after v */
    if (staged[v]) { total += work_of(g, g->vals[v]); laststaged = v; }
    cum[v] = total;
  }
  for (int v = 0; v < laststaged; v++) if (staged[v] && (best < 0 || cross[v] < best)) best = cross[v];
  /* the places, and of them the n - 1 that make the busiest part the least
     busy (the step goes at the pace of the slowest stage): over each place
     as the k-th cut, the least busiest part so far (f) and the cut before */
  int m = 0, got = 0;
  int *at = mem_alloc(sizeof(int) * (size_t)(nv + 1));
  for (int v = 0; v < laststaged; v++) if (staged[v] && cross[v] == best) at[m++] = v;
  /* (the search below costs m^2 n: past 2 x 10^7, every k-th place only, so that a long chain of ops stays quick) */
  int64_t budget = 20000000, keep = m;
  while (keep > n && (double)keep * (double)keep * (double)n > (double)budget) keep = keep * 3 / 4;
  if (keep < m) {
    int w = 0;
    for (int64_t i = 0; i < keep; i++) at[w++] = at[(int)(i * m / keep)];
    m = w;
  }
  if (m >= n - 1 && n > 1) {
    double *f = mem_alloc(sizeof(double) * (size_t)m * (size_t)(n - 1));
    int *from = mem_alloc(sizeof(int) * (size_t)m * (size_t)(n - 1));
    for (int i = 0; i < m; i++) { f[i] = cum[at[i]]; from[i] = -1; }
    for (int k = 1; k < n - 1; k++)
      for (int i = 0; i < m; i++) {
        double *fk = &f[(size_t)k * (size_t)m], *fp = &f[(size_t)(k - 1) * (size_t)m];
        fk[i] = INFINITY;
        from[(size_t)k * (size_t)m + (size_t)i] = -1;
        for (int j = k - 1; j < i; j++) {
          double busiest = fmax(fp[j], cum[at[i]] - cum[at[j]]);
          if (fp[j] < INFINITY && busiest < fk[i]) { fk[i] = busiest; from[(size_t)k * (size_t)m + (size_t)i] = j; }
        }
      }
    int last_cut = -1;
    double bestmax = INFINITY;
    for (int i = n - 2; i < m; i++) {
      double busiest = fmax(f[(size_t)(n - 2) * (size_t)m + (size_t)i], total - cum[at[i]]);
      if (busiest < bestmax) { bestmax = busiest; last_cut = i; }
    }
    for (int k = n - 2, i = last_cut; k >= 0 && i >= 0; i = from[(size_t)k * (size_t)m + (size_t)i], k--) cuts[k] = at[i];
    got = last_cut >= 0 ? n - 1 : 0;
    free(f);
    free(from);
  } else {
    got = m;
  }
  free(at);
  free(last);
  free(cross);
  free(cum);
  if (got == n - 1) return 0;
  return diag_error(d, p->pipe.at, "pipeline: the program has %d places where %d value%s cross%s from one part to the next, "
                    "and %d parts need %d; name the values that end each part (at = [...])", got, best, best == 1 ? "" : "s",
                    best == 1 ? "es" : "", n, n - 1);
}

void shard_stages_free(sh_stages *st) {
  free(st->mask);
  free(st->fwd);
  free(st->cuts);
  free(st->part);
  memset(st, 0, sizeof *st);
}

int shard_stages(const sh_plan *p, sh_stages *st, diag *d) {
  const ir_graph *g = p->g;
  int nv = g->nvals, P = (int)p->mesh.size[p->pipe.axis], N = P * (p->pipe.chunks > 1 ? p->pipe.chunks : 1);
  st->n = N;
  uint64_t *mask = st->mask = mem_alloc(sizeof *mask * (size_t)(nv + 1));
  char *fwd = st->fwd = mem_calloc((size_t)nv + 1, 1);
  int *part = st->part = mem_alloc(sizeof(int) * (size_t)(nv + 1));
  int *cuts_out = st->cuts = mem_alloc(sizeof(int) * (size_t)(N + 1));
  for (int v = 0; v < nv; v++) part[v] = -1;
  char *input = mem_calloc((size_t)nv + 1, 1), *staged = mem_calloc((size_t)nv + 1, 1);
  if (g->nouts) fwd[g->outputs[0]] = 1;
  for (int v = nv - 1; v >= 0; v--)
    if (fwd[v]) for (int k = 0; k < g->vals[v]->nargs; k++) fwd[g->vals[v]->args[k]] = 1;
  for (int v = 0; v < nv; v++) {
    const ir_value *x = g->vals[v];
    input[v] = x->kind == IR_INPUT;
    for (int k = 0; k < x->nargs && !input[v]; k++) input[v] = input[x->args[k]];
    staged[v] = x->kind == IR_OP && fwd[v] && input[v];
  }
  int *cuts = cuts_out, rc = 0;
  if (p->pipe.ncuts) memcpy(cuts, p->pipe.cuts, sizeof(int) * (size_t)p->pipe.ncuts);
  else if (N > 1) rc = find_cuts(p, staged, N, cuts, d);
  for (int k = 0; k < N - 1 && !rc; k++)
    if (!staged[cuts[k]])
      rc = diag_error(d, p->pipe.at, "pipeline: '%s' cannot end a stage: it is not a value of the forward pass that the inputs reach",
                      g->vals[cuts[k]]->name);
  memset(mask, 0, sizeof *mask * (size_t)nv);
  for (int v = 0, s = 0; v < nv && !rc; v++) {    /* part s on stage s mod P (interleaved: a stage holds several) */
    if (!staged[v]) continue;
    while (s < N - 1 && cuts[s] < v) s++;
    part[v] = s;
    mask[v] = (uint64_t)1 << (s % P);
  }
  for (int v = 0; v < nv && !rc; v++) {     /* the backward pass where its forward value runs */
    const ir_value *x = g->vals[v];
    int o = x->origin;
    if (fwd[v] || o < 0) continue;
    /* a sum of gradients is taken where its last part is made: for the
       residual stream's, read by the next stage's block twice, there, so
       that one value travels back rather than each part; for a weight two
       stages read (a tied embedding), on the stage whose part comes last,
       the other's part sent to it */
    int from = -1;
    if (x->op == IR_ADD && x->nargs == 2 && !fwd[x->args[0]] && !fwd[x->args[1]] && staged[x->args[0]] && staged[x->args[1]])
      from = x->args[0] > x->args[1] ? x->args[0] : x->args[1];
    else if (staged[o])
      from = o;
    if (from < 0) continue;
    mask[v] = mask[from];
    part[v] = part[from];
    staged[v] = 1;
  }
  /* the rest where it is read, its readers first; a new value carried into
     a leaf where the leaf is read (its update beside each copy) */
  for (int changed = 1; changed && !rc;) {   /* masks only grow: to the fixed point (a carry closes a cycle) */
    changed = 0;
    for (int v = nv - 1; v >= 0; v--) {
      const ir_value *x = g->vals[v];
      if (staged[v]) continue;
      uint64_t m = mask[v];
      for (int k = 0; k < x->nusers; k++) m |= mask[x->users[k]];
      if (x->carry >= 0) m |= mask[x->carry];
      if (m != mask[v]) { mask[v] = m; changed = 1; }
    }
  }
  for (int v = 0; v < nv; v++) if (!mask[v]) mask[v] = (uint64_t)1 << (P - 1);   /* read by no one: with the loss */
  free(input);
  free(staged);
  return rc;
}

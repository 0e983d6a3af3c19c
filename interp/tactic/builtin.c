/*
** builtin.c: the shipped tactics that need to read the graph's structure:
**   megatron   finds column-parallel weights from the graph: a weight whose
**              free dim flows, through ops that keep it split, into a
**              contraction with another weight that sums it away (the MLP
**              pair, the attention heads feeding the output projection);
**              splits that dim, and propagation does the rest (the row-
**              parallel partner, biases, gradients, optimizer state);
**   zero       stage 1: optimizer state; 2: and gradients; 3: and
**              parameters, on the first divisible dim;
**   embedding  the rows (vocabulary) of every embedding table.
** batch is a plain tactic file (stdlib-tactics/batch.tac).
*/
#include "interp/ir/ops.h"
#include "interp/tactic/tactic.h"
#include "interp/shard/layout.h"

#include <stdlib.h>
#include <string.h>


/* values the first output depends on: the forward program */
static char *forward_set(const ir_graph *g) {
  char *f = mem_calloc((size_t)g->nvals + 1, 1);
  if (!g->nouts) return f;
  f[g->outputs[0]] = 1;
  for (int v = g->nvals - 1; v >= 0; v--) {
    if (!f[v]) continue;
    const ir_value *x = g->vals[v];
    for (int k = 0; k < x->nargs; k++) f[x->args[k]] = 1;
  }
  return f;
}

static int is_contraction(const ir_value *v) { return v->op == IR_MATMUL || v->op == IR_EINSUM; }

/* Follow the factor of dim `dim` of value `x` forward; 1 when every path ends
** summed away by a contraction with a parameter (recorded in partner), 0 otherwise. */
static int reaches_row_partner(const ir_graph *g, const char *fwd, int x, int dim, int depth, char *partner) {
  if (depth > 48) return 0;
  const ir_value *v = g->vals[x];
  int found = 0;
  for (int k = 0; k < v->nusers; k++) {
    const ir_value *w = g->vals[v->users[k]];
    if (!fwd[w->id]) continue;
    sh_rule r;
    if (shard_rule(g, w, &r) < 0) return 0;
    for (int a = 0; a < w->nargs; a++) {
      if (w->args[a] != x) continue;
      int f = r.map[a][dim];
      if (f < 0) return 0;
      if (r.kind[f] == F_WHOLE) return 0;
      if (r.kind[f] == F_CONTRACT) {
        if (!is_contraction(w)) return 0;
        int other_param = 0;
        for (int b = 0; b < w->nargs; b++)
          if (b != a && g->vals[w->args[b]]->kind == IR_PARAM) { other_param = 1; if (partner) partner[w->args[b]] = 1; }
        if (!other_param) return 0;
        found = 1;
        continue;
      }
      int rd = -1;
      for (int i = 0; i < r.rank[r.nops - 1]; i++) if (r.map[r.nops - 1][i] == f) rd = i;
      if (rd < 0 || !reaches_row_partner(g, fwd, w->id, rd, depth + 1, partner)) return 0;
      found = 1;
    }
  }
  return found;
}

static int megatron(sh_plan *p, int axis, diag *d) {
  const ir_graph *g = p->g;
  char *fwd = forward_set(g);
  char *done = mem_calloc((size_t)g->nvals + 1, 1);
  char *partner = mem_calloc((size_t)g->nvals + 1, 1);   /* row-parallel weights: split by propagation */
  int n = 0, undivided = -1, undivided_dim = 0;
  for (int u = 0; u < g->nvals; u++) {
    const ir_value *v = g->vals[u];
    if (!fwd[u] || !is_contraction(v)) continue;
    sh_rule r;
    if (shard_rule(g, v, &r) < 0) continue;
    for (int k = 0; k < v->nargs; k++) {
      const ir_value *w = g->vals[v->args[k]];
      if (w->kind != IR_PARAM || done[w->id] || partner[w->id]) continue;
      for (int i = 0; i < w->shape.rank; i++) {
        int f = r.map[k][i];
        if (f < 0 || r.kind[f] != F_PASS) continue;
        int rd = -1;
        for (int j = 0; j < v->shape.rank; j++) if (r.map[r.nops - 1][j] == f) rd = j;
        char *found = mem_calloc((size_t)g->nvals + 1, 1);
        int ok = rd >= 0 && reaches_row_partner(g, fwd, u, rd, 0, found);
        if (ok) for (int q = 0; q < g->nvals; q++) partner[q] |= found[q];
        free(found);
        if (!ok) continue;
        if (w->shape.d[i] % (layout_pieces(p, &p->lay[w->id].dim[i]) * p->mesh.size[axis])) {
          if (undivided < 0) { undivided = w->id; undivided_dim = i; }
          continue;
        }
        int rc = shard_split(p, w->id, i, axis, d);
        if (rc < 0) { free(fwd); free(done); free(partner); return -1; }
        done[w->id] = 1;
        n++;
        break;
      }
    }
  }
  free(fwd);
  free(done);
  free(partner);
  if (!n && undivided >= 0) {
    const ir_value *w = g->vals[undivided];
    return diag_warning(d, p->at, "megatron: the column-parallel weights are not divisible into %lld pieces on '%s' (dim %d of '%s' has %lld)",
                        (long long)p->mesh.size[axis], p->mesh.name[axis], undivided_dim, w->name, (long long)w->shape.d[undivided_dim]);
  }
  if (!n) return diag_warning(d, p->at, "megatron: no column-parallel weight found (no weight whose output is summed away by a second weight)");
  return 0;
}

/* the first dim that can take the axis, or -1 */
static int first_divisible(const sh_plan *p, int v, int axis) {
  const ir_value *x = p->g->vals[v];
  if (shard_uses_axis(&p->lay[v], x->shape.rank, axis) >= 0) return -1;
  for (int i = 0; i < x->shape.rank; i++) {
    if ((p->lay[v].forbid[i] >> axis) & 1) continue;
    if (x->shape.d[i] % (layout_pieces(p, &p->lay[v].dim[i]) * p->mesh.size[axis]) == 0) return i;
  }
  return -1;
}

static int zero(sh_plan *p, int axis, int64_t stage, diag *d) {
  if (stage < 1 || stage > 3) return diag_error(d, p->at, "zero: stage must be 1, 2 or 3, not %lld", (long long)stage);
  const ir_graph *g = p->g;
  if (!g->train) return diag_error(d, p->at, "zero shards optimizer state: apply it to a training step (--train adam(...))");
  for (int v = 0; v < g->nvals; v++) {
    const ir_value *x = g->vals[v];
    int kind = x->kind == IR_STATE ? 1 : x->role == ROLE_GRAD ? 2 : x->kind == IR_PARAM ? 3 : 0;
    if (!kind) continue;
    if (kind <= stage) {
      int dim = first_divisible(p, v, axis);
      if (dim >= 0 && shard_split(p, v, dim, axis, d) < 0) return -1;
    } else {
      shard_replicate(p, v, -1, axis);   /* below the stage: kept whole on the axis */
    }
  }
  return 0;
}

static int embedding(sh_plan *p, int axis, diag *d) {
  const ir_graph *g = p->g;
  int n = 0;
  for (int v = 0; v < g->nvals; v++) {
    const ir_value *x = g->vals[v];
    if (x->op != IR_EMBEDDING) continue;
    const ir_value *t = g->vals[x->args[0]];
    if (t->kind != IR_PARAM || shard_uses_axis(&p->lay[t->id], 2, axis) == 0) continue;
    if (t->shape.d[0] % (layout_pieces(p, &p->lay[t->id].dim[0]) * p->mesh.size[axis]))
      return diag_error(d, p->at, "embedding: the %lld rows of '%s' do not split into %lld pieces on '%s'; pad the table to a multiple (Megatron pads 50257 to 50304)",
                        (long long)t->shape.d[0], t->name, (long long)p->mesh.size[axis], p->mesh.name[axis]);
    if (shard_split(p, t->id, 0, axis, d) < 0) return -1;
    n++;
  }
  if (!n) return diag_warning(d, p->at, "embedding: the program has no embedding table");
  return 0;
}

typedef struct builtin { const char *name; int (*apply)(sh_plan *p, int axis, const tactic_args *a, diag *d); } builtin;

static int run_megatron(sh_plan *p, int axis, const tactic_args *a, diag *d) { return megatron(p, axis, d); }
static int run_zero(sh_plan *p, int axis, const tactic_args *a, diag *d) { return zero(p, axis, a->stage, d); }
static int run_embedding(sh_plan *p, int axis, const tactic_args *a, diag *d) { return embedding(p, axis, d); }

static const builtin builtins[] = {
  {"embedding", run_embedding},
  {"megatron", run_megatron},
  {"zero", run_zero},
};

int builtin_find(const char *name) {
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) if (!strcmp(builtins[i].name, name)) return 1;
  return 0;
}

void builtin_names(strbuf *b) {
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) sb_printf(b, "%s%s", i ? ", " : "", builtins[i].name);
}

int builtin_apply(sh_plan *p, const char *name, const tactic_args *a, diag *d) {
  int axis = shard_axis(p, a->axis);
  if (axis < 0) return diag_error(d, p->at, "%s: unknown axis '%s'", name, a->axis);
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
    if (!strcmp(builtins[i].name, name)) return builtins[i].apply(p, axis, a, d);
  return diag_error(d, p->at, "no built-in tactic '%s'", name);
}

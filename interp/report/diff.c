/*
** diff.c: what changes between two plans (carve diff).
*/
#include "interp/report/diff.h"
#include "util/mem.h"
#include "interp/report/report.h"
#include "interp/ir/ops.h"

#include <stdlib.h>
#include <string.h>

/* ---- names as patterns: runs of digits are the places layers differ ---- */

#define MAXDIGITS 18     /* longer runs of digits are left as text */

typedef struct run { int start, len; int64_t num; } run;

static int runs_of(const char *name, run *r) {
  int n = 0;
  for (int i = 0; name[i]; ) {
    if (name[i] < '0' || name[i] > '9') { i++; continue; }
    int j = i;
    while (name[j] >= '0' && name[j] <= '9') j++;
    if (j - i <= MAXDIGITS && n < DIFF_MAXSLOTS) {
      int64_t x = 0;
      for (int k = i; k < j; k++) x = x * 10 + (name[k] - '0');
      r[n++] = (run){i, j - i, x};
    }
    i = j;
  }
  return n;
}

/* name with every run of digits as '#' ('#' is never in a name) */
static const char *full_pattern(arena *a, const char *name) {
  run r[DIFF_MAXSLOTS];
  int n = runs_of(name, r);
  strbuf b;
  sb_init(&b);
  int at = 0;
  for (int k = 0; k < n; k++) {
    sb_put(&b, name + at, (size_t)(r[k].start - at));
    sb_putc(&b, '#');
    at = r[k].start + r[k].len;
  }
  sb_puts(&b, name + at);
  const char *s = arena_strndup(a, sb_str(&b), b.n);
  sb_free(&b);
  return s;
}

typedef struct item {
  int index;              /* value id, or collective key */
  int order;              /* program order */
  const char *name, *key;
} item;

static int by_key(const void *x, const void *y) {
  const item *a = x, *b = y;
  int c = strcmp(a->key, b->key);
  return c ? c : (a->order > b->order) - (a->order < b->order);
}

static int by_first(const void *x, const void *y) {
  const diff_group *a = x, *b = y;
  return (a->order > b->order) - (a->order < b->order);
}

/* Finish group g from its members' names: the runs that differ become slots. */
static void name_group(arena *a, diff_group *g, const char *const *names) {
  run r0[DIFF_MAXSLOTS], rk[DIFF_MAXSLOTS];
  int n = runs_of(names[0], r0);
  int varies[DIFF_MAXSLOTS] = {0};
  for (int m = 1; m < g->n; m++) {
    runs_of(names[m], rk);
    for (int k = 0; k < n; k++) if (rk[k].num != r0[k].num) varies[k] = 1;
  }
  strbuf b;
  sb_init(&b);
  int at = 0;
  g->nslots = 0;
  for (int k = 0; k < n; k++) {
    if (!varies[k]) continue;
    sb_put(&b, names[0] + at, (size_t)(r0[k].start - at));
    sb_printf(&b, "{%c}", 'i' + g->nslots);
    g->run[g->nslots++] = (int8_t)k;
    at = r0[k].start + r0[k].len;
  }
  sb_puts(&b, names[0] + at);
  g->pattern = arena_strndup(a, sb_str(&b), b.n);
  sb_free(&b);
}

/* Group items by key, the groups in program order of their first member. */
static diff_group *group_items(arena *a, item *it, int n, int *ngroups) {
  mem_sort(it, (size_t)n, sizeof *it, by_key);
  diff_group *g = arena_alloc(a, sizeof *g * (size_t)(n ? n : 1));
  const char **names = mem_alloc(sizeof(char *) * (size_t)(n + 1));
  int ng = 0;
  for (int i = 0; i < n; ) {
    int j = i;
    while (j < n && !strcmp(it[j].key, it[i].key)) j++;
    diff_group *x = &g[ng++];
    x->n = j - i;
    x->order = it[i].order;
    x->members = arena_alloc(a, sizeof(int) * (size_t)x->n);
    for (int k = i; k < j; k++) { x->members[k - i] = it[k].index; names[k - i] = it[k].name; }
    name_group(a, x, names);
    i = j;
  }
  free(names);
  mem_sort(g, (size_t)ng, sizeof *g, by_first);
  *ngroups = ng;
  return g;
}

/* ---- values ---- */

static const char *sharding_text(arena *a, const sh_plan *p, int v) {
  const char *s = shard_str(p, v, a);
  if (shard_keeps_partial(p, v)) s = arena_printf(a, "%s partial %s", s, shard_axes_str(p, p->lay[v].partial, a));
  return s;
}

/* Sections, in the order printed. */
static const char *const kinds[] = {"param", "input", "grad", "state", "value"};
#define NKINDS 5
/* Lines of "other values" the text shows. */
#define DIFF_MAXLINES 24

static int kind_rank(const char *k) {
  for (int i = 0; i < NKINDS; i++) if (!strcmp(kinds[i], k)) return i;
  return NKINDS - 1;
}

static void diff_values(report_diff_t *d) {
  const sh_plan *pa = d->side[0]->plan, *pb = d->side[1]->plan;
  const ir_graph *g = pa->g;
  item *it = mem_alloc(sizeof *it * (size_t)(g->nvals + 1));
  int n = 0;
  for (int v = 0; v < g->nvals; v++) {
    const ir_value *x = g->vals[v];
    if (x->kind == IR_CONST) continue;
    d->nvalues++;
    const char *sa = sharding_text(&d->mem, pa, v), *sb = sharding_text(&d->mem, pb, v);
    if (!strcmp(sa, sb)) continue;
    d->nchanged++;
    const char *kind = report_kind(x);
    it[n++] = (item){v, v, x->name, arena_printf(&d->mem, "%d\x1f%s\x1f%s\x1f%s", kind_rank(kind), full_pattern(&d->mem, x->name), sa, sb)};
  }
  d->values = group_items(&d->mem, it, n, &d->nvgroups);
  for (int k = 0; k < d->nvgroups; k++) {
    diff_group *x = &d->values[k];
    int v = x->members[0];
    x->what = report_kind(g->vals[v]);
    x->a = sharding_text(&d->mem, pa, v);
    x->b = sharding_text(&d->mem, pb, v);
  }
  /* by section, program order within each */
  diff_group *sorted = arena_alloc(&d->mem, sizeof *sorted * (size_t)(d->nvgroups ? d->nvgroups : 1));
  int m = 0;
  for (int s = 0; s < NKINDS; s++)
    for (int k = 0; k < d->nvgroups; k++) if (kind_rank(d->values[k].what) == s) sorted[m++] = d->values[k];
  d->values = sorted;
  free(it);
}

/* ---- collectives ---- */

static const char *axes_text(arena *a, const rt_prog *p, int group) {
  strbuf b;
  sb_init(&b);
  sb_putc(&b, '{');
  for (int i = 0; group >= 0 && i < p->groups[group].naxes; i++) sb_printf(&b, "%s%s", i ? ", " : "", p->axis_names[p->groups[group].axes[i]]);
  sb_putc(&b, '}');
  const char *s = arena_strndup(a, sb_str(&b), b.n);
  sb_free(&b);
  return s;
}

static int coll_cmp(const void *x, const void *y) {
  const diff_coll *a = x, *b = y;
  int c = strcmp(a->kind, b->kind);
  if (!c) c = strcmp(a->value, b->value);
  if (!c) c = strcmp(a->axes, b->axes);
  return c;
}

static void diff_collectives(report_diff_t *d) {
  const ir_graph *g = d->side[0]->plan->g;
  int cap = 0;
  for (int s = 0; s < 2; s++) cap += d->side[s]->prog->ninstrs;
  diff_coll *all = mem_alloc(sizeof *all * (size_t)(cap + 1));
  int n = 0;
  for (int s = 0; s < 2; s++) {
    const rt_prog *p = d->side[s]->prog;
    for (int i = 0; i < p->ninstrs; i++) {
      const rt_instr *x = &p->instrs[i];
      if (!rt_is_collective((rt_op)x->op)) continue;
      double by = (double)rt_coll_bytes(p, x);
      d->kind_count[s][x->op - RT_ALL_REDUCE]++;
      d->kind_bytes[s][x->op - RT_ALL_REDUCE] += by;
      diff_coll c = {rt_coll_name(x), x->src >= 0 ? g->vals[x->src]->name : p->bufs[x->out].name, axes_text(&d->mem, p, x->group),
                     {0, 0}, {0, 0}, {-1, -1}};
      c.count[s] = 1;
      c.bytes[s] = by;
      c.first[s] = i;
      all[n++] = c;
    }
  }
  mem_sort(all, (size_t)n, sizeof *all, coll_cmp);
  d->coll = arena_alloc(&d->mem, sizeof *d->coll * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) {
    if (d->ncoll && !coll_cmp(&d->coll[d->ncoll - 1], &all[i])) {
      diff_coll *c = &d->coll[d->ncoll - 1];
      for (int s = 0; s < 2; s++) {
        c->count[s] += all[i].count[s];
        c->bytes[s] += all[i].bytes[s];
        if (c->first[s] < 0 || (all[i].first[s] >= 0 && all[i].first[s] < c->first[s])) c->first[s] = all[i].first[s];
      }
    } else d->coll[d->ncoll++] = all[i];
  }
  free(all);
  /* added in B, removed from A: grouped by pattern, kind, axes and bytes each */
  item *it[2];
  int ni[2] = {0, 0};
  for (int s = 0; s < 2; s++) it[s] = mem_alloc(sizeof(item) * (size_t)(d->ncoll + 1));
  for (int k = 0; k < d->ncoll; k++) {
    const diff_coll *c = &d->coll[k];
    int delta = c->count[1] - c->count[0];
    if (!delta) {
      if (c->bytes[0] != c->bytes[1]) d->nbytes_changed++;
      continue;
    }
    int s = delta > 0 ? 1 : 0;
    double each = c->bytes[s] / c->count[s];
    it[s][ni[s]++] = (item){k, c->first[s], c->value,
                            arena_printf(&d->mem, "%s\x1f%s\x1f%.17g\x1f%s", c->kind, c->axes, each, full_pattern(&d->mem, c->value))};
  }
  for (int s = 0; s < 2; s++) {
    int ng;
    diff_group *gr = group_items(&d->mem, it[s], ni[s], &ng);
    for (int k = 0; k < ng; k++) {
      diff_group *x = &gr[k];
      const diff_coll *c0 = &d->coll[x->members[0]];
      x->what = c0->kind;
      x->a = c0->axes;
      x->b = "";
      x->count = 0;
      x->bytes = 0;
      for (int m = 0; m < x->n; m++) {
        const diff_coll *c = &d->coll[x->members[m]];
        int delta = c->count[1] - c->count[0];
        x->count += delta;
        x->bytes += (delta > 0 ? delta : -delta) * (c->bytes[s] / c->count[s]);
      }
    }
    if (s) { d->added = gr; d->nadded = ng; } else { d->removed = gr; d->nremoved = ng; }
    free(it[s]);
  }
}

/* ---- conflicts ---- */

static const char *conflict_key(arena *a, const sh_plan *p, const sh_conflict *c) {
  return arena_printf(a, "%s\x1f%s\x1f%s", p->g->vals[c->value]->name, c->op >= 0 ? p->g->vals[c->op]->name : "", c->message);
}

static void diff_conflicts(report_diff_t *d) {
  int total = d->side[0]->plan->ncon + d->side[1]->plan->ncon;
  d->conflicts = arena_alloc(&d->mem, sizeof *d->conflicts * (size_t)(total ? total : 1));
  for (int s = 0; s < 2; s++) {
    const sh_plan *p = d->side[s]->plan, *q = d->side[1 - s]->plan;
    for (int i = 0; i < p->ncon; i++) {
      const char *k = conflict_key(&d->mem, p, &p->con[i]);
      int found = 0;
      for (int j = 0; j < q->ncon && !found; j++) found = !strcmp(k, conflict_key(&d->mem, q, &q->con[j]));
      if (!found) d->conflicts[d->nconflicts++] = (diff_conflict){s, &p->con[i]};
    }
  }
}

static int same_mesh(const sh_mesh *a, const sh_mesh *b) {
  if (a->n != b->n) return 0;
  for (int i = 0; i < a->n; i++) if (strcmp(a->name[i], b->name[i]) || a->size[i] != b->size[i]) return 0;
  return 1;
}

void report_diff_compute(report_diff_t *d, const diff_side *a, const diff_side *b) {
  memset(d, 0, sizeof *d);
  arena_init(&d->mem);
  d->side[0] = a;
  d->side[1] = b;
  d->mesh_differs = !same_mesh(&a->plan->mesh, &b->plan->mesh);
  diff_values(d);
  diff_collectives(d);
  diff_conflicts(d);
}

void report_diff_free(report_diff_t *d) { arena_free(&d->mem); }

/* ---- output ---- */

static const char *member_name(const report_diff_t *d, const diff_group *g, int m, int collectives) {
  return collectives ? d->coll[g->members[m]].value : d->side[0]->plan->g->vals[g->members[m]]->name;
}

static int cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* The distinct numbers of group g at slot k, sorted; returns how many. */
static int slot_numbers(const report_diff_t *d, const diff_group *g, int k, int collectives, int64_t *out) {
  int n = 0;
  for (int m = 0; m < g->n; m++) {
    run r[DIFF_MAXSLOTS];
    runs_of(member_name(d, g, m, collectives), r);
    out[n++] = r[g->run[k]].num;
  }
  mem_sort(out, (size_t)n, sizeof *out, cmp_i64);
  int u = 0;
  for (int i = 0; i < n; i++) if (!u || out[u - 1] != out[i]) out[u++] = out[i];
  return u;
}

void report_diff_numbers(strbuf *b, const report_diff_t *d, const diff_group *g, int k, int collectives) {
  int64_t *x = mem_alloc(sizeof(int64_t) * (size_t)(g->n + 1));
  int n = slot_numbers(d, g, k, collectives, x);
  sb_printf(b, "%c = ", 'i' + k);
  for (int i = 0; i < n; ) {
    int j = i;
    while (j + 1 < n && x[j + 1] == x[j] + 1) j++;
    if (i) sb_puts(b, ", ");
    if (j - i >= 2) sb_printf(b, "%lld..%lld", (long long)x[i], (long long)x[j]);
    else if (j > i) sb_printf(b, "%lld, %lld", (long long)x[i], (long long)x[j]);
    else sb_printf(b, "%lld", (long long)x[i]);
    i = j + 1;
  }
  free(x);
}

static void group_numbers(strbuf *b, const report_diff_t *d, const diff_group *g, int collectives) {
  for (int k = 0; k < g->nslots; k++) {
    sb_puts(b, k ? "; " : "");
    report_diff_numbers(b, d, g, k, collectives);
  }
}

static void mesh_text(strbuf *b, const sh_mesh *m) {
  int64_t n = 1;
  for (int i = 0; i < m->n; i++) { sb_printf(b, "%s%s=%lld", i ? ", " : "", m->name[i], (long long)m->size[i]); n *= m->size[i]; }
  sb_printf(b, " (%lld device%s)", (long long)n, n == 1 ? "" : "s");
}

static const char *secs(arena *a, double s) {
  if (s >= 1) return arena_printf(a, "%.3f s", s);
  if (s >= 1e-3) return arena_printf(a, "%.3f ms", s * 1e3);
  return arena_printf(a, "%.1f us", s * 1e6);
}

static const char *const section_title[NKINDS] = {"parameters", "inputs", "gradients", "optimizer state", "other values"};

void report_diff(strbuf *b, const report_diff_t *d) {
  arena a;
  arena_init(&a);
  const diff_side *A = d->side[0], *B = d->side[1];
  sb_printf(b, "A = %s, B = %s\n", A->name, B->name);
  if (d->mesh_differs) {
    sb_puts(b, "meshes differ: A ");
    mesh_text(b, &A->plan->mesh);
    sb_puts(b, ", B ");
    mesh_text(b, &B->plan->mesh);
    sb_puts(b, "; shardings are compared by axis names\n");
  } else {
    sb_puts(b, "mesh ");
    mesh_text(b, &A->plan->mesh);
    sb_puts(b, " in both\n");
  }

  /* values */
  sb_printf(b, "\nsharding (A -> B): %d of %d values differ", d->nchanged, d->nvalues);
  sb_printf(b, d->nchanged ? ", in %d pattern%s\n" : "\n", d->nvgroups, d->nvgroups == 1 ? "" : "s");
  for (int s = 0; s < NKINDS; s++) {
    int groups = 0, members = 0;
    size_t wn = 0, wa = 0, wb = 0;      /* columns by section, over the lines shown */
    for (int k = 0; k < d->nvgroups; k++) {
      const diff_group *g = &d->values[k];
      if (kind_rank(g->what) != s) continue;
      if (s < NKINDS - 1 || groups < DIFF_MAXLINES) {
        if (strlen(g->pattern) > wn) wn = strlen(g->pattern);
        if (strlen(g->a) > wa) wa = strlen(g->a);
        if (strlen(g->b) > wb) wb = strlen(g->b);
      }
      groups++;
      members += g->n;
    }
    if (!groups) continue;
    sb_printf(b, "  %s (%d value%s", section_title[s], members, members == 1 ? "" : "s");
    if (groups != members) sb_printf(b, " in %d pattern%s", groups, groups == 1 ? "" : "s");
    sb_puts(b, "):\n");
    int shown = 0;
    for (int k = 0; k < d->nvgroups; k++) {
      const diff_group *g = &d->values[k];
      if (kind_rank(g->what) != s) continue;
      /* what follows from the rest (backward values, optimizer arithmetic) can be long: the first lines say it */
      if (s == NKINDS - 1 && shown == DIFF_MAXLINES) {
        sb_printf(b, "    ... and %d more pattern%s (--json lists every value)\n", groups - shown, groups - shown == 1 ? "" : "s");
        break;
      }
      shown++;
      sb_printf(b, "    %-*s  %-*s -> %-*s", (int)wn, g->pattern, (int)wa, g->a, (int)wb, g->b);
      if (g->nslots) { sb_puts(b, "  "); group_numbers(b, d, g, 0); }
      while (b->n && b->p[b->n - 1] == ' ') b->p[--b->n] = 0;
      sb_putc(b, '\n');
    }
  }

  /* collectives */
  sb_puts(b, "\ncollectives per step and device:\n");
  sb_printf(b, "  %-16s %22s %22s %8s\n", "", "A", "B", "B - A");
  for (int q = 0; q < DIFF_NKINDS; q++) {
    if (!d->kind_count[0][q] && !d->kind_count[1][q]) continue;
    const char *xa = arena_printf(&a, "%d (%s)", d->kind_count[0][q], report_bytes(&a, d->kind_bytes[0][q]));
    const char *xb = arena_printf(&a, "%d (%s)", d->kind_count[1][q], report_bytes(&a, d->kind_bytes[1][q]));
    sb_printf(b, "  %-16s %22s %22s %+8d\n", rt_op_name((rt_op)(RT_ALL_REDUCE + q)), xa, xb, d->kind_count[1][q] - d->kind_count[0][q]);
  }
  int nadd = 0, nrem = 0;
  for (int k = 0; k < d->nadded; k++) nadd += d->added[k].count;
  for (int k = 0; k < d->nremoved; k++) nrem -= d->removed[k].count;
  for (int s = 1; s >= 0; s--) {
    const diff_group *gr = s ? d->added : d->removed;
    int ng = s ? d->nadded : d->nremoved, total = s ? nadd : nrem;
    sb_printf(b, "  %s (%d)%s\n", s ? "only in B" : "only in A", total, total ? ":" : "");
    for (int k = 0; k < ng; k++) {
      const diff_group *g = &gr[k];
      int cnt = g->count < 0 ? -g->count : g->count;
      sb_printf(b, "    %-15s %-24s over %-14s %s", g->what, g->pattern, g->a, report_bytes(&a, g->bytes / (cnt ? cnt : 1)));
      if (cnt > 1) sb_printf(b, " each, %d in all", cnt);
      if (g->nslots) { sb_puts(b, "   "); group_numbers(b, d, g, 1); }
      sb_putc(b, '\n');
    }
  }
  if (d->nbytes_changed)
    sb_printf(b, "  in both, with other bytes per device: %d (the same kind, value and axes on %s)\n", d->nbytes_changed,
              d->mesh_differs ? "other meshes or pieces" : "other pieces");

  /* memory and time */
  if (A->sim && B->sim) {
    const sim_result *ra = A->sim, *rb = B->sim;
    sb_puts(b, "\nmemory per device and step time (simulated):\n");
    sb_printf(b, "  %-22s %14s %14s %14s\n", "", "A", "B", "B - A");
    struct { const char *name; double x, y; int time; } rows[] = {
      {"params", ra->mem.params, rb->mem.params, 0}, {"gradients", ra->mem.grads, rb->mem.grads, 0},
      {"optimizer state", ra->mem.optimizer, rb->mem.optimizer, 0}, {"activations", ra->mem.activations, rb->mem.activations, 0},
      {"collective buffers", ra->mem.collective, rb->mem.collective, 0}, {"inputs", ra->mem.inputs, rb->mem.inputs, 0},
      {"outputs", ra->mem.outputs, rb->mem.outputs, 0}, {"peak", ra->mem.peak, rb->mem.peak, 0},
      {"compute", ra->compute, rb->compute, 1}, {"communication", ra->communication, rb->communication, 1},
      {"step time", ra->total, rb->total, 1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
      double dl = rows[i].y - rows[i].x;
      const char *sx = rows[i].time ? secs(&a, rows[i].x) : report_bytes(&a, rows[i].x);
      const char *sy = rows[i].time ? secs(&a, rows[i].y) : report_bytes(&a, rows[i].y);
      const char *sd = dl == 0 ? "0" : arena_printf(&a, "%s%s", dl < 0 ? "-" : "+", rows[i].time ? secs(&a, dl < 0 ? -dl : dl) : report_bytes(&a, dl < 0 ? -dl : dl));
      sb_printf(b, "  %-22s %14s %14s %14s\n", rows[i].name, sx, sy, sd);
    }
  }

  /* conflicts */
  sb_printf(b, "\nconflicts in one plan only: %d\n", d->nconflicts);
  for (int i = 0; i < d->nconflicts; i++) {
    const diff_conflict *c = &d->conflicts[i];
    sb_printf(b, "  only in %c: %s: %s (tactic '%s'%s)\n", c->side ? 'B' : 'A', diag_where(&a, c->c->at), c->c->message, c->c->tactic,
              c->c->from_tactic ? "" : ", propagation");
  }
  arena_free(&a);
}

/* ---- JSON ---- */

static void json_mesh(json *j, const sh_mesh *m) {
  json_obj(j);
  for (int i = 0; i < m->n; i++) { json_key(j, m->name[i]); json_int(j, m->size[i]); }
  json_end_obj(j);
}

static void json_layout(json *j, const sh_plan *p, int v) {
  const ir_value *x = p->g->vals[v];
  json_obj(j);
  json_key(j, "sharding");
  json_arr(j);
  for (int i = 0; i < x->shape.rank; i++) {
    json_arr(j);
    for (int k = 0; k < p->lay[v].dim[i].n; k++) json_str(j, p->mesh.name[p->lay[v].dim[i].ax[k]]);
    json_end_arr(j);
  }
  json_end_arr(j);
  json_key(j, "partial");
  json_arr(j);
  uint32_t part = shard_keeps_partial(p, v) ? p->lay[v].partial : 0;
  for (int a = 0; a < p->mesh.n; a++) if ((part >> a) & 1) json_str(j, p->mesh.name[a]);
  json_end_arr(j);
  json_end_obj(j);
}

static void json_numbers(json *j, const report_diff_t *d, const diff_group *g, int collectives) {
  json_obj(j);
  int64_t *x = mem_alloc(sizeof(int64_t) * (size_t)(g->n + 1));
  for (int k = 0; k < g->nslots; k++) {
    char key[2] = {(char)('i' + k), 0};
    json_key(j, key);
    json_arr(j);
    int n = slot_numbers(d, g, k, collectives, x);
    for (int i = 0; i < n; i++) json_int(j, x[i]);
    json_end_arr(j);
  }
  free(x);
  json_end_obj(j);
}

static void json_coll_groups(json *j, const report_diff_t *d, const diff_group *gr, int ng) {
  json_arr(j);
  for (int k = 0; k < ng; k++)
    for (int m = 0; m < gr[k].n; m++) {
      const diff_coll *c = &d->coll[gr[k].members[m]];
      int delta = c->count[1] - c->count[0];
      json_obj(j);
      json_key(j, "kind"); json_str(j, c->kind);
      json_key(j, "value"); json_str(j, c->value);
      json_key(j, "axes"); json_str(j, c->axes);
      json_key(j, "count"); json_int(j, delta < 0 ? -delta : delta);
      json_key(j, "bytes"); json_num(j, delta > 0 ? c->bytes[1] / c->count[1] : c->bytes[0] / c->count[0]);
      json_key(j, "pattern"); json_str(j, gr[k].pattern);
      json_end_obj(j);
    }
  json_end_arr(j);
}

void report_diff_json(json *j, const report_diff_t *d) {
  arena a;
  arena_init(&a);
  json_obj(j);
  for (int s = 0; s < 2; s++) {
    const diff_side *x = d->side[s];
    json_key(j, s ? "b" : "a");
    json_obj(j);
    json_key(j, "tactics"); json_str(j, x->name);
    json_key(j, "mesh"); json_mesh(j, &x->plan->mesh);
    json_key(j, "collectives");
    json_obj(j);
    for (int q = 0; q < DIFF_NKINDS; q++) {
      json_key(j, rt_op_name((rt_op)(RT_ALL_REDUCE + q)));
      json_obj(j);
      json_key(j, "count"); json_int(j, d->kind_count[s][q]);
      json_key(j, "bytes"); json_num(j, d->kind_bytes[s][q]);
      json_end_obj(j);
    }
    json_end_obj(j);
    json_key(j, "simulated");
    if (x->sim) report_sim_json(j, x->sim, x->prof);
    else json_null(j);
    json_end_obj(j);
  }
  json_key(j, "mesh_differs"); json_bool(j, d->mesh_differs);
  json_key(j, "values_compared"); json_int(j, d->nvalues);
  json_key(j, "values_changed"); json_int(j, d->nchanged);
  json_key(j, "values");
  json_arr(j);
  for (int k = 0; k < d->nvgroups; k++) {
    const diff_group *g = &d->values[k];
    json_obj(j);
    json_key(j, "pattern"); json_str(j, g->pattern);
    json_key(j, "kind"); json_str(j, g->what);
    json_key(j, "numbers"); json_numbers(j, d, g, 0);
    json_key(j, "names");
    json_arr(j);
    for (int m = 0; m < g->n; m++) json_str(j, d->side[0]->plan->g->vals[g->members[m]]->name);
    json_end_arr(j);
    json_key(j, "a"); json_layout(j, d->side[0]->plan, g->members[0]);
    json_key(j, "b"); json_layout(j, d->side[1]->plan, g->members[0]);
    json_end_obj(j);
  }
  json_end_arr(j);
  json_key(j, "collectives");
  json_obj(j);
  json_key(j, "added"); json_coll_groups(j, d, d->added, d->nadded);
  json_key(j, "removed"); json_coll_groups(j, d, d->removed, d->nremoved);
  json_key(j, "bytes_changed"); json_int(j, d->nbytes_changed);
  json_end_obj(j);
  json_key(j, "conflicts");
  json_obj(j);
  for (int s = 0; s < 2; s++) {
    json_key(j, s ? "only_b" : "only_a");
    json_arr(j);
    const sh_plan *p = d->side[s]->plan;
    for (int i = 0; i < d->nconflicts; i++) {
      const diff_conflict *c = &d->conflicts[i];
      if (c->side != s) continue;
      json_obj(j);
      json_key(j, "value"); json_str(j, p->g->vals[c->c->value]->name);
      json_key(j, "op"); if (c->c->op >= 0) json_str(j, p->g->vals[c->c->op]->name); else json_null(j);
      json_key(j, "tactic"); json_str(j, c->c->tactic);
      json_key(j, "where"); json_str(j, diag_where(&a, c->c->at));
      json_key(j, "kind"); json_str(j, c->c->from_tactic ? "tactic" : "propagation");
      json_key(j, "message"); json_str(j, c->c->message);
      json_end_obj(j);
    }
    json_end_arr(j);
  }
  json_end_obj(j);
  json_end_obj(j);
  arena_free(&a);
}

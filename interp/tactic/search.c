/*
** search.c: the automatic tactic (see search.h). Candidates are (layer
** pattern, dim, axis) triples; the first round costs every candidate and
** ties those with the same footprint into one choice; each later round
** extends each of the best few plans so far (a beam) by one candidate per
** choice and keeps the best few of those, until no extension improves on
** the best plan (ties broken by a seeded order). A beam of one is greedy.
** A Monte Carlo tree search over the same candidates, as in Automap and
** PartIR, is the baseline it is measured against (strategy = mcts).
*/
#include "interp/tactic/search.h"
#include "util/mem.h"
#include "interp/report/report.h"
#include "interp/shard/layout.h"
#include "interp/sim/sim.h"

#include <ctype.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- arguments ---- */

static loc at(const tac_file *f, uint32_t off) { return (loc){f->src, off}; }

static const char *axis_names(const sh_plan *p, arena *a) {
  strbuf b;
  sb_init(&b);
  for (int i = 0; i < p->mesh.n; i++) sb_printf(&b, "%s%s", i ? ", " : "", p->mesh.name[i]);
  const char *r = arena_strndup(a, sb_str(&b), b.n);
  sb_free(&b);
  return r;
}

static int is_word(const tac_value *v) { return v->kind == TAC_VNAME || v->kind == TAC_VSTR; }

static const char *const kind_word[] = {"inputs", "params", "grads", "states"};   /* ORDER TAC_SEL */

#define AUTO_ARGS "axes, objective, memory_limit, budget, seed, over, values, device, links, strategy, beam and try"

int search_opts_read(const sh_plan *p, const tac_file *f, const tac_decl *x, const char *prof_dir, const char *device,
                     arena *a, sim_profile *prof, search_opts *o, diag *d) {
  memset(o, 0, sizeof *o);
  o->axes = (1u << p->mesh.n) - 1;
  o->kinds = 1u << TAC_SEL_INPUT | 1u << TAC_SEL_PARAM | 1u << TAC_SEL_STATE;
  double limit = 0;
  int greedy = 0;
  const tac_value *dev = NULL, *links = NULL;
  o->beam = 8;
  for (int i = 0; i < x->nargs; i++) {
    const tac_arg *g = &x->args[i];
    const tac_value *v = &g->val;
    for (int j = 0; j < i; j++)
      if (!strcmp(x->args[j].key, g->key)) return diag_error(d, at(f, g->off), "auto is given '%s' twice", g->key);
    if (!strcmp(g->key, "axes")) {
      int n = v->kind == TAC_VLIST ? v->nitems : 1;
      o->axes = 0;
      for (int k = 0; k < n; k++) {
        const tac_value *it = v->kind == TAC_VLIST ? &v->items[k] : v;
        if (!is_word(it)) return diag_error(d, at(f, it->off), "axes takes mesh axis names, as in axes = [batch, model]");
        int ax = shard_axis(p, it->text);
        if (ax < 0) return diag_error(d, at(f, it->off), "unknown axis '%s'; the mesh has %s", it->text, axis_names(p, a));
        o->axes |= 1u << ax;
      }
      if (!o->axes) return diag_error(d, at(f, v->off), "axes is empty: name at least one mesh axis to search over");
    } else if (!strcmp(g->key, "objective")) {
      if (is_word(v) && !strcmp(v->text, "time")) o->objective = SEARCH_TIME;
      else if (is_word(v) && !strcmp(v->text, "memory")) o->objective = SEARCH_MEMORY;
      else return diag_error(d, at(f, v->off), "objective is time or memory");
    } else if (!strcmp(g->key, "memory_limit")) {
      if (v->kind != TAC_VSIZE || v->i <= 0) return diag_error(d, at(f, v->off), "memory_limit takes a size per device, as in 16GiB");
      limit = (double)v->i;
    } else if (!strcmp(g->key, "budget")) {
      if (v->kind == TAC_VINT && v->i >= 1) o->budget = v->i;
      else if (v->kind == TAC_VSECONDS && v->num > 0) o->seconds = v->num;
      else return diag_error(d, at(f, v->off), "budget takes a number of evaluations (2000) or a time (30s)");
    } else if (!strcmp(g->key, "seed")) {
      if (v->kind != TAC_VINT || v->i < 0) return diag_error(d, at(f, v->off), "seed takes a whole number of at least 0");
      o->seed = (uint64_t)v->i;
    } else if (!strcmp(g->key, "over")) {
      int n = v->kind == TAC_VLIST ? v->nitems : 1;
      o->kinds = 0;
      for (int k = 0; k < n; k++) {
        const tac_value *it = v->kind == TAC_VLIST ? &v->items[k] : v;
        int found = -1;
        for (int s = 0; s < 4 && is_word(it); s++) if (!strcmp(it->text, kind_word[s])) found = s;
        if (found < 0) return diag_error(d, at(f, it->off), "over takes inputs, params, states and grads (intermediates go in values = [...])");
        o->kinds |= 1u << found;
      }
    } else if (!strcmp(g->key, "values")) {
      int n = v->kind == TAC_VLIST ? v->nitems : 1;
      o->globs = arena_alloc(a, sizeof *o->globs * (size_t)(n ? n : 1));
      for (int k = 0; k < n; k++) {
        const tac_value *it = v->kind == TAC_VLIST ? &v->items[k] : v;
        if (!is_word(it)) return diag_error(d, at(f, it->off), "values takes names or globs of values, as in values = [\"l*.h\"]");
        int hit = 0;
        for (int u = 0; u < p->g->nvals && !hit; u++) hit = p->g->vals[u]->kind != IR_CONST && !fnmatch(it->text, p->g->vals[u]->name, 0);
        if (!hit) {                   /* a misspelt name: the closest value's */
          diag_suggest sg;
          diag_suggest_init(&sg, it->text);
          for (int u = 0; u < p->g->nvals; u++) if (p->g->vals[u]->kind != IR_CONST) diag_suggest_add(&sg, p->g->vals[u]->name);
          return diag_error(d, at(f, it->off), "no value matches '%s'%s", it->text, diag_suggest_text(a, &sg));
        }
        o->globs[o->nglobs++] = it->text;
      }
    } else if (!strcmp(g->key, "device")) {
      if (!is_word(v)) return diag_error(d, at(f, v->off), "device takes a profile name, as in device = h100-sxm");
      dev = v;
    } else if (!strcmp(g->key, "links")) {
      if (v->kind != TAC_VSTR) return diag_error(d, at(f, v->off), "links takes a string, as in links = \"batch = inter\"");
      o->links = v->text;
      links = v;
    } else if (!strcmp(g->key, "strategy")) {
      if (is_word(v) && !strcmp(v->text, "beam")) o->strategy = SEARCH_BEAM;
      else if (is_word(v) && !strcmp(v->text, "greedy")) { o->strategy = SEARCH_BEAM; greedy = 1; }
      else if (is_word(v) && !strcmp(v->text, "mcts")) o->strategy = SEARCH_MCTS;
      else return diag_error(d, at(f, v->off), "strategy is beam (the default), greedy (a beam of one) or mcts");
    } else if (!strcmp(g->key, "try")) {
      int n = v->kind == TAC_VLIST ? v->nitems : 1;
      for (int k = 0; k < n; k++) {
        const tac_value *it = v->kind == TAC_VLIST ? &v->items[k] : v;
        unsigned bit = is_word(it) && !strcmp(it->text, "context") ? SEARCH_TRY_CONTEXT
                     : is_word(it) && !strcmp(it->text, "pipeline") ? SEARCH_TRY_PIPELINE : 0;
        if (!bit) return diag_error(d, at(f, it->off), "try takes the strategies that take a whole axis: context and pipeline, "
                                    "as in try = [context, pipeline]");
        if (o->try_whole & bit) return diag_error(d, at(f, it->off), "try names '%s' twice", it->text);
        o->try_whole |= bit;
      }
    } else if (!strcmp(g->key, "beam")) {
      if (v->kind != TAC_VINT || v->i < 1 || v->i > 64) return diag_error(d, at(f, v->off), "beam takes the number of plans kept each round, 1 to 64");
      o->beam = (int)v->i;
    } else {
      return diag_error(d, at(f, g->off), "auto takes no argument '%s'; it takes " AUTO_ARGS, g->key);
    }
  }
  const char *name = device ? device : dev ? dev->text : "h100-sxm";
  if (sim_profile_load_at(a, d, name, dev && !device ? at(f, dev->off) : LOC_NONE, prof_dir, prof) < 0) return -1;
  if (greedy) o->beam = 1;
  o->prof = prof;
  o->sim.prof = prof;
  o->memory_limit = limit > 0 ? limit : prof->memory;
  loc links_at = links ? at(f, links->off + 1) : LOC_NONE;     /* the string's first byte, after its quote */
  if (sim_links_at(a, d, prof, p->mesh.n, p->mesh.size, p->mesh.name, o->links, links_at, &o->sim) < 0) return -1;
  return 0;
}

/* ---- candidates ---- */

typedef struct group {
  tac_sel sel;
  const char *pattern;
  int *m, n;
} group;

typedef struct cand {
  int group, dim, axis;
  int choice;                     /* the choice it is tied into (-1: none yet) */
  int dead;                       /* changes nothing any more */
} cand;

typedef struct score { double over, primary, secondary; } score;

typedef struct search {
  sh_plan *p;
  const ir_graph *g;
  const search_opts *o;
  estimator *e;
  arena *a;
  diag *d;
  group *gr;
  int ngr;
  cand *c;
  int nc;
  int64_t evals;
  double t0, shown;                /* when it started; when progress was last reported */
  sh_mark root;                   /* the plan and the estimate where the search began */
  est_mark root_em;
  score best;                     /* for progress */
  est_cost bestc;
  const char *who;                /* the tactic name of evaluations */
} search;

static tac_sel sel_of(const ir_value *v) {
  if (v->kind == IR_INPUT) return TAC_SEL_INPUT;
  if (v->kind == IR_PARAM) return TAC_SEL_PARAM;
  if (v->kind == IR_STATE) return TAC_SEL_STATE;
  if (v->role == ROLE_GRAD) return TAC_SEL_GRAD;
  return TAC_SEL_VALUE;
}

/*
** Layer patterns. A run of digits is a layer index when the name goes on
** after it and the name up to it begins values of other shapes of name:
** "l3" begins l3.mlp.w1 and l3.attn.wq, so l3.mlp.w1 is of pattern
** l*.mlp.w1; the 1 of w1 ends the name and stays, so w1 and w2 are apart.
*/

typedef struct prefix { const char *text, *skel; } prefix;

static const char *skeleton(arena *a, const char *name) {
  size_t n = strlen(name), k = 0;
  char *s = arena_alloc(a, n + 1);
  for (size_t i = 0; i < n; i++) {
    if (isdigit((unsigned char)name[i])) {
      while (i + 1 < n && isdigit((unsigned char)name[i + 1])) i++;
      s[k++] = '#';
    } else s[k++] = name[i];
  }
  s[k] = 0;
  return s;
}

static int by_prefix(const void *x, const void *y) {
  const prefix *a = x, *b = y;
  int c = strcmp(a->text, b->text);
  return c ? c : strcmp(a->skel, b->skel);
}

static int by_text(const void *key, const void *x) { return strcmp(key, *(const char *const *)x); }

typedef struct layer_index { const char **multi; int n; } layer_index;

/* the prefixes that begin names of two skeletons or more, sorted */
static void layer_index_build(const ir_graph *g, arena *a, layer_index *li) {
  int cap = 0, n = 0;
  prefix *pr = NULL;
  for (int v = 0; v < g->nvals; v++) {
    const char *name = g->vals[v]->name, *skel = NULL;
    for (const char *q = name; *q; q++) {
      if (!isdigit((unsigned char)*q)) continue;
      while (isdigit((unsigned char)q[1])) q++;
      if (!q[1]) break;
      if (!skel) skel = skeleton(a, name);
      if (n == cap) { cap = cap ? 2 * cap : 1024; pr = mem_realloc(pr, sizeof *pr * (size_t)cap); }
      pr[n++] = (prefix){arena_strndup(a, name, (size_t)(q + 1 - name)), skel};
    }
  }
  mem_sort(pr, (size_t)n, sizeof *pr, by_prefix);
  li->multi = arena_alloc(a, sizeof *li->multi * (size_t)(n ? n : 1));
  li->n = 0;
  for (int i = 0; i < n;) {
    int j = i + 1, multi = 0;
    for (; j < n && !strcmp(pr[j].text, pr[i].text); j++) multi |= strcmp(pr[j].skel, pr[i].skel) != 0;
    if (multi) li->multi[li->n++] = pr[i].text;
    i = j;
  }
  free(pr);
}

/* the name with each layer index as '*' */
static const char *pattern_of(arena *a, const layer_index *li, const char *name) {
  size_t n = strlen(name), k = 0;
  char *s = arena_alloc(a, n + 1), *buf = arena_alloc(a, n + 1);
  for (size_t i = 0; i < n; i++) {
    if (!isdigit((unsigned char)name[i])) { s[k++] = name[i]; continue; }
    size_t j = i;
    while (j + 1 < n && isdigit((unsigned char)name[j + 1])) j++;
    memcpy(buf, name, j + 1);
    buf[j + 1] = 0;
    if (j + 1 < n && li->n && bsearch(buf, li->multi, (size_t)li->n, sizeof *li->multi, by_text)) s[k++] = '*';
    else { memcpy(s + k, name + i, j - i + 1); k += j - i + 1; }
    i = j;
  }
  s[k] = 0;
  return s;
}

typedef struct keyed { tac_sel sel; const char *pattern; const ir_value *v; } keyed;

static int by_key(const void *x, const void *y) {
  const keyed *a = x, *b = y;
  if (a->sel != b->sel) return a->sel < b->sel ? -1 : 1;
  int c = strcmp(a->pattern, b->pattern);
  if (c) return c;
  if (a->v->shape.rank != b->v->shape.rank) return a->v->shape.rank < b->v->shape.rank ? -1 : 1;
  for (int i = 0; i < a->v->shape.rank; i++)
    if (a->v->shape.d[i] != b->v->shape.d[i]) return a->v->shape.d[i] < b->v->shape.d[i] ? -1 : 1;
  return a->v->id < b->v->id ? -1 : a->v->id > b->v->id;
}

static int same_group(const keyed *a, const keyed *b) {
  if (a->sel != b->sel || strcmp(a->pattern, b->pattern) || a->v->shape.rank != b->v->shape.rank) return 0;
  for (int i = 0; i < a->v->shape.rank; i++) if (a->v->shape.d[i] != b->v->shape.d[i]) return 0;
  return 1;
}

static int wanted(const search *s, const ir_value *v) {
  if (v->kind == IR_CONST || v->shape.rank == 0) return 0;
  tac_sel k = sel_of(v);
  if (k != TAC_SEL_VALUE && ((s->o->kinds >> k) & 1)) return 1;
  for (int i = 0; i < s->o->nglobs; i++) if (!fnmatch(s->o->globs[i], v->name, 0)) return 1;
  return 0;
}

static uint64_t rng_next(uint64_t *x) {   /* splitmix64 */
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void build_candidates(search *s) {
  const ir_graph *g = s->g;
  keyed *k = mem_alloc(sizeof *k * ((size_t)g->nvals + 1));
  int nk = 0;
  layer_index li;
  layer_index_build(g, s->a, &li);
  for (int v = 0; v < g->nvals; v++) {
    const ir_value *x = g->vals[v];
    if (!wanted(s, x)) continue;
    tac_sel sel = sel_of(x);
    if (sel != TAC_SEL_VALUE && !((s->o->kinds >> sel) & 1)) sel = TAC_SEL_VALUE;   /* chosen by a glob */
    k[nk++] = (keyed){sel, pattern_of(s->a, &li, x->name), x};
  }
  mem_sort(k, (size_t)nk, sizeof *k, by_key);
  s->gr = arena_alloc(s->a, sizeof *s->gr * (size_t)(nk ? nk : 1));
  for (int i = 0; i < nk;) {
    int j = i;
    while (j < nk && same_group(&k[i], &k[j])) j++;
    group *gr = &s->gr[s->ngr++];
    gr->sel = k[i].sel;
    gr->pattern = k[i].pattern;
    gr->n = j - i;
    gr->m = arena_alloc(s->a, sizeof(int) * (size_t)gr->n);
    for (int q = i; q < j; q++) gr->m[q - i] = k[q].v->id;
    i = j;
  }
  free(k);
  int cap = 0;
  for (int i = 0; i < s->ngr; i++) cap += g->vals[s->gr[i].m[0]]->shape.rank * s->p->mesh.n;
  s->c = arena_alloc(s->a, sizeof *s->c * (size_t)(cap ? cap : 1));
  for (int i = 0; i < s->ngr; i++) {
    const ir_value *x = g->vals[s->gr[i].m[0]];
    for (int dim = 0; dim < x->shape.rank; dim++)
      for (int ax = 0; ax < s->p->mesh.n; ax++) {
        if (!((s->o->axes >> ax) & 1) || s->p->mesh.size[ax] < 2) continue;
        if (x->shape.d[dim] % s->p->mesh.size[ax]) continue;
        s->c[s->nc++] = (cand){i, dim, ax, -1, 0};
      }
  }
  /* the seeded order: ties between equal candidates go to the first */
  uint64_t st = s->o->seed;
  for (int i = s->nc - 1; i > 0; i--) {
    int j = (int)(rng_next(&st) % (uint64_t)(i + 1));
    cand t = s->c[i];
    s->c[i] = s->c[j];
    s->c[j] = t;
  }
}

/* ---- applying and costing one candidate ---- */

static int can_take(const sh_plan *p, int v, int dim, int axis) {
  const ir_value *x = p->g->vals[v];
  const sh_layout *l = &p->lay[v];
  if (shard_uses_axis(l, x->shape.rank, axis) >= 0) return 0;
  if ((l->forbid[dim] >> axis) & 1) return 0;
  return x->shape.d[dim] % (layout_pieces(p, &l->dim[dim]) * p->mesh.size[axis]) == 0;
}

/* Split the members that can take it; how many did (-1 on an error). */
static int apply(search *s, const cand *c, int *took) {
  const group *gr = &s->gr[c->group];
  int n = 0;
  for (int i = 0; i < gr->n; i++) {
    if (!can_take(s->p, gr->m[i], c->dim, c->axis)) continue;
    if (shard_split(s->p, gr->m[i], c->dim, c->axis, s->d) != 0) return -1;
    if (took) took[n] = gr->m[i];
    n++;
  }
  return n;
}

static score score_of(const search *s, const est_cost *c) {
  score r = {c->memory > s->o->memory_limit ? c->memory - s->o->memory_limit : 0, c->seconds, c->memory};
  if (s->o->objective == SEARCH_MEMORY) { r.primary = c->memory; r.secondary = c->seconds; }
  return r;
}

/* a better than b by more than a fraction eps: over the memory limit by
** less, else a smaller objective, else (the objective within eps) the other */
static int better_by(score a, score b, double eps) {
  if (a.over != b.over) return a.over < b.over;
  if (a.primary < b.primary * (1 - eps)) return 1;
  if (a.primary > b.primary * (1 + eps)) return 0;
  return a.secondary < b.secondary * (1 - eps);
}

static int better(score a, score b) { return better_by(a, b, 1e-12); }

/* An improvement worth an action: a tenth of a percent (under the limit). */
#define WORTH 1e-3

static void progress(search *s, int done) {
  if (!s->o->progress) return;
  double t = now();
  if (!done && t - s->shown < 0.1) return;      /* ten times a second is enough for a person */
  s->shown = t;
  search_progress pr = {s->evals, s->o->budget, now() - s->t0, s->o->seconds, s->bestc.seconds, s->bestc.memory,
                        s->bestc.memory <= s->o->memory_limit};
  s->o->progress(s->o->progress_ud, &pr, done);
}

static void note_best(search *s, const est_cost *c) {
  score sc = score_of(s, c);
  if (better(sc, s->best)) { s->best = sc; s->bestc = *c; }
}

static int out_of_budget(const search *s) {
  if (s->o->budget && s->evals >= s->o->budget) return 1;
  return s->o->seconds > 0 && now() - s->t0 >= s->o->seconds;
}

/* A plan's layouts as one number, kept as a sum over values so that an
** action changes it by what it changed: equal for actions that
** propagation ties together, and for states reached in different orders. */
static uint64_t layout_hash(const sh_plan *p, int v, const sh_layout *l) {
  uint64_t x = (uint64_t)(v + 1) * 0x9E3779B97F4A7C15ull;
  for (int dd = 0; dd < p->g->vals[v]->shape.rank; dd++)
    for (int k = 0; k < l->dim[dd].n; k++) x = (x ^ (uint64_t)(dd * 16 + l->dim[dd].ax[k] + 1)) * 0x100000001B3ull;
  return rng_next(&x);
}

static uint64_t hash_delta(const sh_plan *p, sh_mark m) {
  uint64_t h = 0;
  for (int i = m.nlog; i < p->nlog; i++) {
    int v = p->log[i].value;
    h += layout_hash(p, v, &p->lay[v]) - layout_hash(p, v, &p->log[i].old);
  }
  return h;
}

/* Try c from the current state and take it back: its cost and how it
** changes the state's hash. 0: costed; 1: it changes nothing; -1: an error. */
static int evaluate(search *s, const cand *c, est_cost *out, uint64_t *delta) {
  sh_plan *p = s->p;
  sh_mark m = shard_mark(p);
  est_mark em = est_mark_now(s->e);
  p->tactic = s->who;
  int n = apply(s, c, NULL);
  if (n <= 0) { shard_rollback(p, m); return n < 0 ? -1 : 1; }
  shard_propagate_from(p, m);
  est_update(s->e, m);
  est_get(s->e, out);
  *delta = hash_delta(p, m);
  s->evals++;
  note_best(s, out);
  est_rollback(s->e, em);
  shard_rollback(p, m);
  progress(s, 0);
  return 0;
}

/* Apply c as an evaluation does, without taking it back. */
static int step(search *s, const cand *c) {
  sh_mark m = shard_mark(s->p);
  s->p->tactic = s->who;
  int n = apply(s, c, NULL);
  if (n < 0) return -1;
  if (n > 0) {
    shard_propagate_from(s->p, m);
    est_update(s->e, m);
  }
  return n;
}

static void back_to_root(search *s) {
  est_rollback(s->e, s->root_em);
  shard_rollback(s->p, s->root);
}

/* The plan that path's candidates make from the root. */
static int replay(search *s, const int *path, int len) {
  back_to_root(s);
  for (int i = 0; i < len; i++) if (step(s, &s->c[path[i]]) < 0) return -1;
  return 0;
}

/* The score of the plan that path's candidates make from the root. */
static int score_path(search *s, const int *path, int len, score *out) {
  est_cost c;
  if (replay(s, path, len) < 0) return -1;
  est_get(s->e, &c);
  s->evals++;
  *out = score_of(s, &c);
  return 0;
}

/* Leave out the actions the plan does not need: each, last first, whose
** absence keeps the score within WORTH of the whole path's (an early move
** that a later one made redundant, or an MCTS rollout's idle step). */
static int prune(search *s, int *path, int *len) {
  score whole, without;
  if (score_path(s, path, *len, &whole) < 0) return -1;
  for (int i = *len - 1; i >= 0 && *len > 1; i--) {
    int keep = path[i];
    memmove(path + i, path + i + 1, sizeof(int) * (size_t)(*len - i - 1));
    if (score_path(s, path, *len - 1, &without) < 0) return -1;
    if (!better_by(whole, without, WORTH)) { (*len)--; continue; }
    memmove(path + i + 1, path + i, sizeof(int) * (size_t)(*len - i - 1));
    path[i] = keep;
  }
  back_to_root(s);
  return 0;
}

/* Apply c for good, as tactic `who`, with the full propagation a loaded
** file would run; record it as an action. */
static int commit(search *s, const cand *c, const char *who, search_result *r) {
  sh_plan *p = s->p;
  const group *gr = &s->gr[c->group];
  int *took = arena_alloc(s->a, sizeof(int) * (size_t)gr->n);
  sh_mark m = shard_mark(p);
  p->tactic = who;
  int n = apply(s, c, took);
  if (n <= 0) return n;
  shard_propagate(p);
  est_update(s->e, m);
  search_action *x = &r->acts[r->nacts++];
  *x = (search_action){gr->sel, gr->pattern, took, n, c->dim, c->axis, {0}};
  est_get(s->e, &x->after);
  note_best(s, &x->after);
  return 0;
}

/* ---- beam search over tied choices ---- */

typedef struct bstate {
  int *path, len;                 /* candidates applied from the root */
  uint64_t hash;
  est_cost c;
  score sc;
  int order;                      /* for a stable sort */
} bstate;

/* Of two actions with the same effect, the one a person would write:
** parameters, then inputs, then gradients, then optimizer state, then the
** rest; of two alike, the value the model declares first (ids before labels). */
static int plainer(const search *s, int i, int j) {
  static const int rank[] = {1, 0, 2, 3, 4};      /* ORDER TAC_SEL: input, param, grad, state, value */
  const group *x = &s->gr[s->c[i].group], *y = &s->gr[s->c[j].group];
  if (rank[x->sel] != rank[y->sel]) return rank[x->sel] < rank[y->sel];
  return x->n && y->n && x->m[0] < y->m[0];
}

static int by_score(const void *x, const void *y) {
  const bstate *a = x, *b = y;
  if (better(a->sc, b->sc)) return -1;
  if (better(b->sc, a->sc)) return 1;
  return a->order - b->order;
}

/* by the objective alone, over the memory limit or not */
static int by_objective(const void *x, const void *y) {
  score a = ((const bstate *)x)->sc, b = ((const bstate *)y)->sc;
  a.over = b.over = 0;
  if (better(a, b)) return -1;
  if (better(b, a)) return 1;
  return ((const bstate *)x)->order - ((const bstate *)y)->order;
}

/* The estimator is a model of the simulator, close but not exact (a few
** percent): the best few plans it saw, each a different state, go to the
** simulator at the end. */
#define FINALISTS 3

/* within NEAR of b in its objective (and no further over the limit): a
** difference the estimator cannot tell from its own error */
#define NEAR 0.02
static int near(score a, score b) { return a.over <= b.over && a.primary <= b.primary * (1 + NEAR); }

static void keep_finalist(bstate *fin, int *n, const bstate *k) {
  for (int i = 0; i < *n; i++) if (fin[i].hash == k->hash) return;
  int at = *n;
  while (at > 0 && better(k->sc, fin[at - 1].sc)) at--;
  if (at >= FINALISTS) return;
  int last = *n < FINALISTS ? *n : FINALISTS - 1;
  for (int i = last; i > at; i--) fin[i] = fin[i - 1];
  fin[at] = *k;
  if (*n < FINALISTS) (*n)++;
}

static int simulate(search *s, double *seconds, double *memory, sim_memory *mem);

static int pick_finalist(search *s, const bstate *fin, int n, bstate *best) {
  score top = {0, 0, 0};
  for (int i = 0; i < n; i++) {
    double sec, mem;
    if (replay(s, fin[i].path, fin[i].len) < 0) return -1;
    if (simulate(s, &sec, &mem, NULL) < 0) return -1;
    est_cost c = {sec, 0, 0, mem, 0};
    score sc = score_of(s, &c);
    if (i == 0 || better(sc, top)) { top = sc; *best = fin[i]; }
  }
  back_to_root(s);
  return 0;
}

static int beam_search(search *s, const char *name, search_result *r) {
  int width = s->o->beam > 0 ? s->o->beam : 1;
  int *rep = mem_alloc(sizeof(int) * ((size_t)s->nc + 1));   /* choice -> its candidates, chained by next */
  int *next = mem_alloc(sizeof(int) * ((size_t)s->nc + 1));
  uint64_t *delta = mem_calloc((size_t)s->nc + 1, sizeof *delta);
  int nchoice = 0, rc = 0, nbeam = 1, cap = 0, nkids = 0;
  bstate *beam = arena_alloc(s->a, sizeof *beam * (size_t)width), *kids = NULL;
  beam[0] = (bstate){NULL, 0, 0, {0}, {0}, 0};
  est_get(s->e, &beam[0].c);
  beam[0].sc = score_of(s, &beam[0].c);
  bstate best = beam[0];
  bstate fin[2 * FINALISTS];        /* the best of the rounds that gained, then of the last */
  int nfin = 0, nlast = 0;
  for (int round = 0; rc == 0 && !out_of_budget(s); round++) {
    nkids = 0;
    for (int b = 0; b < nbeam && rc == 0 && !out_of_budget(s); b++) {
      if (replay(s, beam[b].path, beam[b].len) < 0) rc = -1;
      int tries = round == 0 ? s->nc : nchoice;
      for (int t = 0; t < tries && rc == 0 && !out_of_budget(s); t++) {
        int i = -1, e = 1;
        est_cost c;
        uint64_t dh = 0;
        if (round == 0) {
          /* the root: every candidate; those with one footprint become one choice */
          i = t;
          e = evaluate(s, &s->c[i], &c, &delta[i]);
          if (e < 0) { rc = -1; break; }
          if (e > 0) { s->c[i].dead = 1; continue; }
          dh = delta[i];
          int tied = 0;
          for (int j = 0; j < i && !tied; j++)
            if (!s->c[j].dead && delta[j] == delta[i]) {
              int ch = s->c[j].choice, q = rep[ch];
              s->c[i].choice = ch;
              tied = 1;
              if (plainer(s, i, q)) {
                /* the choice is written as its plainest action: a parameter over its optimizer state */
                next[i] = q;
                rep[ch] = i;
                for (int k = 0; k < nkids; k++) if (kids[k].path[0] == q) kids[k].path[0] = i;
                continue;
              }
              while (next[q] >= 0) q = next[q];
              next[q] = i;
              next[i] = -1;
            }
          if (!tied) { s->c[i].choice = nchoice; rep[nchoice++] = i; next[i] = -1; }
          if (tied) continue;                      /* the same state as its choice's first */
        } else {
          /* the first of the choice's candidates that still changes something */
          for (i = rep[t]; i >= 0; i = next[i]) {
            if (s->c[i].dead) continue;
            e = evaluate(s, &s->c[i], &c, &dh);
            if (e < 0) { rc = -1; break; }
            if (e == 0) break;
          }
          if (rc || e) continue;
        }
        uint64_t h = beam[b].hash + dh;
        int dup = 0;
        for (int k = 0; k < nkids && !dup; k++) dup = kids[k].hash == h;
        if (dup) continue;
        if (nkids == cap) {
          cap = cap ? 2 * cap : 64;
          kids = mem_realloc(kids, sizeof *kids * (size_t)cap);
        }
        int *path = arena_alloc(s->a, sizeof(int) * (size_t)(beam[b].len + 1));
        if (beam[b].len) memcpy(path, beam[b].path, sizeof(int) * (size_t)beam[b].len);
        path[beam[b].len] = i;
        kids[nkids] = (bstate){path, beam[b].len + 1, h, c, score_of(s, &c), nkids};
        nkids++;
      }
    }
    if (round == 0) r->st.choices = nchoice;
    r->st.rounds = round + 1;
    if (rc || !nkids) break;
    mem_sort(kids, (size_t)nkids, sizeof *kids, by_score);
    if (!better_by(kids[0].sc, best.sc, WORTH)) {
      /* nothing one more action does is worth it to the estimator; its
      ** best few within NEAR still go to the simulator beside the
      ** finalists, since one of those may be the simulator's best
      ** (Megatron's last piece against a plan with another gain) */
      for (int k = 0; k < nkids && k < FINALISTS; k++)
        if (near(kids[k].sc, best.sc)) keep_finalist(fin + FINALISTS, &nlast, &kids[k]);
      break;
    }
    best = kids[0];
    for (int k = 0; k < nkids && k < FINALISTS; k++) keep_finalist(fin, &nfin, &kids[k]);
    /* the next beam: the best plan of each of the best choices, so that one
    ** strong first move (all the data parallelism an axis gives) does not
    ** crowd out the moves that only pay together (Megatron's two halves);
    ** then the best of the rest */
    nbeam = 0;
    char *took = mem_calloc((size_t)nkids + 1, 1);
    int *seen = mem_calloc((size_t)nchoice + 1, sizeof(int));
    int strict = width > 1 ? (width + 1) / 2 : 1;
    for (int k = 0; k < nkids && nbeam < strict; k++) {
      int ch = s->c[kids[k].path[kids[k].len - 1]].choice;
      if (seen[ch]) continue;
      seen[ch] = 1;
      took[kids[k].order] = 1;
      beam[nbeam++] = kids[k];
    }
    /* the other half by the objective alone, over the limit or not: a plan
    ** that does not fit yet may be one memory-saving action from the best
    ** (Megatron's two halves before the embedding is split) */
    mem_sort(kids, (size_t)nkids, sizeof *kids, by_objective);
    memset(seen, 0, sizeof(int) * ((size_t)nchoice + 1));
    for (int pass = 0; pass < 2; pass++)
      for (int k = 0; k < nkids && nbeam < width; k++) {
        if (took[kids[k].order]) continue;
        int ch = s->c[kids[k].path[kids[k].len - 1]].choice;
        if (pass == 0 && seen[ch]) continue;
        seen[ch] = 1;
        took[kids[k].order] = 1;
        beam[nbeam++] = kids[k];
      }
    free(took);
    free(seen);
    mem_sort(beam, (size_t)nbeam, sizeof *beam, by_score);
  }
  /* the simulator picks among the best the estimator saw */
  if (nlast) {
    memmove(fin + nfin, fin + FINALISTS, sizeof *fin * (size_t)nlast);
    nfin += nlast;
  }
  if (rc == 0 && nfin > 1 && pick_finalist(s, fin, nfin, &best) < 0) rc = -1;
  /* keep the best for good, from the root, as a loaded file would build it */
  if (rc == 0 && prune(s, best.path, &best.len) < 0) rc = -1;
  back_to_root(s);
  for (int i = 0; rc == 0 && i < best.len; i++)
    if (commit(s, &s->c[best.path[i]], arena_printf(s->a, "%s_%d", name, r->nacts + 1), r) < 0) rc = -1;
  free(rep);
  free(next);
  free(delta);
  free(kids);
  return rc;
}

/* ---- Monte Carlo tree search (the baseline) ---- */

#define MCTS_DEPTH 8

typedef struct mnode {
  int cand;                       /* the action into this node (-1: root) */
  int parent, child, sibling;     /* first child, next sibling (-1: none) */
  int expanded;                   /* its children are made */
  double visits, value;
} mnode;

typedef struct mtree { mnode *n; int len, cap; } mtree;

static int mnode_new(mtree *t, int action, int parent) {
  if (t->len == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 256;
    t->n = mem_realloc(t->n, sizeof *t->n * (size_t)t->cap);
  }
  t->n[t->len] = (mnode){action, parent, -1, -1, 0, 0, 0};
  return t->len++;
}

/* reward: higher is better, in (0, 1] against the start */
static double reward(const search *s, const est_cost *c, const est_cost *start) {
  score a = score_of(s, c), b = score_of(s, start);
  if (a.over > 0) return 0.5 * (b.over > 0 ? fmin(1, b.over / a.over) : 0) * 0.5;
  double r = b.primary > 0 ? b.primary / a.primary : 1;
  return 0.25 + 0.75 * fmin(1, r / 4);
}

static int mcts(search *s, const char *name, search_result *r) {
  sh_plan *p = s->p;
  est_cost start;
  est_get(s->e, &start);
  mtree t = {0};
  mnode_new(&t, -1, -1);
  uint64_t rng = s->o->seed ^ 0x5DEECE66Dull;
  int *path = mem_alloc(sizeof(int) * (MCTS_DEPTH + 1));
  int *best_path = mem_alloc(sizeof(int) * (MCTS_DEPTH + 1));
  int best_len = 0, rc = 0;
  score best = score_of(s, &start);
  int64_t budget = s->o->budget ? s->o->budget : 200;
  while (rc == 0 && s->evals < budget && !(s->o->seconds > 0 && now() - s->t0 >= s->o->seconds)) {
    sh_mark m = shard_mark(p);
    est_mark em = est_mark_now(s->e);
    p->tactic = s->who;
    int node = 0, len = 0;
    /* selection and expansion: UCT down the tree, applying each action */
    for (;;) {
      mnode *x = &t.n[node];
      if (!x->expanded) {
        x->expanded = 1;
        for (int i = 0; i < s->nc; i++) {
          int c = mnode_new(&t, i, node);
          t.n[c].sibling = t.n[node].child;
          t.n[node].child = c;
        }
      }
      if (len == MCTS_DEPTH || t.n[node].child < 0) break;
      int pick = -1;
      double bv = -1;
      for (int c = t.n[node].child; c >= 0; c = t.n[c].sibling) {
        double u = t.n[c].visits == 0 ? 1e9 + (double)(rng_next(&rng) % 1000)
                                      : t.n[c].value / t.n[c].visits + 1.4 * sqrt(log(t.n[node].visits + 1) / t.n[c].visits);
        if (u > bv) { bv = u; pick = c; }
      }
      sh_mark before = shard_mark(p);
      int n = apply(s, &s->c[t.n[pick].cand], NULL);
      if (n < 0) { rc = -1; break; }
      if (n > 0) shard_propagate_from(p, before);
      path[len++] = t.n[pick].cand;
      node = pick;
      if (t.n[pick].visits == 0) break;           /* a new leaf: roll out from here */
    }
    if (rc) break;
    /* rollout: random actions to the depth */
    int plen = len;
    while (plen < MCTS_DEPTH && s->nc) {
      int i = (int)(rng_next(&rng) % (uint64_t)s->nc);
      sh_mark before = shard_mark(p);
      int n = apply(s, &s->c[i], NULL);
      if (n < 0) { rc = -1; break; }
      if (n > 0) shard_propagate_from(p, before);
      path[plen++] = i;
      if (rng_next(&rng) % 4 == 0) break;
    }
    if (rc) break;
    est_cost c;
    est_update(s->e, m);
    est_get(s->e, &c);
    s->evals++;
    note_best(s, &c);
    if (better(score_of(s, &c), best)) { best = score_of(s, &c); best_len = plen; memcpy(best_path, path, sizeof(int) * (size_t)plen); }
    double rw = reward(s, &c, &start);
    for (int x = node; x >= 0; x = t.n[x].parent) { t.n[x].visits += 1; t.n[x].value += rw; }
    est_rollback(s->e, em);
    shard_rollback(p, m);
    progress(s, 0);
  }
  r->st.choices = s->nc;
  r->st.rounds = (int)s->evals;
  /* replay the best sequence for good, each action that still changes something */
  if (rc == 0 && prune(s, best_path, &best_len) < 0) rc = -1;
  for (int i = 0; rc == 0 && i < best_len; i++) {
    const cand *c = &s->c[best_path[i]];
    int any = 0;
    for (int k = 0; k < s->gr[c->group].n; k++) any |= can_take(p, s->gr[c->group].m[k], c->dim, c->axis);
    if (!any) continue;
    rc = commit(s, c, arena_printf(s->a, "%s_%d", name, r->nacts + 1), r);
  }
  free(t.n);
  free(path);
  free(best_path);
  return rc;
}

/* ---- the whole search ---- */

static int simulate_plan(sh_plan *p, const search_opts *o, arena *a, double *seconds, double *memory, sim_memory *mem, diag *d) {
  sim_result r;
  shard_partials(p);
  int rc = sim_plan(p->g, p, o->prof, o->links, o->sim.overlap, o->sim.tf32, a, &r, d);
  shard_unpartial(p);
  if (rc < 0) return -1;
  *seconds = r.total;
  *memory = r.mem.peak;
  if (mem) *mem = r.mem;
  sim_result_free(&r);
  return 0;
}

static int simulate(search *s, double *seconds, double *memory, sim_memory *mem) {
  return simulate_plan(s->p, s->o, s->a, seconds, memory, mem, s->d);
}

int search_simulate(sh_plan *p, const search_opts *o, arena *a, double *seconds, double *memory, diag *d) {
  return simulate_plan(p, o, a, seconds, memory, NULL, d);
}

/* When a training step's activations are most of what does not fit, the
** other way out: recompute them (--train's remat), or recompute GEMMs too
** where only elementwise values are recomputed (remat = cheap). */
static const char *remat_hint(const ir_graph *g, const sim_memory *m) {
  if (m->activations < 0.5 * m->peak) return "";
  if (!g->train) return "";
  int remat = 0, gemms = 0;
  for (int i = 0; i < g->nvals; i++) {
    const ir_value *v = g->vals[i];
    if (strncmp(v->name, "remat.", 6)) continue;
    remat = 1;
    gemms |= v->op == IR_MATMUL || v->op == IR_EINSUM;
  }
  if (gemms) return "";
  return remat ? ", or recompute GEMMs too (--train '..., remat = full' or \"GLOB\" naming them: docs/training.md, \"Activation recomputation\")"
               : ", or recompute activations in the backward pass (--train '..., remat = cheap', 'full' or "
                 "\"GLOB\" naming GEMMs: docs/training.md, \"Activation recomputation\")";
}

int search_run(sh_plan *p, const search_opts *o, const char *name, arena *a, search_result *r, diag *d) {
  memset(r, 0, sizeof *r);
  search s = {0};
  s.p = p;
  s.g = p->g;
  s.o = o;
  s.a = a;
  s.d = d;
  s.t0 = now();
  s.who = arena_printf(a, "%s (searching)", name);
  const char *saved_tactic = p->tactic;
  sh_mark start = shard_mark(p);
  if (simulate(&s, &r->sim_start, &r->mem_start, NULL) < 0) return -1;
  build_candidates(&s);
  r->st.candidates = s.nc;
  for (int i = 0; i < s.ngr; i++) r->st.values += s.gr[i].n;
  s.e = est_new(p, &o->sim);
  est_get(s.e, &r->start);
  s.bestc = r->start;
  s.best = score_of(&s, &r->start);
  r->acts = arena_alloc(a, sizeof *r->acts * (size_t)(s.nc + 1));
  s.root = shard_mark(p);
  s.root_em = est_mark_now(s.e);
  int rc = o->strategy == SEARCH_MCTS ? mcts(&s, name, r) : beam_search(&s, name, r);
  r->st.evals = s.evals;
  est_get(s.e, &r->found);
  est_free(s.e);
  sim_memory mem;
  if (rc == 0) rc = simulate(&s, &r->sim_found, &r->mem_found, &mem);
  /* the simulator has the last word: a plan it finds slower than the start is not kept */
  if (rc == 0 && r->nacts && r->mem_start <= o->memory_limit &&
      (o->objective == SEARCH_TIME ? r->sim_found > r->sim_start : r->mem_found > r->mem_start)) {
    shard_rollback(p, start);
    r->nacts = 0;
    r->found = r->start;
    r->sim_found = r->sim_start;
    r->mem_found = r->mem_start;
  }
  r->fits = r->mem_found <= o->memory_limit;
  r->st.seconds = now() - s.t0;
  progress(&s, 1);
  p->tactic = saved_tactic;
  if (rc == 0 && !r->fits) {
    strbuf b;
    sb_init(&b);
    report_memory_largest(&b, &mem, a);
    rc = diag_error(d, p->at, "nothing the search found fits in %s a device: the smallest plan needs %s (largest: %s); "
                    "raise memory_limit, add devices, search more axes%s",
                    report_bytes(a, o->memory_limit), report_bytes(a, r->mem_found), sb_str(&b), remat_hint(p->g, &mem));
    sb_free(&b);
  }
  return rc;
}

/* ---- writing an action down ---- */

static const char *const sel_word[] = {"input", "param", "grad", "state", "value"};   /* ORDER TAC_SEL */

static void glob_escape(strbuf *b, const char *s) {
  for (; *s; s++) {
    if (strchr("*?[\\", *s)) sb_puts(b, "\\\\");
    else if (*s == '"') sb_putc(b, '\\');
    sb_putc(b, *s);
  }
}

/* Does the pattern select exactly the members among the values its selector sees? */
static int pattern_exact(const sh_plan *p, const search_action *x) {
  int k = 0;
  for (int v = 0; v < p->g->nvals; v++) {
    const ir_value *y = p->g->vals[v];
    int sel = x->sel == TAC_SEL_VALUE ? y->kind != IR_CONST : (int)sel_of(y) == (int)x->sel;
    if (!sel || fnmatch(x->pattern, y->name, 0)) continue;
    if (k >= x->nmembers || x->members[k] != v) return 0;
    k++;
  }
  return k == x->nmembers;
}

void search_action_text(const sh_plan *p, const search_action *x, strbuf *b) {
  const char *ax = p->mesh.name[x->axis];
  if (x->nmembers > 1 && pattern_exact(p, x)) {
    sb_printf(b, "shard %s \"%s\" dim %d on %s\n", sel_word[x->sel], x->pattern, x->dim, ax);
    return;
  }
  for (int i = 0; i < x->nmembers; i++) {
    sb_printf(b, "shard %s \"", sel_word[x->sel]);
    glob_escape(b, p->g->vals[x->members[i]]->name);
    sb_printf(b, "\" dim %d on %s\n", x->dim, ax);
  }
}

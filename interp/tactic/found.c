/*
** found.c: what auto tactics found, written back as a tactic file: the
** user's file as it was, each auto declaration replaced by one plain
** tactic per action (found_1, found_2, ... applied in that order, each
** followed by propagation, as the search applied them), the schedule
** naming them where it named the auto tactic. Comments give the search's
** settings, statistics and predictions.
*/
#include "interp/tactic/tactic.h"
#include "util/mem.h"
#include "interp/report/report.h"
#include "interp/shard/layout.h"

#include <stdlib.h>
#include <string.h>

typedef struct edit { uint32_t start, end; const char *text; } edit;

static int by_start(const void *a, const void *b) {
  uint32_t x = ((const edit *)a)->start, y = ((const edit *)b)->start;
  return x < y ? -1 : x > y;
}

static const char *secs(arena *a, double s) {
  if (s >= 1) return arena_printf(a, "%.3f s", s);
  if (s >= 1e-3) return arena_printf(a, "%.3f ms", s * 1e3);
  return arena_printf(a, "%.1f us", s * 1e6);
}

static const char *action_name(arena *a, const tactic_found *x, int k) {
  return x->r.nacts ? arena_printf(a, "%s_%d", x->name, k + 1) : x->name;
}

/* a name the file already gives to a tactic, an alias or an axis */
static const tac_decl *taken(const tac_file *f, const char *name) {
  for (int i = 0; i < f->ndecls; i++) {
    const tac_decl *d = &f->decls[i];
    if ((d->kind == TAC_TACTIC || d->kind == TAC_LUA || d->kind == TAC_AUTO || d->kind == TAC_USE) && d->name && !strcmp(d->name, name))
      return d;
  }
  return NULL;
}

void tactic_found_summary(strbuf *b, const tactic_found *x, const char *prefix, arena *a) {
  const search_result *r = &x->r;
  const search_opts *o = &x->opts;
  sb_printf(b, "%ssearched on %s (%s), objective %s, memory limit %s a device, seed %llu%s\n", prefix, x->prof->name, x->prof->device,
            o->objective == SEARCH_MEMORY ? "memory" : "time", report_bytes(a, o->memory_limit), (unsigned long long)o->seed,
            o->strategy == SEARCH_MCTS ? ", Monte Carlo tree search" : "");
  if (x->tried && x->tried[x->chosen].use && !r->st.candidates)
    sb_printf(b, "%sno axis left for the search after '%s'\n", prefix, x->tried[x->chosen].name);
  else
    sb_printf(b, "%s%d action%s kept from %lld evaluations: %d candidates over %d values, tied into %d choices, %d round%s, %.2f s\n",
              prefix, r->nacts, r->nacts == 1 ? "" : "s", (long long)r->st.evals, r->st.candidates, r->st.values, r->st.choices,
              r->st.rounds, r->st.rounds == 1 ? "" : "s", r->st.seconds);
  sb_printf(b, "%ssimulated step %s -> %s, peak memory %s -> %s a device\n", prefix, secs(a, r->sim_start), secs(a, r->sim_found),
            report_bytes(a, r->mem_start), report_bytes(a, r->mem_found));
  if (x->tried) {
    sb_printf(b, "%stried (simulated step, peak memory a device, each with the search over the other axes after it):\n", prefix);
    int w = 16;                            /* the widest of the plans' lines */
    for (int i = 0; i < x->ntried; i++)
      if (x->tried[i].use && (int)strlen(x->tried[i].use) > w) w = (int)strlen(x->tried[i].use);
    for (int i = 0; i < x->ntried; i++) {
      const tactic_tried *t = &x->tried[i];
      sb_printf(b, "%s  %-*s ", prefix, w, t->use ? t->use : "the search alone");
      if (!t->ok) sb_printf(b, "does not apply%s%s", t->why ? ": " : "", t->why ? t->why : "");
      else sb_printf(b, "%s, %s%s%s", secs(a, t->seconds), report_bytes(a, t->memory), t->memory > o->memory_limit ? " (over the limit)" : "",
                     t->after ? " (after the search, which splits the batch)" : "");
      sb_puts(b, i == x->chosen ? "   <- kept\n" : "\n");
    }
  }
}

/* the strategy taking a whole axis that an auto tactic kept (try = [...]), or NULL */
static const tactic_tried *kept_whole(const tactic_found *x) {
  return x->tried && x->tried[x->chosen].use ? &x->tried[x->chosen] : NULL;
}

static const char *block_text(const tac_file *f, const sh_plan *p, const tactic_found *x, arena *a) {
  strbuf b;
  sb_init(&b);
  sb_puts(&b, "# ---- found by carve auto, from:\n#   ");
  for (uint32_t i = x->decl->off; i < x->decl->end; i++) {
    char ch = f->src->text[i];
    sb_putc(&b, ch);
    if (ch == '\n') sb_puts(&b, "#   ");
  }
  sb_putc(&b, '\n');
  tactic_found_summary(&b, x, "# ", a);
  const tactic_tried *w = kept_whole(x);
  if (w) sb_printf(&b, "%s%s", w->use, x->r.nacts ? "\n" : "");
  if (!x->r.nacts && !w) sb_printf(&b, "# nothing it tried improved on the plan before it\ntactic %s {\n}", x->name);
  for (int k = 0; k < x->r.nacts; k++) {
    const search_action *ac = &x->r.acts[k];
    sb_printf(&b, "tactic %s {   # estimated step %s, %s a device\n", action_name(a, x, k), secs(a, ac->after.seconds),
              report_bytes(a, ac->after.memory));
    strbuf s;
    sb_init(&s);
    search_action_text(p, ac, &s);
    for (const char *q = sb_str(&s); *q;) {
      const char *e = strchr(q, '\n');
      sb_printf(&b, "  %.*s\n", (int)(e - q), q);
      q = e + 1;
    }
    sb_free(&s);
    sb_printf(&b, "}%s", k + 1 < x->r.nacts ? "\n" : "");
  }
  const char *t = arena_strndup(a, sb_str(&b), b.n);
  sb_free(&b);
  return t;
}

int tactic_found_text(const tac_file *f, const sh_plan *p, const tactic_found *list, strbuf *out, arena *a, diag *d) {
  int n = 0;
  for (const tactic_found *x = list; x; x = x->next) n++;
  edit *e = arena_alloc(a, sizeof *e * (size_t)(2 * n + 1));
  int ne = 0;
  const tac_decl *sched = NULL;
  for (int i = 0; i < f->ndecls; i++) if (f->decls[i].kind == TAC_SCHEDULE) sched = &f->decls[i];
  for (const tactic_found *x = list; x; x = x->next) {
    if (x->file != f)
      return diag_error(d, (loc){x->file->src, x->decl->off}, "carve auto writes the file it was given; auto tactic '%s' is declared in "
                        "another file: declare it in %s", x->name, f->src->name);
    for (int k = 0; k < x->r.nacts; k++) {
      const char *nm = action_name(a, x, k);
      const tac_decl *t = taken(f, nm);
      if (t) return diag_error(d, (loc){f->src, t->name_off ? t->name_off : t->off}, "the found tactics are named %s_1 ... %s_%d, "
                               "but '%s' is taken here; rename it", x->name, x->name, x->r.nacts, nm);
    }
    const tactic_tried *w = kept_whole(x);
    const tac_decl *tw = w ? taken(f, w->name) : NULL;
    if (tw) return diag_error(d, (loc){f->src, tw->name_off ? tw->name_off : tw->off}, "the strategy auto tactic '%s' kept is named "
                              "'%s', but that name is taken here; rename it", x->name, w->name);
    e[ne++] = (edit){x->decl->off, x->decl->end, block_text(f, p, x, a)};
    if (!sched || (!x->r.nacts && !w)) continue;
    for (int i = 0; i < sched->nnames; i++) {
      if (strcmp(sched->names[i], x->name)) continue;
      strbuf s;
      sb_init(&s);
      if (w && !w->after) sb_printf(&s, "%s%s", w->name, x->r.nacts ? ", " : "");
      for (int k = 0; k < x->r.nacts; k++) sb_printf(&s, "%s%s", k ? ", " : "", action_name(a, x, k));
      if (w && w->after) sb_printf(&s, "%s%s", x->r.nacts ? ", " : "", w->name);   /* a pipeline after what splits the batch */
      e[ne++] = (edit){sched->name_offs[i], sched->name_offs[i] + (uint32_t)strlen(x->name), arena_strndup(a, sb_str(&s), s.n)};
      sb_free(&s);
    }
  }
  mem_sort(e, (size_t)ne, sizeof *e, by_start);
  uint32_t at = 0;
  for (int i = 0; i < ne; i++) {
    sb_put(out, f->src->text + at, e[i].start - at);
    sb_puts(out, e[i].text);
    at = e[i].end;
  }
  sb_put(out, f->src->text + at, f->src->len - at);
  return 0;
}

/* The first value whose layout differs between the two plans, or -1 (or
** -2 when their meshes, stages or rings differ). */
static int first_difference(const sh_plan *a, const sh_plan *b) {
  if (a->mesh.n != b->mesh.n || a->mesh.virt != b->mesh.virt || a->mesh.zigzag != b->mesh.zigzag || a->ring != b->ring ||
      a->pipe.axis != b->pipe.axis || a->pipe.micro != b->pipe.micro || a->pipe.order != b->pipe.order)
    return -2;
  for (int v = 0; v < a->g->nvals; v++) {
    const sh_layout *x = &a->lay[v], *y = &b->lay[v];
    int r = a->g->vals[v]->shape.rank;
    if (!layout_same(x->dim, y->dim, r)) return v;
    for (int i = 0; i < r; i++) if (x->forbid[i] != y->forbid[i]) return v;
  }
  return -1;
}

int tactic_found_file(const ir_graph *g, const tac_file *f, const sh_plan *p, const tactic_found *list, const tactic_opts *o,
                      const char *path, strbuf *out, arena *a, diag *d) {
  if (tactic_found_text(f, p, list, out, a, d) < 0) return -1;
  /* what is written must rebuild what was found: load it as it will be loaded */
  const diag_src *src = diag_src_string(a, path, sb_str(out), out->n);
  tac_file *back_f = tac_parse(a, d, src);
  tactic_opts to = *o;
  to.found = NULL;
  to.progress = NULL;
  sh_plan *back = back_f ? tactic_apply(g, back_f, &to, a, d) : NULL;
  if (!back) return diag_error(d, (loc){f->src, 0}, "the tactics written for %s do not load back (above); nothing was written", path);
  int v = first_difference(p, back);
  shard_free(back);
  if (v == -2)
    return diag_error(d, (loc){f->src, 0}, "internal error: the tactics written for %s do not rebuild the found plan's mesh, stages or "
                      "ring; nothing was written; please report this", path);
  if (v >= 0)
    return diag_error(d, (loc){f->src, 0}, "internal error: the tactics written for %s do not rebuild the found plan ('%s' differs); "
                      "nothing was written; please report this", path, g->vals[v]->name);
  return 0;
}

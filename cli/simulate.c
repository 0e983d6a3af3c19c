/*
** simulate.c: carve simulate: predicted memory and step time per device
** of a plan on a device profile; --compare puts two plans side by side,
** --sweep lists every mesh shape of a range.
*/
#include "cli/cli.h"
#include "interp/report/report.h"
#include "interp/sim/sim.h"
#include "lang/tac.h"
#include "util/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *coll_label[SIM_NCOLL] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};

/* "1.23 ms", "4.5 s" */
static const char *secs(arena *a, double s) {
  if (s >= 1) return arena_printf(a, "%.3f s", s);
  if (s >= 1e-3) return arena_printf(a, "%.3f ms", s * 1e3);
  return arena_printf(a, "%.1f us", s * 1e6);
}

static void print_memory(strbuf *b, const sim_memory *m, const sim_profile *prof, arena *a) {
  sb_printf(b, "memory per device (peak %s of %s, %.0f%%):\n", report_bytes(a, m->peak), report_bytes(a, prof->memory), 100 * m->peak / prof->memory);
  sb_printf(b, "  %-22s %12s\n", "params", report_bytes(a, m->params));
  sb_printf(b, "  %-22s %12s\n", "optimizer state", report_bytes(a, m->optimizer));
  sb_printf(b, "  %-22s %12s   (all of them, as laid out; %s alive at the peak)\n", "gradients", report_bytes(a, m->grads), report_bytes(a, m->grads_live));
  sb_printf(b, "  %-22s %12s   (alive at the peak)\n", "activations", report_bytes(a, m->activations));
  sb_printf(b, "  %-22s %12s   (alive at the peak)\n", "collective buffers", report_bytes(a, m->collective));
  sb_printf(b, "  %-22s %12s\n", "inputs", report_bytes(a, m->inputs));
  sb_printf(b, "  %-22s %12s\n", "outputs", report_bytes(a, m->outputs));
  sb_printf(b, "  %-22s %12s   (temporaries, as the runtime places them)\n", "block", report_bytes(a, m->block));
  sb_printf(b, "  %-22s %12s\n", "peak", report_bytes(a, m->peak));
}

static void print_time(strbuf *b, const sim_result *r, const rt_prog *p, int overlap, arena *a) {
  sb_printf(b, "step time %s: compute %s, communication %s%s\n", secs(a, r->total), secs(a, r->compute), secs(a, r->communication),
            overlap ? " (overlapped where independent)" : r->stages ? " (the busiest stage's)" : " (in program order)");
  sb_puts(b, r->stages ? "by kind of instruction (every stage's):\n" : "by kind of instruction:\n");
  double all = 0;
  for (int k = 0; k < r->nkinds; k++) all += r->kinds[k].seconds;
  for (int k = 0; k < r->nkinds; k++)
    sb_printf(b, "  %-18s %12s  %5.1f%%  (%d)\n", r->kinds[k].name, secs(a, r->kinds[k].seconds), 100 * r->kinds[k].seconds / all,
              r->kinds[k].count);
  int any = 0;
  for (int q = 0; q < SIM_NCOLL; q++) any |= r->coll_count[q] > 0;
  if (any) {
    sb_puts(b, "collectives:\n");
    for (int q = 0; q < SIM_NCOLL; q++)
      if (r->coll_count[q])
        sb_printf(b, "  %-15s %5d  %12s  %12s\n", coll_label[q], r->coll_count[q], report_bytes(a, r->coll_bytes[q]), secs(a, r->coll_seconds[q]));
  }
  if (!r->stages && r->p2p_count)
    sb_printf(b, "  %-15s %5d  %12s  %12s   (around a ring: ring attention)\n", "send/recv", r->p2p_count, report_bytes(a, r->p2p_bytes),
              secs(a, r->p2p_seconds));
  if (p) {
    sb_puts(b, "slowest instructions:\n");
    for (int k = 0; k < r->ntop; k++) {
      const rt_instr *x = &p->instrs[r->top[k]];
      sb_printf(b, "  %-10s %-16s %s\n", secs(a, r->seconds[r->top[k]]), x->op == RT_EW ? rt_ewfn_name((rt_ewfn)x->fn) : rt_op_name((rt_op)x->op),
                p->bufs[x->out].name);
    }
  }
}

/* A pipeline: the bubble against the schedule's ideal, and each stage. */
static void print_stages(strbuf *b, const sim_result *r, arena *a) {
  if (!r->stages) return;
  sb_printf(b, "pipeline: %d stage%s", r->stages, r->stages == 1 ? "" : "s");
  if (r->chunks > 1) sb_printf(b, " of %d parts each", r->chunks);
  sb_printf(b, ", %d microbatch%s; the busiest stage idles %.1f%% of the step (the bubble; equal stages idle %s = %.1f%%)\n",
            r->microbatches, r->microbatches == 1 ? "" : "es", 100 * r->bubble, r->zero_bubble ? "(p - 1) / (3 m + p - 1) with F, B and W alike" : r->chunks > 1 ? "(p - 1) / (v m + p - 1)" : "(p - 1) / (m + p - 1)",
            100 * sim_ideal_bubble(r));
  sb_printf(b, "  transfers between stages: %d, %s, %s on the link\n", r->p2p_count, report_bytes(a, r->p2p_bytes), secs(a, r->p2p_seconds));
  for (int s = 0; s < r->stages; s++)
    sb_printf(b, "  stage %-3d busy %12s (compute %s, collectives %s), idle %s, peak memory %s\n", s, secs(a, r->stage[s].busy),
              secs(a, r->stage[s].compute), secs(a, r->stage[s].communication), secs(a, r->total - r->stage[s].busy),
              report_bytes(a, r->stage[s].peak));
}

/* Lower and cost one plan; the program is kept for the report. */
typedef struct costed { rt_prog p; lower_result lr; int lowered; sim_result r; } costed;

static int cost(const session *s, const sh_plan *plan, const sim_profile *prof, const cli_opts *o, arena *a, costed *c, diag *d) {
  memset(c, 0, sizeof *c);
  lower_opts lo = {0};
  cli_lower_opts(o, &lo);               /* checked when the command began */
  if (lower_program_opts(s->g, plan, &lo, &c->p, &c->lr, d) < 0) return -1;
  c->lowered = 1;
  sim_opts so = {prof, o->overlap, o->tf32, {0}};
  if (sim_map_links(a, d, prof, &c->p, o->links, &so) < 0) return -1;
  return sim_run(s->g, plan, &c->p, &c->lr, &so, &c->r, d);
}

static void uncost(costed *c) {
  sim_result_free(&c->r);
  if (c->lowered) { lower_result_free(&c->lr); rt_prog_free(&c->p); }
}

/* Over capacity: a warning naming what fills it, an error under --strict. */
static int capacity(const cli_opts *o, const sim_result *r, const sim_profile *prof, arena *a, const char *what) {
  if (r->mem.peak <= prof->memory) return 0;
  strbuf b;
  sb_init(&b);
  report_memory_largest(&b, &r->mem, a);
  fprintf(stderr, "carve: %s: %s needs %s a device, more than the %s of %s (largest: %s)\n", o->strict ? "error" : "warning",
          what, report_bytes(a, r->mem.peak), report_bytes(a, prof->memory), prof->name, sb_str(&b));
  sb_free(&b);
  return o->strict ? -1 : 0;
}

/* ---- --compare ---- */

static int compare(const cli_opts *o, session *s, const sim_profile *prof, arena *a) {
  session_opts so;
  cli_session_opts(o, &so);
  const diag_src *ts = diag_load_file(&s->mem, &s->diag, o->compare);
  tac_file *tf = ts ? tac_parse(&s->mem, &s->diag, ts) : NULL;
  sh_plan *other = tf ? tactic_apply(s->g, tf, &so.tac, &s->mem, &s->diag) : NULL;
  if (!other) { cli_report(&s->diag); return 1; }
  costed c1, c2;
  int rc = cost(s, s->plan, prof, o, a, &c1, &s->diag);
  if (rc == 0) rc = cost(s, other, prof, o, a, &c2, &s->diag);
  if (rc < 0) { cli_report(&s->diag); uncost(&c1); shard_free(other); return 1; }
  if (o->json) {
    json j;
    json_init(&j);
    json_obj(&j);
    json_key(&j, "a"); report_sim_json(&j, &c1.r, prof);
    json_key(&j, "b"); report_sim_json(&j, &c2.r, prof);
    json_end_obj(&j);
    puts(sb_str(&j.out));
    json_free(&j);
  } else {
    const char *na = o->files[1], *nb = o->compare;
    printf("device %s (%s); A = %s, B = %s\n\n", prof->name, prof->device, na, nb);
    printf("%-24s %14s %14s %14s\n", "", "A", "B", "B - A");
    struct { const char *name; double x, y; int time; } rows[] = {
      {"params", c1.r.mem.params, c2.r.mem.params, 0}, {"optimizer state", c1.r.mem.optimizer, c2.r.mem.optimizer, 0},
      {"gradients", c1.r.mem.grads, c2.r.mem.grads, 0}, {"activations", c1.r.mem.activations, c2.r.mem.activations, 0},
      {"collective buffers", c1.r.mem.collective, c2.r.mem.collective, 0}, {"peak memory", c1.r.mem.peak, c2.r.mem.peak, 0},
      {"compute", c1.r.compute, c2.r.compute, 1}, {"communication", c1.r.communication, c2.r.communication, 1},
      {"step time", c1.r.total, c2.r.total, 1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
      double dlt = rows[i].y - rows[i].x;
      const char *sx = rows[i].time ? secs(a, rows[i].x) : report_bytes(a, rows[i].x);
      const char *sy = rows[i].time ? secs(a, rows[i].y) : report_bytes(a, rows[i].y);
      const char *sd = rows[i].time ? secs(a, fabs(dlt)) : report_bytes(a, fabs(dlt));
      printf("%-24s %14s %14s %13s%s\n", rows[i].name, sx, sy, dlt < 0 ? "-" : dlt > 0 ? "+" : "", sd);
    }
    for (int q = 0; q < SIM_NCOLL; q++)
      if (c1.r.coll_count[q] || c2.r.coll_count[q])
        printf("%-24s %14d %14d %+14d   (%s -> %s)\n", coll_label[q], c1.r.coll_count[q], c2.r.coll_count[q], c2.r.coll_count[q] - c1.r.coll_count[q],
               report_bytes(a, c1.r.coll_bytes[q]), report_bytes(a, c2.r.coll_bytes[q]));
    printf("\n%s\n", c1.r.total < c2.r.total ? "A is faster" : c2.r.total < c1.r.total ? "B is faster" : "equally fast");
  }
  rc = capacity(o, &c1.r, prof, a, o->files[1]) | capacity(o, &c2.r, prof, a, o->compare);
  uncost(&c1);
  uncost(&c2);
  shard_free(other);
  return rc ? 1 : 0;
}

/* ---- --sweep ---- */

typedef struct axis_range { const char *name; int64_t v[64]; int n; } axis_range;

/* "batch=1..64, model=[1, 2, 4]": powers of two in a range, or a list */
static int read_sweep(const cli_opts *o, session *s, axis_range *ax, int *nax) {
  const diag_src *src = diag_src_string(&s->mem, "--sweep", o->sweep, strlen(o->sweep));
  tac_file *f = tac_parse_option(&s->mem, &s->diag, src, TAC_OPT_ARGS);
  if (!f) return -1;
  const tac_decl *x = &f->decls[0];
  *nax = 0;
  for (int i = 0; i < x->nargs; i++) {
    const tac_arg *g = &x->args[i];
    const tac_value *v = &g->val;
    if (*nax == SH_MAXAXES) return diag_error(&s->diag, (loc){src, g->off}, "at most %d axes", SH_MAXAXES);
    if (shard_axis(s->plan, g->key) < 0)
      return diag_error(&s->diag, (loc){src, g->off}, "the tactic file's mesh has no axis '%s'", g->key);
    axis_range *r = &ax[(*nax)++];
    r->name = g->key;
    r->n = 0;
    if (v->kind == TAC_VINT && v->i >= 1) r->v[r->n++] = v->i;
    else if (v->kind == TAC_VRANGE && v->i >= 1) {
      for (int64_t k = 1; k <= v->hi && r->n < 64; k *= 2) if (k >= v->i) r->v[r->n++] = k;
      if (!r->n) return diag_error(&s->diag, (loc){src, v->off}, "no power of two in %lld..%lld", (long long)v->i, (long long)v->hi);
    } else if (v->kind == TAC_VLIST && v->nitems) {
      for (int k = 0; k < v->nitems; k++) {
        if (v->items[k].kind != TAC_VINT || v->items[k].i < 1) return diag_error(&s->diag, (loc){src, v->items[k].off}, "a mesh size is a whole number of at least 1");
        if (r->n < 64) r->v[r->n++] = v->items[k].i;
      }
    } else return diag_error(&s->diag, (loc){src, v->off}, "'%s' takes a size, a range such as 1..64 (its powers of two) or a list such as [1, 3, 6]", g->key);
  }
  return 0;
}

static int sweep(const cli_opts *o, session *s, const sim_profile *prof, arena *a) {
  axis_range ax[SH_MAXAXES];
  int nax;
  if (read_sweep(o, s, ax, &nax) < 0) { cli_report(&s->diag); return 1; }
  int total = 1;
  for (int i = 0; i < nax; i++) total *= ax[i].n;
  const sh_mesh *m = &s->plan->mesh;
  int idx[SH_MAXAXES] = {0}, best = -1, tty = isatty(2), planned = 0, first_refused = -1;
  const char *first_why = NULL;
  double best_t = INFINITY, t0 = now();
  session_opts so;
  cli_session_opts(o, &so);
  json j;
  json_init(&j);
  if (o->json) { json_obj(&j); json_key(&j, "device"); json_str(&j, prof->name); json_key(&j, "meshes"); json_arr(&j); }
  else printf("device %s (%s, %s a device)\n\n%-28s %8s %14s %12s %12s  %s\n", prof->name, prof->device, report_bytes(a, prof->memory),
              "mesh", "devices", "peak memory", "step time", "comm", "");
  strbuf meshes;
  sb_init(&meshes);
  char **names = arena_alloc(a, sizeof *names * (size_t)total);
  for (int c = 0; c < total; c++) {
    /* the mesh: the file's axes, with the swept ones at this combination's sizes */
    strbuf mesh;
    sb_init(&mesh);
    int64_t devices = 1;
    for (int i = 0, n = 0; i < m->n; i++) {
      if (m->virt >> i & 1) continue;      /* a pipeline's microbatches: its tactic makes them again */
      int64_t size = m->size[i];
      for (int k = 0; k < nax; k++) if (!strcmp(ax[k].name, m->name[i])) size = ax[k].v[idx[k]];
      sb_printf(&mesh, "%s%s=%lld", n++ ? "," : "", m->name[i], (long long)size);
      devices *= size;
    }
    names[c] = arena_strndup(a, sb_str(&mesh), mesh.n);
    diag d;
    diag_init(&d);
    tactic_opts to = so.tac;
    to.mesh = names[c];
    to.strict = 0;
    sh_plan *plan = tactic_apply(s->g, s->tac, &to, &s->mem, &d);
    costed cc;
    int rc = plan ? cost(s, plan, prof, o, a, &cc, &d) : -1;
    const char *why = NULL;
    if (rc < 0) {                           /* the first line of the error, without its place */
      const char *t = diag_text(&d), *e = strstr(t, "error: ");
      why = e ? e + 7 : t;
      why = arena_strndup(a, why, strcspn(why, "\n"));
    }
    int fits = rc == 0 && cc.r.mem.peak <= prof->memory;
    planned += rc == 0;
    if (rc < 0 && first_refused < 0) { first_refused = c; first_why = why; }
    if (fits && cc.r.total < best_t) { best_t = cc.r.total; best = c; }
    if (o->json) {
      json_obj(&j);
      json_key(&j, "mesh"); json_str(&j, names[c]);
      json_key(&j, "devices"); json_int(&j, devices);
      if (rc == 0) {
        json_key(&j, "peak_memory"); json_num(&j, cc.r.mem.peak);
        json_key(&j, "step_time"); json_num(&j, cc.r.total);
        json_key(&j, "communication"); json_num(&j, cc.r.communication);
        json_key(&j, "fits"); json_bool(&j, fits);
      } else { json_key(&j, "error"); json_str(&j, why); }
      json_end_obj(&j);
    } else if (rc == 0) {
      printf("%-28s %8lld %14s %12s %12s  %s\n", names[c], (long long)devices, report_bytes(a, cc.r.mem.peak), secs(a, cc.r.total),
             secs(a, cc.r.communication), fits ? "" : "over memory");
    } else {
      printf("%-28s %8lld %14s %12s %12s  %s\n", names[c], (long long)devices, "-", "-", "-", why);
    }
    fflush(stdout);
    if (rc == 0 || plan) uncost(&cc);
    shard_free(plan);
    diag_free(&d);
    sb_free(&mesh);
    if (tty && now() - t0 > 1) fprintf(stderr, "\r  %d of %d meshes", c + 1, total);
    for (int k = nax - 1; k >= 0; k--) { if (++idx[k] < ax[k].n) break; idx[k] = 0; }
  }
  if (tty && now() - t0 > 1) fprintf(stderr, "\r%*s\r", 30, "");
  if (o->json) {
    json_end_arr(&j);
    json_key(&j, "fastest"); if (best >= 0) json_str(&j, names[best]); else json_null(&j);
    json_key(&j, "planned"); json_int(&j, planned);     /* meshes that divide the model: 0 says none does */
    json_end_obj(&j);
    puts(sb_str(&j.out));
  } else if (best >= 0) printf("\nfastest that fits: %s (%s a step)\n", names[best], secs(a, best_t));
  else if (!planned)                        /* not one mesh could be planned: not a matter of memory */
    printf("\nno mesh of the sweep divides the model: each is refused above (%s: %s); sweep sizes that divide the dims "
           "the tactics split on the swept axes\n", names[first_refused], first_why);
  else
    printf("\nno mesh of the sweep fits in %s a device (%d of the %d meshes divide the model; all need more memory)\n",
           report_bytes(a, prof->memory), planned, total);
  json_free(&j);
  sb_free(&meshes);
  return 0;
}

/* ---- the command ---- */

int cli_simulate(const cli_opts *o) {
  session s;
  lower_opts lo = {0};
  if (cli_lower_opts(o, &lo) < 0 || cli_load(&s, o) < 0) return 1;
  arena a;
  arena_init(&a);
  sim_profile prof;
  int rc = 0;
  const char *dev = o->device ? o->device : "h100-sxm";
  if (sim_profile_load(&s.mem, &s.diag, dev, sim_profile_dir(), &prof) < 0) { cli_report(&s.diag); rc = 1; goto out; }
  if ((o->compare || o->sweep) && !s.plan) {
    fprintf(stderr, "carve: error: --%s needs a tactic file: carve simulate MODEL TACTICS --%s ...\n", o->compare ? "compare" : "sweep", o->compare ? "compare" : "sweep");
    rc = 2;
    goto out;
  }
  if (o->compare) { rc = compare(o, &s, &prof, &a); goto out; }
  if (o->sweep) { rc = sweep(o, &s, &prof, &a); goto out; }
  costed c;
  if (cost(&s, s.plan, &prof, o, &a, &c, &s.diag) < 0) { cli_report(&s.diag); uncost(&c); rc = 1; goto out; }
  if (o->json) {
    json j;
    json_init(&j);
    report_sim_json(&j, &c.r, &prof);
    puts(sb_str(&j.out));
    json_free(&j);
  } else {
    strbuf b;
    sb_init(&b);
    int64_t devices = s.plan ? shard_devices(s.plan) : 1;
    sb_printf(&b, "%s on %lld device%s of %s (%s)", s.g->name, (long long)devices, devices == 1 ? "" : "s", prof.name, prof.device);
    if (s.plan) {
      sb_puts(&b, ", mesh");
      for (int i = 0; i < s.plan->mesh.n; i++) {
        const char *link = "-";
        if (s.plan->mesh.virt >> i & 1) link = "microbatches, in turn";
        for (int k = 0; k < c.p.mesh_rank; k++) if (!strcmp(c.p.axis_names[k], s.plan->mesh.name[i])) { sim_opts so = {&prof, 0, 0, {0}}; sim_map_links(&a, &s.diag, &prof, &c.p, o->links, &so); if (so.link_of_axis[k] >= 0) link = prof.links[so.link_of_axis[k]].name; }
        sb_printf(&b, "%s %s=%lld (%s)", i ? "," : "", s.plan->mesh.name[i], (long long)s.plan->mesh.size[i], link);
      }
    }
    sb_puts(&b, "\n\n");
    print_memory(&b, &c.r.mem, &prof, &a);
    sb_putc(&b, '\n');
    print_time(&b, &c.r, &c.p, o->overlap, &a);
    print_stages(&b, &c.r, &a);
    if (c.r.flops > 0 && c.r.total > 0)
      sb_printf(&b, "\nGEMMs: %.3g TFLOP a step on each device, %.1f%% of the %s peak over the whole step\n", c.r.flops / 1e12,
                100 * c.r.flops / c.r.total / prof.flops[o->tf32 && prof.flops[SIM_TF32] > 0 ? SIM_TF32 : SIM_F32], o->tf32 ? "tf32" : "f32");
    fputs(sb_str(&b), stdout);
    sb_free(&b);
  }
  if (capacity(o, &c.r, &prof, &a, s.g->name) < 0) rc = 1;
  uncost(&c);
out:
  if (rc == 0 && s.diag.nwarnings) cli_report(&s.diag);
  arena_free(&a);
  session_free(&s);
  return rc;
}

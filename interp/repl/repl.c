/*
** repl.c: a session of the REPL. The state is the session (model, graph,
** the tactic file it started from) and the steps typed since, each with
** the mark of the state before it, so that undo goes back any number of
** steps and save writes a tactic file that loads back to the same state.
** Every applied line keeps its arena (its text is where its decisions
** point); a line that fails frees its own.
*/
#include "interp/repl/repl.h"
#include "interp/drive/session.h"
#include "interp/lower/lower.h"
#include "interp/report/picture.h"
#include "interp/report/report.h"
#include "interp/sim/sim.h"
#include "lang/tac.h"
#include "util/file.h"
#include "util/mem.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


typedef struct step {
  arena mem;                     /* the line's text and tree */
  const char *text;              /* as typed */
  const char **names;            /* the tactics it applied as, in order */
  const char **saved;            /* each one's text in a tactic file */
  int nnames;
  sh_mark mark;                  /* the state before it */
  const char *summary;           /* an auto line: how the search went */
} step;

struct repl {
  repl_opts o;
  int loaded;                    /* a model is loaded */
  session s;
  sh_plan *p;                    /* the plan (the session's, or made by a typed mesh line) */
  int own_plan;                  /* p was made here, not by the session */
  sh_mark base;                  /* the state the tactic file left */
  step *steps;
  int nsteps, cap;
  strbuf pending;                /* a statement that goes on */
  int lineno, counter;
  tactic_opts topts;
  int partials;                  /* partial sums computed for the reports */
  arena paths;                   /* the files named on the command line or by 'load' */
  int nerrors;                   /* lines that ended in an error */
};

/* An error line: printed, counted, and the session goes on. */
static void fail(repl *r, strbuf *out, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(repl *r, strbuf *out, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sb_puts(out, "carve: error: ");
  sb_vprintf(out, fmt, ap);
  sb_putc(out, '\n');
  va_end(ap);
  r->nerrors++;
}

static const char *const commands[] = {
  "help", "mesh", "values", "show", "explain", "conflicts", "collectives", "cost", "auto", "undo", "reset", "schedule",
  "save", "load", "quit",
};

/* ---- the state ---- */

static void step_free(step *s) { arena_free(&s->mem); }

static void clear_steps(repl *r) {
  for (int i = 0; i < r->nsteps; i++) step_free(&r->steps[i]);
  r->nsteps = 0;
}

static void drop_plan(repl *r) {
  clear_steps(r);
  if (r->own_plan) shard_free(r->p);
  r->p = NULL;
  r->own_plan = 0;
}

static void unload(repl *r) {
  drop_plan(r);
  if (r->loaded) session_free(&r->s);
  r->loaded = 0;
}

/* partial sums for a report; gone again before the next action */
static void partials(repl *r) {
  if (r->p && !r->partials) { shard_partials(r->p); r->partials = 1; }
}

static void no_partials(repl *r) {
  if (r->p && r->partials) { shard_unpartial(r->p); r->partials = 0; }
}

static void report_diag(repl *r, strbuf *out, diag *d) {
  if (d->nerrors) r->nerrors++;
  sb_puts(out, diag_text(d));
  diag_clear(d);
}

/* Load a model (and a tactic file) into a session of its own; only once
** it loaded does it replace the one there is, so that a failed load keeps
** the model and the plan. */
static int load_model(repl *r, const char *model, const char *tactics, strbuf *out) {
  session ns;
  session_init(&ns);
  session_opts so = {model, r->o.model_name, r->o.train, tactics, {tactics ? r->o.mesh : NULL, r->o.strict, r->o.lenient, NULL}};
  so.no_fuse = r->o.no_fuse;
  if (session_load(&ns, &so) < 0) {
    report_diag(r, out, &ns.diag);
    session_free(&ns);
    if (r->loaded) sb_printf(out, "(kept: model '%s' from %s%s%s%s)\n", r->s.g->name, r->o.model_path,
                             r->o.tactic_path ? " with " : "", r->o.tactic_path ? r->o.tactic_path : "", r->p ? ", and the plan" : "");
    return -1;
  }
  unload(r);
  r->s = ns;
  r->loaded = 1;
  r->p = r->s.plan;
  if (r->p) { shard_unpartial(r->p); r->base = shard_mark(r->p); }
  else if (r->o.mesh) {              /* --mesh without a tactic file: a plan with no decisions */
    tac_file empty = {0};
    r->p = tactic_plan_new(r->s.g, &empty, &r->topts, &r->s.mem, &r->s.diag);
    if (!r->p) { report_diag(r, out, &r->s.diag); return -1; }
    r->own_plan = 1;
    r->base = shard_mark(r->p);
  }
  int np = 0, nv = 0;
  for (int i = 0; i < r->s.g->nvals; i++) { np += r->s.g->vals[i]->kind == IR_PARAM; nv += r->s.g->vals[i]->kind != IR_CONST; }
  sb_printf(out, "model '%s' from %s: %d values, %d params%s\n", r->s.g->name, model, nv, np, r->o.train ? ", a training step" : "");
  if (tactics) sb_printf(out, "applied %s\n", tactics);
  if (r->p) report_mesh(out, r->p);
  else sb_puts(out, "no mesh yet: type one, as in 'mesh batch = 2, model = 2'\n");
  if (r->s.diag.nwarnings) report_diag(r, out, &r->s.diag);
  return 0;
}

repl *repl_new(const repl_opts *o, strbuf *out) {
  repl *r = mem_calloc(1, sizeof *r);
  r->o = *o;
  arena_init(&r->paths);
  sb_init(&r->pending);
  r->topts.mesh = o->mesh;
  r->topts.strict = o->strict;
  r->topts.lenient = o->lenient;
  r->topts.stdlib_dir = o->stdlib_dir;
  r->topts.profile_dir = o->profile_dir;
  if (o->model_path) load_model(r, o->model_path, o->tactic_path, out);
  else sb_puts(out, "no model loaded: 'load MODEL.cir'\n");
  return r;
}

void repl_free(repl *r) {
  if (!r) return;
  unload(r);
  free(r->steps);
  sb_free(&r->pending);
  arena_free(&r->paths);
  free(r);
}

const char *repl_prompt(const repl *r) { return r->pending.n ? "   ... " : "carve> "; }
int repl_errors(const repl *r) { return r->nerrors; }
const sh_plan *repl_plan(const repl *r) { return r->p; }
int repl_pending(const repl *r) { return r->pending.n > 0; }

/* ---- what an action changed ---- */

static void changes(repl *r, sh_mark m, strbuf *out) {
  sh_plan *p = r->p;
  arena a;
  arena_init(&a);
  int shown = 0, more = 0;
  for (int i = m.nlog; i < p->nlog; i++) {
    int v = p->log[i].value;
    const sh_layout *old = &p->log[i].old, *now = &p->lay[v];
    int split = 0;
    for (int d = 0; d < IR_MAXRANK; d++) split |= now->dim[d].n != old->dim[d].n;
    if (!split) continue;
    if (shown < 8) {
      sb_printf(out, "  %-28s %s\n", p->g->vals[v]->name, shard_str(p, v, &a));
      shown++;
    } else more++;
  }
  if (more) sb_printf(out, "  ... and %d more value%s\n", more, more == 1 ? "" : "s");
  if (!shown) sb_puts(out, "  nothing newly split\n");
  int stops = 0;
  for (int i = m.ncon; i < p->ncon; i++) {
    if (p->con[i].from_tactic) sb_printf(out, "  refused: %s\n", p->con[i].message);
    else stops++;
  }
  if (stops) sb_printf(out, "  propagation stopped at %d place%s where the lowering will reshard ('conflicts' lists them)\n", stops, stops == 1 ? "" : "s");
  arena_free(&a);
}

/* ---- tactic lines ---- */

static step *push_step(repl *r) {
  if (r->nsteps == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 8;
    r->steps = mem_realloc(r->steps, sizeof *r->steps * (size_t)r->cap);
  }
  step *s = &r->steps[r->nsteps];
  memset(s, 0, sizeof *s);
  arena_init(&s->mem);
  return s;
}

static int name_taken(const repl *r, const char *name) {
  for (int i = 0; i < r->nsteps; i++)
    for (int k = 0; k < r->steps[i].nnames; k++) if (!strcmp(r->steps[i].names[k], name)) return 1;
  const tac_file *f = r->s.tac;
  for (int i = 0; f && i < f->ndecls; i++)
    if (f->decls[i].name && !strcmp(f->decls[i].name, name)) return 1;
  return 0;
}

/* The text of statement s of src: from its keyword to the end of its axis. */
static const char *stmt_text(arena *a, const diag_src *src, const tac_stmt *s) {
  return arena_strndup(a, src->text + s->off, s->axis_off + strlen(s->axis) - s->off);
}

/* An auto declaration: search from the state now, then keep each action
** found as a tactic of its own (NAME_1, NAME_2, ...), so that undo takes
** the whole search back and save writes what it found, not the search. */
static int run_auto_line(repl *r, tactic_ctx *c, const tac_decl *x, step *st) {
  tactic_found *found = NULL;
  tactic_opts to = *c->o;
  to.found = &found;
  to.device = r->o.device;
  tactic_ctx cc = *c;
  cc.o = &to;
  if (tactic_run(&cc, x->name, x->name_off) < 0) return -1;
  const search_result *res = &found->r;
  int n = res->nacts ? res->nacts : 1;
  st->names = arena_alloc(&st->mem, sizeof *st->names * (size_t)n);
  st->saved = arena_alloc(&st->mem, sizeof *st->saved * (size_t)n);
  for (int k = 0; k < res->nacts; k++) {
    strbuf b;
    sb_init(&b);
    search_action_text(r->p, &res->acts[k], &b);
    st->names[k] = arena_printf(&st->mem, "%s_%d", x->name, k + 1);
    st->saved[k] = arena_printf(&st->mem, "tactic %s {\n%s}", st->names[k], sb_str(&b));
    sb_free(&b);
  }
  if (!res->nacts) {
    st->names[0] = x->name;
    st->saved[0] = arena_printf(&st->mem, "tactic %s { }   # the search found nothing better", x->name);
  }
  st->nnames = n;
  strbuf sum;
  sb_init(&sum);
  tactic_found_summary(&sum, found, "  ", &st->mem);
  st->summary = arena_strndup(&st->mem, sb_str(&sum), sum.n);
  sb_free(&sum);
  return 0;
}

static int apply_text(repl *r, const char *text, strbuf *out) {
  step *st = push_step(r);
  char name[32];
  snprintf(name, sizeof name, "(repl line %d)", r->lineno);
  const diag_src *src = diag_src_string(&st->mem, name, text, strlen(text));
  diag d;
  diag_init(&d);
  int inc = 0;
  tac_file *f = tac_parse_line(&st->mem, &d, src, &inc);
  int rc = f ? 0 : -1;
  int ndecl = 0, nstmt = 0;
  for (int i = 0; f && i < f->ndecls; i++) {
    const tac_decl *x = &f->decls[i];
    if (x->kind == TAC_TACTIC && !x->name) nstmt += x->nstmts; else ndecl++;
  }
  if (rc == 0 && ndecl + (nstmt > 0) > 1) rc = diag_error(&d, (loc){src, 0}, "type one declaration, or statements, a line");
  const tac_decl *x = rc == 0 && f->ndecls ? &f->decls[0] : NULL;
  if (rc == 0 && x && x->kind == TAC_MESH) {
    if (r->p && (r->nsteps > 0 || r->s.plan))
      rc = diag_error(&d, (loc){src, x->off}, "the mesh is fixed once there is a plan: 'reset' and load a tactic file, or start again with --mesh");
    else {                         /* a mesh refused keeps the one there was */
      tactic_opts to = r->topts;
      to.mesh = NULL;
      sh_plan *p = tactic_plan_new(r->s.g, f, &to, &r->s.mem, &d);
      if (!p) rc = -1;
      else {
        if (r->own_plan) shard_free(r->p);
        r->p = p;
        r->own_plan = 1;
        r->base = shard_mark(r->p);
        report_mesh(out, r->p);
      }
    }
    report_diag(r, out, &d);
    diag_free(&d);
    step_free(st);                 /* a mesh line is no step */
    return rc;
  }
  if (rc == 0 && !r->p) rc = diag_error(&d, (loc){src, 0}, "no mesh yet: type one first, as in 'mesh batch = 2, model = 2'");
  if (rc == 0 && x && x->kind == TAC_SCHEDULE)
    rc = diag_error(&d, (loc){src, x->off}, "in the REPL each declaration applies as it is typed; 'schedule' alone lists what was applied");
  if (rc == 0) {
    no_partials(r);
    st->text = arena_strndup(&st->mem, text, strlen(text));
    st->mark = shard_mark(r->p);
    int werror = d.werror;
    d.werror = 1;
    tactic_ctx c = {r->s.g, r->p, f, &r->topts, &st->mem, &d};
    int cap = nstmt ? nstmt : 1;
    st->names = arena_alloc(&st->mem, sizeof *st->names * (size_t)cap);
    st->saved = arena_alloc(&st->mem, sizeof *st->saved * (size_t)cap);
    if (x && x->kind == TAC_AUTO) {            /* a search: kept as the plain tactics it found */
      if (name_taken(r, x->name)) rc = diag_error(&d, (loc){src, x->name_off}, "a tactic named '%s' was applied already; give this one another name", x->name);
      else rc = run_auto_line(r, &c, x, st);
    } else if (x && x->kind != TAC_TACTIC) {   /* use, or a Lua tactic: applied under its own name */
      const char *nm = x->name;
      if (!nm) {                               /* use "dir/megatron.tac": named after the file */
        const char *b = strrchr(x->path, '/');
        b = b ? b + 1 : x->path;
        size_t k = strcspn(b, ".");
        nm = arena_strndup(&st->mem, b, k);
      }
      if (name_taken(r, nm)) rc = diag_error(&d, (loc){src, x->name_off ? x->name_off : x->off}, "a tactic named '%s' was applied already; give this one another name", nm);
      else rc = tactic_run(&c, nm, x->name ? x->name_off : x->off);
      st->names[0] = nm;
      st->saved[0] = st->text;
      st->nnames = 1;
    } else if (x && x->name) {                 /* a tactic block: applied at once, with its defaults */
      if (name_taken(r, x->name)) rc = diag_error(&d, (loc){src, x->name_off}, "a tactic named '%s' was applied already; give this one another name", x->name);
      else rc = tactic_run(&c, x->name, x->name_off);
      st->names[0] = x->name;
      st->saved[0] = st->text;
      st->nnames = 1;
    } else if (x) {                            /* bare statements: each a tactic of its own */
      for (int i = 0; i < x->nstmts && rc == 0; i++) {
        const char *nm = arena_printf(&st->mem, "repl%d", ++r->counter);
        while (name_taken(r, nm)) nm = arena_printf(&st->mem, "repl%d", ++r->counter);
        st->names[st->nnames] = nm;
        st->saved[st->nnames++] = arena_printf(&st->mem, "tactic %s { %s }", nm, stmt_text(&st->mem, src, &x->stmts[i]));
        rc = tactic_run_stmt(&c, f, &x->stmts[i], nm);
      }
    }
    d.werror = werror;
    if (rc == 0 && st->nnames) {
      r->nsteps++;
      if (st->summary) sb_puts(out, st->summary);
      changes(r, st->mark, out);
      report_diag(r, out, &d);
      diag_free(&d);
      return 0;
    }
    if (r->p) shard_rollback(r->p, st->mark);   /* a failed line leaves no trace */
  }
  report_diag(r, out, &d);
  diag_free(&d);
  step_free(st);
  return -1;
}

/* ---- commands ---- */

static int value_named(repl *r, const char *name, strbuf *out) {
  const ir_value *v = r->loaded ? ir_lookup(r->s.g, name) : NULL;
  if (v && v->kind != IR_CONST) return v->id;
  const struct ir_fused *fu = r->loaded ? ir_fused_match(r->s.g, name) : NULL;
  if (fu) {
    fail(r, out, "no value named '%s': it was fused into the attention op '%s' (docs/execution.md, \"Fused attention\"); "
         "name '%s', or start the REPL with --no-fuse", name, fu->into, fu->into);
    return -1;
  }
  diag_suggest sg;                   /* "l0.mpl.w1": did you mean 'l0.mlp.w1'? */
  diag_suggest_init(&sg, name);
  for (int i = 0; r->loaded && i < r->s.g->nvals; i++)
    if (r->s.g->vals[i]->kind != IR_CONST) diag_suggest_add(&sg, r->s.g->vals[i]->name);
  arena a;
  arena_init(&a);
  fail(r, out, "no value named '%s'%s%s", name, diag_suggest_text(&a, &sg),
       r->loaded && !r->o.train && !strncmp(name, "grad.", 5) ? " (gradients exist with --train)" : "");
  arena_free(&a);
  return -1;
}

static void cmd_help(strbuf *out) {
  sb_puts(out,
    "Tactic statements and declarations apply at once, with propagation:\n"
    "  shard param \"l0.mlp.w1\" dim 1 on model     replicate value \"logits\" on model\n"
    "  use \"megatron\" as mp (axis = model)        tactic emb { shard param \"wte\" dim 0 on model }\n"
    "  mesh batch = 2, model = 2                  (before the first decision)\n"
    "Commands:\n"
    "  values [GLOB]        the values, their shardings and local shapes\n"
    "  show VALUE [rank R]  a value's sharding, local shape and which device holds which block\n"
    "  explain VALUE        why a value is split as it is\n"
    "  conflicts            what was refused and where propagation stopped\n"
    "  collectives          the collectives of the lowered program, with bytes\n"
    "  cost                 predicted memory and step time per device (the simulator)\n"
    "  auto [ARGS]          search for the fastest split from here (auto's arguments, as in\n"
    "                       'auto axes = [model], memory_limit = 8GiB'); undo takes it back\n"
    "  mesh                 the mesh\n"
    "  schedule             what was applied, in order\n"
    "  undo                 take the last line back (any number of times)\n"
    "  reset                back to the model and its tactic file\n"
    "  save FILE.tac        write a tactic file that loads back to this state\n"
    "  load FILE.tac|MODEL  start again from a tactic file (or a model)\n"
    "  help, quit\n");
}

static void cmd_values(repl *r, const char *glob, strbuf *out) {
  partials(r);
  char *only = mem_calloc((size_t)r->s.g->nvals + 1, 1);
  int any = 0;
  for (int v = 0; v < r->s.g->nvals; v++) {
    only[v] = !glob || fnmatch(glob, r->s.g->vals[v]->name, 0) == 0;
    any |= only[v] && r->s.g->vals[v]->kind != IR_CONST;
  }
  if (!any) sb_printf(out, "no value matches '%s'\n", glob);
  else report_values(out, r->p, only);
  free(only);
}

/* show VALUE [rank R]: its sharding and local shape, then which device
** holds which block, drawn as carve show draws it. */
static void cmd_show(repl *r, const char *line, strbuf *out) {
  char *arg = strdup(line);
  if (!arg) { fail(r, out, "out of memory"); return; }
  char *rest = arg;
  while (*rest && !isspace((unsigned char)*rest)) rest++;
  if (*rest) *rest++ = 0;
  while (isspace((unsigned char)*rest)) rest++;
  long rank = -1;
  int used = 0, v = -1;
  if (*rest && (sscanf(rest, "rank %ld%n", &rank, &used) != 1 || rest[used]))
    fail(r, out, "show takes a value and at most 'rank R' after it, as in 'show %s rank 0'", arg);
  else if ((v = value_named(r, arg, out)) >= 0) {
    int64_t ndev = shard_devices(r->p);
    if (*rest && (rank < 0 || rank >= ndev))
      fail(r, out, "rank %ld is outside the mesh of %lld devices (0..%lld)", rank, (long long)ndev, (long long)ndev - 1);
    else {
      partials(r);
      report_picture(out, r->p, v, (int)rank);
    }
  }
  free(arg);
}

static void cmd_collectives(repl *r, strbuf *out) {
  partials(r);
  rt_prog p;
  lower_result lr;
  diag d;
  diag_init(&d);
  if (lower_program(r->s.g, r->p, &p, &lr, &d) == 0) {
    report_collectives(out, r->s.g, &p);
    lower_result_free(&lr);
    rt_prog_free(&p);
  }
  report_diag(r, out, &d);
  diag_free(&d);
}

static void cmd_cost(repl *r, strbuf *out) {
  partials(r);
  arena a;
  arena_init(&a);
  diag d;
  diag_init(&d);
  sim_profile prof;
  const char *dir = r->o.profile_dir ? r->o.profile_dir : sim_profile_dir();
  sim_result res;
  if (sim_profile_load(&a, &d, r->o.device ? r->o.device : "h100-sxm", dir, &prof) == 0 &&
      sim_plan(r->s.g, r->p, &prof, NULL, 0, 0, &a, &res, &d) == 0) {
    sb_printf(out, "on %s: step %.4g ms (compute %.4g ms, communication %.4g ms); peak %s a device (params %s, optimizer %s, activations %s)\n",
              prof.name, 1e3 * res.total, 1e3 * res.compute, 1e3 * res.communication, report_bytes(&a, res.mem.peak),
              report_bytes(&a, res.mem.params), report_bytes(&a, res.mem.optimizer), report_bytes(&a, res.mem.activations));
    if (res.mem.peak > prof.memory) sb_printf(out, "  over the %s of a %s device\n", report_bytes(&a, prof.memory), prof.name);
    sim_result_free(&res);
  }
  report_diag(r, out, &d);
  diag_free(&d);
  arena_free(&a);
}

static void cmd_schedule(repl *r, strbuf *out) {
  if (r->s.tac) sb_printf(out, "from the tactic file: %s\n", r->o.tactic_path);
  if (!r->nsteps) { sb_puts(out, r->s.tac ? "nothing typed since\n" : "nothing applied yet\n"); return; }
  for (int i = 0; i < r->nsteps; i++) {
    sb_printf(out, "%3d  ", i + 1);
    for (int k = 0; k < r->steps[i].nnames; k++) sb_printf(out, "%s%s", k ? ", " : "", r->steps[i].names[k]);
    sb_puts(out, ": ");
    for (const char *c = r->steps[i].text; *c; c++) {      /* one line, however it was typed */
      if (isspace((unsigned char)*c)) { while (isspace((unsigned char)c[1])) c++; sb_putc(out, ' '); }
      else sb_putc(out, *c);
    }
    sb_putc(out, '\n');
  }
}

/* The tactic file of this state: the starting file's declarations, then every step, then one schedule. */
static int cmd_save(repl *r, const char *path, strbuf *out) {
  strbuf b, sched;
  sb_init(&b);
  sb_init(&sched);
  time_t t = time(NULL);
  char date[32];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M", gmtime(&t));
  sb_printf(&b, "# saved by carve repl on %s UTC (model %s%s)\nversion 1\nmesh", date, r->o.model_path ? r->o.model_path : "?", r->o.train ? ", with --train" : "");
  for (int i = 0; i < r->p->mesh.n; i++) sb_printf(&b, "%s %s = %lld", i ? "," : "", r->p->mesh.name[i], (long long)r->p->mesh.size[i]);
  sb_putc(&b, '\n');
  const tac_file *f = r->s.tac;
  for (int i = 0; f && i < f->ndecls; i++) {
    const tac_decl *x = &f->decls[i];
    if (x->kind == TAC_SCHEDULE) {
      for (int k = 0; k < x->nnames; k++) sb_printf(&sched, "%s%s", sched.n ? ", " : "", x->names[k]);
      continue;
    }
    if (x->kind == TAC_MESH) continue;
    uint32_t end = i + 1 < f->ndecls ? f->decls[i + 1].off : (uint32_t)f->src->len;
    const char *s = f->src->text + x->off;
    size_t n = end - x->off;
    while (n && isspace((unsigned char)s[n - 1])) n--;
    sb_put(&b, s, n);
    sb_putc(&b, '\n');
  }
  for (int i = 0; i < r->nsteps; i++)
    for (int k = 0; k < r->steps[i].nnames; k++) {
      sb_printf(&b, "%s\n", r->steps[i].saved[k]);
      sb_printf(&sched, "%s%s", sched.n ? ", " : "", r->steps[i].names[k]);
    }
  int rc = 0;
  char why[512];
  if (!sched.n) { fail(r, out, "nothing to save: no tactic was applied"); rc = -1; }
  else if (file_check_target(path, (const file_read[]){{r->o.model_path, "the model file this session loaded"},
                                                      {r->o.tactic_path, "the tactic file this session loaded"}}, 2, why, sizeof why) < 0) {
    fail(r, out, "save: %s", why);
    rc = -1;
  } else {
    sb_printf(&b, "schedule %s\n", sb_str(&sched));
    if (file_write_atomic(path, sb_str(&b), b.n) < 0) {
      fail(r, out, "cannot write '%s': %s", path, strerror(errno));
      rc = -1;
    } else sb_printf(out, "saved %s\n", path);
  }
  sb_free(&b);
  sb_free(&sched);
  return rc;
}

/* the rest of the line after the command word, trimmed (malloc'd) */
static char *argument(const char *line, size_t cmdlen) {
  const char *s = line + cmdlen;
  while (isspace((unsigned char)*s)) s++;
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1])) n--;
  char *buf = mem_alloc(n + 1);
  memcpy(buf, s, n);
  buf[n] = 0;
  return buf;
}

static int ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), k = strlen(tail);
  return n >= k && !strcmp(s + n - k, tail);
}

static int command_run(repl *r, const char *word, const char *arg, strbuf *out);

/* A command line (-2: not a command, a tactic line). The command word is
** one of a short list, so a longer word is no command at all. */
static int command(repl *r, const char *line, strbuf *out) {
  char word[32];
  size_t n = 0;
  while (line[n] && !isspace((unsigned char)line[n])) n++;
  if (n >= sizeof word) return -2;
  memcpy(word, line, n);
  word[n] = 0;
  char *arg = argument(line, n);
  int rc = command_run(r, word, arg, out);
  free(arg);
  return rc;
}

static int command_run(repl *r, const char *word, const char *arg, strbuf *out) {
  int known = 0;
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) known |= !strcmp(word, commands[i]);
  if (!strcmp(word, "exit")) known = 1;
  if (!known || (!strcmp(word, "mesh") && arg[0])) return -2;       /* a tactic line */
  if (!strcmp(word, "quit") || !strcmp(word, "exit")) return REPL_QUIT;
  if (!strcmp(word, "help")) { cmd_help(out); return 0; }
  if (!strcmp(word, "load")) {
    if (!arg[0]) { fail(r, out, "load needs a file: load FILE.tac, or load MODEL.cir"); return 0; }
    if (ends_with(arg, ".tac")) {
      if (!r->loaded) { fail(r, out, "load a model first: load MODEL.cir"); return 0; }
      const char *tac = arena_strndup(&r->paths, arg, strlen(arg)), *mesh = r->o.mesh;
      r->o.mesh = NULL;                        /* the file's mesh */
      if (load_model(r, r->o.model_path, tac, out) == 0) r->o.tactic_path = tac;
      r->o.mesh = mesh;
    } else {
      const char *model = arena_strndup(&r->paths, arg, strlen(arg));
      if (load_model(r, model, NULL, out) == 0) { r->o.model_path = model; r->o.tactic_path = NULL; }
    }
    return 0;
  }
  if (!r->loaded) { fail(r, out, "no model loaded: load MODEL.cir"); return 0; }
  if (!strcmp(word, "values") && !r->p) {
    arena a;
    arena_init(&a);
    for (int v = 0; v < r->s.g->nvals; v++) {
      const ir_value *x = r->s.g->vals[v];
      if (x->kind != IR_CONST && (!arg[0] || fnmatch(arg, x->name, 0) == 0))
        sb_printf(out, "%-34s %-6s %s\n", x->name, report_kind(x), ir_shape_str(&a, &x->shape));
    }
    arena_free(&a);
    return 0;
  }
  if (!r->p) { fail(r, out, "no mesh yet: type one, as in 'mesh batch = 2, model = 2'"); return 0; }
  if (!strcmp(word, "mesh")) report_mesh(out, r->p);
  else if (!strcmp(word, "values")) cmd_values(r, arg[0] ? arg : NULL, out);
  else if (!strcmp(word, "show") || !strcmp(word, "explain")) {
    if (!arg[0]) { fail(r, out, "%s needs a value's name", word); return 0; }
    if (word[0] == 's') { cmd_show(r, arg, out); return 0; }
    int v = value_named(r, arg, out);
    if (v < 0) return 0;
    partials(r);
    report_explain(out, r->p, v);
  } else if (!strcmp(word, "conflicts")) report_conflicts(out, r->p);
  else if (!strcmp(word, "collectives")) cmd_collectives(r, out);
  else if (!strcmp(word, "cost")) cmd_cost(r, out);
  else if (!strcmp(word, "auto")) {             /* auto ARGS: 'tactic autoN = auto (ARGS)' */
    arena a;
    arena_init(&a);
    const char *nm;
    do nm = arena_printf(&a, "auto%d", ++r->counter); while (name_taken(r, nm));
    apply_text(r, arena_printf(&a, "tactic %s = auto (%s)", nm, arg), out);
    arena_free(&a);
  }
  else if (!strcmp(word, "schedule")) cmd_schedule(r, out);
  else if (!strcmp(word, "undo")) {
    if (!r->nsteps) sb_puts(out, "nothing to undo\n");
    else {
      no_partials(r);
      step *s = &r->steps[--r->nsteps];
      shard_rollback(r->p, s->mark);
      sb_printf(out, "undid: %s\n", s->text);
      step_free(s);
    }
  } else if (!strcmp(word, "reset")) {
    no_partials(r);
    if (r->nsteps) shard_rollback(r->p, r->steps[0].mark);
    clear_steps(r);
    sb_printf(out, "back to %s\n", r->s.tac ? r->o.tactic_path : "the model with no decisions");
  } else if (!strcmp(word, "save")) {
    if (!arg[0]) fail(r, out, "save needs a file: save FILE.tac");
    else cmd_save(r, arg, out);
  }
  return 0;
}

int repl_line(repl *r, const char *line, strbuf *out) {
  r->lineno++;
  const char *s = line;
  while (isspace((unsigned char)*s)) s++;
  if (!r->pending.n && (!*s || *s == '#')) return REPL_DONE;
  if (!r->pending.n) {
    int rc = command(r, s, out);
    if (rc != -2) return rc == REPL_QUIT ? REPL_QUIT : REPL_DONE;
    if (!r->loaded) { fail(r, out, "no model loaded: load MODEL.cir"); return REPL_DONE; }
  }
  /* a tactic line: whole, or to be continued */
  sb_puts(&r->pending, line);
  sb_putc(&r->pending, '\n');
  arena a;
  arena_init(&a);
  diag d;
  diag_init(&d);
  int inc = 0;
  const diag_src *src = diag_src_string(&a, "repl", sb_str(&r->pending), r->pending.n);
  tac_file *f = tac_parse_line(&a, &d, src, &inc);
  diag_free(&d);
  arena_free(&a);
  if (!f && inc) return REPL_MORE;
  char *text = strdup(sb_str(&r->pending));
  size_t n = strlen(text);
  while (n && isspace((unsigned char)text[n - 1])) text[--n] = 0;
  sb_clear(&r->pending);
  apply_text(r, text, out);
  free(text);
  return REPL_DONE;
}

/* ---- completion ---- */

static const char *const keywords[] = {
  "shard", "replicate", "use", "tactic", "mesh", "dim", "on", "first", "last", "largest",
  "input", "param", "grad", "state", "value", "inputs", "params", "grads", "states", "values", "as",
};

int repl_complete(repl *r, const char *line, int cursor, void (*add)(void *ctx, const char *word), void *ctx) {
  int start = cursor;
  while (start > 0 && !isspace((unsigned char)line[start - 1]) && line[start - 1] != '"' && line[start - 1] != '(') start--;
  int n = cursor - start;
  char *word = mem_alloc((size_t)n + 1);
  memcpy(word, line + start, (size_t)n);
  word[n] = 0;
  int first = 1, count = 0;
  for (int i = 0; i < start; i++) if (!isspace((unsigned char)line[i])) first = 0;
  /* the word before this one */
  char prev[32] = "";
  int e = start;
  while (e > 0 && (isspace((unsigned char)line[e - 1]) || line[e - 1] == '"')) e--;
  int b = e;
  while (b > 0 && !isspace((unsigned char)line[b - 1])) b--;
  if (e - b < (int)sizeof prev) { memcpy(prev, line + b, (size_t)(e - b)); prev[e - b] = 0; }
  int glob = strchr(word, '*') || strchr(word, '?') || strchr(word, '[');
  if (first) {
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
      if (!strncmp(commands[i], word, (size_t)n)) { add(ctx, commands[i]); count++; }
    for (size_t i = 0; i < 4; i++)
      if (!strncmp(keywords[i], word, (size_t)n)) { add(ctx, keywords[i]); count++; }
    goto done;
  }
  if (!strcmp(prev, "on") && r->p) {                  /* an axis */
    for (int i = 0; i < r->p->mesh.n; i++)
      if (!strncmp(r->p->mesh.name[i], word, (size_t)n)) { add(ctx, r->p->mesh.name[i]); count++; }
    goto done;
  }
  if (r->loaded)                                      /* value names, by prefix or by glob */
    for (int v = 0; v < r->s.g->nvals; v++) {
      const ir_value *x = r->s.g->vals[v];
      if (x->kind == IR_CONST) continue;
      if (glob ? fnmatch(word, x->name, 0) == 0 : !strncmp(x->name, word, (size_t)n)) { add(ctx, x->name); count++; }
    }
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0] && !glob; i++)
    if (n && !strncmp(keywords[i], word, (size_t)n)) { add(ctx, keywords[i]); count++; }

done:
  free(word);
  return count;
}

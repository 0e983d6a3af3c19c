/*
** cli_apply.c: carve apply (the sharding of every value, the conflicts,
** the collectives of the lowering) and carve explain (why a value is
** split as it is).
*/
#include "cli/cli.h"
#include "interp/lower/lower.h"
#include "interp/ir/ops.h"
#include "interp/drive/session.h"
#include "util/json.h"

#include <stdlib.h>
#include <string.h>

static const char *kind_name(const ir_value *v) {
  switch (v->kind) {
  case IR_INPUT: return "input";
  case IR_PARAM: return "param";
  case IR_STATE: return "state";
  default: return v->role == ROLE_GRAD ? "grad" : "value";
  }
}

static const char *coll_name(int op) {
  switch (op) {
  case RT_ALL_REDUCE: return "all_reduce";
  case RT_ALL_GATHER: return "all_gather";
  case RT_REDUCE_SCATTER: return "reduce_scatter";
  case RT_ALL_TO_ALL: return "all_to_all";
  default: return NULL;
  }
}

/* bytes a device sends or receives for a collective: the larger of its input and output */
static int64_t coll_bytes(const rt_prog *p, const rt_instr *x) {
  int64_t a = p->bufs[x->in[0]].nelem, b = p->bufs[x->out].nelem;
  return (a > b ? a : b) * (int64_t)rt_dtype_size(p->bufs[x->out].dtype);
}

static const char *group_str(const rt_prog *p, int g, arena *a) {
  char buf[256];
  size_t k = 0;
  buf[k++] = '{';
  for (int i = 0; i < p->groups[g].naxes; i++)
    k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s", i ? ", " : "", p->axis_names[p->groups[g].axes[i]]);
  buf[k++] = '}';
  buf[k] = 0;
  return arena_strndup(a, buf, k);
}

static const char *human_bytes(arena *a, double b) {
  const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (b >= 1024 && i < 4) { b /= 1024; i++; }
  return arena_printf(a, i ? "%.1f %s" : "%.0f %s", b, u[i]);
}

static void json_axes_list(json *j, const sh_plan *p, const sh_dim *d) {
  json_arr(j);
  for (int k = 0; k < d->n; k++) json_str(j, p->mesh.name[d->ax[k]]);
  json_end_arr(j);
}

static void json_mask(json *j, const sh_plan *p, uint32_t m) {
  json_arr(j);
  for (int a = 0; a < p->mesh.n; a++) if ((m >> a) & 1) json_str(j, p->mesh.name[a]);
  json_end_arr(j);
}

int cli_apply(const cli_opts *o) {
  session s;
  if (cli_load(&s, o) < 0) return 1;
  const ir_graph *g = s.g;
  const sh_plan *p = s.plan;
  rt_prog prog;
  lower_result lr;
  if (lower_program(g, p, &prog, &lr, &s.diag) < 0) { cli_report(&s.diag); session_free(&s); return 1; }
  arena a;
  arena_init(&a);
  if (o->json) {
    json j;
    json_init(&j);
    json_obj(&j);
    json_key(&j, "mesh");
    json_obj(&j);
    for (int i = 0; i < p->mesh.n; i++) { json_key(&j, p->mesh.name[i]); json_int(&j, p->mesh.size[i]); }
    json_end_obj(&j);
    json_key(&j, "values");
    json_arr(&j);
    for (int v = 0; v < g->nvals; v++) {
      const ir_value *x = g->vals[v];
      if (x->kind == IR_CONST) continue;
      ir_shape ls;
      shard_local(p, v, &ls);
      json_obj(&j);
      json_key(&j, "name"); json_str(&j, x->name);
      json_key(&j, "kind"); json_str(&j, kind_name(x));
      json_key(&j, "shape"); json_arr(&j); for (int i = 0; i < x->shape.rank; i++) json_int(&j, x->shape.d[i]); json_end_arr(&j);
      json_key(&j, "sharding"); json_arr(&j); for (int i = 0; i < x->shape.rank; i++) json_axes_list(&j, p, &p->lay[v].dim[i]); json_end_arr(&j);
      json_key(&j, "partial"); json_mask(&j, p, shard_keeps_partial(p, v) ? p->lay[v].partial : 0);
      json_key(&j, "local_shape"); json_arr(&j); for (int i = 0; i < ls.rank; i++) json_int(&j, ls.d[i]); json_end_arr(&j);
      json_end_obj(&j);
    }
    json_end_arr(&j);
    json_key(&j, "conflicts");
    json_arr(&j);
    for (int i = 0; i < p->ncon; i++) {
      const sh_conflict *k = &p->con[i];
      json_obj(&j);
      json_key(&j, "value"); json_str(&j, g->vals[k->value]->name);
      json_key(&j, "op"); if (k->op >= 0) json_str(&j, g->vals[k->op]->name); else json_null(&j);
      json_key(&j, "tactic"); json_str(&j, k->tactic);
      json_key(&j, "where"); json_str(&j, diag_where(&a, k->at));
      json_key(&j, "kind"); json_str(&j, k->from_tactic ? "tactic" : "propagation");
      json_key(&j, "message"); json_str(&j, k->message);
      json_end_obj(&j);
    }
    json_end_arr(&j);
    json_key(&j, "collectives");
    json_arr(&j);
    for (int i = 0; i < prog.ninstrs; i++) {
      const rt_instr *x = &prog.instrs[i];
      const char *cn = coll_name(x->op);
      if (!cn) continue;
      json_obj(&j);
      json_key(&j, "kind"); json_str(&j, cn);
      json_key(&j, "value"); json_str(&j, x->src >= 0 ? g->vals[x->src]->name : prog.bufs[x->out].name);
      json_key(&j, "axes"); json_arr(&j);
      for (int k = 0; k < prog.groups[x->group].naxes; k++) json_str(&j, prog.axis_names[prog.groups[x->group].axes[k]]);
      json_end_arr(&j);
      json_key(&j, "bytes"); json_int(&j, coll_bytes(&prog, x));
      json_end_obj(&j);
    }
    json_end_arr(&j);
    json_end_obj(&j);
    puts(sb_str(&j.out));
    json_free(&j);
  } else {
    int64_t dev = 1;
    for (int i = 0; i < p->mesh.n; i++) dev *= p->mesh.size[i];
    printf("mesh:");
    for (int i = 0; i < p->mesh.n; i++) printf("%s %s=%lld", i ? "," : "", p->mesh.name[i], (long long)p->mesh.size[i]);
    printf("  (%lld devices)\n\n", (long long)dev);
    printf("%-34s %-6s %-20s %-24s %-20s %s\n", "value", "kind", "shape", "sharding", "local shape", "partial");
    for (int v = 0; v < g->nvals; v++) {
      const ir_value *x = g->vals[v];
      if (x->kind == IR_CONST) continue;
      ir_shape ls;
      shard_local(p, v, &ls);
      int kp = shard_keeps_partial(p, v);
      printf("%-34s %-6s %-20s %-24s %-20s %s\n", x->name, kind_name(x), ir_shape_str(&a, &x->shape), shard_str(p, v, &a),
             ir_shape_str(&a, &ls), kp ? shard_axes_str(p, p->lay[v].partial, &a) : "");
    }
    int from_tactics = 0;
    for (int i = 0; i < p->ncon; i++) from_tactics += p->con[i].from_tactic;
    printf("\nconflicts: %d", p->ncon);
    if (p->ncon)
      printf(" (%d refused tactic statement%s; %d place%s where propagation stopped and the lowering reshards)",
             from_tactics, from_tactics == 1 ? "" : "s", p->ncon - from_tactics, p->ncon - from_tactics == 1 ? "" : "s");
    printf("\n");
    for (int i = 0; i < p->ncon; i++) {
      const sh_conflict *k = &p->con[i];
      printf("  %s: %s (tactic '%s'%s)\n", diag_where(&a, k->at), k->message, k->tactic, k->from_tactic ? "" : ", propagation");
    }
    int count[RT_NOPS] = {0};
    int64_t bytes[RT_NOPS] = {0};
    printf("\ncollectives per step and device:\n");
    for (int i = 0; i < prog.ninstrs; i++) {
      const rt_instr *x = &prog.instrs[i];
      const char *cn = coll_name(x->op);
      if (!cn) continue;
      count[x->op]++;
      bytes[x->op] += coll_bytes(&prog, x);
      printf("  %-15s %-34s over %-16s %s\n", cn, x->src >= 0 ? g->vals[x->src]->name : "", group_str(&prog, x->group, &a),
             human_bytes(&a, (double)coll_bytes(&prog, x)));
    }
    printf("total:");
    int any = 0;
    for (int op = 0; op < RT_NOPS; op++)
      if (count[op]) { printf("%s %d %s (%s)", any ? "," : "", count[op], coll_name(op), human_bytes(&a, (double)bytes[op])); any = 1; }
    printf("%s\n", any ? "" : " no collectives");
  }
  if (s.diag.nwarnings) cli_report(&s.diag);
  arena_free(&a);
  lower_result_free(&lr);
  rt_prog_free(&prog);
  session_free(&s);
  return 0;
}

/* ---- explain ---- */

static void chain(const session *s, int dec, int depth) {
  const sh_plan *p = s->plan;
  const ir_graph *g = s->g;
  arena a;
  arena_init(&a);
  while (dec >= 0 && depth < 200) {
    const sh_decision *d = &p->dec[dec];
    const ir_value *v = g->vals[d->value];
    if (d->src == SRC_TACTIC) {
      if (d->replicate && d->dim < 0)
        printf("    %s: tactic '%s' keeps '%s' whole on '%s'\n", diag_where(&a, d->at), d->tactic, v->name, p->mesh.name[d->axis]);
      else if (d->replicate)
        printf("    %s: tactic '%s' keeps dim %d of '%s' whole on '%s'\n", diag_where(&a, d->at), d->tactic, d->dim, v->name, p->mesh.name[d->axis]);
      else
        printf("    %s: tactic '%s' split dim %d of '%s' on '%s'\n", diag_where(&a, d->at), d->tactic, d->dim, v->name, p->mesh.name[d->axis]);
      break;
    }
    const ir_value *op = g->vals[d->op];
    printf("    <- dim %d of '%s' follows %s '%s' from '%s'", d->dim, v->name, ir_opinfo_of(op->op)->name, op->name, g->vals[d->from]->name);
    if (op->at.src) printf(" (%s)", diag_where(&a, op->at));
    printf("\n");
    dec = d->from_decision;
    depth++;
  }
  arena_free(&a);
}

int cli_explain(const cli_opts *o) {
  cli_opts o2 = *o;
  o2.nfiles = 2;
  session s;
  if (cli_load(&s, &o2) < 0) return 1;
  const char *name = o->files[2];
  ir_value *v = ir_lookup(s.g, name);
  if (!v || v->kind == IR_CONST) {
    fprintf(stderr, "carve: error: no value named '%s' in model '%s'%s\n", name, s.g->name,
            !o->train && !strncmp(name, "grad.", 5) ? " (gradients exist with --train)" : "");
    session_free(&s);
    return 1;
  }
  const sh_plan *p = s.plan;
  arena a;
  arena_init(&a);
  ir_shape ls;
  shard_local(p, v->id, &ls);
  printf("%s: %s%s, split %s, local %s\n", v->name, ir_dtype_name(v->dtype), ir_shape_str(&a, &v->shape),
         shard_str(p, v->id, &a), ir_shape_str(&a, &ls));
  int any = 0;
  for (int i = 0; i < v->shape.rank; i++)
    for (int k = 0; k < p->lay[v->id].dim[i].n; k++) {
      int ax = p->lay[v->id].dim[i].ax[k];
      printf("  dim %d on '%s':\n", i, p->mesh.name[ax]);
      chain(&s, p->lay[v->id].why[ax], 0);
      any = 1;
    }
  if (shard_keeps_partial(p, v->id))
    printf("  a partial sum over %s, passed on to its users as it is (they are linear in it)\n", shard_axes_str(p, p->lay[v->id].partial, &a));
  else if (p->lay[v->id].partial)
    printf("  computed as a partial sum over %s and reduced where it is made\n", shard_axes_str(p, p->lay[v->id].partial, &a));
  if (!any) printf("  not split on any axis: no tactic split it and no propagation reached it\n");
  for (int ax = 0; ax < p->mesh.n; ax++) {
    int id = p->lay[v->id].forbid_why[ax];
    if (id < 0) continue;
    printf("  kept whole on '%s' by tactic '%s' at %s\n", p->mesh.name[ax], p->dec[id].tactic, diag_where(&a, p->dec[id].at));
  }
  for (int i = 0; i < p->ncon; i++) {
    const sh_conflict *k = &p->con[i];
    if (k->value != v->id) continue;
    printf("  conflict: %s\n", k->message);
    if (k->lost_to >= 0) { printf("    it lost to:\n"); chain(&s, k->lost_to, 0); }
  }
  arena_free(&a);
  session_free(&s);
  return 0;
}

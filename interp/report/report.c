/*
** report.c: plans as text and JSON.
*/
#include "interp/report/report.h"
#include "interp/ir/ops.h"
#include "util/mem.h"

#include <string.h>

const char *report_kind(const ir_value *v) {
  switch (v->kind) {
  case IR_INPUT: return "input";
  case IR_PARAM: return "param";
  case IR_STATE: return "state";
  default: return v->role == ROLE_GRAD ? "grad" : "value";
  }
}

const char *report_bytes(arena *a, double b) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int i = 0;
  while (b >= 1024 && i < 5) { b /= 1024; i++; }
  return arena_printf(a, i ? "%.1f %s" : "%.0f %s", b, unit[i]);
}

void report_mesh(strbuf *b, const sh_plan *p) {
  int64_t dev = 1;
  sb_puts(b, "mesh:");
  for (int i = 0; i < p->mesh.n; i++) {
    int virt = p->mesh.virt >> i & 1;
    sb_printf(b, "%s %s=%lld%s%s", i ? "," : "", p->mesh.name[i], (long long)p->mesh.size[i], virt ? " (microbatches, in turn)" : "",
              p->mesh.zigzag >> i & 1 ? " (pieces dealt zig-zag: two blocks of 2n a device)" : "");
    if (!virt) dev *= p->mesh.size[i];
  }
  sb_printf(b, "  (%lld device%s)\n", (long long)dev, dev == 1 ? "" : "s");
  if (p->pipe.axis >= 0) {
    static const char *const order[] = {"GPipe", "1F1B", "interleaved 1F1B", "zero-bubble (ZB-H1)"};   /* SH_GPIPE ... SH_ZB */
    sb_printf(b, "pipeline: %lld stage%s over '%s', %lld microbatch%s a step, %s schedule", (long long)p->mesh.size[p->pipe.axis],
              p->mesh.size[p->pipe.axis] == 1 ? "" : "s", p->mesh.name[p->pipe.axis], p->pipe.micro >= 0 ? (long long)p->mesh.size[p->pipe.micro] : 1LL,
              p->pipe.micro >= 0 && p->mesh.size[p->pipe.micro] > 1 ? "es" : "", order[p->pipe.order]);
    if (p->pipe.chunks > 1) sb_printf(b, " (%d parts a stage)", p->pipe.chunks);
    sb_putc(b, '\n');
    report_stages(b, p);
  }
}

void report_stages(strbuf *b, const sh_plan *p) {
  const ir_graph *g = p->g;
  int P = (int)p->mesh.size[p->pipe.axis], nv = g->nvals;
  sh_stages st;
  diag d;
  diag_init(&d);
  if (shard_stages(p, &st, &d) == 0) {
    for (int k = 0; k < st.n; k++) {      /* each part of the program: on stage k mod P */
      int nops = 0, nparams = 0;
      double bytes = 0;
      for (int v = 0; v < nv; v++) {
        const ir_value *x = g->vals[v];
        if (x->kind == IR_OP && st.fwd[v] && st.part[v] == k) nops++;
        if (x->kind != IR_PARAM || st.n > P || !(st.mask[v] >> k & 1)) continue;
        nparams++;
        ir_shape sh;
        shard_local(p, v, &sh);
        bytes += (double)ir_nelem(&sh) * (double)ir_dtype_size(x->dtype);
      }
      if (st.n > P) sb_printf(b, "  part %d on stage %d: %d forward ops", k, k % P, nops);
      else sb_printf(b, "  stage %d: %d forward ops", k, nops);
      if (k < st.n - 1) sb_printf(b, ", ends at '%s'", g->vals[st.cuts[k]]->name);
      if (st.n <= P) sb_printf(b, ", %d params (%.1f KiB a device)", nparams, bytes / 1024);
      sb_putc(b, '\n');
    }
  } else {
    sb_printf(b, "  (%s)\n", d.nerrors ? "the stages cannot be placed; carve apply says why" : "?");
  }
  diag_free(&d);
  shard_stages_free(&st);
}

void report_values(strbuf *b, const sh_plan *p, const char *only) {
  const ir_graph *g = p->g;
  arena a;
  arena_init(&a);
  sb_printf(b, "%-34s %-6s %-20s %-24s %-20s %s\n", "value", "kind", "shape", "sharding", "local shape", "partial");
  for (int v = 0; v < g->nvals; v++) {
    const ir_value *x = g->vals[v];
    if (x->kind == IR_CONST || (only && !only[v])) continue;
    ir_shape ls;
    shard_local(p, v, &ls);
    int kp = shard_keeps_partial(p, v);
    sb_printf(b, "%-34s %-6s %-20s %-24s %-20s %s\n", x->name, report_kind(x), ir_shape_str(&a, &x->shape),
              shard_str(p, v, &a), ir_shape_str(&a, &ls), kp ? shard_axes_str(p, p->lay[v].partial, &a) : "");
  }
  arena_free(&a);
}

void report_conflicts(strbuf *b, const sh_plan *p) {
  arena a;
  arena_init(&a);
  int from_tactics = 0;
  for (int i = 0; i < p->ncon; i++) from_tactics += p->con[i].from_tactic;
  sb_printf(b, "conflicts: %d", p->ncon);
  if (p->ncon)
    sb_printf(b, " (%d refused tactic statement%s; %d place%s where propagation stopped and the lowering reshards)",
              from_tactics, from_tactics == 1 ? "" : "s", p->ncon - from_tactics, p->ncon - from_tactics == 1 ? "" : "s");
  sb_putc(b, '\n');
  for (int i = 0; i < p->ncon; i++) {
    const sh_conflict *k = &p->con[i];
    sb_printf(b, "  %s: %s (tactic '%s'%s)\n", diag_where(&a, k->at), k->message, k->tactic, k->from_tactic ? "" : ", propagation");
  }
  arena_free(&a);
}

static void group_names(strbuf *b, const rt_prog *p, int g) {
  sb_putc(b, '{');
  for (int i = 0; i < p->groups[g].naxes; i++) sb_printf(b, "%s%s", i ? ", " : "", p->axis_names[p->groups[g].axes[i]]);
  sb_putc(b, '}');
}

/* Is instruction y one of the copies of gradients into the bucket that x
** reduces (lower_opts.bucket_bytes; such a reduction has no value)? */
static int fills(const rt_instr *x, const rt_instr *y) {
  return x->src < 0 && y->op == RT_BLOCK_COPY && y->out == x->in[0] && y->src >= 0;
}

/* What a collective reduces or moves: its value, or a bucket's values
** (how many; up to four by name, else the first and the last). */
static void collective_name(strbuf *b, const ir_graph *g, const rt_prog *prog, const rt_instr *x) {
  if (x->op == RT_SEND || x->op == RT_RECV) {      /* a pipeline stage's transfer: its buffer, and the stages */
    int s = 0;
    while (s < 63 && !rt_stage_runs(x, s)) s++;
    sb_printf(b, "%s (stage %d %s %lld)", prog->bufs[x->op == RT_SEND ? x->in[0] : x->out].name, s, x->op == RT_SEND ? "to" : "from",
              (long long)x->n2);
    return;
  }
  if (x->src >= 0) { sb_puts(b, g->vals[x->src]->name); return; }
  const char *names[4], *last = NULL;
  int n = 0, grads = 1;
  for (int i = 0; i < prog->ninstrs; i++)
    if (fills(x, &prog->instrs[i])) {
      const ir_value *v = g->vals[prog->instrs[i].src];
      last = v->name;
      grads &= v->role == ROLE_GRAD;
      if (n < 4) names[n] = last;
      n++;
    }
  sb_puts(b, prog->bufs[x->in[0]].name);
  if (!n) return;
  sb_printf(b, " (%d %s: ", n, grads ? "grads" : "values");
  if (n > 4) sb_printf(b, "%s .. %s)", names[0], last);
  else for (int i = 0; i < n; i++) sb_printf(b, "%s%s", names[i], i + 1 < n ? ", " : ")");
}

void report_collectives(strbuf *b, const ir_graph *g, const rt_prog *prog) {
  arena a;
  arena_init(&a);
  int count[RT_NOPS] = {0};
  int64_t bytes[RT_NOPS] = {0};
  strbuf grp;
  sb_init(&grp);
  sb_puts(b, "collectives per step and device:\n");
  for (int i = 0; i < prog->ninstrs; i++) {
    const rt_instr *x = &prog->instrs[i];
    if (!rt_is_collective((rt_op)x->op)) continue;
    int64_t by = rt_coll_bytes(prog, x);
    count[x->op]++;
    bytes[x->op] += by;
    sb_clear(&grp);
    collective_name(&grp, g, prog, x);
    sb_printf(b, "  %-15s %-34s over ", rt_coll_name(x), sb_str(&grp));
    sb_clear(&grp);
    group_names(&grp, prog, x->group);
    sb_printf(b, "%-16s %s\n", sb_str(&grp), report_bytes(&a, (double)by));
  }
  sb_puts(b, "total:");
  int any = 0;
  for (int op = 0; op < RT_NOPS; op++)
    if (count[op]) {
      sb_printf(b, "%s %d %s (%s)", any ? "," : "", count[op], rt_op_name((rt_op)op), report_bytes(&a, (double)bytes[op]));
      any = 1;
    }
  sb_printf(b, "%s\n", any ? "" : " no collectives");
  sb_free(&grp);
  arena_free(&a);
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

static void json_shape(json *j, const ir_shape *s) {
  json_arr(j);
  for (int i = 0; i < s->rank; i++) json_int(j, s->d[i]);
  json_end_arr(j);
}

void report_apply_json(json *j, const sh_plan *p, const rt_prog *prog) {
  const ir_graph *g = p->g;
  arena a;
  arena_init(&a);
  json_obj(j);
  json_key(j, "mesh");
  json_obj(j);
  for (int i = 0; i < p->mesh.n; i++) { json_key(j, p->mesh.name[i]); json_int(j, p->mesh.size[i]); }
  json_end_obj(j);
  json_key(j, "values");
  json_arr(j);
  for (int v = 0; v < g->nvals; v++) {
    const ir_value *x = g->vals[v];
    if (x->kind == IR_CONST) continue;
    ir_shape ls;
    shard_local(p, v, &ls);
    json_obj(j);
    json_key(j, "name"); json_str(j, x->name);
    json_key(j, "kind"); json_str(j, report_kind(x));
    json_key(j, "shape"); json_shape(j, &x->shape);
    json_key(j, "sharding"); json_arr(j); for (int i = 0; i < x->shape.rank; i++) json_axes_list(j, p, &p->lay[v].dim[i]); json_end_arr(j);
    json_key(j, "partial"); json_mask(j, p, shard_keeps_partial(p, v) ? p->lay[v].partial : 0);
    json_key(j, "local_shape"); json_shape(j, &ls);
    json_end_obj(j);
  }
  json_end_arr(j);
  json_key(j, "conflicts");
  json_arr(j);
  for (int i = 0; i < p->ncon; i++) {
    const sh_conflict *k = &p->con[i];
    json_obj(j);
    json_key(j, "value"); json_str(j, g->vals[k->value]->name);
    json_key(j, "op"); if (k->op >= 0) json_str(j, g->vals[k->op]->name); else json_null(j);
    json_key(j, "tactic"); json_str(j, k->tactic);
    json_key(j, "where"); json_str(j, diag_where(&a, k->at));
    json_key(j, "kind"); json_str(j, k->from_tactic ? "tactic" : "propagation");
    json_key(j, "message"); json_str(j, k->message);
    json_end_obj(j);
  }
  json_end_arr(j);
  json_key(j, "collectives");
  json_arr(j);
  for (int i = 0; i < prog->ninstrs; i++) {
    const rt_instr *x = &prog->instrs[i];
    if (!rt_is_collective((rt_op)x->op)) continue;
    json_obj(j);
    json_key(j, "kind"); json_str(j, rt_op_name((rt_op)x->op));
    if (x->op == RT_ALL_REDUCE && x->fn != RT_RSUM) { json_key(j, "reduce"); json_str(j, x->fn == RT_RMAX ? "max" : "min"); }
    json_key(j, "value"); json_str(j, x->src >= 0 ? g->vals[x->src]->name : prog->bufs[x->op == RT_RECV ? x->out : x->in[0]].name);
    if (x->stages) {                       /* a pipeline's: the stage that runs it, and a transfer's peer */
      int s = 0;
      while (s < 63 && !rt_stage_runs(x, s)) s++;
      json_key(j, "stage"); json_int(j, s);
      if (x->op == RT_SEND || x->op == RT_RECV) { json_key(j, x->op == RT_SEND ? "to" : "from"); json_int(j, x->n2); }
    }
    if (x->src < 0 && x->op != RT_SEND && x->op != RT_RECV) {   /* a bucket: the gradients it reduces */
      json_key(j, "values"); json_arr(j);
      for (int k = 0; k < prog->ninstrs; k++) if (fills(x, &prog->instrs[k])) json_str(j, g->vals[prog->instrs[k].src]->name);
      json_end_arr(j);
    }
    json_key(j, "axes"); json_arr(j);
    for (int k = 0; k < prog->groups[x->group].naxes; k++) json_str(j, prog->axis_names[prog->groups[x->group].axes[k]]);
    json_end_arr(j);
    json_key(j, "bytes"); json_int(j, rt_coll_bytes(prog, x));
    json_end_obj(j);
  }
  json_end_arr(j);
  json_end_obj(j);
  arena_free(&a);
}

/* ---- memory ---- */

void report_memory_largest(strbuf *b, const sim_memory *m, arena *a) {
  struct { const char *name; double bytes; } c[] = {
    {"params", m->params}, {"optimizer", m->optimizer}, {"activations", m->activations}, {"gradients alive", m->grads_live},
    {"collective buffers", m->collective}, {"inputs", m->inputs}, {"outputs", m->outputs},
    {"fragmentation", m->block - m->activations - m->grads_live - m->collective},
  };
  int n = sizeof c / sizeof c[0];
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (c[j].bytes > c[i].bytes) { __typeof__(c[0]) t = c[i]; c[i] = c[j]; c[j] = t; }
  int k = 0;
  for (int i = 0; i < n; i++)
    if (c[i].bytes > 0 && k < 4) sb_printf(b, "%s%s %s", k++ ? ", " : "", c[i].name, report_bytes(a, c[i].bytes));
}

/* ---- the simulator ---- */

void report_sim_json(json *j, const sim_result *r, const sim_profile *prof) {
  json_obj(j);
  json_key(j, "device"); json_str(j, prof->name);
  json_key(j, "memory");
  json_obj(j);
  json_key(j, "params"); json_num(j, r->mem.params);
  json_key(j, "grads"); json_num(j, r->mem.grads);
  json_key(j, "optimizer"); json_num(j, r->mem.optimizer);
  json_key(j, "activations"); json_num(j, r->mem.activations);
  json_key(j, "collective_buffers"); json_num(j, r->mem.collective);
  json_key(j, "inputs"); json_num(j, r->mem.inputs);
  json_key(j, "outputs"); json_num(j, r->mem.outputs);
  json_key(j, "grads_live"); json_num(j, r->mem.grads_live);
  json_key(j, "block"); json_num(j, r->mem.block);
  json_key(j, "peak"); json_num(j, r->mem.peak);
  json_key(j, "capacity"); json_num(j, prof->memory);
  json_end_obj(j);
  json_key(j, "time");
  json_obj(j);
  json_key(j, "compute"); json_num(j, r->compute);
  json_key(j, "communication"); json_num(j, r->communication);
  json_key(j, "total"); json_num(j, r->total);
  json_end_obj(j);
  if (r->stages) {
    json_key(j, "pipeline");
    json_obj(j);
    json_key(j, "stages"); json_int(j, r->stages);
    json_key(j, "microbatches"); json_int(j, r->microbatches);
    json_key(j, "bubble"); json_num(j, r->bubble);
    json_key(j, "chunks"); json_int(j, r->chunks);
    json_key(j, "ideal_bubble"); json_num(j, sim_ideal_bubble(r));
    json_key(j, "transfers"); json_int(j, r->p2p_count);
    json_key(j, "transfer_bytes"); json_num(j, r->p2p_bytes);
    json_key(j, "busy"); json_arr(j);
    for (int s = 0; s < r->stages; s++) json_num(j, r->stage[s].busy);
    json_end_arr(j);
    json_key(j, "peak"); json_arr(j);
    for (int s = 0; s < r->stages; s++) json_num(j, r->stage[s].peak);
    json_end_arr(j);
    json_end_obj(j);
  }
  json_key(j, "collectives");
  json_obj(j);
  for (int q = 0; q < SIM_NCOLL; q++) {
    json_key(j, rt_op_name((rt_op)(RT_ALL_REDUCE + q)));
    json_obj(j);
    json_key(j, "count"); json_int(j, r->coll_count[q]);
    json_key(j, "bytes"); json_num(j, r->coll_bytes[q]);
    json_key(j, "seconds"); json_num(j, r->coll_seconds[q]);
    json_end_obj(j);
  }
  json_end_obj(j);
  json_key(j, "kinds");
  json_obj(j);
  for (int k = 0; k < r->nkinds; k++) { json_key(j, r->kinds[k].name); json_num(j, r->kinds[k].seconds); }
  json_end_obj(j);
  json_key(j, "flops"); json_num(j, r->flops);
  json_end_obj(j);
}

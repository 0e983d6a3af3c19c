/*
** sim.c: memory and time of one device's program on a profile.
*/
#include "interp/sim/sim.h"
#include "util/mem.h"
#include "interp/shard/layout.h"
#include "lang/tac.h"
#include "runtime/kern_attn.h"
#include "runtime/kern_ring.h"
#include "runtime/mesh.h"
#include "runtime/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- links ---- */

int sim_links_for_mesh(arena *a, diag *d, const sim_profile *prof, int n, const int64_t *sizes, const char *const *names,
                       const char *spec, sim_opts *o) {
  return sim_links_at(a, d, prof, n, sizes, names, spec, LOC_NONE, o);
}

int sim_links_at(arena *a, diag *d, const sim_profile *prof, int n, const int64_t *sizes, const char *const *names,
                 const char *spec, loc spec_at, sim_opts *o) {
  for (int i = 0; i < RT_MAXRANK; i++) o->link_of_axis[i] = -1;
  if (prof->nlinks) {                /* from the minor axis: a node's worth on the first link */
    int64_t devices = 1;
    for (int i = n - 1; i >= 0; i--) {
      devices *= sizes[i];
      o->link_of_axis[i] = !prof->node || devices <= prof->node ? 0 : prof->nlinks - 1;
    }
  }
  if (!spec) return 0;
  const diag_src *src = diag_src_piece(a, "--links", spec, strlen(spec), spec_at);
  tac_file *f = tac_parse_option(a, d, src, TAC_OPT_ARGS);
  if (!f) return -1;
  const tac_decl *x = &f->decls[0];
  for (int k = 0; k < x->nargs; k++) {
    const tac_arg *g = &x->args[k];
    int axis = -1;
    for (int i = 0; i < n; i++) if (names[i] && !strcmp(names[i], g->key)) axis = i;
    if (axis < 0) {
      strbuf b;
      sb_init(&b);
      for (int i = 0; i < n; i++) sb_printf(&b, "%s%s", i ? ", " : "", names[i]);
      diag_error(d, (loc){src, g->off}, "no mesh axis '%s' (the mesh has %s)", g->key, n ? sb_str(&b) : "none: one device");
      sb_free(&b);
      return -1;
    }
    if (g->val.kind != TAC_VNAME) return diag_error(d, (loc){src, g->val.off}, "'%s' takes the name of a link of the profile", g->key);
    int link = -1;
    for (int i = 0; i < prof->nlinks; i++) if (!strcmp(prof->links[i].name, g->val.text)) link = i;
    if (link < 0) {
      strbuf b;
      sb_init(&b);
      for (int i = 0; i < prof->nlinks; i++) sb_printf(&b, "%s%s", i ? ", " : "", prof->links[i].name);
      diag_error(d, (loc){src, g->val.off}, "profile '%s' has no link '%s' (it has %s)", prof->name, g->val.text, prof->nlinks ? sb_str(&b) : "none");
      sb_free(&b);
      return -1;
    }
    o->link_of_axis[axis] = link;
  }
  return 0;
}

int sim_map_links(arena *a, diag *d, const sim_profile *prof, const rt_prog *p, const char *spec, sim_opts *o) {
  return sim_links_for_mesh(a, d, prof, p->mesh_rank, p->mesh, (const char *const *)p->axis_names, spec, o);
}

/* ---- time ---- */

static double buf_bytes(const rt_prog *p, int b) { return (double)rt_buf_bytes(p, b); }

static sim_dt dt_of(rt_dtype t) { return t == RT_BF16 ? SIM_BF16 : t == RT_F16 ? SIM_F16 : SIM_F32; }

double sim_coll_seconds(const sim_opts *o, rt_op op, uint32_t axes, int64_t n, double full) {
  if (n <= 1) return 0;
  int kind = op - RT_ALL_REDUCE;
  double bw = INFINITY, lat = 0;
  for (int i = 0; i < RT_MAXRANK; i++) {   /* the slowest of its axes' links */
    if (!((axes >> i) & 1)) continue;
    int li = o->link_of_axis[i];
    if (li < 0) return NAN;
    const sim_link *k = &o->prof->links[li];
    double b = k->kind_bandwidth[kind] > 0 ? k->kind_bandwidth[kind] : k->bandwidth;
    double l = k->kind_latency[kind] > 0 ? k->kind_latency[kind] : k->latency;
    if (b < bw) bw = b;
    if (l > lat) lat = l;
  }
  double steps = (double)(n - 1), share = (double)(n - 1) / (double)n;
  if (op == RT_ALL_REDUCE) { steps *= 2; share *= 2; }   /* reduce-scatter, then all-gather */
  return steps * lat + share * full / bw;
}

/* bytes from one device to another over group g: the latency and bandwidth
   of the slowest link its axes map to (NaN: an axis with no link) */
static double transfer_seconds(const rt_prog *p, int g, double bytes, const sim_opts *o) {
  const rt_group *gr = &p->groups[g];
  double bw = INFINITY, lat = 0;
  for (int a = 0; a < gr->naxes; a++) {
    int li = o->link_of_axis[gr->axes[a]];
    if (li < 0) return NAN;
    const sim_link *k = &o->prof->links[li];
    if (k->bandwidth < bw) bw = k->bandwidth;
    if (k->latency > lat) lat = k->latency;
  }
  return lat + bytes / bw;
}

static double collective_seconds(const rt_prog *p, const rt_instr *x, const sim_opts *o) {
  const rt_group *g = &p->groups[x->group];
  uint32_t axes = 0;
  for (int i = 0; i < g->naxes; i++) axes |= 1u << g->axes[i];
  double full;
  switch (x->op) {                  /* the bytes of the whole, as the ring algorithms count them */
  case RT_ALL_GATHER: full = buf_bytes(p, x->out); break;
  case RT_ALL_REDUCE: full = buf_bytes(p, x->out); break;
  default: full = buf_bytes(p, x->in[0]); break;
  }
  return sim_coll_seconds(o, (rt_op)x->op, axes, rt_mesh_group_size(p, x->group), full);
}

double sim_gemm_seconds(const sim_opts *o, double flops, double batch, sim_dt dt) {
  const sim_profile *pr = o->prof;
  if (dt == SIM_F32 && o->tf32 && pr->flops[SIM_TF32] > 0) dt = SIM_TF32;
  double peak = pr->flops[dt] > 0 ? pr->flops[dt] : pr->flops[SIM_F32];
  if (batch < 1) batch = 1;
  /* a batch runs as separate GEMMs: each at the efficiency of its size */
  return pr->launch + flops / (peak * sim_gemm_efficiency(pr, flops / batch));
}

double sim_attention_flops(double bh, double s, double dk, int causal, int grad) {
  double f = 4.0 * bh * s * s * dk;
  if (causal) f *= 0.5;
  return grad ? 2.5 * f : f;
}

/* the block GEMMs of bh slices that compute `scores` scores each in
** `calls` calls: 2 dk FLOPs a score per GEMM over it */
static double block_gemms(const sim_opts *o, double bh, double dk, int grad, double scores, double calls, sim_dt dt) {
  return sim_gemm_seconds(o, bh * 2.0 * dk * scores * (grad ? 5 : 2), bh * calls, dt);
}

double sim_attention_gemm_seconds(const sim_opts *o, double bh, double s, double dk, int causal, int grad, sim_dt dt) {
  double scores, calls;
  rt_attention_blocks((int64_t)s, causal, grad, &scores, &calls);
  return block_gemms(o, bh, dk, grad, scores, calls, dt);
}

double sim_attention_seconds(const sim_opts *o, double bh, double s, double dk, int causal, int grad, sim_dt dt) {
  const double *cost = o->prof->op_cost[grad ? RT_ATTENTION_GRAD : RT_ATTENTION];
  if (!(cost[1] > 0)) return sim_gemm_seconds(o, sim_attention_flops(bh, s, dk, causal, grad), bh, dt);
  double scores, calls;
  rt_attention_blocks((int64_t)s, causal, grad, &scores, &calls);
  return block_gemms(o, bh, dk, grad, scores, calls, dt) + sim_kernel_seconds(o->prof, cost, bh * scores, bh * calls);
}

/* a projection's loss by chunks: each chunk's three GEMMs and the
** gradient's row pass over its logits, as the unfused instructions cost */
static double xent_proj_seconds(const rt_instr *x, const sim_opts *o) {
  double t = o->prof->launch, rows = (double)x->outer, R = (double)x->inner, V = (double)x->n, d = (double)x->k;
  for (double r0 = 0; r0 < rows; r0 += R) {
    double nr = rows - r0 < R ? rows - r0 : R, flops = 2 * nr * V * d;
    t += 3 * sim_gemm_seconds(o, flops, 1, SIM_F32);
    double kt = sim_kernel_seconds(o->prof, o->prof->op_cost[RT_XENT_GRAD], nr * V, nr);
    t += kt > 0 ? kt : 2 * 4 * nr * V / o->prof->bandwidth;
  }
  return t;
}

/* fused elementwise steps: their inputs read and their result written
** once, and what each step's kernel takes beyond moving its own operands
** (a transcendental's arithmetic) */
static double fused_seconds(const rt_prog *p, const rt_instr *x, const sim_opts *o) {
  const sim_profile *pr = o->prof;
  const rt_fused *fu = x->data;
  double elems = 1, bytes = buf_bytes(p, x->out), work = 0;
  for (int d = 0; d < x->rank; d++) elems *= (double)x->shape[d];   /* (a reduction's output is smaller) */
  for (int k = 0; k < x->nin; k++) bytes += buf_bytes(p, x->in[k]);
  for (int j = 0; fu && j < fu->nsteps; j++) {
    int fn = fu->step[j].fn, ar = rt_ewfn_arity((rt_ewfn)fn);
    double kt = fn < RT_NEWFN ? sim_kernel_seconds(pr, pr->ew_cost[fn], elems, 0) : 0;
    double moved = (double)(ar + 1) * 4 * elems / pr->bandwidth;
    if (kt > moved) work += kt - moved;
  }
  return pr->launch + bytes / pr->bandwidth + work;
}

/* The scores a ring attention step computes on the device of its group
** that computes the most (the causal mask skips blocks, the more on some
** devices than others unless the sequence is dealt zig-zag): the devices
** wait for each other at every step, at the next transfer. */
static double ring_scores(const rt_prog *p, const rt_instr *x) {
  if (x->group < 0 || x->group >= p->ngroups) return (double)x->outer * (double)x->m * (double)x->n;
  double most = 0;
  for (int q = 0, P = rt_mesh_group_size(p, x->group); q < P; q++) {
    rt_instr placed;
    if (rt_mesh_ring_block(p, x, q, &placed) < 0) return (double)x->outer * (double)x->m * (double)x->n;
    double s = (double)rt_attn_block_scores(&placed);
    if (s > most) most = s;
  }
  return most;
}

double sim_instr_seconds(const rt_prog *p, int i, const sim_opts *o) {
  const rt_instr *x = &p->instrs[i];
  const sim_profile *pr = o->prof;
  /* a transfer: between pipeline stages the stages' timelines cost it (sim_stages); around a ring (context
     parallelism) each device receives as it sends, and the receive costs the bytes over the group's link */
  if (x->op == RT_SEND || (x->op == RT_RECV && !(x->mode & RT_P2P_RING))) return pr->launch;
  if (x->op == RT_RECV) return pr->launch + transfer_seconds(p, x->group, buf_bytes(p, x->out), o);
  if (x->op == RT_ATTN_BLOCK || x->op == RT_ATTN_BLOCK_GRAD) {   /* its GEMMs: 2 forward, 4 for the gradient */
    double flops = (x->op == RT_ATTN_BLOCK ? 4.0 : 8.0) * ring_scores(p, x) * (double)x->k;
    return sim_gemm_seconds(o, flops, (double)x->outer * (x->op == RT_ATTN_BLOCK ? 2 : 4), SIM_F32);
  }
  if (rt_is_collective((rt_op)x->op)) return pr->launch + collective_seconds(p, x, o);
  if (x->op == RT_GEMM) {
    double flops = 2.0 * (double)(x->batch > 1 ? x->batch : 1) * (double)x->m * (double)x->n * (double)x->k;
    return sim_gemm_seconds(o, flops, x->batch, dt_of(p->bufs[x->out].dtype));
  }
  if (x->op == RT_ATTENTION || x->op == RT_ATTENTION_GRAD)    /* block GEMMs, no [s, s] buffer */
    return sim_attention_seconds(o, (double)x->outer, (double)x->m, (double)x->k, x->fn, x->op == RT_ATTENTION_GRAD,
                                 dt_of(p->bufs[x->out].dtype));
  if (x->op == RT_XENT_PROJ) return xent_proj_seconds(x, o);
  if (x->op == RT_FUSED) return fused_seconds(p, x, o);
  double kt = sim_kernel_seconds(pr, x->op == RT_EW ? pr->ew_cost[x->fn] : pr->op_cost[x->op], rt_instr_elems(p, x), rt_instr_rows(x));
  if (kt > 0) return pr->launch + kt;
  double bytes = buf_bytes(p, x->out);
  if (x->op == RT_GATHER)         /* the windows it reads, not the whole operand */
    return pr->launch + (2 * bytes + buf_bytes(p, x->in[1])) / pr->bandwidth;
  if (x->op == RT_SCATTER)        /* the operand copied, each update read and its place read and written */
    return pr->launch + (2 * bytes + buf_bytes(p, x->in[1]) + 3 * buf_bytes(p, x->in[2])) / pr->bandwidth;
  for (int k = 0; k < RT_MAXIN; k++) bytes += buf_bytes(p, x->in[k]);
  for (int k = 0; k < RT_MAXIN; k++)             /* inputs written too: an update's state, read and written back */
    if (rt_instr_writes_in(x, k)) bytes += buf_bytes(p, x->in[k]);
  return pr->launch + bytes / pr->bandwidth;
}

/* ---- memory ---- */

static double local_bytes(const sh_plan *plan, const ir_value *v) {
  ir_shape s = v->shape;
  if (plan) shard_local(plan, v->id, &s);
  return (double)ir_nelem(&s) * (double)ir_dtype_size(v->dtype);
}

enum { CAT_ACT, CAT_GRAD, CAT_COLL };

/* Memory of device program p (of a pipeline: one stage's, its buffers those the stage holds). */
static void memory(const ir_graph *g, const sh_plan *plan, const rt_prog *p, const lower_result *lr, int stage, sim_memory *m) {
  memset(m, 0, sizeof *m);
  int nb = p->nbufs;
  int *val = mem_alloc(sizeof(int) * (size_t)(nb + 1));
  for (int b = 0; b < nb; b++) val[b] = -1;
  for (int v = 0; v < g->nvals && v < lr->nvals; v++)
    if (lr->buf_of[v] >= 0 && (val[lr->buf_of[v]] < 0 || g->vals[v]->kind != IR_OP)) val[lr->buf_of[v]] = v;
  for (int b = 0; b < nb; b++) {
    if (p->bufs[b].kind == RT_BUF_TEMP || !rt_stage_holds(p, stage, b)) continue;
    double by = buf_bytes(p, b);
    if (p->bufs[b].kind == RT_BUF_OUTPUT) { m->outputs += by; continue; }
    const ir_value *v = val[b] >= 0 ? g->vals[val[b]] : NULL;
    if (v && v->kind == IR_PARAM) m->params += by;
    else if (v && v->kind == IR_STATE) m->optimizer += by;
    else m->inputs += by;
  }
  for (int v = 0; v < g->nvals; v++)
    if (g->vals[v]->role == ROLE_GRAD && (v >= lr->nvals || lr->buf_of[v] < 0 || rt_stage_holds(p, stage, lr->buf_of[v])))
      m->grads += local_bytes(plan, g->vals[v]);
  rt_memplan mp;
  rt_memplan_make(p, &mp);
  m->block = (double)mp.block;
  m->peak_at = mp.peak_at;
  m->peak = m->params + m->optimizer + m->inputs + m->outputs + m->block;
  if (mp.peak_at >= 0) {
    char *coll = mem_calloc((size_t)nb + 1, 1);
    for (int i = 0; i < p->ninstrs; i++) {
      const rt_instr *x = &p->instrs[i];
      if (rt_is_collective((rt_op)x->op) || x->op == RT_SHARD_SLICE) coll[x->out] = 1;
    }
    char *seen = mem_calloc((size_t)nb + 1, 1);    /* a place shared in place counts once */
    for (int b = 0; b < nb; b++) {
      if (p->bufs[b].kind != RT_BUF_TEMP || mp.first_write[b] < 0 || mp.first_write[b] > mp.peak_at || mp.last_use[b] < mp.peak_at) continue;
      if (seen[mp.share[b]]++) continue;
      double by = (double)rt_memplan_size(p, b);
      if (val[b] >= 0 && g->vals[val[b]]->role == ROLE_GRAD) m->grads_live += by;
      else if (coll[b] && val[b] < 0) m->collective += by;
      else m->activations += by;
    }
    free(seen);
    free(coll);
  }
  rt_memplan_free(&mp);
  free(val);
}

/* ---- the whole program ---- */

static int by_seconds(const void *a, const void *b) {
  double x = ((const sim_kind *)a)->seconds, y = ((const sim_kind *)b)->seconds;
  return x > y ? -1 : x < y;
}

/* ---- a pipeline's stages ---- */

double sim_ideal_bubble(const sim_result *r) {
  double P = r->stages, V = r->chunks > 1 ? r->chunks : 1, M = r->microbatches;
  if (r->zero_bubble) return (P - 1) / (3 * M + P - 1);   /* forward, backward and weights' gradients alike */
  return (P - 1) / (V * M + P - 1);
}


/* Each stage runs its list in order, compute on one stream and (with
   overlap) its collectives on another; a send costs its launch and its
   bytes arrive a transfer later; a receive waits for them. Stages take
   turns, each running until a receive whose send has not run yet. */
static int sim_stages(const ir_graph *g, const sh_plan *plan, const rt_prog *p, const lower_result *lr, const sim_opts *o,
                      sim_result *r, diag *d) {
  int P = (int)p->mesh[p->stage_axis], ni = p->ninstrs, nb = p->nbufs;
  r->stages = P;
  r->stage = mem_calloc((size_t)P, sizeof *r->stage);
  if (plan && plan->pipe.micro >= 0) r->microbatches = (int)plan->mesh.size[plan->pipe.micro];
  else r->microbatches = 1;
  r->chunks = plan && plan->pipe.chunks > 1 ? plan->pipe.chunks : 1;
  r->zero_bubble = plan && plan->pipe.order == SH_ZB;
  int64_t ntag = 0;
  for (int i = 0; i < ni; i++)
    if (p->instrs[i].op == RT_SEND && !(p->instrs[i].mode & RT_P2P_RING) && p->instrs[i].off >= ntag) ntag = p->instrs[i].off + 1;
  double *arrive = mem_alloc(sizeof *arrive * (size_t)(ntag + 1));
  for (int64_t t = 0; t < ntag; t++) arrive[t] = -1;
  double *ready = mem_calloc((size_t)nb * (size_t)P + 1, sizeof *ready);
  double *comp = mem_calloc((size_t)P, sizeof(double)), *comm = mem_calloc((size_t)P, sizeof(double));
  int *pos = mem_calloc((size_t)P, sizeof(int)), rc = 0;
  double end = 0;
  for (int moved = 1; moved && rc == 0;) {
    moved = 0;
    for (int s = 0; s < P && rc == 0; s++) {
      double *rd = ready + (size_t)s * (size_t)nb;
      for (; pos[s] < ni; pos[s]++) {
        const rt_instr *x = &p->instrs[pos[s]];
        if (!rt_stage_runs(x, s)) continue;
        /* (a ring's transfers, within a stage, cost as the ring's: sim_instr_seconds) */
        int p2p = (x->op == RT_SEND || x->op == RT_RECV) && !(x->mode & RT_P2P_RING);
        if (p2p && x->op == RT_RECV && (x->off >= ntag || arrive[x->off] < 0)) break;   /* its send has not run yet */
        double t = p2p ? o->prof->launch : r->seconds[pos[s]];
        int coll = rt_is_collective((rt_op)x->op) && o->overlap;
        double start = coll ? comm[s] : comp[s];
        for (int k = 0; k < RT_MAXIN; k++) if (x->in[k] >= 0 && rd[x->in[k]] > start) start = rd[x->in[k]];
        if (p2p && x->op == RT_RECV && arrive[x->off] > start) start = arrive[x->off];
        double fin = start + t;
        if (p2p && x->op == RT_SEND) {
          double tt = transfer_seconds(p, x->group, (double)rt_coll_bytes(p, x), o);
          if (isnan(tt)) { rc = -1; break; }
          arrive[x->off] = fin + tt;
          r->p2p_seconds += tt;
          r->p2p_bytes += (double)rt_coll_bytes(p, x);
          r->p2p_count++;
        }
        if (coll) comm[s] = fin; else comp[s] = fin;
        rd[x->out] = fin;
        struct sim_stage *st = &r->stage[s];
        st->busy += t;
        if (rt_is_collective((rt_op)x->op)) st->communication += t; else st->compute += t;
        if (fin > end) end = fin;
        moved = 1;
      }
    }
  }
  for (int s = 0; s < P && rc == 0; s++)
    for (; pos[s] < ni; pos[s]++)
      if (rt_stage_runs(&p->instrs[pos[s]], s)) {
        rc = diag_error(d, LOC_NONE, "internal error: stage %d waits for a transfer no stage sends", s);
        break;
      }
  if (rc < 0 && !d->nerrors)
    rc = diag_error(d, LOC_NONE, "the stages' transfers run over axis '%s', which no link of profile '%s' serves; map it with --links %s=LINK",
                    p->axis_names[p->stage_axis], o->prof->name, p->axis_names[p->stage_axis]);
  free(arrive); free(ready); free(comp); free(comm); free(pos);
  if (rc < 0) return -1;
  int busiest = 0;
  for (int s = 0; s < P; s++) {
    rt_prog q;
    rt_prog_copy_stage(p, s, &q);
    sim_memory m;
    memory(g, plan, &q, lr, s, &m);
    rt_prog_free(&q);
    r->stage[s].peak = m.peak;
    if (m.peak > r->mem.peak) r->mem = m;
    if (r->stage[s].busy > r->stage[busiest].busy) busiest = s;
  }
  r->total = end;
  r->compute = r->stage[busiest].compute;
  r->communication = r->stage[busiest].communication;
  r->bubble = end > 0 ? (end - r->stage[busiest].busy) / end : 0;
  return 0;
}

int sim_run(const ir_graph *g, const sh_plan *plan, const rt_prog *p, const lower_result *lr, const sim_opts *o, sim_result *r, diag *d) {
  memset(r, 0, sizeof *r);
  int staged = p->stage_axis >= 0 && p->stage_axis < p->mesh_rank;
  if (!staged) memory(g, plan, p, lr, -1, &r->mem);
  int ni = p->ninstrs;
  r->seconds = mem_calloc((size_t)ni + 1, sizeof *r->seconds);
  r->kinds = mem_calloc((size_t)ni + 1, sizeof *r->kinds);
  double *ready = mem_calloc((size_t)p->nbufs + 1, sizeof *ready);
  double comp_free = 0, comm_free = 0, end = 0;
  for (int i = 0; i < ni; i++) {
    const rt_instr *x = &p->instrs[i];
    double t = sim_instr_seconds(p, i, o);
    if (isnan(t)) {
      free(ready);
      sim_result_free(r);
      const rt_group *gr = &p->groups[x->group];
      return diag_error(d, LOC_NONE, "the %s of '%s' runs over axis '%s', which no link of profile '%s' serves; map it with --links %s=LINK",
                        rt_op_name((rt_op)x->op), p->bufs[x->out].name, p->axis_names[gr->axes[0]], o->prof->name, p->axis_names[gr->axes[0]]);
    }
    r->seconds[i] = t;
    int coll = rt_is_collective((rt_op)x->op);
    if (staged) {            /* (counted by stage below) */
      if (coll && x->op != RT_SEND && x->op != RT_RECV) {
        int q = x->op - RT_ALL_REDUCE;
        r->coll_seconds[q] += t;
        r->coll_bytes[q] += (double)rt_coll_bytes(p, x);
        r->coll_count[q]++;
      }
    } else if (x->op == RT_SEND || x->op == RT_RECV) {   /* a ring's transfers (context parallelism) */
      r->communication += t;
      if (x->op == RT_RECV) { r->p2p_seconds += t; r->p2p_bytes += (double)rt_coll_bytes(p, x); r->p2p_count++; }
    } else if (coll) {
      int q = x->op - RT_ALL_REDUCE;
      r->communication += t;
      r->coll_seconds[q] += t;
      r->coll_bytes[q] += (double)rt_coll_bytes(p, x);
      r->coll_count[q]++;
    } else {
      r->compute += t;
      if (x->op == RT_GEMM) r->flops += 2.0 * (double)(x->batch > 1 ? x->batch : 1) * (double)x->m * (double)x->n * (double)x->k;
      if (x->op == RT_XENT_PROJ) r->flops += 3 * 2.0 * (double)x->outer * (double)x->n * (double)x->k;   /* its three GEMMs */
    }
    /* the overlapped schedule: compute in order on one stream, collectives in order on another */
    double start = coll ? comm_free : comp_free;
    for (int k = 0; k < RT_MAXIN; k++) if (x->in[k] >= 0 && ready[x->in[k]] > start) start = ready[x->in[k]];
    double fin = start + t;
    if (coll) comm_free = fin; else comp_free = fin;
    ready[x->out] = fin;
    if (fin > end) end = fin;
    const char *kind = x->op == RT_EW ? rt_ewfn_name((rt_ewfn)x->fn) : rt_op_name((rt_op)x->op);
    int k;
    for (k = 0; k < r->nkinds; k++) if (r->kinds[k].name == kind) break;
    if (k == r->nkinds) r->kinds[r->nkinds++] = (sim_kind){kind, 0, 0};
    r->kinds[k].seconds += t;
    r->kinds[k].count++;
    /* the slowest few, slowest first */
    int at;
    if (r->ntop < SIM_TOP) at = r->ntop++;
    else if (t > r->seconds[r->top[SIM_TOP - 1]]) at = SIM_TOP - 1;
    else continue;
    r->top[at] = i;
    for (; at > 0 && r->seconds[r->top[at - 1]] < t; at--) { int s = r->top[at - 1]; r->top[at - 1] = r->top[at]; r->top[at] = s; }
  }
  free(ready);
  r->total = o->overlap ? end : r->compute + r->communication;
  mem_sort(r->kinds, (size_t)r->nkinds, sizeof *r->kinds, by_seconds);
  if (staged && sim_stages(g, plan, p, lr, o, r, d) < 0) { sim_result_free(r); return -1; }
  return 0;
}

void sim_result_free(sim_result *r) {
  free(r->seconds);
  free(r->kinds);
  free(r->stage);
  r->seconds = NULL;
  r->kinds = NULL;
  r->stage = NULL;
}

int sim_plan(const ir_graph *g, const sh_plan *plan, const sim_profile *prof, const char *links, int overlap, int tf32,
             arena *a, sim_result *r, diag *d) {
  rt_prog p;
  lower_result lr;
  memset(r, 0, sizeof *r);
  if (lower_program(g, plan, &p, &lr, d) < 0) return -1;
  sim_opts o = {prof, overlap, tf32, {0}};
  int rc = sim_map_links(a, d, prof, &p, links, &o);
  if (rc == 0) rc = sim_run(g, plan, &p, &lr, &o, r, d);
  lower_result_free(&lr);
  rt_prog_free(&p);
  return rc;
}

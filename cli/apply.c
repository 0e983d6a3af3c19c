/*
** apply.c: carve apply: what a tactic file does to a program. By default a
** summary that fits a screen (the mesh, the tactics applied, how many
** values of each kind are split, the conflicts, the memory the executor
** plans for one device and the collectives by kind); --verbose lists every
** value's sharding, each conflict and each collective; --json everything.
*/
#include "cli/cli.h"
#include "interp/drive/drive.h"
#include "interp/lower/lower.h"
#include "interp/report/report.h"
#include "runtime/plan.h"

#include <string.h>

/* the schedule's tactics, in order, each with the values it split (itself
** or by propagation): "bp (40 values), mp (96 values)" */
static void summary_tactics(strbuf *b, const session *s) {
  const sh_plan *p = s->plan;
  char *seen = mem_calloc((size_t)p->g->nvals + 1, 1);
  int any = 0;
  for (int d = 0; s->tac && d < s->tac->ndecls; d++) {
    const tac_decl *x = &s->tac->decls[d];
    if (x->kind != TAC_SCHEDULE) continue;
    for (int k = 0; k < x->nnames; k++) {
      memset(seen, 0, (size_t)p->g->nvals + 1);
      int n = 0;
      for (int i = 0; i < p->ndec; i++) {
        const sh_decision *e = &p->dec[i];
        if (e->replicate || !e->tactic || strcmp(e->tactic, x->names[k]) || e->value < 0 || seen[e->value]) continue;
        seen[e->value] = 1;
        n++;
      }
      sb_printf(b, "%s %s (split %d value%s)", any ? "," : "tactics applied, in order:", x->names[k], n, n == 1 ? "" : "s");
      any = 1;
    }
  }
  sb_puts(b, any ? "\n" : "tactics applied: none\n");
  free(seen);
}

/* how many values of each kind, how many of them split, and the partial
** sums passed on */
static void summary_values(strbuf *b, const sh_plan *p) {
  static const char *const kinds[] = {"param", "input", "grad", "state", "value"};
  static const char *const words[] = {"params", "inputs", "gradients", "optimizer states", "other values"};
  int total[5] = {0}, split[5] = {0}, all = 0, all_split = 0, partial = 0;
  for (int v = 0; v < p->g->nvals; v++) {
    const ir_value *x = p->g->vals[v];
    if (x->kind == IR_CONST) continue;
    int k = 0;
    while (k < 4 && strcmp(report_kind(x), kinds[k])) k++;
    int cut = 0;
    for (int i = 0; i < x->shape.rank; i++) cut |= p->lay[v].dim[i].n > 0;
    total[k]++;
    split[k] += cut;
    all++;
    all_split += cut;
    partial += shard_keeps_partial(p, v) != 0;
  }
  sb_printf(b, "values: %d, %d split:", all, all_split);
  int first = 1;
  for (int k = 0; k < 5; k++) {
    if (!total[k]) continue;
    sb_printf(b, "%s %d of %d %s", first ? "" : ",", split[k], total[k], words[k]);
    first = 0;
  }
  if (partial) sb_printf(b, "; %d passed on as partial sums", partial);
  sb_putc(b, '\n');
}

/* "memory per device: 1.2 MiB planned (...)": what the executor would hold */
static void summary_memory(strbuf *b, const rt_prog *prog, arena *a) {
  rt_memplan m;
  rt_memplan_make(prog, &m);
  double kept = 0;
  for (int i = 0; i < prog->nbufs; i++)
    if (prog->bufs[i].kind != RT_BUF_TEMP) kept += (double)prog->bufs[i].nelem * (double)rt_dtype_size(prog->bufs[i].dtype);
  sb_printf(b, "memory per device: %s as the executor plans it (%s of parameters, state, inputs and outputs; %s of temporaries); "
            "carve simulate says more\n", report_bytes(a, kept + (double)m.block), report_bytes(a, kept), report_bytes(a, (double)m.block));
  rt_memplan_free(&m);
}

/* "total: 8 all_reduce (1.5 MiB), ...": as the listing ends */
static void summary_collectives(strbuf *b, const rt_prog *prog, arena *a) {
  int count[RT_NOPS] = {0}, any = 0;
  double bytes[RT_NOPS] = {0};
  for (int i = 0; i < prog->ninstrs; i++) {
    const rt_instr *x = &prog->instrs[i];
    if (!rt_is_collective((rt_op)x->op)) continue;
    count[x->op]++;
    bytes[x->op] += (double)rt_coll_bytes(prog, x);
  }
  sb_puts(b, "collectives per step and device, by kind (--verbose lists each):\ntotal:");
  for (int op = 0; op < RT_NOPS; op++)
    if (count[op]) {
      sb_printf(b, "%s %d %s (%s)", any ? "," : "", count[op], rt_op_name((rt_op)op), report_bytes(a, bytes[op]));
      any = 1;
    }
  sb_printf(b, "%s\n", any ? "" : " no collectives");
}

static void summary(strbuf *b, const session *s, const rt_prog *prog) {
  arena a;
  arena_init(&a);
  const sh_plan *p = s->plan;
  report_mesh(b, p);
  summary_tactics(b, s);
  summary_values(b, p);
  int from_tactics = 0;
  for (int i = 0; i < p->ncon; i++) from_tactics += p->con[i].from_tactic;
  if (p->ncon)
    sb_printf(b, "conflicts: %d (%d refused tactic statement%s, %d place%s where propagation stopped); --verbose lists them, "
              "carve explain MODEL TACTICS VALUE says why\n", p->ncon, from_tactics, from_tactics == 1 ? "" : "s",
              p->ncon - from_tactics, p->ncon - from_tactics == 1 ? "" : "s");
  else
    sb_puts(b, "conflicts: 0\n");
  summary_memory(b, prog, &a);
  summary_collectives(b, prog, &a);
  arena_free(&a);
}

int cli_apply(const cli_opts *o) {
  session s;
  lower_opts lo = {0};
  if (cli_lower_opts(o, &lo) < 0 || cli_load(&s, o) < 0) return 1;
  rt_prog prog;
  lower_result lr;
  if (lower_program_opts(s.g, s.plan, &lo, &prog, &lr, &s.diag) < 0) { cli_report(&s.diag); session_free(&s); return 1; }
  if (o->json) {
    json j;
    json_init(&j);
    report_apply_json(&j, s.plan, &prog);
    puts(sb_str(&j.out));
    json_free(&j);
  } else if (o->verbose) {
    strbuf b;
    sb_init(&b);
    report_mesh(&b, s.plan);
    sb_putc(&b, '\n');
    report_values(&b, s.plan, NULL);
    sb_putc(&b, '\n');
    report_conflicts(&b, s.plan);
    sb_putc(&b, '\n');
    report_collectives(&b, s.g, &prog);
    fputs(sb_str(&b), stdout);
    sb_free(&b);
  } else {
    strbuf b;
    sb_init(&b);
    summary(&b, &s, &prog);
    fputs(sb_str(&b), stdout);
    sb_free(&b);
  }
  if (s.diag.nwarnings) cli_report(&s.diag);
  char why[1024];
  if (drive_memory_short(&prog, -1, why, sizeof why)) fprintf(stderr, "carve: warning: %s\n", why);
  lower_result_free(&lr);
  rt_prog_free(&prog);
  session_free(&s);
  return 0;
}

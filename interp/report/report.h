/*
** report.h: a plan as text for people and JSON for tools: every value's
** sharding and local shape, the conflicts, the collectives of the lowered
** program with their bytes, and why a value is split as it is. The
** command line (apply, explain) and the REPL print these.
*/
#ifndef interp_report_report_h
#define interp_report_report_h

#include "interp/shard/shard.h"
#include "interp/sim/sim.h"
#include "runtime/prog.h"
#include "util/json.h"
#include "util/strbuf.h"

/* "input", "param", "grad", "state" or "value": what selectors call v. */
const char *report_kind(const ir_value *v);
/* 1536 -> "1.5 KiB" into a */
const char *report_bytes(arena *a, double bytes);

/* "mesh: batch=2, model=2  (4 devices)" */
void report_mesh(strbuf *b, const sh_plan *p);
/* A pipelined plan's stages: where each ends, its forward ops and params. */
void report_stages(strbuf *b, const sh_plan *p);
/* One line a value (all values when only is NULL, else those it marks). */
void report_values(strbuf *b, const sh_plan *p, const char *only);
void report_conflicts(strbuf *b, const sh_plan *p);
/* Each collective of the program with its value, axes and bytes, then the totals by kind. */
void report_collectives(strbuf *b, const ir_graph *g, const rt_prog *prog);
/* The JSON of `carve apply --json` (DESIGN.md "Command line"). */
void report_apply_json(json *j, const sh_plan *p, const rt_prog *prog);
/* Why value v has its sharding: the chain of decisions from a tactic
** statement through the ops propagation went through, what kept it whole,
** its partial sum, its conflicts; and for each op that reads it in another
** layout, the collectives that take it there and why (explain.c). */
void report_explain(strbuf *b, const sh_plan *p, int v);

/* The largest categories of a simulated memory, largest first, at most
** four: "activations 1.6 TiB, optimizer 2.6 GiB, ..." (over-capacity messages). */
void report_memory_largest(strbuf *b, const sim_memory *m, arena *a);
/* A simulated step as one JSON object (carve simulate --json, and each plan
** of carve diff --json): device, memory by category, time, collectives by
** kind, seconds by kind of instruction, FLOPs. */
void report_sim_json(json *j, const sim_result *r, const sim_profile *prof);

#endif

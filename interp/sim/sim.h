/*
** sim.h: the simulator. It costs one device's lowered program (every
** device runs the same instructions on pieces of the same shapes) on a
** device profile: memory from the runtime's own liveness plan, time per
** instruction (GEMMs by FLOPs at the profile's peak times an efficiency
** that depends on their size, the rest by bytes moved at memory bandwidth
** or a measured cost per element, collectives by an alpha-beta model of
** their algorithm on the link their mesh axes map to), summed in program
** order or, with overlap, with collectives running beside independent
** compute.
*/
#ifndef interp_sim_sim_h
#define interp_sim_sim_h

#include "interp/ir/ir.h"
#include "interp/lower/lower.h"
#include "interp/shard/shard.h"
#include "interp/sim/profile.h"

typedef struct sim_opts {
  const sim_profile *prof;
  int overlap;                   /* collectives overlap independent compute */
  int tf32;                      /* f32 GEMMs at the TF32 peak */
  int link_of_axis[RT_MAXRANK];  /* mesh axis -> index into prof->links (-1: none) */
} sim_opts;

/* Memory, bytes per device. params, optimizer, inputs, outputs: always
** held; grads: every parameter gradient as laid out (its closed form);
** activations and collective buffers: temporaries of each kind alive at
** the plan's fullest instruction; peak: what the runtime holds at its
** peak (leaves, outputs, and the planned block of temporaries). */
typedef struct sim_memory {
  double params, optimizer, inputs, outputs, grads;
  double activations, collective, grads_live;    /* alive at the fullest instruction */
  double block, peak;
  int peak_at;                   /* that instruction (-1: none) */
} sim_memory;

#define SIM_TOP 10

typedef struct sim_kind { const char *name; double seconds; int count; } sim_kind;

typedef struct sim_result {
  sim_memory mem;
  double compute, communication, total;   /* seconds; total < their sum only with overlap */
  double flops;                           /* of the GEMMs on one device */
  double coll_seconds[SIM_NCOLL], coll_bytes[SIM_NCOLL];
  int coll_count[SIM_NCOLL];
  sim_kind *kinds;                        /* by kind of instruction, largest first (malloc'd) */
  int nkinds;
  int top[SIM_TOP];                       /* the slowest instructions, slowest first */
  int ntop;
  double *seconds;                        /* per instruction (malloc'd) */
  /* a pipelined program: each stage's own timeline, a receive waiting for
     its send's bytes; compute, communication and memory are the busiest
     stage's (the one whose work takes longest), its idle time the bubble */
  int stages, microbatches, chunks;       /* chunks: parts of the program a stage holds (interleaved) */
  int zero_bubble;                        /* the ZB-H1 schedule */
  double p2p_seconds, p2p_bytes;          /* the transfers between stages (each counted once) */
  int p2p_count;
  double bubble;                          /* the busiest stage's idle share of the step */
  struct sim_stage { double busy, compute, communication, peak; } *stage;   /* per stage (malloc'd) */
} sim_result;

/* Map mesh axes to links: each axis named in spec ("batch=inter,
** model=intra", may be NULL) to that link; the others from the minor end:
** while the devices so far fit in a node (profile 'node'), the first link,
** else the last. -1 with a located error (--links:1:7: ...). */
int sim_map_links(arena *a, diag *d, const sim_profile *prof, const rt_prog *p, const char *spec, sim_opts *o);
/* The same for a mesh given as n axes of sizes with names (before lowering). */
int sim_links_for_mesh(arena *a, diag *d, const sim_profile *prof, int n, const int64_t *sizes, const char *const *names,
                       const char *spec, sim_opts *o);
/* The same for a spec written in a file at spec_at (auto's links = "..."):
** its errors point there (LOC_NONE: --links). */
int sim_links_at(arena *a, diag *d, const sim_profile *prof, int n, const int64_t *sizes, const char *const *names,
                 const char *spec, loc spec_at, sim_opts *o);

/* The idle share of a pipeline's step on equal stages: (p - 1) / (v m + p - 1)
** for p stages of v parts each and m microbatches (v = 1: GPipe and 1F1B). */
double sim_ideal_bubble(const sim_result *r);

/* Cost program p (lowered from g under plan, NULL for one device; lr maps
** values to its buffers). -1 with
** an error in d (a collective whose axes have no link). */
int sim_run(const ir_graph *g, const sh_plan *plan, const rt_prog *p, const lower_result *lr, const sim_opts *o, sim_result *r, diag *d);
void sim_result_free(sim_result *r);

/* Lower g under plan (NULL: one device), map its axes to links (spec as
** for sim_map_links) and cost it. The program is lowered afresh each call. */
int sim_plan(const ir_graph *g, const sh_plan *plan, const sim_profile *prof, const char *links, int overlap, int tf32,
             arena *a, sim_result *r, diag *d);

/* The cost formulas, shared with the search's estimator (interp/sim/estimate.c):
** a collective op (RT_ALL_REDUCE ...) over n devices of the mesh axes in
** axes moving full bytes of the whole (NAN: an axis with no link), without
** the launch; a GEMM of flops in batch separate products, with it. */
double sim_coll_seconds(const sim_opts *o, rt_op op, uint32_t axes, int64_t n, double full);
double sim_gemm_seconds(const sim_opts *o, double flops, double batch, sim_dt dt);
/* FLOPs of fused attention over bh slices of s queries and keys of width
** dk: 4 bh s^2 dk forward, half that causal (blocks above the diagonal are
** skipped); the gradient does five GEMMs' worth where the forward does
** two (the scores again, dP, dv, dq, dk), 2.5 times the forward. */
double sim_attention_flops(double bh, double s, double dk, int causal, int grad);
/* Seconds of fused attention over bh slices. A profile that measured
** carve's CPU kernel (kernel attention / attention_grad lines, as `carve
** calibrate` writes them) costs it by the kernel's blocks: their GEMMs'
** FLOPs at the efficiency of one block's, plus the kernel line over the
** scores (its elements) and the block GEMM calls (its rows). Any other
** profile: sim_attention_flops as one batch of bh GEMMs. */
double sim_attention_seconds(const sim_opts *o, double bh, double s, double dk, int causal, int grad, sim_dt dt);
/* The block GEMMs' part of that, with the launch: what calibration takes
** from a measured time to leave the rest to the kernel line. */
double sim_attention_gemm_seconds(const sim_opts *o, double bh, double s, double dk, int causal, int grad, sim_dt dt);

/* Seconds of one instruction on the profile (its collective's link from o). */
double sim_instr_seconds(const rt_prog *p, int i, const sim_opts *o);

#endif

/*
** drive.h: running a lowered program on the devices of a run. One drive
** per device: it lowers the program for its plan, binds each leaf's piece
** (from safetensors files or the deterministic init), runs steps, and does
** what needs every device: bring a tensor together on device 0, save,
** check against the one-device program. Devices meet only through the
** rt_comm (the program's collectives) and the rt_world (the rest), so the
** same code runs over MPI ranks, threads in one process, or one device.
** The command line, the REPL, calibrate and the search call this.
*/
#ifndef interp_drive_drive_h
#define interp_drive_drive_h

#include "interp/ir/ir.h"
#include "interp/lower/lower.h"
#include "interp/shard/shard.h"
#include "runtime/backend.h"
#include "runtime/exec.h"
#include "runtime/init.h"
#include "runtime/world.h"

/* A leaf of a program that comes without its IR (a program file): what
** binds it before a run. */
typedef struct drive_leaf {
  const char *name;         /* NULL: not a leaf */
  ir_kind kind;             /* IR_INPUT (from --data), IR_PARAM or IR_STATE (from --params) */
  rt_init init;             /* the deterministic init when no file gives it */
} drive_leaf;

typedef struct drive {
  const ir_graph *g;        /* NULL for an adopted program */
  const drive_leaf *leaves; /* an adopted program's leaves, by value (NULL with g) */
  const sh_plan *plan;      /* NULL: the unpartitioned program */
  rt_prog prog;
  lower_result lr;
  int lowered;
  int own_stage;            /* an adopted pipelined program: prog is this stage's copy, freed here */
  rt_exec *e;
  const rt_backend *be;     /* where it runs (the reference of --check runs there too) */
  const rt_comm *comm;      /* NULL on one device */
  const rt_world *w;
  int watch;                /* look for the first non-finite value (set before drive_start) */
  const char *differs;      /* device 0, after drive_gather: the first value whose copies on two devices differ */
} drive;

/* Lower g under plan (NULL: one device). -1 with an error in d. */
int  drive_lower(drive *r, const ir_graph *g, const sh_plan *plan, diag *d);
/* The same with lowering options (keep every value for bisection...). */
int  drive_lower_opts(drive *r, const ir_graph *g, const sh_plan *plan, const lower_opts *o, diag *d);
/* Run a program lowered elsewhere (read from a file): prog and lr are
** borrowed and must outlive the drive; leaves[value] says how to bind each
** leaf. drive_start, drive_gather and drive_free then work as for a
** lowered program; drive_step and drive_check need the IR and refuse. */
void drive_adopt(drive *r, const rt_prog *prog, const lower_result *lr, const drive_leaf *leaves);
/* Make the executor and give every leaf this device's piece: from the
** safetensors files params and data (either may be NULL), or the
** deterministic init. Collective over w only in that every device calls it. */
int  drive_start(drive *r, const rt_backend *be, const rt_comm *comm, const rt_world *w,
                 const char *params, const char *data, char *err, size_t errlen);
/* One execution of the program (a training step carries its new values
** into the next). *loss is the first output: a scalar as it is, a tensor
** as the sum of its elements put back together on device 0 (0 elsewhere).
** Collective when the output is a tensor. */
int  drive_step(drive *r, double *loss, char *err, size_t errlen);
/* Value id's full tensor on device 0 (malloc'd, global shape, its dtype);
** NULL elsewhere. A value the program keeps as a partial sum is summed
** over its partial axes. Collective. */
int  drive_gather(drive *r, int id, void **full, char *err, size_t errlen);
/* Value id, an f32 scalar every device holds whole (a dynamic loss scale),
** as this device has it now. Not collective. */
int  drive_scalar(drive *r, int id, double *v, char *err, size_t errlen);
/* The program's k-th output, whole, as one JSON object on device 0 (into
** *line, malloc'd; NULL elsewhere): {"name", "shape", "dtype", "values"}
** with the values flat in row-major order, each float with the digits that
** read back to the same value, NaN and infinities as "nan", "inf", "-inf",
** i1 as true/false. Collective. */
int  drive_output_json(drive *r, int k, char **line, char *err, size_t errlen);
/* The program's checks after a run: every output named check.* that is an
** i1 scalar (StableHLO's check.expect_*, see interp/front/hlo_basic.c) must
** be true. -1 with the first failing one's place in err. */
int  drive_checks(drive *r, char *err, size_t errlen);
/* Write the parameters and optimizer state as safetensors from device 0
** (atomically), under their own names. Collective. */
int  drive_save(drive *r, const char *path, char *err, size_t errlen);
/* What drive_check compared, on device 0: the first output of each step
** (a loss, or a tensor's sum), and after the last step every output, every
** parameter and optimizer state, and every argument an imported step
** carries a new value into; the largest relative error and where. */
typedef struct drive_compared {
  double worst;             /* the largest relative error (inf for a NaN) */
  const char *worst_at;     /* the value it was found in; NULL: a step's first output */
  int copies_differ;        /* worst_at's copies on two devices differ (worst is inf) */
  int steps, outputs, params, states, inputs;
  int64_t excused;          /* parameters' elements left out (drive_excuse), over excused_params */
  int excused_params;
  const char *excused_at;   /* the first such parameter */
  double excuse_bound;      /* the drive_excuse's bound */
  int within_noise;         /* values over the tolerance but within DRIVE_NOISE times the precision's own error */
  double noisiest, noisiest_floor;   /* the largest error of those, and the one-device run's own there */
  const char *noisiest_at;
  char no_twin[160];        /* why a bf16 or f16 run's f32 twin did not run ("": it ran, or none was due) */
} drive_compared;
/* A run computing in bf16 or f16 (drive_excuse given): the one-device
** program runs in f32 beside it too (lower_opts.widen), which measures the
** precision's own error in each value (the one-device run's distance from
** the f32 one). A value over the tolerance passes when its error is at most
** DRIVE_NOISE times that: the precision alone moves it that far, as it
** does two runs that sum in different orders.
** Adam moves every element by about lr a step, whatever its gradient's
** size: where a gradient is within the rounding of zero, two runs step
** opposite ways. A parameter over the tolerance is compared again without
** its elements whose first moments (the state adam.m.NAME) in the
** one-device run and in f32 differed by more than the tolerance after a
** step (there the gradient's sign was rounding) and that differ by more
** than the tolerance and at most `bound` (the most two runs' Adam steps can
** part an element; 0: not Adam). */
#define DRIVE_NOISE 4
typedef struct drive_excuse { double bound, tol; } drive_excuse;
/* Run the unpartitioned program on device 0 (on the same kind of backend,
** so that what differs is the partitioning, not the kernels) for as many
** steps, from the same files, and compare (drive_compared): each step's
** first output by its relative error, each tensor by ||a - b|| / ||b||.
** Collective. */
int  drive_check(drive *r, const char *params, const char *data, const double *losses, long steps,
                 const drive_excuse *ex /* NULL: no f32 twin */, drive_compared *c, char *err, size_t errlen);
/* After step `step` (1-based) with first output `loss`: -1 with a message
** when the loss is NaN or infinite, naming the first value of this
** device's step that held a NaN or +Inf (watched from drive_start on when
** r->watch is set) and its place in the model. Not collective: the caller
** agrees on it. */
int  drive_finite(drive *r, long step, double loss, char *err, size_t errlen);
/* Bind every leaf again from the same files (or the init) and run steps
** 1..steps again watching every output for the first NaN or +Inf: after a
** non-finite loss of an unwatched run (a watch costs a pass over every
** output, so runs watch only when something went wrong), drive_finite then
** names the value. The same numbers as the first time (the same program on
** the same inputs). Collective, as drive_step. */
int  drive_replay(drive *r, long steps, const char *params, const char *data, char *err, size_t errlen);
/* 1 with a message naming the largest buffers when one device's program
** needs more than this machine's memory (need < 0: as the executor would
** place it), else 0. run refuses before allocating; apply warns. */
int  drive_memory_short(const rt_prog *p, double need, char *err, size_t errlen);
void drive_free(drive *r);

/* Time per step by kind of instruction (elementwise ones by function),
** largest first; the executor must have been profiling (rt_exec_profile). */
typedef struct drive_prof { const char *kind; double seconds; int count; } drive_prof;
int  drive_profile(const drive *r, long steps, drive_prof **rows, double *total);

#endif

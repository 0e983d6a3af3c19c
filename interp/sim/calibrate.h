/*
** calibrate.h: measuring this machine into a device profile. Every
** device of the run measures at once (so that the figures are those of a
** device sharing its node as it does in a run), and the slowest device's
** figures are kept: GEMM throughput at several sizes, memory bandwidth,
** the fixed cost of an instruction, each kernel's cost per element at two
** sizes, and, over several devices, each collective's latency and
** bandwidth fitted from several message sizes.
*/
#ifndef interp_sim_calibrate_h
#define interp_sim_calibrate_h

#include "interp/sim/profile.h"
#include "runtime/exec.h"
#include "runtime/world.h"

typedef struct cal_opts {
  const rt_world *w;             /* the devices taking part */
  /* An rt_comm for a program whose mesh is the world on one axis, or NULL
  ** (then collectives are not measured). */
  const rt_comm *(*comm_for)(void *ctx, const rt_prog *p, char *err, size_t errlen);
  void *ctx;
  double seconds;                /* time to spend on each measurement (0: 0.05 s) */
  void (*progress)(void *ctx, const char *step);   /* may be NULL */
} cal_opts;

/* Measure into p (names and comments are the caller's). 0, or -1 with err. */
int sim_calibrate(const cal_opts *o, sim_profile *p, char *err, size_t errlen);

#endif

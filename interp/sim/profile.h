/*
** profile.h: device profiles: what the simulator knows of a device and
** the links between devices. Read from profiles/NAME.profile (vendors'
** published figures, cited in each file) or written by `carve calibrate`
** from measurements of this machine.
**
**   device     "NVIDIA H100 SXM5 80GB"
**   memory     80GB                          # bytes per device
**   bandwidth  3.35e12                       # memory, bytes/s
**   flops      f32 = 67e12  tf32 = 494.7e12  bf16 = 989.4e12  f16 = 989.4e12
**   gemm       1e6 = 0.05  1e9 = 0.5  1e12 = 0.8   # fraction of peak by a GEMM's FLOPs
**   launch     4us                           # fixed cost of one instruction
**   kernel     gelu 150ns 0.4ns 1.2ns      # fixed, then per element at the two kernel_sizes (else bytes / bandwidth)
**   kernel     softmax 0 0.8ns 0.9ns 20ns  # row-wise kernels add a cost per row
**   kernel     attention 0 0.9ns 0.9ns 360ns # attention: per score, per block GEMM call (sim.h)
**   kernel_sizes 65536 4194304
**   node       8                             # devices a fast link joins
**   link       intra  bandwidth = 450e9  latency = 3us   all_reduce.bandwidth = ...
**   link       inter  bandwidth = 50e9   latency = 10us
*/
#ifndef interp_sim_profile_h
#define interp_sim_profile_h

#include "runtime/prog.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/strbuf.h"

typedef enum sim_dt { SIM_F32, SIM_TF32, SIM_BF16, SIM_F16, SIM_NDT } sim_dt;   /* ORDER sim_dt */

/* the four collective kinds, in RT_OP order from RT_ALL_REDUCE */
#define SIM_NCOLL 4

#define SIM_MAXLINKS 8
#define SIM_MAXPOINTS 32

typedef struct sim_link {
  const char *name;
  double bandwidth;              /* bytes/s one way, per device */
  double latency;                /* seconds a step */
  double kind_bandwidth[SIM_NCOLL], kind_latency[SIM_NCOLL];   /* measured per kind (0: as above) */
} sim_link;

typedef struct sim_profile {
  const char *name;              /* the file's name without .profile */
  const char *device;            /* what it describes */
  double flops[SIM_NDT];         /* peak per dtype (0: not given) */
  double memory;                 /* bytes per device */
  double bandwidth;              /* memory bytes/s */
  double launch;                 /* seconds of fixed cost per instruction */
  int ngemm;                     /* GEMM efficiency by FLOPs, increasing x */
  double gemm_flops[SIM_MAXPOINTS], gemm_eff[SIM_MAXPOINTS];
  /* by instruction and by elementwise function (0: by bytes at the
  ** bandwidth): a fixed cost in seconds, seconds per element at
  ** kernel_small and kernel_large elements (interpolated in log(elements)
  ** between them), and for row-wise kernels seconds per row */
  double op_cost[RT_NOPS][4], ew_cost[RT_NEWFN][4];
  double kernel_small, kernel_large;
  int node;                      /* devices one fast link joins (0: all) */
  sim_link links[SIM_MAXLINKS];
  int nlinks;
} sim_profile;

const char *sim_dt_name(sim_dt t);

/* Read src into p. -1 with a located error. */
int sim_profile_parse(arena *a, diag *d, const diag_src *src, sim_profile *p);
/* Find and read a profile: a path (with a '/' or ending in .profile), or a
** name in dir, a ':'-separated list of folders searched in order
** ("h100-sxm": DIR/h100-sxm.profile; "local": the one `carve calibrate`
** wrote). -1 with an error naming the folders and the profiles there. */
int sim_profile_load(arena *a, diag *d, const char *what, const char *dir, sim_profile *p);
/* The same for a profile named in a file (auto's device = NAME): a profile
** that cannot be found or opened is an error at `at`, where it is named. */
int sim_profile_load_at(arena *a, diag *d, const char *what, loc at, const char *dir, sim_profile *p);
/* The text of p, as sim_profile_parse reads it back (comments for people
** first, from header). */
void sim_profile_write(strbuf *b, const sim_profile *p, const char *header);
/* The folders of the shipped profiles, ':'-separated: util/datadir.h's
** search ($CARVE_PROFILES, $CARVE_PATH, the installed or source folder). */
const char *sim_profile_dir(void);
/* Where `carve calibrate` writes by default and "local" is read from. */
const char *sim_profile_local_path(arena *a);

/* GEMM efficiency at this many FLOPs: interpolated in log(FLOPs). */
double sim_gemm_efficiency(const sim_profile *p, double flops);
/* Seconds of a kernel over elems elements in rows rows (0: not measured). */
double sim_kernel_seconds(const sim_profile *p, const double cost[4], double elems, double rows);
/* The link named name, or NULL. */
const sim_link *sim_link_named(const sim_profile *p, const char *name);

#endif

/*
** calibrate.c: carve calibrate: measure this machine into a device
** profile. Under mpirun every rank measures at once and the collectives
** between them are timed too; rank 0 writes the file.
*/
#include "cli/cli.h"
#include "interp/sim/calibrate.h"
#include "runtime/comm_mpi.h"
#include "runtime/mpi_util.h"
#include "util/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct cal_ctx { rt_mpi *mpi; int rank, tty; double t0; } cal_ctx;

static const rt_comm *comm_for(void *ctx, const rt_prog *p, char *err, size_t errlen) {
  cal_ctx *c = ctx;
  if (c->mpi) rt_mpi_free(c->mpi);
  c->mpi = rt_mpi_new(p, err, errlen);
  return c->mpi ? rt_mpi_comm(c->mpi) : NULL;
}

static void progress(void *ctx, const char *step) {
  cal_ctx *c = ctx;
  if (c->rank == 0 && c->tty) fprintf(stderr, "\rcalibrating: %-24s", step);
}

/* mkdir -p of the folders above path */
static int make_dirs(const char *path, char *err, size_t errlen) {
  char *dir = strdup(path);
  for (char *q = dir + 1; *q; q++)
    if (*q == '/') {
      *q = 0;
      if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        diag_errbuf(err, errlen, "cannot make the folder '%s': %s", dir, strerror(errno));
        free(dir);
        return -1;
      }
      *q = '/';
    }
  free(dir);
  return 0;
}

static const char *cpu_name(char *buf, size_t n) {
  snprintf(buf, n, "this machine");
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[512];
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "model name", 10)) {
      char *v = strchr(line, ':');
      if (v) { v += 1 + strspn(v + 1, " \t"); v[strcspn(v, "\n")] = 0; snprintf(buf, n, "%s", v); }
      break;
    }
  if (f) fclose(f);
  return buf;
}

int cli_calibrate(const cli_opts *o) {
  const char *launched = getenv("OMPI_COMM_WORLD_SIZE");
  int distributed = launched && atoi(launched) > 1;
  rt_world world = *rt_world_single();
  if (distributed) {
    if (rt_mpi_init(NULL, NULL) < 0) { fprintf(stderr, "carve: error: MPI did not start\n"); return 1; }
    world = rt_mpi_world();
  }
  arena a;
  arena_init(&a);
  const char *out = o->out ? o->out : sim_profile_local_path(&a);
  char err[512] = "", agreed[700] = "";
  int rc = 0;
  if (world.rank == 0 && make_dirs(out, err, sizeof err) < 0) rc = -1;
  if (rc == 0 && world.rank == 0 && cli_check_outputs(o, err, sizeof err) < 0) rc = -1;
  if (rc == 0 && world.rank == 0 && access(out, F_OK) == 0 && access(out, W_OK) != 0)
    rc = diag_errbuf(err, sizeof err, "cannot write '%s': %s", out, strerror(errno));
  if (world.agree(world.impl, rc, err, agreed, sizeof agreed) < 0) {
    if (world.rank == 0) fprintf(stderr, "carve: error: %s\n", agreed);
    arena_free(&a);
    if (distributed) rt_mpi_finalize();
    return 1;
  }
  cal_ctx ctx = {NULL, world.rank, isatty(2), 0};
  cal_opts co = {&world, distributed ? comm_for : NULL, &ctx, 0.03, progress};
  sim_profile prof;
  memset(&prof, 0, sizeof prof);
  rc = sim_calibrate(&co, &prof, err, sizeof err);
  if (ctx.mpi) rt_mpi_free(ctx.mpi);
  if (world.rank == 0 && ctx.tty) fprintf(stderr, "\r%40s\r", "");
  if (rc == 0 && world.rank == 0) {
    char cpu[256], date[64], dev[512];
    time_t tm = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&tm));
    const char *threads = getenv("OPENBLAS_NUM_THREADS");
    snprintf(dev, sizeof dev, "%s, %s BLAS thread%s, %d rank%s", cpu_name(cpu, sizeof cpu), threads ? threads : "default",
             threads && !strcmp(threads, "1") ? "" : "s", world.size, world.size == 1 ? "" : "s");
    prof.device = dev;
    prof.memory = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    strbuf b;
    sb_init(&b);
    char head[1024];
    snprintf(head, sizeof head,
             "# This machine, measured by 'carve calibrate' on %s:\n"
             "# %d rank%s measuring at once (a device as it runs beside the others), %s BLAS thread%s each.\n"
             "# flops and gemm: cblas_sgemm through carve's executor, shapes (t,t,t) (t,4t,t) (4t,t,t) (t,t,4t) for\n"
             "# t 16..1024; bandwidth: a 64 MiB copy; launch: the executor's cost per instruction; kernel: seconds\n"
             "# per element at the two kernel_sizes (attention: per score, and per block GEMM call beyond the\n"
             "# block GEMMs' FLOPs);%s memory: the machine's RAM.\n",
             date, world.size, world.size == 1 ? "" : "s", threads ? threads : "default", threads && !strcmp(threads, "1") ? "" : "s",
             world.size > 1 ? " link intra: each collective's latency and bandwidth fitted over 4 KiB..16 MiB;" : "");
    sim_profile_write(&b, &prof, head);
    if (file_write_atomic(out, sb_str(&b), b.n) < 0) rc = diag_errbuf(err, sizeof err, "cannot write '%s': %s", out, strerror(errno));
    sb_free(&b);
    if (rc == 0) printf("wrote %s: f32 GEMM peak %.1f GFLOP/s, memory bandwidth %.1f GB/s, %.0f ns an instruction%s\n", out,
                        prof.flops[SIM_F32] / 1e9, prof.bandwidth / 1e9, prof.launch * 1e9,
                        world.size > 1 ? ", collectives over the ranks" : "");
  }
  if (world.agree(world.impl, rc, err, agreed, sizeof agreed) < 0 && world.rank == 0) fprintf(stderr, "carve: error: %s\n", agreed);
  arena_free(&a);
  if (distributed) rt_mpi_finalize();
  return rc ? 1 : 0;
}

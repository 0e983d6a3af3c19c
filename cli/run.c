/*
** run.c: carve run: execute a program for N steps on one device, or on
** every rank of an mpirun with a tactic file. The work is the drive
** library's; here are the options, MPI's start and end, and the output.
*/
#include "cli/cli.h"
#include "util/mem.h"
#include "interp/drive/agree.h"
#include "interp/drive/bisect.h"
#include "interp/drive/drive.h"
#include "interp/drive/session.h"
#include "interp/train/train.h"
#include "runtime/comm_mpi.h"
#include "runtime/comm_nccl.h"
#include "runtime/cuda.h"
#include "runtime/dtype.h"
#include "runtime/mpi_util.h"
#include "util/file.h"
#include "util/json.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* --profile: this rank's time per step by kind of instruction; on stderr
** with --json so that stdout stays one JSON object. */
static void print_profile(const drive *r, long steps, int nranks, int to_stderr, double setup) {
  drive_prof *rows;
  double all;
  int n = drive_profile(r, steps, &rows, &all);
  FILE *f = to_stderr ? stderr : stdout;
  fprintf(f, "set-up%s before the first step: %.3f s (reading, partitioning, lowering, memory, initial values)\n",
          nranks > 1 ? " of rank 0" : "", setup);
  fprintf(f, "profile%s, per step (the first step left out when there are more): %.3f ms in instructions\n",
          nranks > 1 ? " of rank 0" : "", 1e3 * all);
  for (int k = 0; k < n; k++)
    fprintf(f, "  %-18s %9.3f ms  %5.1f %%  (%d instruction%s)\n", rows[k].kind, 1e3 * rows[k].seconds,
            all > 0 ? 100 * rows[k].seconds / all : 0, rows[k].count, rows[k].count == 1 ? "" : "s");
  free(rows);
}

/* Are the model's float parameters and inputs all f64 (and is there one)?
** Then --check and --bisect default to BISECT_TOLERANCE_F64. (The
** optimizer's state follows the parameters' type.) */
static int all_f64(const ir_graph *g) {
  int n = 0;
  for (int i = 0; i < g->nvals; i++) {
    const ir_value *v = g->vals[i];
    if ((v->kind != IR_PARAM && v->kind != IR_INPUT) || !ir_dtype_isfloat(v->dtype)) continue;
    if (v->dtype != IR_F64) return 0;
    n++;
  }
  return n > 0;
}

/* "3 losses, 2 outputs and 6 parameters": what --check compared */
static void compared_text(strbuf *sb, const drive_compared *c, const drive *r) {
  const char *first = r->g->vals[r->g->outputs[0]]->shape.rank == 0 ? "loss" : "output sum";
  struct { int n; const char *one, *many; } part[] = {
    {c->steps, first, r->g->vals[r->g->outputs[0]]->shape.rank == 0 ? "losses" : "output sums"},
    {c->outputs, "output tensor", "output tensors"}, {c->params, "parameter", "parameters"},
    {c->states, "optimizer state", "optimizer states"}, {c->inputs, "argument carried from step to step", "arguments carried from step to step"},
  };
  int n = 0, total = 0;
  for (size_t i = 0; i < sizeof part / sizeof part[0]; i++) total += part[i].n > 0;
  for (size_t i = 0; i < sizeof part / sizeof part[0]; i++) {
    if (!part[i].n) continue;
    n++;
    sb_printf(sb, "%s%d %s", n == 1 ? "" : n == total ? " and " : ", ", part[i].n, part[i].n == 1 ? part[i].one : part[i].many);
  }
  if (!total) sb_puts(sb, "nothing");
}

/* The most two runs of Adam can part one element of a parameter in `steps`
** steps (0: not Adam). A step moves it by lr |m| / (sqrt(v) + eps) with m
** and v the bias-corrected averages of the gradients and of their squares,
** weighted w_k and u_k; by Cauchy-Schwarz |m| <= sqrt(v sum w_k^2 / u_k),
** the sum a geometric series in beta1^2 / beta2. */
static double adam_bound(const train_spec *t, long steps) {
  if ((t->kind != TRAIN_ADAM && t->kind != TRAIN_ADAMW) || !(t->beta2 > 0) || !(t->beta2 < 1) || !(t->beta1 < 1)) return 0;
  double b1 = t->beta1, b2 = t->beta2, r = b1 * b1 / b2, sum = 0;
  for (long s = 1; s <= steps; s++) {
    double c1 = 1 - pow(b1, (double)s), geo = fabs(1 - r) < 1e-12 ? (double)s : (1 - pow(r, (double)s)) / (1 - r);
    sum += sqrt((1 - b1) * (1 - b1) / (c1 * c1) * (1 - pow(b2, (double)s)) / (1 - b2) * geo);
  }
  return 2 * t->lr * sum;
}

/* Where the text report goes: stdout, but stderr when --print-outputs
** keeps stdout for its JSON lines. */
static FILE *report_file(const cli_opts *o) { return o->print_outputs && !o->json ? stderr : stdout; }

static void print_results(const cli_opts *o, const drive *r, const double *losses, const double *agg, const drive_compared *cmp, double tol) {
  double check = cmp->worst;
  FILE *out = report_file(o);
  if (o->json) {
    json j;
    json_init(&j);
    json_obj(&j);
    json_key(&j, "losses");
    json_arr(&j);
    for (long st = 0; st < o->steps; st++) json_num(&j, losses[st]);
    json_end_arr(&j);
    json_key(&j, "step_time"); json_num(&j, agg[0]);
    json_key(&j, "peak_memory"); json_int(&j, (int64_t)agg[1]);
    json_key(&j, "ranks"); json_int(&j, r->w->size);
    if (o->check) {
      json_key(&j, "max_rel_error"); json_num(&j, check); json_key(&j, "tolerance"); json_num(&j, tol);
      json_key(&j, "compared");
      json_obj(&j);
      json_key(&j, "steps"); json_int(&j, cmp->steps);
      json_key(&j, "outputs"); json_int(&j, cmp->outputs);
      json_key(&j, "params"); json_int(&j, cmp->params);
      json_key(&j, "states"); json_int(&j, cmp->states);
      json_key(&j, "carried_args"); json_int(&j, cmp->inputs);
      json_end_obj(&j);
      if (cmp->worst_at) { json_key(&j, "worst_at"); json_str(&j, cmp->worst_at); }
      if (cmp->within_noise) {
        json_key(&j, "within_noise"); json_int(&j, cmp->within_noise);
        json_key(&j, "noisiest"); json_num(&j, cmp->noisiest);
        json_key(&j, "noisiest_own_error"); json_num(&j, cmp->noisiest_floor);
      }
      if (cmp->excused) {
        json_key(&j, "excused_elements"); json_int(&j, cmp->excused);
        json_key(&j, "excused_params"); json_int(&j, cmp->excused_params);
      }
    }
    json_end_obj(&j);
    puts(sb_str(&j.out));
    json_free(&j);
  } else {
    fprintf(out, "median step %.4f s, peak memory %.1f MiB per device%s\n", agg[0], agg[1] / (1 << 20),
           r->w->size > 1 ? " (the largest over ranks)" : "");
    if (o->check) {
      strbuf what;
      sb_init(&what);
      compared_text(&what, cmp, r);
      if (cmp->copies_differ)
        fprintf(out, "max relative error against one device: inf: the devices' copies of '%s' differ (compared: %s)\n", cmp->worst_at, sb_str(&what));
      else
        fprintf(out, "max relative error against one device: %.3g%s%s%s (compared: %s; tolerance %.3g: %s)\n", check,
               cmp->worst_at && check > 0 ? ", in '" : "", cmp->worst_at && check > 0 ? cmp->worst_at : "", cmp->worst_at && check > 0 ? "'" : "",
               sb_str(&what), tol, check <= tol ? "within" : "exceeded");
      if (cmp->no_twin[0])
        fprintf(out, "(the same step in f32 did not run, so nothing was measured against the precision's own error: %.*s)\n",
                (int)strcspn(cmp->no_twin, "\n"), cmp->no_twin);
      if (cmp->within_noise)
        fprintf(out, "within the precision's own error: %d value%s over the tolerance, each at most %d times as far from one device as "
                "one device is from the same step in f32 (the largest %.3g, in '%s', where one device is %.3g from f32)\n",
                cmp->within_noise, cmp->within_noise == 1 ? "" : "s", DRIVE_NOISE, cmp->noisiest, cmp->noisiest_at, cmp->noisiest_floor);
      if (cmp->excused)
        fprintf(out, "left out: %lld element%s of %d parameter%s (the first '%s'), each at most %.3g apart: Adam stepped them "
                "opposite ways where rounding decides their gradients' signs (their first moments in this precision and in "
                "f32 on one device differ by more than the tolerance)\n",
                (long long)cmp->excused, cmp->excused == 1 ? "" : "s", cmp->excused_params, cmp->excused_params == 1 ? "" : "s",
                cmp->excused_at, cmp->excuse_bound);
      sb_free(&what);
    }
    if (o->save) fprintf(out, "saved parameters%s to %s\n", r->g->train == TRAIN_ADAM || r->g->train == TRAIN_ADAMW ? " and Adam state" : r->g->train == TRAIN_STEP ? " and state" : "", o->save);
  }
  fflush(out);
}

/* --test-perturb VALUE (tests only): after the run, rank 0's first element
** of VALUE (of the leaf a new value was carried into) made 1% larger, a
** wrong result that --check must report wherever it is. */
static int plant_error(drive *r, const char *name, char *err, size_t errlen) {
  const ir_value *v = ir_lookup(r->g, name);
  if (!v) return diag_errbuf(err, errlen, "--test-perturb: no value '%s'", name);
  int id = v->carry >= 0 ? v->carry : v->id, b = r->lr.buf_of[id];
  if (b < 0 || r->w->rank != 0) return 0;
  rt_dtype t = r->prog.bufs[b].dtype;
  size_t bytes = (size_t)r->prog.bufs[b].nelem * rt_dtype_size(t);
  void *x = mem_alloc(bytes + 1);
  int rc = rt_exec_get(r->e, b, x, bytes, err, errlen);
  if (rc == 0 && bytes) {
    double y = rt_load_f(t, x, 0);
    rt_store_f(t, x, 0, y ? 1.01 * y : 1e-2);
    rc = rt_exec_set(r->e, b, x, bytes, err, errlen);
  }
  free(x);
  return rc;
}

/* --bisect: the step the drive is ready for, every value compared with
** the one-device program's; the report from rank 0, which sets *mismatch
** when a value is over the tolerance. */
static int run_bisect(const cli_opts *o, drive *r, const session *s, double tol, int *mismatch, char *err, size_t errlen) {
  progfile desc;
  progfile_describe(&desc, s->g, s->plan, &r->prog, &r->lr);
  bisect_result res;
  int rc = bisect_run(r, &desc, o->params, o->data, o->steps, tol, &res, err, errlen);
  if (rc == 0 && r->w->rank == 0) {
    cli_bisect_print(o, &res, &desc);
    *mismatch = res.first >= 0;
  }
  if (rc == 0) bisect_free(&res);
  progfile_free(&desc);
  return rc;
}

/* The backend of --device-kind: the CPU, or this rank's GPU (rank i of a
** node on GPU i mod the GPUs there). NULL with err on failure. */
static const rt_backend *make_backend(const cli_opts *o, int distributed, int *ngpus, int *local_size, char *err, size_t errlen) {
  *ngpus = 0;
  *local_size = 1;
  if (!o->device_kind || !strcmp(o->device_kind, "cpu")) return rt_backend_cpu();
  if (strcmp(o->device_kind, "cuda")) {
    diag_errbuf(err, errlen, "--device-kind '%s': use cpu or cuda", o->device_kind);
    return NULL;
  }
  int local_rank = 0;
  if (distributed && rt_mpi_node_rank(&local_rank, local_size) < 0) { diag_errbuf(err, errlen, "cannot tell the ranks of this node apart"); return NULL; }
  rt_cuda_opts co = {0};
  co.allow_tf32 = o->tf32;
  *ngpus = rt_cuda_device_count(&co, err, errlen);
  if (*ngpus < 0) return NULL;
  if (*ngpus == 0) { diag_errbuf(err, errlen, "--device-kind cuda: the CUDA driver sees no GPU"); return NULL; }
  co.device = local_rank % *ngpus;
  return rt_backend_cuda_new(&co, err, errlen);
}

int cli_run(const cli_opts *o) {
  cli_opts ob;
  if (o->bisect) {                   /* the step compared: the last of --steps N, by default the first */
    ob = *o;
    if (ob.steps < 1) ob.steps = 1;
    o = &ob;
  } else if (o->steps < 0 && !o->train) {
    ob = *o;                         /* a program as it stands (a forward program, or a step of */
    ob.steps = 1;                    /* its own): one run, as --bisect does */
    o = &ob;
  }
  if (o->steps < 0) {
    fprintf(stderr, "carve: error: run --train needs --steps N (how many steps to train)\n");
    return 2;
  }
  double tol = cli_tolerance(o, 1);
  if (tol <= 0) return 2;
  lower_opts bucket = {0};
  if (cli_lower_opts(o, &bucket) < 0) return 1;
  if (o->tolerance && !o->check && !o->bisect) {
    fprintf(stderr, "carve: error: --tolerance applies to --check and --bisect; add one of them\n");
    return 2;
  }
  if (o->bisect && (o->save || o->profile)) {
    fprintf(stderr, "carve: error: --bisect compares one step of every value; it takes neither --save nor --profile\n");
    return 2;
  }
  if (o->bisect && o->nfiles < 2) {
    fprintf(stderr, "carve: error: --bisect compares a partitioned run with the one-device program: give a tactic file\n");
    return 2;
  }
  double started = now();
  int distributed = o->nfiles > 1;   /* a tactic file: one MPI rank per device */
  const char *launched = getenv("OMPI_COMM_WORLD_SIZE");
  if (!distributed && launched && atoi(launched) > 1) {
    if (!getenv("OMPI_COMM_WORLD_RANK") || !strcmp(getenv("OMPI_COMM_WORLD_RANK"), "0"))
      fprintf(stderr, "carve: error: without a tactic file the program runs on one device; give a tactic file, or start carve without mpirun\n");
    return 1;
  }
  rt_world world = *rt_world_single();
  if (distributed) {
    if (rt_mpi_init(NULL, NULL) < 0) { fprintf(stderr, "carve: error: MPI did not start\n"); return 1; }
    world = rt_mpi_world();
    /* before anything else collective: ranks given different things stop here, together */
    agree_list given = {0};
    long steps = o->steps;
    agree_file(&given, "model file", o->files[0]);
    agree_file(&given, "tactic file", o->files[1]);
    agree_text(&given, "--model", o->model);
    agree_text(&given, "--train", o->train);
    agree_text(&given, "--mesh", o->mesh);
    agree_bytes(&given, "--steps", &steps, sizeof steps);
    agree_text(&given, "--check", o->check ? "yes" : NULL);
    agree_text(&given, "--tolerance", o->tolerance);
    agree_text(&given, "--bucket", o->bucket);
    agree_header(&given, "--params file (its header)", o->params);
    agree_header(&given, "--data file (its header)", o->data);
    agree_text(&given, "--save", o->save ? "yes" : NULL);
    agree_text(&given, "--allow-nonfinite", o->allow_nonfinite ? "yes" : NULL);
    agree_text(&given, "--device-kind", o->device_kind);
    agree_text(&given, "--tf32", o->tf32 ? "yes" : NULL);
    agree_text(&given, "--profile", o->profile ? "yes" : NULL);
    char why[1200];
    if (agree_check(&world, &given, why, sizeof why) < 0) {
      if (world.rank == 0) fprintf(stderr, "carve: error: %s\n", why);
      rt_mpi_finalize();
      return 1;
    }
  }
  char err[1024] = "", agreed[1200] = "";
  drive r;
  memset(&r, 0, sizeof r);
  r.w = &world;
  session s;
  session_init(&s);
  session_opts so;
  cli_session_opts(o, &so);
  so.tac.ranks = world.size;
  int cuda = o->device_kind && !strcmp(o->device_kind, "cuda");
  if (cuda) so.no_fuse = 1;          /* no CUDA kernels for fused attention and updates yet: */
  int rc = session_load(&s, &so);
  lower_opts lo = {o->bisect, o->drop_collective};   /* --test-drop-collective: tests only */
  lo.no_fused_optim = cuda;          /* the GPU runs the program as written, as checked on an H100: */
  lo.no_fold_adds = lo.no_hoist = lo.no_fold_rows = lo.no_fuse_elementwise = cuda;   /* no folds or moved updates it has not run */
  cli_lower_opts(o, &lo);            /* checked when the command began */
  if (rc == 0) rc = drive_lower_opts(&r, s.g, s.plan, &lo, &s.diag);
  if (world.agree(world.impl, rc, "the model or tactic file did not load", agreed, sizeof agreed) < 0) {
    if (world.rank == 0) cli_report(&s.diag);
    drive_free(&r);
    session_free(&s);
    if (distributed) rt_mpi_finalize();
    return 1;
  }
  if (world.rank == 0 && s.diag.nwarnings) cli_report(&s.diag);   /* loaded, with warnings worth reading */
  if (!o->tolerance && all_f64(s.g)) tol = BISECT_TOLERANCE_F64;
  if (!o->tolerance && ir_computes_low(s.g)) tol = BISECT_TOLERANCE_LOW;
  rt_mpi *mpi = NULL;
  rt_nccl *nccl = NULL;
  const rt_backend *be = NULL;
  double *losses = mem_calloc((size_t)o->steps + 1, sizeof(double));
  double *times = mem_calloc((size_t)o->steps + 1, sizeof(double));
  int status = 0;
  if (distributed) {
    mpi = rt_mpi_new(&r.prog, err, sizeof err);
    if (world.agree(world.impl, mpi ? 0 : -1, err, agreed, sizeof agreed) < 0) goto fail_agreed;
  }
  if (o->tf32 && (!o->device_kind || strcmp(o->device_kind, "cuda"))) {
    if (world.rank == 0) fprintf(stderr, "carve: error: --tf32 applies to --device-kind cuda only\n");
    rc = 2;
    goto done;
  }
  int ngpus, local_size;
  be = make_backend(o, distributed, &ngpus, &local_size, err, sizeof err);
  if (world.agree(world.impl, be ? 0 : -1, err, agreed, sizeof agreed) < 0) goto fail_agreed;
  const rt_comm *comm = mpi ? rt_mpi_comm(mpi) : NULL;
  if (mpi && ngpus > 0) {
    /* NCCL when every rank has a GPU of its own, else through host memory */
    double share[1] = {(double)local_size / (double)ngpus};
    world.max(world.impl, share, 1);
    if (share[0] <= 1) {
      nccl = rt_nccl_new(mpi, be, err, sizeof err);
      if (nccl) comm = rt_nccl_comm(nccl);
      else if (world.rank == 0) fprintf(stderr, "carve: note: NCCL is not used (%s); collectives go through host memory\n", err);
    }
  }
  if (o->save && world.rank == 0) {      /* before hours of training, not after; --params may be replaced (resuming) */
    if (cli_check_outputs(o, err, sizeof err) < 0) status = -1;
  }
  r.watch = 0;                       /* on a non-finite loss the steps are replayed watching (drive_replay) */
  if (status == 0) status = drive_start(&r, be, comm, &world, o->params, o->data, err, sizeof err);
  if (world.agree(world.impl, status, err, agreed, sizeof agreed) < 0) goto fail_agreed;
  double setup = now() - started;
  if (o->profile) rt_exec_profile(r.e);
  if (o->bisect) {
    int mismatch = 0;
    if (run_bisect(o, &r, &s, tol, &mismatch, err, sizeof err) < 0) {
      if (distributed) rt_mpi_fail(err);
      snprintf(agreed, sizeof agreed, "%s", err);
      goto fail_agreed;
    }
    double found[1] = {mismatch};      /* a mismatch is exit 1 on every rank, as rank 0 found it */
    world.max(world.impl, found, 1);
    rc = found[0] > 0;
    goto done;
  }

  int scalar = s.g->vals[s.g->outputs[0]]->shape.rank == 0;
  /* A loss being trained that turns NaN or infinite stops the run; a
  ** forward program's outputs are what they are: a note, once. */
  int trains = s.g->train != TRAIN_NONE, noted = 0;
  /* a dynamic loss scale (optim.c): the state scaler.scale, relative to
  ** where it starts (loss_scale); a change after a step is said */
  const ir_value *scaler = s.train.dynamic ? ir_lookup(s.g, "scaler.scale") : NULL;
  double scale_was = 1, scale_at = s.train.loss_scale;
  if (scaler && drive_scalar(&r, scaler->id, &scale_was, err, sizeof err) < 0) scaler = NULL;
  for (long st = 0; st < o->steps; st++) {
    double t0 = now();
    if (drive_step(&r, &losses[st], err, sizeof err) < 0) {
      if (distributed) rt_mpi_fail(err);
      snprintf(agreed, sizeof agreed, "%s", err);
      goto fail_agreed;
    }
    times[st] = now() - t0;
    if (!trains && !isfinite(losses[st]) && !noted && world.rank == 0) {
      fprintf(stderr, "carve: note: step %ld: the output holds NaN or infinite values (its sum is %g); a forward program "
              "goes on%s\n", st + 1, losses[st], o->print_outputs ? " (--print-outputs writes them as \"nan\", \"inf\", \"-inf\")" : "");
      noted = 1;
    }
    if (trains && !o->allow_nonfinite) {
      int bad = 0;
      double nonfinite[1] = {!isfinite(losses[st])};   /* (a tensor output's sum is on rank 0 only) */
      world.max(world.impl, nonfinite, 1);
      if (nonfinite[0] > 0) {              /* every rank replays, watching, to name the value */
        bad = drive_replay(&r, st + 1, o->params, o->data, err, sizeof err);
        if (bad == 0) bad = drive_finite(&r, st + 1, losses[st], err, sizeof err);
      }
      if (world.agree(world.impl, bad, err, agreed, sizeof agreed) < 0) goto fail_agreed;
    }
    if (!o->json && world.rank == 0) {
      FILE *out = report_file(o);
      fprintf(out, "step %ld  %s %.6f  (%.3f s)\n", st + 1, scalar ? "loss" : "sum of the output", losses[st], times[st]);
      fflush(out);
    }
    double scale_now = scale_was;
    if (scaler && drive_scalar(&r, scaler->id, &scale_now, err, sizeof err) == 0 && scale_now != scale_was) {
      if (world.rank == 0 && scale_now < scale_was)
        fprintf(stderr, "carve: note: step %ld: a gradient was not finite: the step was skipped and the loss scale halved to %g\n",
                st + 1, scale_now * scale_at);
      else if (world.rank == 0)
        fprintf(stderr, "carve: note: step %ld: %d good steps: the loss scale doubled to %g\n", st + 1, LOSS_SCALE_GROWTH,
                scale_now * scale_at);
      scale_was = scale_now;
    }
    if (o->profile && st == 0 && o->steps > 1) rt_exec_profile(r.e);   /* the first step warms up (page faults): leave it out */
  }
  double agg[2] = {0, (double)rt_exec_peak(r.e)};
  if (o->steps > 0) {
    int first = o->steps > 1 ? 1 : 0;
    mem_sort(times + first, (size_t)(o->steps - first), sizeof(double), cmp_double);
    agg[0] = times[first + (o->steps - first) / 2];
  }
  world.max(world.impl, agg, 2);
  if (o->test_perturb) {
    status = plant_error(&r, o->test_perturb, err, sizeof err);
    if (world.agree(world.impl, status, err, agreed, sizeof agreed) < 0) goto fail_agreed;
  }
  drive_compared cmp = {0};
  double check = -1;
  if (o->check) {
    drive_excuse ex = {adam_bound(&s.train, o->steps), tol};
    status = drive_check(&r, o->params, o->data, losses, o->steps, &ex, &cmp, err, sizeof err);
    check = cmp.worst;
    if (status < 0) {
      strbuf why;
      sb_init(&why);
      sb_printf(&why, "--check could not run the one-device program: %s", err);
      snprintf(err, sizeof err, "%s", sb_str(&why));
      sb_free(&why);
    }
    if (world.agree(world.impl, status, err, agreed, sizeof agreed) < 0) goto fail_agreed;
  }
  if (o->save) {
    status = drive_save(&r, o->save, err, sizeof err);
    if (world.agree(world.impl, status, err, agreed, sizeof agreed) < 0) goto fail_agreed;
  }
  if (o->print_outputs)       /* every returned tensor, whole, one JSON line each */
    for (int k = 0; k < s.g->nouts && status == 0; k++) {
      char *line = NULL;
      status = drive_output_json(&r, k, &line, err, sizeof err);
      if (line && !o->json) { puts(line); fflush(stdout); }
      if (line && o->json) fprintf(stderr, "%s\n", line);
      free(line);
    }
  if (world.agree(world.impl, status, err, agreed, sizeof agreed) < 0) goto fail_agreed;
  if (o->steps > 0) {         /* StableHLO's check.expect_* in the program: each must hold */
    status = drive_checks(&r, err, sizeof err);
    if (world.agree(world.impl, status, err, agreed, sizeof agreed) < 0) goto fail_agreed;
  }
  if (world.rank == 0 && o->profile && o->steps > 0) print_profile(&r, o->steps > 1 ? o->steps - 1 : 1, world.size, o->json || o->print_outputs, setup);
  if (world.rank == 0) print_results(o, &r, losses, agg, &cmp, tol);
  rc = 0;
  if (o->check && world.rank == 0 && !(check <= tol)) {    /* NaN fails too */
    if (cmp.copies_differ)
      fprintf(stderr, "carve: error: --check: the devices hold different copies of '%s', which they should hold alike; "
              "run --bisect to find the first value where the partitioned program goes wrong\n", cmp.worst_at);
    else
      fprintf(stderr, "carve: error: --check: the partitioned run differs from the one-device run by %.3g%s%s%s, more than the "
              "tolerance %.3g; look at the tactic file's conflicts (carve apply), run --bisect, or raise --tolerance\n", check,
              cmp.worst_at ? " in '" : "", cmp.worst_at ? cmp.worst_at : "", cmp.worst_at ? "'" : "", tol);
    rc = 1;
  }
  if (o->check) {         /* every rank exits as rank 0 does */
    double worst[1] = {rc};
    world.max(world.impl, worst, 1);
    rc = worst[0] > 0;
  }
  goto done;
fail_agreed:
  if (world.rank == 0) fprintf(stderr, "carve: error: %s\n", agreed);
  rc = 1;
done:
  free(losses);
  free(times);
  rt_exec_free(r.e);
  r.e = NULL;
  rt_nccl_free(nccl);
  if (mpi) rt_mpi_free(mpi);
  drive_free(&r);
  rt_backend_free(be);
  session_free(&s);
  if (distributed) rt_mpi_finalize();
  return rc;
}

/*
** mpi_collectives.c: which way of summing (and gathering, scattering)
** f32 buffers across ranks is fastest on this machine, for the choices
** runtime/comm_mpi.c makes. A standalone MPI program, not part of libcarve:
**
**   mpicc -O2 -std=c11 -o mpi_collectives bench/mpi_collectives.c
**   mpirun -n 2 ./mpi_collectives [max_mib]
**
** For each size it prints the median time per call (the slowest rank's)
** and the "bus" rate bytes / time, so that rates compare across algorithms
** of the same collective. Every algorithm's result is checked.
*/
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

typedef struct bench_ctx {
  MPI_Comm comm;
  float *in, *out, *tmp;
  size_t n;                 /* floats per rank's input */
  MPI_Win win;              /* node-shared window for the shm algorithms */
  float *shm_base;          /* my part of it */
  float **shm_peer;         /* each rank's part, mapped here */
  size_t shm_floats;        /* per rank */
} bench_ctx;

static void die(const char *what, int rc) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, s, &len);
  fprintf(stderr, "rank %d: %s: %s\n", rank, what, s);
  MPI_Abort(MPI_COMM_WORLD, 1);
}
#define CK(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) die(#call, rc_); } while (0)

static void add_into(float *restrict dst, const float *restrict a, const float *restrict b, size_t n) {
  for (size_t i = 0; i < n; i++) dst[i] = a[i] + b[i];
}

static void acc_into(float *restrict dst, const float *restrict b, size_t n) {
  for (size_t i = 0; i < n; i++) dst[i] += b[i];
}

/* ---- all_reduce ---- */

static void ar_mpi(bench_ctx *c) {
  CK(MPI_Allreduce(c->in, c->out, (int)c->n, MPI_FLOAT, MPI_SUM, c->comm));
}

static void ar_rs_ag(bench_ctx *c) {
  size_t chunk = c->n / nranks;
  CK(MPI_Reduce_scatter_block(c->in, c->out + rank * chunk, (int)chunk, MPI_FLOAT, MPI_SUM, c->comm));
  CK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, c->out, (int)chunk, MPI_FLOAT, c->comm));
}

/* P = 2: swap the halves each does not own, sum the owned half, swap results. */
static void ar_pair(bench_ctx *c) {
  size_t h = c->n / 2;
  int peer = 1 - rank;
  float *mine = c->in + rank * h, *theirs = c->in + peer * h;
  CK(MPI_Sendrecv(theirs, (int)h, MPI_FLOAT, peer, 1, c->tmp, (int)h, MPI_FLOAT, peer, 1, c->comm, MPI_STATUS_IGNORE));
  add_into(c->out + rank * h, mine, c->tmp, h);
  CK(MPI_Sendrecv(c->out + rank * h, (int)h, MPI_FLOAT, peer, 2, c->out + peer * h, (int)h, MPI_FLOAT, peer, 2, c->comm,
                  MPI_STATUS_IGNORE));
}

/* P = 2, pipelined: the first swap in 256 KiB pieces, summing piece k while
   piece k+1 travels, so the received data is still in cache when summed. */
static void ar_pair_pipe(bench_ctx *c) {
  size_t h = c->n / 2, piece = 65536;
  int peer = 1 - rank;
  float *mine = c->in + rank * h, *theirs = c->in + peer * h, *res = c->out + rank * h;
  size_t np = (h + piece - 1) / piece;
  MPI_Request rq[4];
  for (size_t k = 0; k <= np; k++) {
    int nr = 0;
    if (k < np) {
      size_t o = k * piece, len = o + piece <= h ? piece : h - o;
      CK(MPI_Irecv(c->tmp + (k & 1) * piece, (int)len, MPI_FLOAT, peer, 3, c->comm, &rq[nr++]));
      CK(MPI_Isend(theirs + o, (int)len, MPI_FLOAT, peer, 3, c->comm, &rq[nr++]));
    }
    if (k > 0) {
      size_t o = (k - 1) * piece, len = o + piece <= h ? piece : h - o;
      add_into(res + o, mine + o, c->tmp + ((k - 1) & 1) * piece, len);
    }
    CK(MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE));
  }
  CK(MPI_Sendrecv(res, (int)h, MPI_FLOAT, peer, 4, c->out + peer * h, (int)h, MPI_FLOAT, peer, 4, c->comm,
                  MPI_STATUS_IGNORE));
}

/* Node-shared memory: each rank puts the slices others own into its window
   part, sums its own slice reading the others' parts directly, publishes it,
   and copies the others' sums out. Two barriers a call. */
static void ar_shm(bench_ctx *c) {
  size_t chunk = c->n / nranks;
  float *stage = c->shm_base, *pub = c->shm_base + c->n;
  for (int q = 0; q < nranks; q++)
    if (q != rank) memcpy(stage + q * chunk, c->in + q * chunk, chunk * sizeof(float));
  CK(MPI_Win_sync(c->win));
  CK(MPI_Barrier(c->comm));
  CK(MPI_Win_sync(c->win));
  float *res = c->out + rank * chunk;
  memcpy(res, c->in + rank * chunk, chunk * sizeof(float));
  for (int q = 0; q < nranks; q++)
    if (q != rank) acc_into(res, c->shm_peer[q] + rank * chunk, chunk);
  memcpy(pub + rank * chunk, res, chunk * sizeof(float));
  CK(MPI_Win_sync(c->win));
  CK(MPI_Barrier(c->comm));
  CK(MPI_Win_sync(c->win));
  for (int q = 0; q < nranks; q++)
    if (q != rank) memcpy(c->out + q * chunk, c->shm_peer[q] + c->n + q * chunk, chunk * sizeof(float));
}

/* The same in rounds of `round` bytes of the vector, so that what one rank
   stages the other reads from cache, and the window stays small whatever
   the size of the vector. */
static void ar_shm_rounds(bench_ctx *c, size_t round) {
  size_t rn = round / sizeof(float);
  for (size_t base = 0; base < c->n; base += rn) {
    size_t len = base + rn <= c->n ? rn : c->n - base;
    size_t chunk = len / nranks;   /* the bench's sizes divide evenly */
    const float *in = c->in + base;
    float *out = c->out + base, *stage = c->shm_base, *pub = c->shm_base + rn;
    for (int q = 0; q < nranks; q++)
      if (q != rank) memcpy(stage + q * chunk, in + q * chunk, chunk * sizeof(float));
    CK(MPI_Win_sync(c->win));
    CK(MPI_Barrier(c->comm));
    CK(MPI_Win_sync(c->win));
    float *res = pub + rank * chunk;
    int first = 1;
    for (int q = 0; q < nranks; q++) {
      if (q == rank) continue;
      if (first) add_into(res, in + rank * chunk, c->shm_peer[q] + rank * chunk, chunk);
      else acc_into(res, c->shm_peer[q] + rank * chunk, chunk);
      first = 0;
    }
    CK(MPI_Win_sync(c->win));
    CK(MPI_Barrier(c->comm));
    CK(MPI_Win_sync(c->win));
    for (int q = 0; q < nranks; q++)
      memcpy(out + q * chunk, q == rank ? res : c->shm_peer[q] + rn + q * chunk, chunk * sizeof(float));
  }
}
static void ar_shm_r256k(bench_ctx *c) { ar_shm_rounds(c, 256 << 10); }
static void ar_shm_r1m(bench_ctx *c) { ar_shm_rounds(c, 1 << 20); }
static void ar_shm_r512k(bench_ctx *c) { ar_shm_rounds(c, 512 << 10); }

/* Ring reduce-scatter (any P) over pieces of `piece` floats of each rank's
   chunk, with blocking Sendrecv: the sums stay in cache. Leaves chunk
   `rank` of the sum in dst. */
static void ring_rs(bench_ctx *c, const float *in, float *dst, size_t chunk, size_t piece) {
  int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
  float *send = c->tmp, *recv = c->tmp + piece;
  for (size_t b = 0; b < chunk; b += piece) {
    size_t len = b + piece <= chunk ? piece : chunk - b;
    const float *sp = in + ((rank + nranks - 1) % nranks) * chunk + b;
    for (int st = 0; st < nranks - 1; st++) {
      int rc = (rank + 2 * nranks - 2 - st) % nranks;
      float *acc = st == nranks - 2 ? dst + b : send;
      CK(MPI_Sendrecv(sp, (int)len, MPI_FLOAT, next, 7, recv, (int)len, MPI_FLOAT, prev, 7, c->comm, MPI_STATUS_IGNORE));
      add_into(acc, recv, in + rc * chunk + b, len);
      sp = acc;
    }
  }
}

static void ar_ring_ag(bench_ctx *c) {
  size_t chunk = c->n / nranks;
  ring_rs(c, c->in, c->out + rank * chunk, chunk, 65536);
  CK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, c->out, (int)chunk, MPI_FLOAT, c->comm));
}

static void rs_ring(bench_ctx *c) { ring_rs(c, c->in, c->out, c->n / nranks, 65536); }

/* all_gather and reduce_scatter through the window in rounds of 512 KiB
   staged per rank, as runtime/comm_mpi.c does. */
static void ag_shm_rounds(bench_ctx *c) {
  size_t chunk = c->n / nranks, rn = (512 << 10) / sizeof(float);
  for (size_t b = 0; b < chunk; b += rn) {
    size_t len = b + rn <= chunk ? rn : chunk - b;
    memcpy(c->shm_base, c->in + b, len * sizeof(float));
    CK(MPI_Win_sync(c->win));
    CK(MPI_Barrier(c->comm));
    CK(MPI_Win_sync(c->win));
    for (int q = 0; q < nranks; q++)
      memcpy(c->out + q * chunk + b, q == rank ? c->in + b : c->shm_peer[q], len * sizeof(float));
    CK(MPI_Barrier(c->comm));
  }
}

static void rs_shm_rounds(bench_ctx *c) {
  size_t chunk = c->n / nranks, rn = (512 << 10) / sizeof(float) / nranks;
  for (size_t b = 0; b < chunk; b += rn) {
    size_t len = b + rn <= chunk ? rn : chunk - b;
    for (int q = 0; q < nranks; q++)
      if (q != rank) memcpy(c->shm_base + q * rn, c->in + q * chunk + b, len * sizeof(float));
    CK(MPI_Win_sync(c->win));
    CK(MPI_Barrier(c->comm));
    CK(MPI_Win_sync(c->win));
    int first = 1;
    for (int q = 0; q < nranks; q++) {
      if (q == rank) continue;
      if (first) add_into(c->out + b, c->in + rank * chunk + b, c->shm_peer[q] + rank * rn, len);
      else acc_into(c->out + b, c->shm_peer[q] + rank * rn, len);
      first = 0;
    }
    CK(MPI_Barrier(c->comm));
  }
}

/* ---- all_gather (each rank contributes n / P floats) ---- */

static void ag_mpi(bench_ctx *c) {
  size_t chunk = c->n / nranks;
  CK(MPI_Allgather(c->in, (int)chunk, MPI_FLOAT, c->out, (int)chunk, MPI_FLOAT, c->comm));
}

static void ag_shm(bench_ctx *c) {
  size_t chunk = c->n / nranks;
  memcpy(c->shm_base, c->in, chunk * sizeof(float));
  CK(MPI_Win_sync(c->win));
  CK(MPI_Barrier(c->comm));
  CK(MPI_Win_sync(c->win));
  for (int q = 0; q < nranks; q++)
    memcpy(c->out + q * chunk, q == rank ? c->in : c->shm_peer[q], chunk * sizeof(float));
  CK(MPI_Barrier(c->comm));   /* my part may be rewritten only after all read it */
}

/* ---- reduce_scatter (n floats in, n / P out) ---- */

static void rs_mpi(bench_ctx *c) {
  CK(MPI_Reduce_scatter_block(c->in, c->out, (int)(c->n / nranks), MPI_FLOAT, MPI_SUM, c->comm));
}

static void rs_pair(bench_ctx *c) {
  size_t h = c->n / 2;
  int peer = 1 - rank;
  CK(MPI_Sendrecv(c->in + peer * h, (int)h, MPI_FLOAT, peer, 5, c->tmp, (int)h, MPI_FLOAT, peer, 5, c->comm,
                  MPI_STATUS_IGNORE));
  add_into(c->out, c->in + rank * h, c->tmp, h);
}

static void rs_shm(bench_ctx *c) {
  size_t chunk = c->n / nranks;
  for (int q = 0; q < nranks; q++)
    if (q != rank) memcpy(c->shm_base + q * chunk, c->in + q * chunk, chunk * sizeof(float));
  CK(MPI_Win_sync(c->win));
  CK(MPI_Barrier(c->comm));
  CK(MPI_Win_sync(c->win));
  memcpy(c->out, c->in + rank * chunk, chunk * sizeof(float));
  for (int q = 0; q < nranks; q++)
    if (q != rank) acc_into(c->out, c->shm_peer[q] + rank * chunk, chunk);
  CK(MPI_Barrier(c->comm));
}

/* ---- harness ---- */

typedef enum { K_AR, K_AG, K_RS } kind;

typedef struct algo {
  const char *name;
  kind k;
  void (*fn)(bench_ctx *);
  int only_p2;
} algo;

static const algo algos[] = {
  {"allreduce: MPI_Allreduce", K_AR, ar_mpi, 0},
  {"allreduce: Reduce_scatter_block+Allgather", K_AR, ar_rs_ag, 0},
  {"allreduce: pairwise Sendrecv (P=2)", K_AR, ar_pair, 1},
  {"allreduce: pairwise pipelined (P=2)", K_AR, ar_pair_pipe, 1},
  {"allreduce: ring reduce_scatter+Allgather", K_AR, ar_ring_ag, 0},
  {"allreduce: shared window", K_AR, ar_shm, 0},
  {"allreduce: shared window, 256 KiB rounds", K_AR, ar_shm_r256k, 0},
  {"allreduce: shared window, 512 KiB rounds", K_AR, ar_shm_r512k, 0},
  {"allreduce: shared window, 1 MiB rounds", K_AR, ar_shm_r1m, 0},
  {"allgather: MPI_Allgather", K_AG, ag_mpi, 0},
  {"allgather: shared window", K_AG, ag_shm, 0},
  {"allgather: shared window, 512 KiB rounds", K_AG, ag_shm_rounds, 0},
  {"reduce_scatter: MPI_Reduce_scatter_block", K_RS, rs_mpi, 0},
  {"reduce_scatter: pairwise Sendrecv (P=2)", K_RS, rs_pair, 1},
  {"reduce_scatter: shared window", K_RS, rs_shm, 0},
  {"reduce_scatter: shared window, 512 KiB rounds", K_RS, rs_shm_rounds, 0},
  {"reduce_scatter: ring Sendrecv, 256 KiB pieces", K_RS, rs_ring, 0},
};

static float val(int r, size_t i) { return (float)((r + 1) * (int)(i % 1000)); }

static int check(const algo *a, bench_ctx *c) {
  size_t chunk = c->n / nranks, bad = 0;
  float tot = 0;
  for (int r = 0; r < nranks; r++) tot += (float)(r + 1);
  if (a->k == K_AR) {
    for (size_t i = 0; i < c->n; i++) bad += c->out[i] != tot * (float)(i % 1000);
  } else if (a->k == K_RS) {
    for (size_t i = 0; i < chunk; i++) bad += c->out[i] != tot * (float)((rank * chunk + i) % 1000);
  } else {
    for (int q = 0; q < nranks; q++)
      for (size_t i = 0; i < chunk; i++) bad += c->out[q * chunk + i] != val(q, i);
  }
  return bad != 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  size_t max_mib = argc > 1 ? (size_t)atoi(argv[1]) : 64;
  size_t maxn = max_mib * 1024 * 1024 / sizeof(float);

  bench_ctx c = {0};
  CK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c.comm));
  int local;
  MPI_Comm_size(c.comm, &local);
  if (local != nranks) {
    if (!rank) fprintf(stderr, "run all ranks on one node\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  CK(MPI_Comm_set_errhandler(c.comm, MPI_ERRORS_RETURN));
  c.in = aligned_alloc(64, maxn * sizeof(float));
  c.out = aligned_alloc(64, maxn * sizeof(float));
  c.tmp = aligned_alloc(64, maxn * sizeof(float));
  c.shm_floats = 2 * maxn;
  CK(MPI_Win_allocate_shared((MPI_Aint)(c.shm_floats * sizeof(float)), sizeof(float), MPI_INFO_NULL, c.comm,
                             &c.shm_base, &c.win));
  c.shm_peer = malloc(nranks * sizeof *c.shm_peer);
  for (int q = 0; q < nranks; q++) {
    MPI_Aint sz;
    int du;
    CK(MPI_Win_shared_query(c.win, q, &sz, &du, &c.shm_peer[q]));
  }
  CK(MPI_Win_lock_all(MPI_MODE_NOCHECK, c.win));
  memset(c.out, 0, maxn * sizeof(float));
  memset(c.tmp, 0, maxn * sizeof(float));
  memset(c.shm_base, 0, c.shm_floats * sizeof(float));

  if (!rank) {
    double t0 = MPI_Wtime();
    for (int i = 0; i < 10; i++) memcpy(c.out, c.tmp, maxn * sizeof(float));
    double t = (MPI_Wtime() - t0) / 10;
    printf("# %d ranks; memcpy of %zu MiB on one rank: %.2f GB/s\n", nranks, max_mib, maxn * 4.0 / t / 1e9);
    printf("# median time per call (slowest rank), rate = bytes per rank / time\n");
    printf("%-44s %10s %12s %9s\n", "algorithm", "bytes", "time_us", "GB/s");
  }
  /* Algorithms take turns call by call, so that whatever else the machine
     is doing slows them alike; medians over the rounds. */
  enum { NALGO = sizeof algos / sizeof *algos, MAXIT = 200 };
  static double ts[NALGO][MAXIT];
  int failed = 0;
  for (size_t bytes = 1024; bytes <= max_mib * 1024 * 1024; bytes *= 4) {
    c.n = bytes / sizeof(float);
    int iters = bytes <= (1 << 20) ? 200 : bytes <= (16 << 20) ? 40 : 15;
    for (int it = -2; it < iters; it++)
      for (size_t a = 0; a < NALGO; a++) {
        const algo *al = &algos[a];
        if (al->only_p2 && nranks != 2) continue;
        size_t nin = al->k == K_AG ? c.n / nranks : c.n;
        for (size_t i = 0; i < nin; i++) c.in[i] = val(rank, i);
        CK(MPI_Barrier(c.comm));
        double t0 = MPI_Wtime();
        al->fn(&c);
        double t = MPI_Wtime() - t0, tmax;
        CK(MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, c.comm));
        if (it >= 0) ts[a][it] = tmax;
        if (it == iters - 1) {
          int bad = check(al, &c), anybad;
          CK(MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, c.comm));
          failed |= anybad;
          qsort(ts[a], iters, sizeof(double), cmp_double);
          double med = ts[a][iters / 2];
          if (!rank)
            printf("%-44s %10zu %12.1f %9.2f%s\n", al->name, bytes, med * 1e6, bytes / med / 1e9,
                   anybad ? "  WRONG" : "");
        }
      }
    if (!rank) printf("\n");
  }
  MPI_Win_unlock_all(c.win);
  MPI_Win_free(&c.win);
  MPI_Comm_free(&c.comm);
  free(c.in);
  free(c.out);
  free(c.tmp);
  free(c.shm_peer);
  MPI_Finalize();
  return failed;
}

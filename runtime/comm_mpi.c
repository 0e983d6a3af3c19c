/*
** comm_mpi.c: mesh communicators and the four collectives over MPI.
**
** Each group of mesh axes gets a communicator from MPI_Comm_split. Where
** all ranks of a group share a node, the group also gets a shared-memory
** window (three 512 KiB slots per rank) and the sums and gathers go
** through it in rounds: each rank stages the pieces others need in its
** slot, a barrier, each reads its peers' slots directly. On one node that
** beat every MPI call measured below: no byte goes through the kernel
** (vader's large messages use CMA system calls), and the rounds keep the
** staged data in cache.
**
** Measured with bench/mpi_collectives.c, 2 ranks on this machine's 2 cores
** (AMD EPYC VM, OpenMPI 4.1.4, vader + CMA), 2026-11-22. Median time per
** call (algorithms taking turns call by call); GB/s = vector bytes / time.
** Another run on a busier machine gave lower rates and the same ranking.
**
**   all_reduce           1 KiB   64 KiB   1 MiB   4 MiB   16 MiB  64 MiB
**   MPI_Allreduce        0.3us    6.7      4.1     2.6     1.1     2.1 GB/s
**   RS_block+Allgather   0.6us    6.5      2.5     1.8     0.9     1.3
**   Sendrecv halves      0.6us    5.9      8.9     5.9     2.2     4.4
**   same, pipelined      0.6us    5.9      8.8     6.6     2.1     4.7
**   ring RS+Allgather    0.6us    6.1      9.0     6.9     2.2     4.7
**   shm, one shot        0.4us   13.4     14.2     7.9     2.4     4.5
**   shm, 512 KiB rounds  0.4us   14.7     15.3    13.6     7.1     8.3
**   all_gather
**   MPI_Allgather        0.3us   13.6     20.1    15.8     8.7     8.6
**   shm, 512 KiB rounds  0.3us   41.7     40.7    29.7    12.6    12.2
**   reduce_scatter
**   MPI_RS_block         0.4us   11.3      2.0     1.5     0.8     1.4
**   Sendrecv halves      0.3us    9.4     12.8     8.4     2.6     7.0
**   ring, 256 KiB pieces 0.3us    9.7     12.9     9.9     7.1     7.8
**   shm, 512 KiB rounds  0.3us   17.9     20.5    17.9    13.8    13.0
**
** So: on one node, below 4 KiB the MPI call (at 1-4 KiB all are within
** 0.2us), from 4 KiB the shared window in rounds (1.4-10x the MPI call;
** 1 MiB rounds measured the same as 512 KiB). Across nodes (no window):
** all_reduce by MPI_Allreduce below 512 KiB and by a ring reduce-scatter
** (pieces of 256 KiB, sums in cache) plus MPI_Allgather above (at 256 KiB
** MPI_Allreduce 9.2 GB/s against the ring's 8.2, at 1 MiB 4.1 against 9.0);
** reduce_scatter by MPI_Reduce_scatter_block below 64 KiB and the ring
** above; all_gather and all_to_all by the MPI calls. The cross-node
** choices were measured on shared memory too (CARVE_MPI_SHM=0 forces
** them), so they are a guess at what a network does.
*/
#include "util/diag.h"
#include "runtime/comm_mpi.h"
#include "runtime/dtype.h"
#include "runtime/mesh.h"

#include <mpi.h>

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  SHM_SLOT = 512 * 1024,          /* bytes; slots 0 and 1 stage by turns, 2 publishes sums */
  SMALL_BYTES = 4096,             /* below this the MPI call wins even on one node */
  RING_AR_BYTES = 512 * 1024,     /* without a window: all_reduce by ring from here */
  RING_RS_BYTES = 64 * 1024,      /* without a window: reduce_scatter by ring from here */
  RING_PIECE = 65536              /* floats per ring message */
};

typedef struct mpi_group {
  MPI_Comm comm;                  /* MPI_COMM_NULL for a group of one device */
  int size, index;
  char name[160];                 /* "{batch, model}", for messages */
  MPI_Win win;                    /* MPI_WIN_NULL: ranks span nodes (or shm is off) */
  char **peer;                    /* each member's window part, by index in the group */
  unsigned flip;                  /* the stage slot of the next round; the same on all members */
} mpi_group;

struct rt_mpi {
  rt_comm comm;                   /* handed to the executor; impl is this */
  const rt_prog *p;
  MPI_Comm world;                 /* a duplicate, errors returned rather than fatal */
  int rank, size;
  int coord[RT_MAXRANK];
  int ngroups;
  mpi_group *groups;
  char *scratch;                  /* packing and ring buffers, grown on demand */
  size_t scratch_bytes;
  /* sends in flight (pipeline stages): each from a copy of its own, so that
     a stage goes on at once and its buffer may be reused */
  MPI_Request *sent;
  void **sent_copy;
  int nsent, sentcap;
};


static int sends_done(rt_mpi *m, int all, char *err, size_t errlen);

static void mpi_errstr(int rc, char *s, size_t n) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, buf, &len) == MPI_SUCCESS) snprintf(s, n, "%.*s", len, buf);
  else snprintf(s, n, "error code %d", rc);
}

static int mpi_up(void) {
  int up = 0, down = 0;
  MPI_Initialized(&up);
  if (up) MPI_Finalized(&down);
  return up && !down;
}

/* ---- process-wide ---- */

int rt_mpi_init(int *argc, char ***argv) {
  int up = 0;
  if (MPI_Initialized(&up) != MPI_SUCCESS) return -1;
  if (up) return 0;
  return MPI_Init(argc, argv) == MPI_SUCCESS ? 0 : -1;
}

int rt_mpi_world_rank(void) {
  int r = 0;
  if (mpi_up()) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int rt_mpi_world_size(void) {
  int n = 1;
  if (mpi_up()) MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

void rt_mpi_finalize(void) {
  if (mpi_up()) MPI_Finalize();
}

_Noreturn void rt_mpi_fail(const char *msg) {
  int up = mpi_up();
  fprintf(stderr, "carve: error: rank %d: %s\n", up ? rt_mpi_world_rank() : 0, msg ? msg : "failed");
  fflush(stderr);
  if (up) MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

int rt_mpi_agree(rt_mpi *m, int status, const char *msg, char *err, size_t errlen) {
  if (!mpi_up()) return status ? diag_errbuf(err, errlen, "rank 0: %s", msg ? msg : "failed") : 0;
  MPI_Comm comm = m ? m->world : MPI_COMM_WORLD;
  int me = 0, first = INT_MAX, who = INT_MAX, rc;
  MPI_Comm_rank(comm, &me);
  if (status) first = me;
  rc = MPI_Allreduce(&first, &who, 1, MPI_INT, MPI_MIN, comm);
  if (rc != MPI_SUCCESS) {
    char s[256];
    mpi_errstr(rc, s, sizeof s);
    return diag_errbuf(err, errlen, "rank %d: agreeing on errors: MPI error: %s", me, s);
  }
  if (who == INT_MAX) return 0;
  char text[1024] = "";
  if (me == who) snprintf(text, sizeof text, "%s", msg && msg[0] ? msg : "failed");
  rc = MPI_Bcast(text, (int)sizeof text, MPI_CHAR, who, comm);
  if (rc != MPI_SUCCESS) snprintf(text, sizeof text, "failed (its message was lost)");
  text[sizeof text - 1] = 0;
  return diag_errbuf(err, errlen, "rank %d: %s", who, text);
}

/* ---- communicators ---- */

static int comm_size(void *impl, int g) {
  rt_mpi *m = impl;
  return g >= 0 && g < m->ngroups ? m->groups[g].size : 0;
}

static int comm_index(void *impl, int g) {
  rt_mpi *m = impl;
  return g >= 0 && g < m->ngroups ? m->groups[g].index : -1;
}

static int mpi_run(void *impl, const rt_instr *ins, void *out, const void *in, char *err, size_t errlen);

const rt_comm *rt_mpi_comm(rt_mpi *m) { return m ? &m->comm : NULL; }

int rt_mpi_coord(const rt_mpi *m, int axis) {
  return m && axis >= 0 && axis < m->p->mesh_rank ? m->coord[axis] : -1;
}

const rt_prog *rt_mpi_prog(const rt_mpi *m) { return m ? m->p : NULL; }

int rt_mpi_group_bcast(rt_mpi *m, int g, void *buf, size_t n, int root, char *err, size_t errlen) {
  if (!m || g < 0 || g >= m->ngroups) return diag_errbuf(err, errlen, "no group %d", g);
  mpi_group *mg = &m->groups[g];
  if (mg->size == 1 || mg->comm == MPI_COMM_NULL) return 0;
  if (n > INT_MAX || root < 0 || root >= mg->size) return diag_errbuf(err, errlen, "broadcast over %s: bad arguments", mg->name);
  int rc = MPI_Bcast(buf, (int)n, MPI_BYTE, root, mg->comm);
  if (rc != MPI_SUCCESS) {
    char s[MPI_MAX_ERROR_STRING];
    mpi_errstr(rc, s, sizeof s);
    return diag_errbuf(err, errlen, "broadcast over %s: MPI error: %s", mg->name, s);
  }
  return 0;
}

static const char *axis_name(const rt_prog *p, int ax, char *buf, size_t n) {
  if (p->axis_names[ax]) return p->axis_names[ax];
  snprintf(buf, n, "axis%d", ax);
  return buf;
}

static void group_name(const rt_prog *p, const rt_group *gr, char *s, size_t n) {
  size_t k = (size_t)snprintf(s, n, "{");
  for (int i = 0; i < gr->naxes && k < n; i++) {
    char b[32];
    int ax = gr->axes[i];
    const char *nm = ax >= 0 && ax < p->mesh_rank ? axis_name(p, ax, b, sizeof b) : "?";
    k += (size_t)snprintf(s + k, n - k, "%s%s", i ? ", " : "", nm);
  }
  if (k < n) snprintf(s + k, n - k, "}");
}

/* The node-shared window of a group whose ranks all share a node. Failing
   to make one is not an error: the group falls back to the MPI calls. The
   members agree, so they all take the same algorithms. */
static void group_window(mpi_group *g) {
  const char *env = getenv("CARVE_MPI_SHM");
  int ok = !(env && strcmp(env, "0") == 0), all = 0;
  MPI_Comm node = MPI_COMM_NULL;
  if (ok) {
    int n = 0;
    ok = MPI_Comm_split_type(g->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS &&
         MPI_Comm_size(node, &n) == MPI_SUCCESS && n == g->size;
    if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  }
  if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, g->comm) != MPI_SUCCESS || !all) return;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");   /* each rank's slots in its own pages */
  void *base = NULL;
  MPI_Win win = MPI_WIN_NULL;
  ok = MPI_Win_allocate_shared(3 * (MPI_Aint)SHM_SLOT, 1, info, g->comm, &base, &win) == MPI_SUCCESS;
  MPI_Info_free(&info);
  if (ok) {
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    g->peer = calloc((size_t)g->size, sizeof *g->peer);
    ok = g->peer != NULL;
    for (int q = 0; ok && q < g->size; q++) {
      MPI_Aint sz = 0;
      int du = 0;
      ok = MPI_Win_shared_query(win, q, &sz, &du, &g->peer[q]) == MPI_SUCCESS && sz >= 3 * (MPI_Aint)SHM_SLOT;
    }
  }
  if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, g->comm) != MPI_SUCCESS) all = 0;
  /* a window that only some members got cannot be freed collectively: it is left alone */
  if (all && win != MPI_WIN_NULL && MPI_Win_lock_all(MPI_MODE_NOCHECK, win) == MPI_SUCCESS) {
    g->win = win;
    return;
  }
  if (all && win != MPI_WIN_NULL) MPI_Win_free(&win);
  free(g->peer);
  g->peer = NULL;
}

void rt_mpi_free(rt_mpi *m) {
  if (!m) return;
  int up = mpi_up();
  for (int i = 0; m->groups && i < m->ngroups; i++) {
    mpi_group *g = &m->groups[i];
    if (up && g->win != MPI_WIN_NULL) {
      MPI_Win_unlock_all(g->win);
      MPI_Win_free(&g->win);
    }
    if (up && g->comm != MPI_COMM_NULL) MPI_Comm_free(&g->comm);
    free(g->peer);
  }
  if (up) { char ignored[64]; sends_done(m, 1, ignored, sizeof ignored); }
  for (int i = 0; i < m->nsent; i++) free(m->sent_copy[i]);
  free(m->sent);
  free(m->sent_copy);
  if (up && m->world != MPI_COMM_NULL) MPI_Comm_free(&m->world);
  free(m->groups);
  free(m->scratch);
  free(m);
}

rt_mpi *rt_mpi_new(const rt_prog *p, char *err, size_t errlen) {
  if (!mpi_up()) {
    diag_errbuf(err, errlen, "MPI is not running (rt_mpi_init first)");
    return NULL;
  }
  if (p->mesh_rank < 0 || p->mesh_rank > RT_MAXRANK) {
    diag_errbuf(err, errlen, "a mesh of %d axes", p->mesh_rank);
    return NULL;
  }
  int64_t need = 1;
  char mesh[512] = "";
  size_t k = 0;
  for (int i = 0; i < p->mesh_rank; i++) {
    char b[32];
    if (p->mesh[i] < 1) {
      diag_errbuf(err, errlen, "mesh axis %s has size %" PRId64, axis_name(p, i, b, sizeof b), p->mesh[i]);
      return NULL;
    }
    need = p->mesh[i] > INT_MAX || need > INT_MAX / p->mesh[i] ? (int64_t)INT_MAX + 1 : need * p->mesh[i];
    if (k < sizeof mesh)
      k += (size_t)snprintf(mesh + k, sizeof mesh - k, "%s%s=%" PRId64, i ? ", " : "", axis_name(p, i, b, sizeof b),
                            p->mesh[i]);
  }
  int size = rt_mpi_world_size(), rank = rt_mpi_world_rank();
  if (need != size) {
    if (p->mesh_rank == 0)
      diag_errbuf(err, errlen, "the program has no mesh and runs on 1 rank but mpirun started %d; run it without mpirun",
           size);
    else
      diag_errbuf(err, errlen, "the mesh %s needs %" PRId64 " ranks but mpirun started %d; run mpirun -n %" PRId64, mesh, need,
           size, need);
    return NULL;
  }
  for (int g = 0; g < p->ngroups; g++) {
    const rt_group *gr = &p->groups[g];
    unsigned seen = 0;
    if (gr->naxes < 0 || gr->naxes > p->mesh_rank) {
      diag_errbuf(err, errlen, "group %d has %d axes but the mesh has %d", g, gr->naxes, p->mesh_rank);
      return NULL;
    }
    for (int i = 0; i < gr->naxes; i++) {
      int ax = gr->axes[i];
      if (ax < 0 || ax >= p->mesh_rank || (seen >> ax & 1u)) {
        diag_errbuf(err, errlen, "group %d names mesh axis %d %s", g, ax,
             ax >= 0 && ax < p->mesh_rank ? "twice" : "which the mesh lacks");
        return NULL;
      }
      seen |= 1u << ax;
    }
  }

  rt_mpi *m = calloc(1, sizeof *m);
  if (!m || !(m->groups = calloc(p->ngroups > 0 ? (size_t)p->ngroups : 1, sizeof *m->groups))) {
    free(m);
    diag_errbuf(err, errlen, "out of memory");
    return NULL;
  }
  m->p = p;
  m->rank = rank;
  m->size = size;
  m->world = MPI_COMM_NULL;
  m->ngroups = p->ngroups > 0 ? p->ngroups : 0;
  for (int g = 0; g < m->ngroups; g++) {
    m->groups[g].comm = MPI_COMM_NULL;
    m->groups[g].win = MPI_WIN_NULL;
  }
  m->comm.impl = m;
  m->comm.size = comm_size;
  m->comm.index = comm_index;
  m->comm.run = mpi_run;
  for (int i = 0; i < p->mesh_rank; i++) m->coord[i] = rt_mesh_coord(p, rank, i);

  char s[256];
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, &m->world);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(m->world, MPI_ERRORS_RETURN);
  if (rc != MPI_SUCCESS) {
    mpi_errstr(rc, s, sizeof s);
    diag_errbuf(err, errlen, "making the world communicator: MPI error: %s", s);
    rt_mpi_free(m);
    return NULL;
  }
  for (int g = 0; g < m->ngroups; g++) {
    const rt_group *gr = &p->groups[g];
    mpi_group *mg = &m->groups[g];
    int index = rt_mesh_index(p, rank, g), color = rt_mesh_color(p, rank, g), P = rt_mesh_group_size(p, g);
    group_name(p, gr, mg->name, sizeof mg->name);
    mg->size = P;
    mg->index = index;
    if (P == 1) continue;
    int got = -1;
    rc = MPI_Comm_split(m->world, color, index, &mg->comm);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(mg->comm, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(mg->comm, &got);
    if (rc != MPI_SUCCESS) {
      mpi_errstr(rc, s, sizeof s);
      diag_errbuf(err, errlen, "making the communicator of %s: MPI error: %s", mg->name, s);
      rt_mpi_free(m);
      return NULL;
    }
    if (got != mg->index) {   /* MPI_Comm_split orders by key; this cannot happen */
      diag_errbuf(err, errlen, "communicator of %s: rank %d sits at %d, not %d", mg->name, rank, got, mg->index);
      rt_mpi_free(m);
      return NULL;
    }
    group_window(mg);
  }
  return m;
}

/* ---- data movement helpers ---- */

/* A flat index range over a strided layout: element j of the range lies at
   (j / blk) * stride + off + j % blk (all in elements). */
typedef struct bview { size_t blk, stride, off; } bview;

/* dst[0, len) = the elements j0 .. j0+len-1 of v over base */
static void view_gather(char *dst, const char *base, bview v, size_t j0, size_t len, size_t es) {
  while (len) {
    size_t b = j0 / v.blk, r = j0 % v.blk, n = v.blk - r < len ? v.blk - r : len;
    memcpy(dst, base + (b * v.stride + v.off + r) * es, n * es);
    dst += n * es;
    j0 += n;
    len -= n;
  }
}

/* the elements j0 .. j0+len-1 of v over base = src[0, len) */
static void view_scatter(char *base, bview v, const char *src, size_t j0, size_t len, size_t es) {
  while (len) {
    size_t b = j0 / v.blk, r = j0 % v.blk, n = v.blk - r < len ? v.blk - r : len;
    memcpy(base + (b * v.stride + v.off + r) * es, src, n * es);
    src += n * es;
    j0 += n;
    len -= n;
  }
}

static void add2(float *restrict d, const float *restrict a, const float *restrict b, size_t n) {
  for (size_t i = 0; i < n; i++) d[i] = a[i] + b[i];
}

static void acc(float *restrict d, const float *restrict b, size_t n) {
  for (size_t i = 0; i < n; i++) d[i] += b[i];
}

/* One collective call: where errors go and what they are called. */
typedef struct coll {
  rt_mpi *m;
  mpi_group *g;
  const char *what;               /* "all_reduce" */
  MPI_Datatype type;              /* of the elements moved */
  size_t es;                      /* their size */
  char *err;
  size_t errlen;
} coll;

static int fail_mpi(coll *c, int rc) {
  char s[MPI_MAX_ERROR_STRING + 32];
  mpi_errstr(rc, s, sizeof s);
  return diag_errbuf(c->err, c->errlen, "%s over %s: MPI error: %s", c->what, c->g->name, s);
}

#define CK(c, call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) return fail_mpi((c), rc_); } while (0)

static int count_ok(coll *c, size_t n) {
  if (n <= INT_MAX) return 0;
  return diag_errbuf(c->err, c->errlen, "%s over %s: %zu elements are more than one MPI call can move", c->what, c->g->name, n);
}

static void *scratch(coll *c, size_t bytes) {
  rt_mpi *m = c->m;
  if (bytes > m->scratch_bytes) {
    free(m->scratch);
    m->scratch = malloc(bytes);
    m->scratch_bytes = m->scratch ? bytes : 0;
    if (!m->scratch) diag_errbuf(c->err, c->errlen, "%s over %s: out of memory (%zu bytes)", c->what, c->g->name, bytes);
  }
  return m->scratch;
}

/* Writes to the window before the barrier are seen by every member after it. */
static int shm_sync(coll *c) {
  CK(c, MPI_Win_sync(c->g->win));
  CK(c, MPI_Barrier(c->g->comm));
  CK(c, MPI_Win_sync(c->g->win));
  return 0;
}

static char *my_slot(mpi_group *g, int slot) { return g->peer[g->index] + (size_t)slot * SHM_SLOT; }
static char *peer_slot(mpi_group *g, int q, int slot) { return g->peer[q] + (size_t)slot * SHM_SLOT; }

/* ---- all_reduce ---- */

/* Rounds of up to one slot of the vector. Member q sums part q of the round
   (its own values plus the others' staged ones) into its slot 2; then every
   member copies all parts out. Two barriers a round; the stage slot
   alternates so a round never overwrites what a slower member still reads. */
static int shm_all_reduce(coll *c, float *out, const float *in, size_t n) {
  mpi_group *g = c->g;
  int P = g->size, me = g->index;
  size_t R = SHM_SLOT / sizeof(float);
  for (size_t base = 0; base < n; base += R) {
    size_t len = n - base < R ? n - base : R;
    int slot = (int)(g->flip++ & 1u);
    float *stage = (float *)my_slot(g, slot);
    for (int q = 0; q < P; q++) {
      size_t lo = len * q / P, hi = len * (q + 1) / P;
      if (q != me) memcpy(stage + lo, in + base + lo, (hi - lo) * sizeof(float));
    }
    if (shm_sync(c)) return -1;
    size_t lo = len * me / P, hi = len * (me + 1) / P;
    float *sum = (float *)my_slot(g, 2);
    const float *own = in + base + lo;
    for (int q = 0, first = 1; q < P; q++) {
      if (q == me) continue;
      const float *theirs = (const float *)peer_slot(g, q, slot) + lo;
      if (first) add2(sum, own, theirs, hi - lo);
      else acc(sum, theirs, hi - lo);
      first = 0;
    }
    if (shm_sync(c)) return -1;
    for (int q = 0; q < P; q++) {
      size_t qlo = len * q / P, qhi = len * (q + 1) / P;
      memcpy(out + base + qlo, peer_slot(g, q, 2), (qhi - qlo) * sizeof(float));
    }
  }
  return 0;
}

/* Ring reduce-scatter over a rank-major [P][chunk] vector: P-1 steps, each
   passing a partial sum of one chunk to the next member, in pieces so the
   sums stay in cache. Leaves chunk `index` of the total in dst; work holds
   2 * RING_PIECE floats. */
static int ring_reduce_scatter(coll *c, float *dst, const float *in, size_t chunk, float *work) {
  mpi_group *g = c->g;
  int P = g->size, me = g->index, next = (me + 1) % P, prev = (me + P - 1) % P;
  size_t piece = chunk < RING_PIECE ? chunk : RING_PIECE;
  float *send = work, *recv = work + RING_PIECE;
  for (size_t b = 0; b < chunk; b += piece) {
    size_t len = chunk - b < piece ? chunk - b : piece;
    const float *sp = in + (size_t)((me + P - 1) % P) * chunk + b;
    for (int st = 0; st < P - 1; st++) {
      size_t rc = (size_t)((me + 2 * P - 2 - st) % P);
      float *sum = st == P - 2 ? dst + b : send;
      CK(c, MPI_Sendrecv(sp, (int)len, MPI_FLOAT, next, 0, recv, (int)len, MPI_FLOAT, prev, 0, g->comm,
                         MPI_STATUS_IGNORE));
      add2(sum, recv, in + rc * chunk + b, len);
      sp = sum;
    }
  }
  return 0;
}

static int all_reduce(coll *c, float *out, const float *in, size_t n) {
  mpi_group *g = c->g;
  size_t bytes = n * sizeof(float);
  if (g->win != MPI_WIN_NULL && bytes >= SMALL_BYTES) return shm_all_reduce(c, out, in, n);
  if (g->win == MPI_WIN_NULL && bytes >= RING_AR_BYTES && n % g->size == 0 && in != out) {
    size_t chunk = n / g->size;
    float *work = scratch(c, 2 * RING_PIECE * sizeof(float));
    if (!work || count_ok(c, chunk) || ring_reduce_scatter(c, out + g->index * chunk, in, chunk, work)) return -1;
    CK(c, MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, (int)chunk, MPI_FLOAT, g->comm));
    return 0;
  }
  if (count_ok(c, n)) return -1;
  CK(c, MPI_Allreduce(in == out ? MPI_IN_PLACE : in, out, (int)n, MPI_FLOAT, MPI_SUM, g->comm));
  return 0;
}

/* ---- all_gather: in [outer, n, inner] -> out [outer, n * P, inner] ---- */

static int all_gather(coll *c, char *out, const char *in, size_t outer, size_t e) {
  mpi_group *g = c->g;
  int P = g->size;
  size_t es = c->es, blk = e / outer;   /* e = outer * n * inner, one member's part */
  if (g->win != MPI_WIN_NULL && e * P * es >= SMALL_BYTES) {
    size_t R = SHM_SLOT / es;
    for (size_t b = 0; b < e; b += R) {
      size_t len = e - b < R ? e - b : R;
      int slot = (int)(g->flip++ & 1u);
      memcpy(my_slot(g, slot), in + b * es, len * es);
      if (shm_sync(c)) return -1;
      for (int q = 0; q < P; q++) {
        bview v = {blk, blk * P, blk * q};
        view_scatter(out, v, q == g->index ? in + b * es : peer_slot(g, q, slot), b, len, es);
      }
    }
    return 0;
  }
  if (count_ok(c, e)) return -1;
  char *dst = out;
  if (outer > 1 && !(dst = scratch(c, e * P * es))) return -1;
  CK(c, MPI_Allgather(in, (int)e, c->type, dst, (int)e, c->type, g->comm));
  if (outer > 1)
    for (int q = 0; q < P; q++) {     /* rank-major blocks into [outer, n * P, inner] */
      bview v = {blk, blk * P, blk * q};
      view_scatter(out, v, dst + q * e * es, 0, e, es);
    }
  return 0;
}

/* ---- reduce_scatter: in [outer, n, inner] -> out [outer, n / P, inner] ---- */

static int reduce_scatter(coll *c, float *out, const float *in, size_t outer, size_t e) {
  mpi_group *g = c->g;
  int P = g->size, me = g->index;
  size_t blk = e / outer;             /* e = outer * (n / P) * inner: out's size; blk its rows */
  size_t bytes = e * P * sizeof(float);
  if (g->win != MPI_WIN_NULL && bytes >= SMALL_BYTES) {
    size_t L = SHM_SLOT / sizeof(float) / P;   /* elements of out a round */
    for (size_t b = 0; b < e; b += L) {
      size_t len = e - b < L ? e - b : L;
      int slot = (int)(g->flip++ & 1u);
      float *stage = (float *)my_slot(g, slot);
      for (int q = 0; q < P; q++) {
        bview v = {blk, blk * P, blk * q};
        if (q != me) view_gather((char *)(stage + q * L), (const char *)in, v, b, len, sizeof(float));
      }
      if (shm_sync(c)) return -1;
      bview mine = {blk, blk * P, blk * me};
      view_gather((char *)(out + b), (const char *)in, mine, b, len, sizeof(float));
      for (int q = 0; q < P; q++)
        if (q != me) acc(out + b, (const float *)peer_slot(g, q, slot) + me * L, len);
    }
    return 0;
  }
  int ring = g->win == MPI_WIN_NULL && bytes >= RING_RS_BYTES;
  float *s = NULL, *work = NULL;
  if (outer > 1 || ring) {
    size_t packed_bytes = outer > 1 ? bytes : 0;
    if (!(s = scratch(c, packed_bytes + (ring ? 2 * RING_PIECE * sizeof(float) : 0)))) return -1;
    work = s + packed_bytes / sizeof(float);
  }
  const float *packed = in;
  if (outer > 1) {                    /* [outer, n, inner] split along n -> rank-major [P][e] */
    for (int q = 0; q < P; q++) {
      bview v = {blk, blk * P, blk * q};
      view_gather((char *)(s + q * e), (const char *)in, v, 0, e, sizeof(float));
    }
    packed = s;
  }
  if (ring) return count_ok(c, e) ? -1 : ring_reduce_scatter(c, out, packed, e, work);
  if (count_ok(c, e)) return -1;
  CK(c, MPI_Reduce_scatter_block(packed, out, (int)e, MPI_FLOAT, MPI_SUM, g->comm));
  return 0;
}

/* ---- sums of dtypes other than f32: in their own type by MPI; bf16 and f16 in f32 ---- */

static MPI_Datatype sum_type(rt_dtype t, MPI_Op *op) {
  *op = MPI_SUM;
  switch (t) {
  case RT_F64: return MPI_DOUBLE;
  case RT_I32: return MPI_INT32_T;
  case RT_I64: return MPI_INT64_T;
  case RT_I8: return MPI_INT8_T;
  case RT_UI8: return MPI_UINT8_T;
  case RT_I16: return MPI_INT16_T;
  case RT_UI16: return MPI_UINT16_T;
  case RT_UI32: return MPI_UINT32_T;
  case RT_I1: *op = MPI_MAX; return MPI_UINT8_T;     /* a sum of booleans is their or */
  default: return MPI_FLOAT;
  }
}

static int sum_other(coll *c, rt_dtype t, int scatter, void *out, const void *in, size_t outer, size_t ni, size_t no) {
  mpi_group *g = c->g;
  int P = g->size;
  if (t == RT_BF16 || t == RT_F16) {
    float *fi = malloc(sizeof(float) * (ni + no + 1));
    if (!fi) return diag_errbuf(c->err, c->errlen, "%s over %s: out of memory", c->what, g->name);
    float *fo = fi + ni;
    for (size_t k = 0; k < ni; k++) fi[k] = (float)rt_load_f(t, in, (int64_t)k);
    int rc = scatter ? reduce_scatter(c, fo, fi, outer, no) : all_reduce(c, fo, fi, ni);
    for (size_t k = 0; rc == 0 && k < no; k++) rt_store_f(t, out, (int64_t)k, fo[k]);
    free(fi);
    return rc;
  }
  MPI_Op op;
  MPI_Datatype type = sum_type(t, &op);
  if (count_ok(c, ni)) return -1;
  if (!scatter) {
    CK(c, MPI_Allreduce(in == out ? MPI_IN_PLACE : in, out, (int)ni, type, op, g->comm));
    return 0;
  }
  const char *packed = in;
  size_t es = c->es, blk = no / outer;
  if (outer > 1) {                    /* [outer, n, inner] split along n -> rank-major [P][no] */
    char *sb = scratch(c, ni * es);
    if (!sb) return -1;
    for (int q = 0; q < P; q++) {
      bview v = {blk, blk * P, blk * q};
      view_gather(sb + q * no * es, in, v, 0, no, es);
    }
    packed = sb;
  }
  CK(c, MPI_Reduce_scatter_block(packed, out, (int)no, type, op, g->comm));
  return 0;
}

/* ---- all_reduce taking the max or min: small ([rows] of a vocabulary-
** parallel cross-entropy), exact in any order; bf16 and f16 in f32 ---- */

static int extreme(coll *c, rt_dtype t, int fn, void *out, const void *in, size_t n) {
  MPI_Op op = fn == RT_RMAX ? MPI_MAX : MPI_MIN;
  if (t == RT_BF16 || t == RT_F16) {
    float *f = calloc(n + 1, sizeof(float));
    if (!f) return diag_errbuf(c->err, c->errlen, "%s over %s: out of memory", c->what, c->g->name);
    for (size_t k = 0; k < n; k++) f[k] = (float)rt_load_f(t, in, (int64_t)k);
    int rc = extreme(c, RT_F32, fn, f, f, n);
    for (size_t k = 0; rc == 0 && k < n; k++) rt_store_f(t, out, (int64_t)k, f[k]);
    free(f);
    return rc;
  }
  MPI_Op sum;
  MPI_Datatype type = sum_type(t, &sum);     /* (i1 as 0 and 1: max is or, min is and) */
  if (count_ok(c, n)) return -1;
  CK(c, MPI_Allreduce(in == out ? MPI_IN_PLACE : in, out, (int)n, type, op, c->g->comm));
  return 0;
}

/* ---- all_to_all ---- */

static int all_to_all(coll *c, const rt_instr *ins, char *out, const char *in, size_t nelem) {
  mpi_group *g = c->g;
  int P = g->size, s = ins->split_dim, d = ins->concat_dim, r = ins->rank;
  size_t es = c->es, e = nelem / P;
  /* in viewed [A, P, B] around the split dim: piece q is in[:, q, :] */
  size_t A = 1, B = 1;
  for (int i = 0; i < s; i++) A *= (size_t)ins->shape[i];
  for (int i = s + 1; i < r; i++) B *= (size_t)ins->shape[i];
  B *= (size_t)ins->shape[s] / P;
  /* out viewed [A2, P, B2] around the concat dim of the piece shape */
  size_t A2 = 1, B2 = 1;
  for (int i = 0; i < d; i++) A2 *= (size_t)(i == s ? ins->shape[i] / P : ins->shape[i]);
  for (int i = d; i < r; i++) B2 *= (size_t)(i == s ? ins->shape[i] / P : ins->shape[i]);
  if (count_ok(c, e)) return -1;
  size_t need = (A > 1 ? nelem : 0) + (A2 > 1 ? nelem : 0);
  char *buf = need ? scratch(c, need * es) : NULL;
  if (need && !buf) return -1;
  const char *send = in;
  char *recv = out;
  if (A > 1) {
    char *sb = buf;
    for (int q = 0; q < P; q++) {
      bview v = {B, B * P, B * q};
      view_gather(sb + q * e * es, in, v, 0, e, es);
    }
    send = sb;
    buf += nelem * es;
  }
  if (A2 > 1) recv = buf;
  CK(c, MPI_Alltoall(send, (int)e, c->type, recv, (int)e, c->type, g->comm));
  if (A2 > 1)
    for (int q = 0; q < P; q++) {
      bview v = {B2, B2 * P, B2 * q};
      view_scatter(out, v, recv + q * e * es, 0, e, es);
    }
  return 0;
}

/* ---- the rt_comm entry ---- */

/* Free the copies of the sends that have arrived (all: wait for every one). */
static int sends_done(rt_mpi *m, int all, char *err, size_t errlen) {
  int k = 0;
  for (int i = 0; i < m->nsent; i++) {
    int done = 0, rc = all ? MPI_Wait(&m->sent[i], MPI_STATUS_IGNORE) : MPI_Test(&m->sent[i], &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      char s[MPI_MAX_ERROR_STRING];
      mpi_errstr(rc, s, sizeof s);
      return diag_errbuf(err, errlen, "send to another stage: %s", s);
    }
    if (all || done) { free(m->sent_copy[i]); continue; }
    m->sent[k] = m->sent[i];
    m->sent_copy[k++] = m->sent_copy[i];
  }
  m->nsent = k;
  return 0;
}

/* A pipeline stage's point-to-point transfer over g (the stage axis): the
   peer is the member at index n2, the tag the transfer's. Sends do not wait
   (a stage's schedule runs ahead of its neighbour's); receives do. */
static int point_to_point(rt_mpi *m, mpi_group *g, const rt_instr *ins, void *out, const void *in, char *err, size_t errlen) {
  const rt_prog *p = m->p;
  int b = ins->op == RT_SEND ? ins->in[0] : ins->out;
  if (b < 0 || b >= p->nbufs || (ins->op == RT_SEND ? !in : !out))
    return diag_errbuf(err, errlen, "%s over %s: no buffer", rt_op_name((rt_op)ins->op), g->name);
  int64_t peer = ins->mode & RT_P2P_RING ? (g->index + ins->n2) % (g->size ? g->size : 1) : ins->n2;
  if (peer < 0 || peer >= g->size || peer == g->index || g->comm == MPI_COMM_NULL)
    return diag_errbuf(err, errlen, "%s over %s: no peer %" PRId64 " in a group of %d", rt_op_name((rt_op)ins->op), g->name,
                       ins->n2, g->size);
  size_t bytes = (size_t)p->bufs[b].nelem * rt_dtype_size(p->bufs[b].dtype);
  if (bytes > INT_MAX) return diag_errbuf(err, errlen, "%s over %s: %zu bytes in one message", rt_op_name((rt_op)ins->op), g->name, bytes);
  int tag = (int)(ins->off % 32000), rc;
  if (sends_done(m, 0, err, errlen)) return -1;
  if (ins->op == RT_RECV) {
    rc = MPI_Recv(out, (int)bytes, MPI_BYTE, (int)peer, tag, g->comm, MPI_STATUS_IGNORE);
  } else {
    if (m->nsent == m->sentcap) {
      int cap = m->sentcap ? 2 * m->sentcap : 16;
      MPI_Request *r = realloc(m->sent, sizeof *r * (size_t)cap);
      if (r) m->sent = r;
      void **c = realloc(m->sent_copy, sizeof *c * (size_t)cap);
      if (c) m->sent_copy = c;
      if (!r || !c) return diag_errbuf(err, errlen, "out of memory for a send");
      m->sentcap = cap;
    }
    void *copy = malloc(bytes ? bytes : 1);
    if (!copy) return diag_errbuf(err, errlen, "out of memory for a send of %zu bytes", bytes);
    memcpy(copy, in, bytes);
    rc = MPI_Isend(copy, (int)bytes, MPI_BYTE, (int)peer, tag, g->comm, &m->sent[m->nsent]);
    if (rc == MPI_SUCCESS) m->sent_copy[m->nsent++] = copy;
    else free(copy);
  }
  if (rc != MPI_SUCCESS) {
    char s[MPI_MAX_ERROR_STRING];
    mpi_errstr(rc, s, sizeof s);
    return diag_errbuf(err, errlen, "%s over %s: %s", rt_op_name((rt_op)ins->op), g->name, s);
  }
  return 0;
}

static int mpi_run(void *impl, const rt_instr *ins, void *out, const void *in, char *err, size_t errlen) {
  rt_mpi *m = impl;
  const rt_prog *p = m->p;
  const char *what = ins->op < RT_NOPS ? rt_op_name((rt_op)ins->op) : "?";
  if (ins->group < 0 || ins->group >= m->ngroups) return diag_errbuf(err, errlen, "%s: no group %d", what, ins->group);
  mpi_group *g = &m->groups[ins->group];
  if (ins->op == RT_SEND || ins->op == RT_RECV) return point_to_point(m, g, ins, out, in, err, errlen);
  if (ins->out < 0 || ins->out >= p->nbufs || ins->in[0] < 0 || ins->in[0] >= p->nbufs || !out || !in)
    return diag_errbuf(err, errlen, "%s over %s: needs one input and one output buffer", what, g->name);
  const rt_buf *bi = &p->bufs[ins->in[0]], *bo = &p->bufs[ins->out];
  size_t es = rt_dtype_size(bo->dtype);
  MPI_Datatype moved = bo->dtype == RT_I32 ? MPI_INT : es == 1 ? MPI_UINT8_T : es == 2 ? MPI_UINT16_T : es == 8 ? MPI_UINT64_T : MPI_FLOAT;
  coll c = {m, g, what, moved, es, err, errlen};
  int P = g->size;
  size_t ni = (size_t)bi->nelem, no = (size_t)bo->nelem;
  if (bi->dtype != bo->dtype) return diag_errbuf(err, errlen, "%s over %s: in and out differ in dtype", what, g->name);
  if (in == out && ins->op != RT_ALL_REDUCE)
    return diag_errbuf(err, errlen, "%s over %s: reads and writes the same buffer", what, g->name);
  int64_t outer = ins->outer, n = ins->n, inner = ins->inner;
  int other = bo->dtype != RT_F32;
  if (ins->fn != RT_RSUM && (ins->op != RT_ALL_REDUCE || (ins->fn != RT_RMAX && ins->fn != RT_RMIN)))
    return diag_errbuf(err, errlen, "%s over %s: no reduction %d", what, g->name, ins->fn);
  switch (ins->op) {
  case RT_ALL_REDUCE:
    if (ni != no) return diag_errbuf(err, errlen, "%s over %s: in has %zu elements, out %zu", what, g->name, ni, no);
    if (P == 1) {
      if (out != in) memcpy(out, in, ni * es);
      return 0;
    }
    if (ins->fn != RT_RSUM) return extreme(&c, bo->dtype, ins->fn, out, in, ni);
    if (other) return sum_other(&c, bo->dtype, 0, out, in, 1, ni, no);
    return all_reduce(&c, out, in, ni);
  case RT_ALL_GATHER:
  case RT_REDUCE_SCATTER: {
    int gather = ins->op == RT_ALL_GATHER;
    if (outer < 1 || n < 1 || inner < 1)
      return diag_errbuf(err, errlen, "%s over %s: view [%" PRId64 ", %" PRId64 ", %" PRId64 "]", what, g->name, outer, n, inner);
    if (!gather && n % P)
      return diag_errbuf(err, errlen, "%s over %s: %" PRId64 " rows do not split into %d pieces", what, g->name, n, P);
    size_t want_in = (size_t)(outer * n * inner), want_out = gather ? want_in * P : want_in / P;
    if (ni != want_in || no != want_out)
      return diag_errbuf(err, errlen, "%s over %s: in has %zu elements and out %zu, the view [%" PRId64 ", %" PRId64 ", %" PRId64
                  "] over %d devices needs %zu and %zu", what, g->name, ni, no, outer, n, inner, P, want_in, want_out);
    if (P == 1) {
      memcpy(out, in, ni * c.es);
      return 0;
    }
    if (!gather && other) return sum_other(&c, bo->dtype, 1, out, in, (size_t)outer, ni, no);
    return gather ? all_gather(&c, out, in, (size_t)outer, ni) : reduce_scatter(&c, out, in, (size_t)outer, no);
  }
  case RT_ALL_TO_ALL: {
    int r = ins->rank;
    if (r < 1 || r > RT_MAXRANK || ins->split_dim < 0 || ins->split_dim >= r || ins->concat_dim < 0 ||
        ins->concat_dim >= r)
      return diag_errbuf(err, errlen, "%s over %s: split dim %d and concat dim %d of a rank-%d value", what, g->name,
                  ins->split_dim, ins->concat_dim, r);
    size_t tot = 1;
    for (int i = 0; i < r; i++) {
      if (ins->shape[i] < 1) return diag_errbuf(err, errlen, "%s over %s: dim %d is %" PRId64, what, g->name, i, ins->shape[i]);
      tot *= (size_t)ins->shape[i];
    }
    if (ins->shape[ins->split_dim] % P)
      return diag_errbuf(err, errlen, "%s over %s: dim %d (%" PRId64 ") does not split into %d pieces", what, g->name,
                  ins->split_dim, ins->shape[ins->split_dim], P);
    if (ni != tot || no != tot)
      return diag_errbuf(err, errlen, "%s over %s: in has %zu elements and out %zu, the shape needs %zu", what, g->name, ni, no, tot);
    if (P == 1) {
      memcpy(out, in, ni * c.es);
      return 0;
    }
    return all_to_all(&c, ins, out, in, ni);
  }
  default:
    return diag_errbuf(err, errlen, "%s is not a collective", what);
  }
}

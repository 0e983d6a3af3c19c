/*
** comm_nccl.c: the four collectives over NCCL, in device memory, queued on
** the CUDA backend's stream after the kernels that made their inputs.
**
** Each group of more than one device gets an NCCL communicator: its member
** at index 0 makes the unique id, the group's MPI communicator carries it
** to the others, and each joins at its index in the group (the same index
** comm_mpi.c uses, so pieces land where the MPI path puts them).
**
** NCCL gathers and scatters along the first dimension only (rank-major
** blocks); where the [outer, n, inner] view has outer > 1, a permute kernel
** turns [outer, P, blk] into [P, outer, blk] before a reduce-scatter and
** back after an all-gather, as comm_mpi.c does with its strided views; the
** all-to-all packs and unpacks its pieces the same way around grouped
** sends and receives.
*/
#include "util/diag.h"
#include "runtime/comm_nccl.h"
#include "runtime/cuda_int.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct nccl_group {
  ncclComm_t comm;                /* NULL for a group of one device */
  int size, index;
} nccl_group;

struct rt_nccl {
  rt_comm comm;                   /* handed to the executor; impl is this */
  rt_mpi *m;
  const rt_prog *p;
  cuda_ctx *c;
  int ngroups;
  nccl_group *groups;
  CUdeviceptr scratch;            /* packing, grown on demand */
  size_t scratch_bytes;
};

#define DP(p) ((CUdeviceptr)(uintptr_t)(p))

static int nccl_fail(const rt_nccl *x, const char *call, ncclResult_t rc, char *err, size_t errlen) {
  const char *s = x->c->api.ncclGetErrorString ? x->c->api.ncclGetErrorString(rc) : NULL;
  return diag_errbuf(err, errlen, "%s: %s", call, s ? s : "NCCL error");
}

#define NC(x, call, ...) do { \
    ncclResult_t rc_ = (x)->c->api.call(__VA_ARGS__); \
    if (rc_ != 0) return nccl_fail((x), #call, rc_, err, errlen); \
  } while (0)

#define CU(x, call, ...) do { \
    CUresult rc_ = (x)->c->api.call(__VA_ARGS__); \
    if (rc_ != CUDA_OK) return cuda_fail(&(x)->c->api, #call, rc_, err, errlen); \
  } while (0)

static int n_size(void *impl, int g) {
  rt_nccl *x = impl;
  return g >= 0 && g < x->ngroups ? x->groups[g].size : 0;
}

static int n_index(void *impl, int g) {
  rt_nccl *x = impl;
  return g >= 0 && g < x->ngroups ? x->groups[g].index : -1;
}

const rt_comm *rt_nccl_comm(rt_nccl *n) { return n ? &n->comm : NULL; }

void rt_nccl_free(rt_nccl *n) {
  if (!n) return;
  if (n->c && n->c->api.cuCtxSetCurrent(n->c->cx) == CUDA_OK) {
    n->c->api.cuStreamSynchronize(n->c->stream);
    for (int g = 0; g < n->ngroups; g++)
      if (n->groups[g].comm) n->c->api.ncclCommDestroy(n->groups[g].comm);
    if (n->scratch) n->c->api.cuMemFree(n->scratch);
  }
  free(n->groups);
  free(n);
}

/* this rank's part of making the communicators; the caller agrees on the outcome */
static int setup(rt_nccl *x, char *err, size_t errlen) {
  const rt_comm *mc = rt_mpi_comm(x->m);
  CU(x, cuCtxSetCurrent, x->c->cx);
  for (int g = 0; g < x->ngroups; g++) {
    nccl_group *ng = &x->groups[g];
    ng->size = mc->size(mc->impl, g);
    ng->index = mc->index(mc->impl, g);
    if (ng->size <= 1) continue;
    /* the id and whether making it worked travel together, so a failure at index 0 stops every member */
    struct { ncclUniqueId id; int ok; } msg;
    memset(&msg, 0, sizeof msg);
    if (ng->index == 0) msg.ok = x->c->api.ncclGetUniqueId(&msg.id) == 0;
    if (rt_mpi_group_bcast(x->m, g, &msg, sizeof msg, 0, err, errlen)) return -1;
    if (!msg.ok) return diag_errbuf(err, errlen, "ncclGetUniqueId failed on the first member of group %d", g);
    NC(x, ncclCommInitRank, &ng->comm, ng->size, msg.id, ng->index);
  }
  return 0;
}

static int nccl_run(void *impl, const rt_instr *ins, void *out, const void *in, char *err, size_t errlen);

rt_nccl *rt_nccl_new(rt_mpi *m, const rt_backend *cuda, char *err, size_t errlen) {
  cuda_ctx *c = cuda_ctx_of(cuda);
  char why[512] = "";
  int bad = 0;
  if (!m) bad = diag_errbuf(why, sizeof why, "NCCL needs the MPI communicators (rt_mpi_new first)");
  else if (!c) bad = diag_errbuf(why, sizeof why, "NCCL needs a CUDA backend");
  else bad = cuda_load_nccl(&c->api, c->opts.lib_dir, why, sizeof why);
  /* every rank must be able to go on before any joins a communicator */
  if (rt_mpi_agree(m, bad, why, err, errlen)) return NULL;
  const rt_prog *p = rt_mpi_prog(m);
  rt_nccl *x = mem_calloc(1, sizeof *x);
  x->m = m;
  x->p = p;
  x->c = c;
  x->ngroups = p->ngroups > 0 ? p->ngroups : 0;
  x->groups = mem_calloc((size_t)x->ngroups + 1, sizeof *x->groups);
  x->comm.impl = x;
  x->comm.size = n_size;
  x->comm.index = n_index;
  x->comm.run = nccl_run;
  x->comm.device_aware = 1;
  bad = setup(x, why, sizeof why);
  if (rt_mpi_agree(m, bad, why, err, errlen)) {
    rt_nccl_free(x);
    return NULL;
  }
  return x;
}

/* ---- the collectives ---- */

static int scratch(rt_nccl *x, size_t bytes, CUdeviceptr *p, char *err, size_t errlen) {
  if (bytes > x->scratch_bytes) {
    CU(x, cuStreamSynchronize, x->c->stream);
    if (x->scratch) CU(x, cuMemFree, x->scratch);
    x->scratch = 0;
    x->scratch_bytes = 0;
    CU(x, cuMemAlloc, &x->scratch, bytes);
    x->scratch_bytes = bytes;
  }
  *p = x->scratch;
  return 0;
}

static int nccl_run(void *impl, const rt_instr *ins, void *out, const void *in, char *err, size_t errlen) {
  rt_nccl *x = impl;
  const rt_prog *p = x->p;
  cuda_ctx *c = x->c;
  const char *what = ins->op < RT_NOPS ? rt_op_name((rt_op)ins->op) : "?";
  if (ins->group < 0 || ins->group >= x->ngroups) return diag_errbuf(err, errlen, "%s: no group %d", what, ins->group);
  nccl_group *g = &x->groups[ins->group];
  if (ins->out < 0 || ins->out >= p->nbufs || ins->in[0] < 0 || ins->in[0] >= p->nbufs || !out || !in)
    return diag_errbuf(err, errlen, "%s: needs one input and one output buffer", what);
  const rt_buf *bi = &p->bufs[ins->in[0]], *bo = &p->bufs[ins->out];
  if (bi->dtype != bo->dtype) return diag_errbuf(err, errlen, "%s: in and out differ in dtype", what);
  if ((ins->op == RT_ALL_REDUCE || ins->op == RT_REDUCE_SCATTER) && bo->dtype != RT_F32)
    return diag_errbuf(err, errlen, "%s: sums need f32 values", what);
  if (in == out && ins->op != RT_ALL_REDUCE) return diag_errbuf(err, errlen, "%s: reads and writes the same buffer", what);
  if (ins->fn != RT_RSUM && (ins->op != RT_ALL_REDUCE || (ins->fn != RT_RMAX && ins->fn != RT_RMIN)))
    return diag_errbuf(err, errlen, "%s: no reduction %d", what, ins->fn);
  int red = ins->fn == RT_RMAX ? NCCL_MAX : ins->fn == RT_RMIN ? NCCL_MIN : NCCL_SUM;
  int type = bo->dtype == RT_I32 ? NCCL_INT32 : NCCL_FLOAT32, P = g->size;
  size_t ni = (size_t)bi->nelem, no = (size_t)bo->nelem, es = 4;
  CUdeviceptr o = DP(out), i = DP(in);
  CUstream s = c->stream;
  CU(x, cuCtxSetCurrent, c->cx);
  int64_t outer = ins->outer, n = ins->n, inner = ins->inner;
  switch (ins->op) {
  case RT_ALL_REDUCE:
    if (ni != no) return diag_errbuf(err, errlen, "%s: in has %zu elements, out %zu", what, ni, no);
    if (P == 1) {
      if (o != i && ni) CU(x, cuMemcpyDtoDAsync, o, i, ni * es, s);
      return 0;
    }
    NC(x, ncclAllReduce, (const void *)(uintptr_t)i, (void *)(uintptr_t)o, ni, type, red, g->comm, s);
    return 0;
  case RT_ALL_GATHER:
  case RT_REDUCE_SCATTER: {
    int gather = ins->op == RT_ALL_GATHER;
    if (outer < 1 || n < 1 || inner < 1)
      return diag_errbuf(err, errlen, "%s: view [%" PRId64 ", %" PRId64 ", %" PRId64 "]", what, outer, n, inner);
    if (!gather && n % P) return diag_errbuf(err, errlen, "%s: %" PRId64 " rows do not split into %d pieces", what, n, P);
    size_t want_in = (size_t)(outer * n * inner), want_out = gather ? want_in * P : want_in / P;
    if (ni != want_in || no != want_out)
      return diag_errbuf(err, errlen, "%s: in has %zu elements and out %zu, the view needs %zu and %zu", what, ni, no,
                    want_in, want_out);
    if (P == 1) {
      if (ni) CU(x, cuMemcpyDtoDAsync, o, i, ni * es, s);
      return 0;
    }
    if (gather) {
      size_t e = ni, blk = e / (size_t)outer;             /* one member's part; its rows per outer */
      if (outer == 1) {
        NC(x, ncclAllGather, (const void *)(uintptr_t)i, (void *)(uintptr_t)o, e, type, g->comm, s);
        return 0;
      }
      CUdeviceptr t;
      if (scratch(x, e * P * es, &t, err, errlen)) return -1;
      NC(x, ncclAllGather, (const void *)(uintptr_t)i, (void *)(uintptr_t)t, e, type, g->comm, s);
      return cuda_swap01(c, o, t, P, outer, (long long)blk, err, errlen);     /* [P, outer, blk] -> [outer, P, blk] */
    }
    size_t e = no, blk = e / (size_t)outer;                /* out's size; its rows per outer */
    if (outer == 1) {
      NC(x, ncclReduceScatter, (const void *)(uintptr_t)i, (void *)(uintptr_t)o, e, type, NCCL_SUM, g->comm, s);
      return 0;
    }
    CUdeviceptr t;
    if (scratch(x, ni * es, &t, err, errlen)) return -1;
    if (cuda_swap01(c, t, i, outer, P, (long long)blk, err, errlen)) return -1;   /* [outer, P, blk] -> [P, outer, blk] */
    NC(x, ncclReduceScatter, (const void *)(uintptr_t)t, (void *)(uintptr_t)o, e, type, NCCL_SUM, g->comm, s);
    return 0;
  }
  case RT_ALL_TO_ALL: {
    int r = ins->rank, sd = ins->split_dim, cd = ins->concat_dim;
    if (r < 1 || r > RT_MAXRANK || sd < 0 || sd >= r || cd < 0 || cd >= r)
      return diag_errbuf(err, errlen, "%s: split dim %d and concat dim %d of a rank-%d value", what, sd, cd, r);
    size_t tot = 1;
    for (int d = 0; d < r; d++) {
      if (ins->shape[d] < 1) return diag_errbuf(err, errlen, "%s: dim %d is %" PRId64, what, d, ins->shape[d]);
      tot *= (size_t)ins->shape[d];
    }
    if (ins->shape[sd] % P)
      return diag_errbuf(err, errlen, "%s: dim %d (%" PRId64 ") does not split into %d pieces", what, sd, ins->shape[sd], P);
    if (ni != tot || no != tot) return diag_errbuf(err, errlen, "%s: in has %zu elements and out %zu, the shape needs %zu",
                                              what, ni, no, tot);
    if (P == 1) {
      CU(x, cuMemcpyDtoDAsync, o, i, ni * es, s);
      return 0;
    }
    size_t e = ni / P, A = 1, B = 1, A2 = 1, B2 = 1;
    for (int d = 0; d < sd; d++) A *= (size_t)ins->shape[d];
    for (int d = sd + 1; d < r; d++) B *= (size_t)ins->shape[d];
    B *= (size_t)ins->shape[sd] / P;
    for (int d = 0; d < cd; d++) A2 *= (size_t)(d == sd ? ins->shape[d] / P : ins->shape[d]);
    for (int d = cd; d < r; d++) B2 *= (size_t)(d == sd ? ins->shape[d] / P : ins->shape[d]);
    size_t need = (A > 1 ? ni : 0) + (A2 > 1 ? ni : 0);
    CUdeviceptr t = 0, send = i, recv = o;
    if (need && scratch(x, need * es, &t, err, errlen)) return -1;
    if (A > 1) {                  /* pieces [A, P, B] -> [P, A, B] */
      send = t;
      if (cuda_swap01(c, send, i, (long long)A, P, (long long)B, err, errlen)) return -1;
    }
    if (A2 > 1) recv = t + (A > 1 ? ni * es : 0);
    NC(x, ncclGroupStart);
    for (int q = 0; q < P; q++) {
      ncclResult_t rc = c->api.ncclSend((const void *)(uintptr_t)(send + q * e * es), e, type, q, g->comm, s);
      if (rc == 0) rc = c->api.ncclRecv((void *)(uintptr_t)(recv + q * e * es), e, type, q, g->comm, s);
      if (rc != 0) {
        c->api.ncclGroupEnd();
        return nccl_fail(x, "ncclSend/ncclRecv", rc, err, errlen);
      }
    }
    NC(x, ncclGroupEnd);
    if (A2 > 1 && cuda_swap01(c, o, recv, P, (long long)A2, (long long)B2, err, errlen)) return -1;   /* [P, A2, B2] -> [A2, P, B2] */
    return 0;
  }
  default:
    return diag_errbuf(err, errlen, "%s is not a collective", what);
  }
}

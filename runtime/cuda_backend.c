/*
** cuda_backend.c: the CUDA backend's table (backend.h). One object per
** GPU: the driver's primary context of the device, one stream that every
** copy, kernel and GEMM is queued on (so they run in program order and the
** host never waits inside a step), a cuBLAS handle on that stream, the
** module of carve's kernels (cuda_kernels.c) and a status record on the
** device where kernels report bad ids, read at sync.
**
** GEMMs: prog.h's are row-major and cuBLAS is column-major; a row-major
** matrix is its transpose in column-major, so C = op(A) op(B) is computed
** as C^T = op(B)^T op(A)^T: the operands swap places, each keeps its
** leading dimension and its own transpose flag.
**
** Every driver and cuBLAS call is checked; a failure names the call.
*/
#include "util/diag.h"
#include "runtime/cuda_int.h"
#include "runtime/dtype.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t i64;

#define DP(p) ((CUdeviceptr)(uintptr_t)(p))

/* a driver call through c's table; on failure the message names it */
#define CU(c, call, ...) do { \
    CUresult rc_ = (c)->api.call(__VA_ARGS__); \
    if (rc_ != CUDA_OK) return cuda_fail(&(c)->api, #call, rc_, err, errlen); \
  } while (0)

static void cuda_release(const rt_backend *be);

cuda_ctx *cuda_ctx_of(const rt_backend *be) {
  return be && be->release == cuda_release ? (cuda_ctx *)be : NULL;
}

static int blas_fail(const cuda_ctx *c, const char *call, cublasStatus_t st, char *err, size_t errlen) {
  const char *s = c->api.cublasGetStatusString ? c->api.cublasGetStatusString(st) : NULL;
  if (s) return diag_errbuf(err, errlen, "%s: %s", call, s);
  return diag_errbuf(err, errlen, "%s: cuBLAS status %d", call, st);
}

static int current(cuda_ctx *c, char *err, size_t errlen) {
  CU(c, cuCtxSetCurrent, c->cx);
  return 0;
}

/* ---- memory ---- */

static void *cu_alloc(void *ctx, size_t bytes) {
  cuda_ctx *c = ctx;
  CUdeviceptr p = 0;
  size_t n = (bytes + 255) & ~(size_t)255;
  if (c->api.cuCtxSetCurrent(c->cx) != CUDA_OK || c->api.cuMemAlloc(&p, n ? n : 256) != CUDA_OK) return NULL;
  return (void *)(uintptr_t)p;
}

static void cu_free(void *ctx, void *p) {
  cuda_ctx *c = ctx;
  if (!p) return;
  c->api.cuCtxSetCurrent(c->cx);
  c->api.cuStreamSynchronize(c->stream);     /* queued work may still read it */
  c->api.cuMemFree(DP(p));
}

static int cu_upload(void *ctx, void *dst, const void *src, size_t bytes, char *err, size_t errlen) {
  cuda_ctx *c = ctx;
  if (!bytes) return 0;
  if (current(c, err, errlen)) return -1;
  CU(c, cuMemcpyHtoDAsync, DP(dst), src, bytes, c->stream);
  CU(c, cuStreamSynchronize, c->stream);     /* the caller may reuse src */
  return 0;
}

static int cu_download(void *ctx, void *dst, const void *src, size_t bytes, char *err, size_t errlen) {
  cuda_ctx *c = ctx;
  if (!bytes) return 0;
  if (current(c, err, errlen)) return -1;
  CU(c, cuMemcpyDtoHAsync, dst, DP(src), bytes, c->stream);
  CU(c, cuStreamSynchronize, c->stream);
  return 0;
}

static int cu_zero(void *ctx, void *p, size_t bytes, char *err, size_t errlen) {
  cuda_ctx *c = ctx;
  if (!bytes) return 0;
  if (current(c, err, errlen)) return -1;
  CU(c, cuMemsetD8Async, DP(p), 0, bytes, c->stream);
  return 0;
}

static int status_reset(cuda_ctx *c, char *err, size_t errlen) {
  cuda_status st = {0, 0, 0, ~0ull};
  CU(c, cuMemcpyHtoDAsync, c->status, &st, sizeof st, c->stream);
  CU(c, cuStreamSynchronize, c->stream);
  return 0;
}

/* waits for the stream, then reads (and clears) what the kernels reported */
static int cu_sync(void *ctx, int *where, char *err, size_t errlen) {
  cuda_ctx *c = ctx;
  cuda_status st;
  *where = -1;
  if (current(c, err, errlen)) return -1;
  CU(c, cuStreamSynchronize, c->stream);
  CU(c, cuMemcpyDtoHAsync, &st, c->status, sizeof st, c->stream);
  CU(c, cuStreamSynchronize, c->stream);
  if (!st.tag) return 0;
  *where = st.tag - 1;
  int32_t val = (int32_t)(uint32_t)(st.key & 0xffffffffu);
  char msg[256];
  if (st.code == CUDA_ERR_LABEL)
    snprintf(msg, sizeof msg, "cross_entropy: label %" PRId32 " out of range [0, %" PRId64 ")", val, (i64)st.bound);
  else
    snprintf(msg, sizeof msg, "embedding: id %" PRId64 " out of range [0, %" PRId64 ")", (i64)val, (i64)st.bound);
  if (status_reset(c, err, errlen)) return -1;
  return diag_errbuf(err, errlen, "%s", msg);
}

/* ---- launching ---- */

static int launch(cuda_ctx *c, int f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, void **args,
                  char *err, size_t errlen) {
  CUresult rc = c->api.cuLaunchKernel(c->fn[f], gx ? gx : 1, gy ? gy : 1, gz ? gz : 1, bx, by, 1, 0, c->stream, args,
                                      NULL);
  if (rc == CUDA_OK) return 0;
  char call[96];
  snprintf(call, sizeof call, "cuLaunchKernel(%s)", cuda_kernel_names[f]);
  return cuda_fail(&c->api, call, rc, err, errlen);
}

/* blocks for a grid-stride loop over n items */
static unsigned grid(const cuda_ctx *c, i64 n, unsigned threads) {
  i64 b = (n + threads - 1) / threads, cap = (i64)(c->sms > 0 ? c->sms : 16) * 32;
  if (b > cap) b = cap;
  return b < 1 ? 1 : (unsigned)b;
}

/* one block per row: its width by the row's length */
static unsigned row_threads(i64 n) {
  return n <= 64 ? 32 : n <= 256 ? 64 : n <= 1024 ? 128 : n <= 4096 ? 256 : 512;
}

static unsigned row_blocks(i64 outer) { return outer < (1 << 24) ? (unsigned)(outer > 0 ? outer : 1) : 1u << 24; }

#define CTX cuda_ctx *c = ctx; if (current(c, err, errlen)) return -1

/* ---- data movement ---- */

static int k_fill(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  CUdeviceptr o = DP(out);
  i64 n = ins->nelem;
  float v = ins->alpha;
  if (n <= 0) return 0;
  void *args[] = {&o, &n, &v};
  return launch(c, KF_FILL, grid(c, n, 256), 1, 1, 256, 1, args, err, errlen);
}

static int k_copy(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  if (out != in[0] && ins->nelem > 0) CU(c, cuMemcpyDtoDAsync, DP(out), DP(in[0]), (size_t)ins->nelem * 4, c->stream);
  return 0;
}

/* rows [ioff, ioff+rows) of in [outer, irows, inner] to rows [ooff, ...) of out [outer, orows, inner] */
static int rows_copy(cuda_ctx *c, void *out, const void *in, i64 outer, i64 rows, i64 inner, i64 orows, i64 ooff,
                     i64 irows, i64 ioff, char *err, size_t errlen) {
  CUdeviceptr o = DP(out), i = DP(in);
  i64 n = outer * rows * inner;
  if (n <= 0) return 0;
  void *args[] = {&o, &i, &outer, &rows, &inner, &orows, &ooff, &irows, &ioff};
  return launch(c, KF_ROWS, grid(c, n, 256), 1, 1, 256, 1, args, err, errlen);
}

static int k_block_copy(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  i64 n = ins->n, m = ins->m > 0 ? ins->m : n, k0 = ins->k, n2 = ins->n2, off = ins->off;
  if (off < 0 || n < 0 || off + n > n2)
    return diag_errbuf(err, errlen, "block [%" PRId64 ", %" PRId64 ") outside [0, %" PRId64 ")", off, off + n, n2);
  if (k0 < 0 || k0 + n > m)
    return diag_errbuf(err, errlen, "rows [%" PRId64 ", %" PRId64 ") outside [0, %" PRId64 ")", k0, k0 + n, m);
  return rows_copy(c, out, in[0], ins->outer, n, ins->inner, n2, off, m, k0, err, errlen);
}

static int k_shard_slice(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  i64 n = ins->n, piece = ins->n2;
  if (ins->off < 0 || piece < 0 || ins->off + piece > n)
    return diag_errbuf(err, errlen, "rows [%" PRId64 ", %" PRId64 ") outside [0, %" PRId64 ")", ins->off, ins->off + piece, n);
  return rows_copy(c, out, in[0], ins->outer, piece, ins->inner, piece, 0, n, ins->off, err, errlen);
}

/* Fused attention has only a CPU kernel so far: say so, and how to run without it. */
static int k_no_attention(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  (void)ctx; (void)out; (void)in;
  return diag_errbuf(err, errlen, "%s has no CUDA kernel yet; run with --no-fuse to keep attention unfused",
                     rt_op_name((rt_op)ins->op));
}

static int permute(cuda_ctx *c, CUdeviceptr o, CUdeviceptr i, int r, const i64 *shape, const i64 *st, char *err,
                   size_t errlen) {
  cuda_perm p;
  memset(&p, 0, sizeof p);
  p.n = 1;
  p.rank = r;
  for (int d = 0; d < r; d++) { p.shape[d] = shape[d]; p.st[d] = st[d]; p.n *= shape[d]; }
  if (p.n <= 0) return 0;
  void *args[] = {&o, &i, &p};
  return launch(c, KF_PERMUTE, grid(c, p.n, 256), 1, 1, 256, 1, args, err, errlen);
}

int cuda_swap01(cuda_ctx *c, CUdeviceptr out, CUdeviceptr in, long long a, long long b, long long cc, char *err,
                size_t errlen) {
  i64 shape[3] = {b, a, cc}, st[3] = {cc, b * cc, 1};
  if (current(c, err, errlen)) return -1;
  return permute(c, out, in, 3, shape, st, err, errlen);
}

static int k_transpose(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  int rank = ins->rank;
  if (rank < 0 || rank > RT_MAXRANK) return diag_errbuf(err, errlen, "bad rank %d", rank);
  i64 istr[RT_MAXRANK], total = 1;
  for (int d = rank - 1; d >= 0; d--) { istr[d] = total; total *= ins->shape[d]; }
  if (total == 0) return 0;
  /* output dims with their input strides, unit dims dropped, runs merged (as kern_cpu.c) */
  i64 os[RT_MAXRANK], s[RT_MAXRANK];
  int r = 0, seen = 0;
  for (int i = 0; i < rank; i++) {
    int p = ins->perm[i];
    if (p < 0 || p >= rank || (seen >> p & 1)) return diag_errbuf(err, errlen, "bad permutation");
    seen |= 1 << p;
    if (ins->shape[p] == 1) continue;
    if (r > 0 && s[r - 1] == istr[p] * ins->shape[p]) { os[r - 1] *= ins->shape[p]; s[r - 1] = istr[p]; }
    else { os[r] = ins->shape[p]; s[r] = istr[p]; r++; }
  }
  CUdeviceptr o = DP(out), i = DP(in[0]);
  if (r == 0) {
    CU(c, cuMemcpyDtoDAsync, o, i, 4, c->stream);
    return 0;
  }
  if (r == 1 || s[r - 1] == 1) return permute(c, o, i, r, os, s, err, errlen);
  int q = 0;
  while (q < r && s[q] != 1) q++;
  if (q == r) return diag_errbuf(err, errlen, "bad transpose strides");
  cuda_perm p;
  memset(&p, 0, sizeof p);
  p.n = total;
  p.rank = r;
  for (int d = 0; d < r; d++) { p.shape[d] = os[d]; p.st[d] = s[d]; }
  i64 slabs = total / (os[q] * os[r - 1]), ti = (os[q] + 31) / 32, tj = (os[r - 1] + 31) / 32;
  unsigned gx = tj < (1 << 20) ? (unsigned)tj : 1u << 20, gy = ti < 65535 ? (unsigned)ti : 65535,
           gz = slabs < 65535 ? (unsigned)slabs : 65535;
  void *args[] = {&o, &i, &p, &q, &slabs};
  return launch(c, KF_TRANSPOSE_TILED, gx, gy, gz, 32, 8, args, err, errlen);
}

/* ---- elementwise ---- */

/* an elementwise op over dense operands and the sums of its rows (interp/lower/biasgrad.c) */
static int k_ew_colsum(cuda_ctx *c, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  int fn = ins->fn, ar = rt_ewfn_arity((rt_ewfn)fn);
  if (ar < 1 || ar > 2 || fn >= RT_ABS || ins->rank < 1 || ins->rank > RT_MAXRANK)
    return diag_errbuf(err, errlen, "a sum of rows takes f32 elementwise ops of one or two inputs");
  i64 w = ins->shape[ins->rank - 1], rows = 1;
  for (int d = 0; d < ins->rank - 1; d++) rows *= ins->shape[d];
  if (w == 0) return 0;
  CUdeviceptr o = DP(out), a = DP(in[0]), b = ar > 1 ? DP(in[1]) : 0, sum = DP(in[3]);
  float al = ins->alpha, be = ins->beta;
  void *args[] = {&o, &a, &b, &sum, &rows, &w, &fn, &al, &be};
  return launch(c, KF_EW_COLSUM, grid(c, w, 128), 1, 1, 128, 1, args, err, errlen);
}

static int k_ew(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  if (in[3]) return k_ew_colsum(c, ins, out, in, err, errlen);
  int fn = ins->fn, ar = rt_ewfn_arity((rt_ewfn)fn);
  if (ar < 1 || ar > 2) return diag_errbuf(err, errlen, "unknown elementwise function %d", fn);
  if (ins->rank > RT_MAXRANK) return diag_errbuf(err, errlen, "rank %d is over %d", ins->rank, RT_MAXRANK);
  /* unit dims dropped, dims every input walks contiguously merged (as kern_cpu.c) */
  cuda_ewp p;
  memset(&p, 0, sizeof p);
  int r = rt_merge_dims(ins->rank, ins->shape, ar, ins->stride, p.shape, p.st);
  if (r == 0) return 0;
  p.n = 1;
  for (int d = 0; d < r; d++) p.n *= p.shape[d];
  p.rank = r;
  p.fn = fn;
  p.alpha = ins->alpha;
  p.beta = ins->beta;
  CUdeviceptr o = DP(out), a = DP(in[0]), b = ar > 1 ? DP(in[1]) : 0;
  i64 sa = p.st[0][0], sb = p.st[1][0];
  if (r == 1 && (sa == 0 || sa == 1) && (sb == 0 || sb == 1)) {
    int va = (int)sa, vb = (int)sb;
    float al = p.alpha, be = p.beta;
    void *args[] = {&o, &a, &b, &p.n, &va, &vb, &fn, &al, &be};
    return launch(c, KF_EW_FLAT, grid(c, p.n, 256), 1, 1, 256, 1, args, err, errlen);
  }
  void *args[] = {&o, &a, &b, &p};
  return launch(c, KF_EW_ND, grid(c, p.n, 256), 1, 1, 256, 1, args, err, errlen);
}

/* fused elementwise steps (interp/lower/fuse.c): dims merged as kern_cpu.c's k_fused merges them */
static int k_fused(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  const rt_fused *fu = ins->data;
  if (!fu || ins->rank > RT_MAXRANK || ins->nin > RT_MAXIN || fu->nsteps < 1 || fu->nsteps > RT_FUSE_MAXSTEPS)
    return diag_errbuf(err, errlen, "fused steps the cuda kernel does not take");
  if (ins->mode & RT_FUSED_REDUCE)
    return diag_errbuf(err, errlen, "fused steps ending in a reduction have no CUDA kernel yet; run with --device-kind cpu");
  cuda_fusedp p;
  memset(&p, 0, sizeof p);
  p.nin = ins->nin;
  p.nsteps = fu->nsteps;
  int r = rt_merge_dims(ins->rank, ins->shape, p.nin, fu->stride, p.shape, p.st);
  if (r == 0) return 0;
  p.rank = r;
  p.n = 1;
  for (int d = 0; d < r; d++) p.n *= p.shape[d];
  for (int k = 0; k < p.nin; k++) {
    p.in[k] = DP(in[k]);
    if (ins->idt[k] == RT_I1) p.bits |= 1 << k;
  }
  for (int j = 0; j < p.nsteps; j++) {
    const rt_fstep *s = &fu->step[j];
    int ar = rt_ewfn_arity((rt_ewfn)s->fn), a[3];
    for (int k = 0; k < 3; k++) {         /* operands past the function's arity read input 0 (unused) */
      int g = k < ar ? s->arg[k] : -1;
      a[k] = g >= 0 ? p.nin + g : -1 - g;
    }
    p.step[j] = (cuda_fstep){s->fn, a[0], a[1], a[2], s->alpha, s->beta};
  }
  CUdeviceptr o = DP(out);
  void *args[] = {&o, &p};
  return launch(c, KF_FUSED, grid(c, p.n, 256), 1, 1, 256, 1, args, err, errlen);
}

/* ---- values the program holds ---- */

static int k_iota(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  i64 outer = ins->outer, n = ins->n, inner = ins->inner;
  int isfloat = ins->odt == RT_F32;
  if (outer * n * inner <= 0) return 0;
  CUdeviceptr o = DP(out);
  void *args[] = {&o, &outer, &n, &inner, &isfloat};
  return launch(c, KF_IOTA, grid(c, outer * n * inner, 256), 1, 1, 256, 1, args, err, errlen);
}

/* a constant's elements, copied from the program each run (they are few) */
static int k_const(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (!ins->data && ins->nelem > 0) return diag_errbuf(err, errlen, "a constant without data");
  return cu_upload(ctx, out, ins->data, (size_t)ins->nelem * rt_dtype_size((rt_dtype)ins->odt), err, errlen);
}

/* ---- optimizer updates (kern_cpu.c's k_adam and k_sgd) ---- */

static int k_adam(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  i64 n = ins->nelem;
  if (n <= 0) return 0;
  CUdeviceptr o = DP(out), p = DP(in[0]), g = DP(in[1]), m = DP(in[2]), v = DP(in[3]), lr = DP(in[4]), eps = DP(in[5]);
  CUdeviceptr ok = in[6] ? DP(in[6]) : 0;
  float b1 = (float)ins->hyper[0], b2 = (float)ins->hyper[1], c1 = (float)ins->hyper[4], c2 = (float)ins->hyper[5];
  float wd = (float)ins->hyper[3];
  int decay = ins->mode & RT_ADAM_DECOUPLED ? 2 : ins->hyper[3] != 0 ? 1 : 0;
  void *args[] = {&o, &p, &g, &m, &v, &lr, &eps, &ok, &n, &b1, &b2, &c1, &c2, &wd, &decay};
  return launch(c, KF_ADAM, grid(c, n, 256), 1, 1, 256, 1, args, err, errlen);
}

static int k_sgd(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  i64 n = ins->nelem;
  if (n <= 0) return 0;
  CUdeviceptr o = DP(out), p = DP(in[0]), g = DP(in[1]), m = in[2] ? DP(in[2]) : 0, ok = in[6] ? DP(in[6]) : 0;
  float nlr = -ins->alpha, mu = (float)ins->hyper[0], wd = (float)ins->hyper[1];
  int decay = ins->hyper[1] != 0;
  void *args[] = {&o, &p, &g, &m, &ok, &n, &nlr, &mu, &wd, &decay};
  return launch(c, KF_SGD, grid(c, n, 256), 1, 1, 256, 1, args, err, errlen);
}

/* ---- GEMM ---- */

static int k_gemm(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  i64 m = ins->m, n = ins->n, kk = ins->k, batch = ins->batch < 1 ? 1 : ins->batch;
  i64 sa = ins->stride_a, sb = ins->stride_b, sc = ins->stride_c;
  if (m < 0 || n < 0 || kk < 0) return diag_errbuf(err, errlen, "negative GEMM size");
  if (m == 0 || n == 0) return 0;
  CUdeviceptr C = DP(out);
  if (kk == 0) {      /* no products: C = beta * C */
    i64 mn = m * n;
    float beta = ins->beta;
    void *args[] = {&C, &batch, &sc, &mn, &beta};
    return launch(c, KF_SCALE, grid(c, batch * mn, 256), 1, 1, 256, 1, args, err, errlen);
  }
  /* a shared B under a contiguous stack of A's is one tall GEMM */
  if (batch > 1 && sb == 0 && !ins->transa && sa == m * kk && sc == m * n) {
    m *= batch;
    batch = 1;
  }
  if (m > INT_MAX || n > INT_MAX || kk > INT_MAX || batch > INT_MAX)
    return diag_errbuf(err, errlen, "GEMM of %" PRId64 "x%" PRId64 "x%" PRId64 " is too large for cuBLAS", m, n, kk);
  int lda = (int)(ins->transa ? m : kk), ldb = (int)(ins->transb ? kk : n);
  int opa = ins->transa ? CUBLAS_T : CUBLAS_N, opb = ins->transb ? CUBLAS_T : CUBLAS_N;
  const float *A = in[0], *B = in[1];
  float *Cp = out, al = ins->alpha, be = ins->beta;
  cublasStatus_t st;
  if (batch == 1 || sc == 0) {     /* one GEMM, or batches accumulating into one C in order */
    for (i64 bt = 0; bt < batch; bt++) {
      st = c->api.cublasSgemm(c->blas, opb, opa, (int)n, (int)m, (int)kk, &al, B + bt * sb, ldb, A + bt * sa, lda, &be,
                              Cp + bt * sc, (int)n);
      if (st) return blas_fail(c, "cublasSgemm", st, err, errlen);
    }
    return 0;
  }
  st = c->api.cublasSgemmStridedBatched(c->blas, opb, opa, (int)n, (int)m, (int)kk, &al, B, ldb, sb, A, lda, sa, &be,
                                        Cp, (int)n, sc, (int)batch);
  if (st) return blas_fail(c, "cublasSgemmStridedBatched", st, err, errlen);
  return 0;
}

/* ---- reductions ---- */

/* scratch for partial results, grown after the queued work that may use it is done */
static int work(cuda_ctx *c, size_t bytes, char *err, size_t errlen) {
  if (c->work_bytes >= bytes) return 0;
  CU(c, cuStreamSynchronize, c->stream);
  if (c->work) CU(c, cuMemFree, c->work);
  c->work = 0;
  c->work_bytes = 0;
  CU(c, cuMemAlloc, &c->work, bytes);
  c->work_bytes = bytes;
  return 0;
}

static int k_reduce(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  if (ins->fn != RT_RSUM && ins->fn != RT_RMAX) return diag_errbuf(err, errlen, "unknown reduction %d", ins->fn);
  CUdeviceptr y = DP(out), x = DP(in[0]);
  i64 outer = ins->outer, n = ins->n, inner = ins->inner;
  int fn = ins->fn;
  float alpha = ins->alpha;
  if (outer <= 0 || inner <= 0) return 0;
  if (inner == 1) {
    void *args[] = {&y, &x, &outer, &n, &fn, &alpha};
    return launch(c, KF_REDUCE_ROWS, row_blocks(outer), 1, 1, row_threads(n), 1, args, err, errlen);
  }
  /* columns in blocks of 32; rows cut into chunks (then combined in order) until
     there are blocks enough for the device, each chunk at least 64 rows */
  i64 cols = (inner + 31) / 32, oy = outer < 65535 ? outer : 65535, want = 4 * (i64)(c->sms > 0 ? c->sms : 16);
  i64 chunks = (want + cols * oy - 1) / (cols * oy), most = (n + 63) / 64;
  if (chunks > most) chunks = most;
  if (chunks > 65535) chunks = 65535;
  if (chunks < 1) chunks = 1;
  i64 rows = (n + chunks - 1) / chunks;
  if (rows < 1) rows = 1;
  chunks = (n + rows - 1) / rows;
  if (chunks < 1) chunks = 1;
  CUdeviceptr part = 0;
  if (chunks > 1) {
    if (work(c, (size_t)(outer * chunks * inner) * sizeof(double), err, errlen)) return -1;
    part = c->work;
  }
  unsigned gx = cols < (1 << 30) ? (unsigned)cols : 1u << 30;
  void *args[] = {&y, &part, &x, &outer, &n, &inner, &fn, &alpha, &rows, &chunks};
  if (launch(c, KF_REDUCE_COLS, gx, (unsigned)oy, (unsigned)chunks, 32, 16, args, err, errlen)) return -1;
  if (chunks == 1) return 0;
  void *fin[] = {&y, &part, &outer, &chunks, &inner, &fn, &alpha};
  return launch(c, KF_REDUCE_FIN, grid(c, outer * inner, 256), 1, 1, 256, 1, fin, err, errlen);
}

static int k_reduce_max_grad(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  CUdeviceptr dx = DP(out), x = DP(in[0]), dy = DP(in[1]);
  i64 outer = ins->outer, n = ins->n, inner = ins->inner;
  if (outer * inner <= 0) return 0;
  void *args[] = {&dx, &x, &dy, &outer, &n, &inner};
  return launch(c, KF_MAX_GRAD, grid(c, outer * inner, 128), 1, 1, 128, 1, args, err, errlen);
}

/* ---- row-wise ops: a block per row ---- */

static int rowwise(cuda_ctx *c, int f, const rt_instr *ins, void *out, void *in0, void *in1, char *err, size_t errlen) {
  CUdeviceptr o = DP(out), a = DP(in0), b = DP(in1);
  i64 outer = ins->outer, n = ins->n;
  if (outer <= 0) return 0;
  void *args2[] = {&o, &a, &outer, &n}, *args3[] = {&o, &a, &b, &outer, &n};
  return launch(c, f, row_blocks(outer), 1, 1, row_threads(n), 1, in1 ? args3 : args2, err, errlen);
}

static int k_softmax(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  return rowwise(c, KF_SOFTMAX, ins, out, in[0], NULL, err, errlen);
}

static int k_log_softmax(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  return rowwise(c, KF_LOG_SOFTMAX, ins, out, in[0], NULL, err, errlen);
}

static int k_softmax_grad(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  return rowwise(c, KF_SOFTMAX_GRAD, ins, out, in[0], in[1], err, errlen);
}

static int k_log_softmax_grad(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  return rowwise(c, KF_LOG_SOFTMAX_GRAD, ins, out, in[0], in[1], err, errlen);
}

static int k_layernorm(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  CUdeviceptr y = DP(out), x = DP(in[0]), g = DP(in[1]), b = DP(in[2]);
  i64 outer = ins->outer, n = ins->n;
  float eps = ins->alpha;
  int rms = (ins->mode & RT_LN_RMS) != 0;
  if (outer <= 0) return 0;
  void *args[] = {&y, &x, &g, &b, &outer, &n, &eps, &rms};
  return launch(c, KF_LAYERNORM, row_blocks(outer), 1, 1, row_threads(n), 1, args, err, errlen);
}

static int k_layernorm_grad(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (ins->mode & RT_LN_GAMMA)    /* lower_opts.no_fold_rows keeps it as layernorm, mul, reduce_sum */
    return diag_errbuf(err, errlen, "no cuda kernel for layernorm_grad's gamma gradient");
  CTX;
  CUdeviceptr dx = DP(out), x = DP(in[0]), g = DP(in[1]), dy = DP(in[2]);
  i64 outer = ins->outer, n = ins->n;
  float eps = ins->alpha;
  int rms = (ins->mode & RT_LN_RMS) != 0;
  if (outer <= 0) return 0;
  void *args[] = {&dx, &x, &g, &dy, &outer, &n, &eps, &rms};
  return launch(c, KF_LAYERNORM_GRAD, row_blocks(outer), 1, 1, row_threads(n), 1, args, err, errlen);
}

/* ---- embeddings and cross-entropy ---- */

static i64 table_rows(const rt_instr *ins) { return ins->n2 > 0 ? ins->n2 : ins->off + ins->n; }

static int k_gather_rows(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  CUdeviceptr y = DP(out), tab = DP(in[0]), ids = DP(in[1]), st = c->status;
  i64 outer = ins->outer, n = ins->n, inner = ins->inner, off = ins->off, n2 = table_rows(ins);
  int tag = ins->out + 1;
  i64 items = outer * (inner > 0 ? inner : 1);
  if (items <= 0) return 0;
  void *args[] = {&y, &tab, &ids, &outer, &n, &inner, &off, &n2, &st, &tag};
  return launch(c, KF_GATHER, grid(c, items, 256), 1, 1, 256, 1, args, err, errlen);
}

static int k_scatter_rows(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  CUdeviceptr t = DP(out), ids = DP(in[0]), dy = DP(in[1]), st = c->status;
  i64 outer = ins->outer, n = ins->n, inner = ins->inner, off = ins->off, n2 = table_rows(ins);
  int tag = ins->out + 1;
  if (n * inner > 0 && ins->beta == 0.0f) CU(c, cuMemsetD8Async, t, 0, (size_t)(n * inner) * 4, c->stream);
  i64 items = outer * (inner > 0 ? inner : 1);
  if (items <= 0) return 0;
  void *args[] = {&t, &ids, &dy, &outer, &n, &inner, &off, &n2, &st, &tag};
  return launch(c, KF_SCATTER, grid(c, items, 256), 1, 1, 256, 1, args, err, errlen);
}

/* A cross-entropy over split classes (the vocabulary-parallel loss:
** xent_sumexp, and xent or xent_grad with in4 and in5) has no kernel here
** yet: refused, never computed as if the classes were whole. */
static int k_no_split_xent(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  (void)ctx; (void)out; (void)in;
  return diag_errbuf(err, errlen, "%s: the cross-entropy, softmax or log_softmax over classes split between devices (the "
                     "logits' class dim split) has no CUDA kernel yet; run with --device-kind cpu, or keep the logits whole "
                     "on that axis (replicate value \"logits\" on AXIS)", rt_op_name((rt_op)ins->op));
}

static int k_xent(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (in[4]) return k_no_split_xent(ctx, ins, out, in, err, errlen);
  CTX;
  CUdeviceptr y = DP(out), x = DP(in[0]), lab = DP(in[1]), st = c->status;
  i64 outer = ins->outer, n = ins->n;
  int tag = ins->out + 1;
  float alpha = ins->alpha;
  if (outer <= 0) return cu_zero(c, out, 4, err, errlen);
  if (work(c, (size_t)outer * sizeof(double), err, errlen)) return -1;
  CUdeviceptr part = c->work;
  void *args[] = {&part, &x, &lab, &outer, &n, &st, &tag};
  if (launch(c, KF_XENT_ROWS, row_blocks(outer), 1, 1, row_threads(n), 1, args, err, errlen)) return -1;
  void *args2[] = {&y, &part, &outer, &alpha};
  return launch(c, KF_XENT_SUM, 1, 1, 1, 256, 1, args2, err, errlen);
}

static int k_xent_grad(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  if (in[4]) return k_no_split_xent(ctx, ins, out, in, err, errlen);
  if (in[3])                       /* lower_opts.no_fold_rows keeps xent apart */
    return diag_errbuf(err, errlen, "no cuda kernel for xent_grad with its loss");
  CTX;
  CUdeviceptr dx = DP(out), x = DP(in[0]), lab = DP(in[1]), dl = DP(in[2]), st = c->status;
  i64 outer = ins->outer, n = ins->n;
  int tag = ins->out + 1;
  float alpha = ins->alpha;
  if (outer <= 0) return 0;
  void *args[] = {&dx, &x, &lab, &dl, &outer, &n, &alpha, &st, &tag};
  return launch(c, KF_XENT_GRAD, row_blocks(outer), 1, 1, row_threads(n), 1, args, err, errlen);
}

static int k_causal_mask(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  CUdeviceptr y = DP(out), x = DP(in[0]);
  i64 outer = ins->outer, m = ins->m, n = ins->n, off = ins->off;
  float v = ins->alpha;
  if (outer * m * n <= 0) return 0;
  void *args[] = {&y, &x, &outer, &m, &n, &off, &v};
  return launch(c, KF_CAUSAL_MASK, grid(c, outer * m * n, 256), 1, 1, 256, 1, args, err, errlen);
}

/* ---- StableHLO's gather and scatter ---- */

/* ins's rt_index (checked by the executor) as the kernels read it: per
   dim of u, the index stride or the window's dim of x; per dim of x, its
   stride, the largest start and the dim of u it is batched with */
static int ix_params(const rt_instr *ins, cuda_ixp *p, char *err, size_t errlen) {
  const rt_index *ix = ins->data;
  rt_dtype t = (rt_dtype)ins->odt, it = (rt_dtype)ins->idt[1];
  if (!ix) return diag_errbuf(err, errlen, "no dimension map");
  if (t != RT_F32 && t != RT_I32)
    return diag_errbuf(err, errlen, "no cuda kernel for %s of %s", rt_op_name((rt_op)ins->op), rt_dtype_name(t));
  if (!rt_dtype_isint(it)) return diag_errbuf(err, errlen, "the indices are %s, not integers", rt_dtype_name(it));
  memset(p, 0, sizeof *p);
  i64 ist[RT_MAXRANK], s = 1;
  int iu[RT_MAXRANK];
  for (int j = ix->ri - 1; j >= 0; j--) { ist[j] = s; s *= ix->is[j]; }
  for (int j = 0; j < RT_MAXRANK; j++) iu[j] = -1;
  p->nu = 1;
  for (int a = 0; a < ix->ru; a++) {
    int j = ix->u_idim[a];
    p->us[a] = ix->us[a];
    p->nu *= ix->us[a];
    p->uxd[a] = j >= 0 ? -1 : ix->u_xdim[a];
    p->ust[a] = j >= 0 ? ist[j] : 0;
    if (j >= 0) iu[j] = a;
  }
  s = 1;
  for (int d = ix->rx - 1; d >= 0; d--) {
    p->xs[d] = ix->xs[d];
    p->xst[d] = s;
    s *= ix->xs[d];
    p->hi[d] = ix->xs[d] - ix->window[d];
    p->xbu[d] = ix->x_idim[d] >= 0 ? iu[(int)ix->x_idim[d]] : -1;
  }
  for (int k = 0; k < ix->ncomp; k++) p->comp[k] = ix->comp_dim[k];
  p->cst = ix->ivd < ix->ri ? ist[(int)ix->ivd] : 0;
  p->ru = ix->ru;
  p->rx = ix->rx;
  p->ncomp = ix->ncomp;
  p->it = it;
  p->how = ix->combine;
  p->isfloat = t == RT_F32;
  return 0;
}

/* one thread per element of the result, reading its element of x */
static int k_ix_gather(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  cuda_ixp p;
  if (ix_params(ins, &p, err, errlen)) return -1;
  p.clamp = !((const rt_index *)ins->data)->other_bounds;
  if (p.nu <= 0) return 0;
  CUdeviceptr y = DP(out), x = DP(in[0]), idx = DP(in[1]);
  void *args[] = {&y, &x, &idx, &p};
  return launch(c, KF_IX_GATHER, grid(c, p.nu, 256), 1, 1, 256, 1, args, err, errlen);
}

/* out = the operand, then one thread per update; replace first marks, in
   scratch of a word per element of x, the last update that lands there */
static int k_ix_scatter(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  CTX;
  const rt_index *ix = ins->data;
  cuda_ixp p;
  if (ix_params(ins, &p, err, errlen)) return -1;
  p.clamp = ix->other_bounds;
  if (p.how > RT_IX_MIN) return diag_errbuf(err, errlen, "unknown scatter combiner %d", p.how);
  i64 nx = 1;
  for (int d = 0; d < ix->rx; d++) nx *= ix->xs[d];
  if (out != in[0] && nx > 0) CU(c, cuMemcpyDtoDAsync, DP(out), DP(in[0]), (size_t)nx * 4, c->stream);
  if (p.nu <= 0 || nx <= 0) return 0;
  CUdeviceptr o = DP(out), u = DP(in[2]), idx = DP(in[1]), win = 0;
  if (p.how == RT_IX_REPLACE) {
    if (p.nu >= (i64)UINT32_MAX)      /* the marks are 32 bits */
      return diag_errbuf(err, errlen, "a replacing scatter of %" PRId64 " updates is too many for cuda", (i64)p.nu);
    if (work(c, (size_t)nx * 4, err, errlen)) return -1;
    win = c->work;
    CU(c, cuMemsetD8Async, win, 0, (size_t)nx * 4, c->stream);
    void *claim[] = {&win, &idx, &p};
    if (launch(c, KF_IX_CLAIM, grid(c, p.nu, 256), 1, 1, 256, 1, claim, err, errlen)) return -1;
  }
  void *args[] = {&o, &u, &idx, &win, &p};
  return launch(c, KF_IX_SCATTER, grid(c, p.nu, 256), 1, 1, 256, 1, args, err, errlen);
}

/* ---- the object ---- */

static void cuda_release(const rt_backend *be) {
  cuda_ctx *c = (cuda_ctx *)be;
  if (!c) return;
  if (c->have_cx && c->api.cuCtxSetCurrent(c->cx) == CUDA_OK) {
    if (c->stream) c->api.cuStreamSynchronize(c->stream);
    if (c->work) c->api.cuMemFree(c->work);
    if (c->status) c->api.cuMemFree(c->status);
    if (c->blas) c->api.cublasDestroy(c->blas);
    if (c->mod) c->api.cuModuleUnload(c->mod);
    if (c->stream) c->api.cuStreamDestroy(c->stream);
    c->api.cuDevicePrimaryCtxRelease(c->dev);
  }
  cuda_unload(&c->api);
  free(c);
}

/* the module: from the cache when it holds this source for this device, else NVRTC (then cached) */
static int load_kernels(cuda_ctx *c, char *err, size_t errlen) {
  char arch[32], path[1100];
  snprintf(arch, sizeof arch, "sm_%d%d", c->cc_major, c->cc_minor);
  char *src = cuda_source();
  cuda_cache_dir(c->opts.cache_dir, c->cache_dir, sizeof c->cache_dir);
  path[0] = 0;
  size_t n = 0;
  char *img = NULL;
  int from_cache = 0;
  if (c->cache_dir[0] && cuda_load_nvrtc(&c->api, c->opts.lib_dir, err, errlen) == 0) {
    /* the key holds NVRTC's version, so NVRTC is loaded even for a hit */
    cuda_cache_path(&c->api, c->cache_dir, src, arch, path, sizeof path);
    img = cuda_cache_read(path, &n);
    if (img && c->api.cuModuleLoadData(&c->mod, img) == CUDA_OK) from_cache = 1;
    free(img);
    img = NULL;
  }
  if (!from_cache) {
    c->mod = NULL;
    if (cuda_load_nvrtc(&c->api, c->opts.lib_dir, err, errlen) || cuda_compile(&c->api, src, arch, &img, &n, err, errlen)) {
      free(src);
      return -1;
    }
    CUresult rc = c->api.cuModuleLoadData(&c->mod, img);
    if (rc != CUDA_OK) {
      free(img);
      free(src);
      c->mod = NULL;
      return cuda_fail(&c->api, "cuModuleLoadData (carve's kernels)", rc, err, errlen);
    }
    if (!path[0]) cuda_cache_path(&c->api, c->cache_dir, src, arch, path, sizeof path);
    cuda_cache_write(path, img, n);
    free(img);
  }
  free(src);
  snprintf(c->cache_note, sizeof c->cache_note, "kernels for %s %s%s", arch,
           from_cache ? "loaded from " : path[0] ? "compiled by NVRTC, kept in " : "compiled by NVRTC (no cache)",
           path);
  for (int f = 0; f < KF_N; f++) {
    CUresult rc = c->api.cuModuleGetFunction(&c->fn[f], c->mod, cuda_kernel_names[f]);
    if (rc != CUDA_OK) {
      char call[96];
      snprintf(call, sizeof call, "cuModuleGetFunction(%s)", cuda_kernel_names[f]);
      return cuda_fail(&c->api, call, rc, err, errlen);
    }
  }
  return 0;
}

static int setup(cuda_ctx *c, char *err, size_t errlen) {
  cuda_api *a = &c->api;
  if (cuda_load_driver(a, c->opts.lib_dir, err, errlen)) return -1;
  CU(c, cuInit, 0);
  int count = 0;
  CU(c, cuDeviceGetCount, &count);
  if (c->opts.device < 0 || c->opts.device >= count)
    return diag_errbuf(err, errlen, "GPU %d asked for, but the driver sees %d", c->opts.device, count);
  CU(c, cuDeviceGet, &c->dev, c->opts.device);
  CU(c, cuDeviceGetAttribute, &c->cc_major, CU_ATTR_CC_MAJOR, c->dev);
  CU(c, cuDeviceGetAttribute, &c->cc_minor, CU_ATTR_CC_MINOR, c->dev);
  CU(c, cuDeviceGetAttribute, &c->sms, CU_ATTR_SM_COUNT, c->dev);
  CU(c, cuDeviceGetName, c->devname, (int)sizeof c->devname - 1, c->dev);
  CU(c, cuDevicePrimaryCtxRetain, &c->cx, c->dev);
  c->have_cx = 1;
  CU(c, cuCtxSetCurrent, c->cx);
  CU(c, cuStreamCreate, &c->stream, 0);
  if (cuda_load_cublas(a, c->opts.lib_dir, err, errlen)) return -1;
  cublasStatus_t st = a->cublasCreate(&c->blas);
  if (st) { c->blas = NULL; return blas_fail(c, "cublasCreate", st, err, errlen); }
  if ((st = a->cublasSetStream(c->blas, c->stream))) return blas_fail(c, "cublasSetStream", st, err, errlen);
  st = a->cublasSetMathMode(c->blas, c->opts.allow_tf32 ? CUBLAS_MATH_TF32 : CUBLAS_MATH_DEFAULT);
  if (st) return blas_fail(c, "cublasSetMathMode", st, err, errlen);
  if (load_kernels(c, err, errlen)) return -1;
  CU(c, cuMemAlloc, &c->status, 256);
  return status_reset(c, err, errlen);
}

/* The kernel table (ORDER RT_OP), what the buffers may hold, and which
** elementwise functions run here. */
static void set_kernels(rt_backend *be) {
  be->dtypes = 1u << RT_F32 | 1u << RT_I32;   /* the kernels' sources are f32 (and i32 ids) */
  be->newfn = RT_ABS;                          /* the functions of imported programs have no CUDA kernel yet */
  be->kernels[RT_FILL] = k_fill;
  be->kernels[RT_COPY] = k_copy;
  be->kernels[RT_EW] = k_ew;
  be->kernels[RT_TRANSPOSE] = k_transpose;
  be->kernels[RT_GEMM] = k_gemm;
  be->kernels[RT_REDUCE] = k_reduce;
  be->kernels[RT_REDUCE_MAX_GRAD] = k_reduce_max_grad;
  be->kernels[RT_SOFTMAX] = k_softmax;
  be->kernels[RT_LOG_SOFTMAX] = k_log_softmax;
  be->kernels[RT_SOFTMAX_GRAD] = k_softmax_grad;
  be->kernels[RT_LOG_SOFTMAX_GRAD] = k_log_softmax_grad;
  be->kernels[RT_LAYERNORM] = k_layernorm;
  be->kernels[RT_LAYERNORM_GRAD] = k_layernorm_grad;
  be->kernels[RT_GATHER_ROWS] = k_gather_rows;
  be->kernels[RT_SCATTER_ROWS] = k_scatter_rows;
  be->kernels[RT_XENT] = k_xent;
  be->kernels[RT_XENT_GRAD] = k_xent_grad;
  be->kernels[RT_XENT_SUMEXP] = k_no_split_xent;
  be->kernels[RT_CAUSAL_MASK] = k_causal_mask;
  be->kernels[RT_BLOCK_COPY] = k_block_copy;
  be->kernels[RT_SHARD_SLICE] = k_shard_slice;
  be->kernels[RT_GATHER] = k_ix_gather;
  be->kernels[RT_SCATTER] = k_ix_scatter;
  be->kernels[RT_IOTA] = k_iota;
  be->kernels[RT_CONST] = k_const;
  be->kernels[RT_FUSED] = k_fused;
  be->kernels[RT_ADAM] = k_adam;
  be->kernels[RT_SGD] = k_sgd;
  be->kernels[RT_ATTENTION] = k_no_attention;
  be->kernels[RT_ATTENTION_GRAD] = k_no_attention;
}

int rt_cuda_kernel_ops(unsigned char has[RT_NOPS]) {
  rt_backend be;
  memset(&be, 0, sizeof be);
  set_kernels(&be);
  for (int op = 0; op < RT_NOPS; op++)     /* (a refusal is not a kernel) */
    has[op] = be.kernels[op] && be.kernels[op] != k_no_attention && be.kernels[op] != k_no_split_xent;
  return be.newfn;
}

rt_backend *rt_backend_cuda_new(const rt_cuda_opts *o, char *err, size_t errlen) {
  cuda_ctx *c = mem_calloc(1, sizeof *c);
  if (o) c->opts = *o;
  /* the caller's strings need not outlive the call */
  if (c->opts.lib_dir) {
    snprintf(c->lib_dir, sizeof c->lib_dir, "%s", c->opts.lib_dir);
    c->opts.lib_dir = c->lib_dir;
  }
  char want_cache[512];
  if (c->opts.cache_dir) {
    snprintf(want_cache, sizeof want_cache, "%s", c->opts.cache_dir);
    c->opts.cache_dir = want_cache;
  }
  rt_backend *be = &c->be;
  be->name = "cuda";
  be->ctx = c;
  be->device_memory = 1;
  be->alloc = cu_alloc;
  be->free = cu_free;
  be->upload = cu_upload;
  be->download = cu_download;
  be->zero = cu_zero;
  be->sync = cu_sync;
  be->release = cuda_release;
  set_kernels(be);
  if (setup(c, err, errlen)) {
    cuda_release(be);
    return NULL;
  }
  c->opts.cache_dir = NULL;     /* want_cache dies here; cache_dir holds the folder used */
  return be;
}

int rt_cuda_device_count(const rt_cuda_opts *o, char *err, size_t errlen) {
  cuda_ctx c;
  memset(&c, 0, sizeof c);
  if (cuda_load_driver(&c.api, o ? o->lib_dir : NULL, err, errlen)) return -1;
  CUresult rc = c.api.cuInit(0);
  int n = 0;
  if (rc == 100) n = 0;           /* CUDA_ERROR_NO_DEVICE: a driver but no GPU */
  else if (rc != CUDA_OK) n = cuda_fail(&c.api, "cuInit", rc, err, errlen);
  else if ((rc = c.api.cuDeviceGetCount(&n)) != CUDA_OK) n = cuda_fail(&c.api, "cuDeviceGetCount", rc, err, errlen);
  cuda_unload(&c.api);
  return n;
}

const char *rt_cuda_describe(const rt_backend *be) {
  cuda_ctx *c = cuda_ctx_of(be);
  if (!c) return "";
  static const char fmt[] = "%s (sm_%d%d, %d SMs, TF32 %s), %s";
  char line[sizeof c->devname + sizeof c->cache_note + 64];
  snprintf(line, sizeof line, fmt, c->devname, c->cc_major, c->cc_minor, c->sms, c->opts.allow_tf32 ? "on" : "off",
           c->cache_note);
  snprintf(c->describe, sizeof c->describe, "%s", line);
  return c->describe;
}

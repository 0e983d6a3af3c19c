/*
** cuda_kernels.c: the CUDA backend's kernels as CUDA C source, and how the
** source becomes a module: NVRTC compiles it for the device's compute
** capability (a CUBIN), once per backend; the CUBIN is kept on disk under
** a name hashing the source, the architecture and NVRTC's version, so a
** later run loads it instead of compiling again.
**
** The formulas are kern_cpu.c's: the same erfc fit in gelu, the same
** sigmoid and tanh forms, sums in double, maxima that keep NaN, the same
** order of float operations where it changes the rounding. Row-wise
** kernels (softmax, layer norm, cross-entropy) take one block per row.
** Kernels that can find a bad id record it in a status word on the device
** (first failing kernel, lowest row), which the backend reads at sync.
*/
#include "util/diag.h"
#include "runtime/cuda_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ORDER CUDA_FN */
const char *const cuda_kernel_names[KF_N] = {
  "k_fill", "k_ew_flat", "k_ew_nd", "k_permute", "k_transpose_tiled", "k_rows", "k_scale",
  "k_reduce_rows", "k_reduce_cols", "k_reduce_fin", "k_max_grad", "k_softmax", "k_log_softmax", "k_softmax_grad",
  "k_log_softmax_grad", "k_layernorm", "k_layernorm_grad", "k_gather", "k_scatter", "k_xent_rows",
  "k_xent_sum", "k_xent_grad", "k_causal_mask", "k_ix_gather", "k_ix_claim", "k_ix_scatter",
};

/* The source. The rt_ewfn numbers and RT_MAXRANK are prepended as #defines
   (cuda_source), so the switch below stays in step with prog.h. */
const char cuda_kernel_source[] =
"typedef long long i64;\n"
"typedef unsigned long long u64;\n"
"#define INF __int_as_float(0x7f800000)\n"
"#define QNAN __int_as_float(0x7fc00000)\n"
"#define LOOP(i, n) for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (i64)gridDim.x * blockDim.x)\n"
"#define ROWS(r, n) for (i64 r = blockIdx.x; r < (n); r += gridDim.x)\n"
"\n"
"struct carve_status { int tag; int code; i64 bound; u64 key; };\n"
"struct ewp { i64 n; i64 shape[RT_MAXRANK]; i64 st[2][RT_MAXRANK]; int rank, fn; float alpha, beta; };\n"
"struct permp { i64 n; i64 shape[RT_MAXRANK]; i64 st[RT_MAXRANK]; int rank, pad; };\n"
"struct ixp {\n"
"  i64 nu, us[RT_MAXRANK], ust[RT_MAXRANK], xs[RT_MAXRANK], xst[RT_MAXRANK], hi[RT_MAXRANK], cst;\n"
"  int uxd[RT_MAXRANK], xbu[RT_MAXRANK], comp[RT_MAXRANK], ru, rx, ncomp, it, clamp, how, isfloat, pad;\n"
"};\n"
"\n"
"/* the first failing kernel claims the record; among its threads the lowest row wins */\n"
"__device__ void flag(carve_status *st, int tag, int code, i64 bound, i64 row, int val) {\n"
"  int old = atomicCAS(&st->tag, 0, tag);\n"
"  if (old != 0 && old != tag) return;\n"
"  st->code = code;\n"
"  st->bound = bound;\n"
"  atomicMin(&st->key, ((u64)row << 32) | (u64)(unsigned)val);\n"
"}\n"
"\n"
"/* ---- scalar functions (kern_cpu.c's forms) ---- */\n"
"__device__ __forceinline__ float maxnan(float x, float y) { return (x > y || x != x) ? x : y; }\n"
"__device__ __forceinline__ float minnan(float x, float y) { return (x < y || x != x) ? x : y; }\n"
"\n"
"/* 0.5 erfc(a), a >= 0: the Chebyshev fit of Numerical Recipes */\n"
"__device__ float half_erfc(float a) {\n"
"  float t = 1.0f / (1.0f + 0.5f * a);\n"
"  float y = -a * a - 1.26551223f + t * (1.00002368f + t * (0.37409196f + t * (0.09678418f +\n"
"            t * (-0.18628806f + t * (0.27886807f + t * (-1.13520398f + t * (1.48851587f +\n"
"            t * (-0.82215223f + t * 0.17087277f))))))));\n"
"  return 0.5f * t * expf(y);\n"
"}\n"
"#define SQRT1_2F 0.70710678118654752f\n"
"#define INV_SQRT2PI 0.39894228040143268f\n"
"#define GELU_C 0.79788456080286536f\n"
"#define GELU_A 0.044715f\n"
"__device__ float phi_cdf(float x) { float e = half_erfc(fabsf(x) * SQRT1_2F); return x < 0 ? e : 1.0f - e; }\n"
"__device__ float sigm(float x) { float e = expf(-fabsf(x)), s = 1.0f / (1.0f + e); return x >= 0 ? s : e * s; }\n"
"__device__ float tanh_v(float x) {\n"
"  float a = fabsf(x), a2 = a * a;\n"
"  float t;\n"
"  if (a < 0.4f)\n"
"    t = a + a * a2 * (-1.0f / 3 + a2 * (2.0f / 15 + a2 * (-17.0f / 315 + a2 * (62.0f / 2835 +\n"
"        a2 * (-1382.0f / 155925 + a2 * (21844.0f / 6081075))))));\n"
"  else\n"
"    t = 1.0f - 2.0f / (expf(2.0f * a) + 1.0f);\n"
"  return copysignf(t, x);\n"
"}\n"
"__device__ float gelu_tanh_grad_f(float x, float dy) {\n"
"  float s = sigm(2.0f * GELU_C * (x + GELU_A * x * x * x));\n"
"  float du = GELU_C * (1.0f + 3.0f * GELU_A * x * x);\n"
"  return dy * (s + 2.0f * x * s * (1.0f - s) * du);\n"
"}\n"
"\n"
"__device__ float ewf(int fn, float x, float y, float al, float be) {\n"
"  switch (fn) {\n"
"  case RT_NEG: return -x;\n"
"  case RT_EXP: return expf(x);\n"
"  case RT_LOG: return logf(x);\n"
"  case RT_SQRT: return sqrtf(x);\n"
"  case RT_RSQRT: return 1.0f / sqrtf(x);\n"
"  case RT_TANH: return tanh_v(x);\n"
"  case RT_RELU: return x < 0 ? 0.0f : x;\n"
"  case RT_GELU: return x * phi_cdf(x);\n"
"  case RT_GELU_TANH: return x * sigm(2.0f * GELU_C * (x + GELU_A * x * x * x));\n"
"  case RT_SIGMOID: return sigm(x);\n"
"  case RT_SILU: return x * sigm(x);\n"
"  case RT_AFFINE: return x * al + be;\n"
"  case RT_ADD: return x + y;\n"
"  case RT_SUB: return x - y;\n"
"  case RT_MUL: return x * y;\n"
"  case RT_DIV: return x / y;\n"
"  case RT_MAX: return maxnan(x, y);\n"
"  case RT_MIN: return minnan(x, y);\n"
"  case RT_GE: return x >= y ? 1.0f : 0.0f;\n"
"  case RT_RELU_GRAD: return x > 0 ? y : 0.0f;\n"
"  case RT_GELU_GRAD: return y * (phi_cdf(x) + x * INV_SQRT2PI * expf(-0.5f * x * x));\n"
"  case RT_GELU_TANH_GRAD: return gelu_tanh_grad_f(x, y);\n"
"  case RT_SILU_GRAD: { float s = sigm(x); return y * (s + x * s * (1.0f - s)); }\n"
"  case RT_AXPY: return x + al * y;\n"
"  case RT_AXPBY: return al * x + be * y;\n"
"  case RT_ADAM_DENOM: return sqrtf(x) * al + be;\n"
"  }\n"
"  return 0.0f;\n"
"}\n"
"\n"
"/* ---- block reductions (blockDim.x a multiple of 32, at most 1024); every thread gets the result ---- */\n"
"__device__ double block_sum(double v, double *sh) {\n"
"  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);\n"
"  int w = threadIdx.x >> 5, l = threadIdx.x & 31, nw = (blockDim.x + 31) >> 5;\n"
"  __syncthreads();\n"
"  if (l == 0) sh[w] = v;\n"
"  __syncthreads();\n"
"  v = l < nw ? sh[l] : 0.0;\n"
"  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);\n"
"  return v;\n"
"}\n"
"__device__ float block_max(float v, float *sh) {\n"
"  for (int o = 16; o > 0; o >>= 1) v = maxnan(__shfl_xor_sync(0xffffffffu, v, o), v);\n"
"  int w = threadIdx.x >> 5, l = threadIdx.x & 31, nw = (blockDim.x + 31) >> 5;\n"
"  __syncthreads();\n"
"  if (l == 0) sh[w] = v;\n"
"  __syncthreads();\n"
"  v = l < nw ? sh[l] : -INF;\n"
"  for (int o = 16; o > 0; o >>= 1) v = maxnan(__shfl_xor_sync(0xffffffffu, v, o), v);\n"
"  return v;\n"
"}\n"
"__device__ float row_max(const float *x, i64 n, float *sh) {\n"
"  float m = -INF;\n"
"  for (i64 j = threadIdx.x; j < n; j += blockDim.x) m = maxnan(x[j], m);\n"
"  return block_max(m, sh);\n"
"}\n"
"\n"
"/* ---- data movement ---- */\n"
"extern \"C\" __global__ void k_fill(float *o, i64 n, float v) { LOOP(i, n) o[i] = v; }\n"
"\n"
"extern \"C\" __global__ void k_scale(float *c, i64 batch, i64 sc, i64 mn, float beta) {\n"
"  LOOP(i, batch * mn) { float *p = c + (i / mn) * sc + i % mn; *p = beta == 0.0f ? 0.0f : *p * beta; }\n"
"}\n"
"\n"
"/* rows [ioff, ioff+rows) of in [outer, irows, inner] to rows [ooff, ooff+rows) of out [outer, orows, inner] */\n"
"extern \"C\" __global__ void k_rows(unsigned *o, const unsigned *in, i64 outer, i64 rows, i64 inner,\n"
"                                   i64 orows, i64 ooff, i64 irows, i64 ioff) {\n"
"  i64 per = rows * inner;\n"
"  LOOP(i, outer * per) {\n"
"    i64 b = i / per, r = i % per;\n"
"    o[(b * orows + ooff) * inner + r] = in[(b * irows + ioff) * inner + r];\n"
"  }\n"
"}\n"
"\n"
"/* out[i] = in[sum of i's coordinates over shape times st]: a transpose whose innermost output\n"
"   dim is contiguous in the input too (reads and writes both coalesce) */\n"
"extern \"C\" __global__ void k_permute(unsigned *o, const unsigned *in, permp p) {\n"
"  LOOP(i, p.n) {\n"
"    i64 rem = i, off = 0;\n"
"    for (int d = p.rank - 1; d >= 0; d--) { i64 s = p.shape[d], q = rem % s; rem /= s; off += q * p.st[d]; }\n"
"    o[i] = in[off];\n"
"  }\n"
"}\n"
"\n"
"/* a transpose through 32x32 tiles of shared memory: output dim q is contiguous in the input,\n"
"   the last output dim is contiguous in the output; the other dims make slabs */\n"
"extern \"C\" __global__ void k_transpose_tiled(unsigned *o, const unsigned *in, permp p, int q, i64 slabs) {\n"
"  __shared__ unsigned tile[32][33];\n"
"  int r = p.rank;\n"
"  i64 ostr[RT_MAXRANK], acc = 1;\n"
"  for (int d = r - 1; d >= 0; d--) { ostr[d] = acc; acc *= p.shape[d]; }\n"
"  i64 NI = p.shape[q], NJ = p.shape[r - 1], sj = p.st[r - 1], oq = ostr[q];\n"
"  i64 ti = (NI + 31) / 32, tj = (NJ + 31) / 32;\n"
"  for (i64 z = blockIdx.z; z < slabs; z += gridDim.z) {\n"
"    i64 rem = z, ioff = 0, ooff = 0;\n"
"    for (int d = r - 2; d >= 0; d--) {\n"
"      if (d == q) continue;\n"
"      i64 c = rem % p.shape[d];\n"
"      rem /= p.shape[d];\n"
"      ioff += c * p.st[d];\n"
"      ooff += c * ostr[d];\n"
"    }\n"
"    for (i64 bi = blockIdx.y; bi < ti; bi += gridDim.y)\n"
"      for (i64 bj = blockIdx.x; bj < tj; bj += gridDim.x) {\n"
"        i64 i0 = bi * 32, j0 = bj * 32;\n"
"        for (int y = threadIdx.y; y < 32; y += blockDim.y) {\n"
"          i64 i = i0 + threadIdx.x, j = j0 + y;\n"
"          if (i < NI && j < NJ) tile[y][threadIdx.x] = in[ioff + i + j * sj];\n"
"        }\n"
"        __syncthreads();\n"
"        for (int y = threadIdx.y; y < 32; y += blockDim.y) {\n"
"          i64 i = i0 + y, j = j0 + threadIdx.x;\n"
"          if (i < NI && j < NJ) o[ooff + i * oq + j] = tile[threadIdx.x][y];\n"
"        }\n"
"        __syncthreads();\n"
"      }\n"
"  }\n"
"}\n"
"\n"
"/* ---- elementwise ---- */\n"
"/* one run: each input advances (1) or repeats its first value (0) */\n"
"extern \"C\" __global__ void k_ew_flat(float *o, const float *a, const float *b, i64 n, int sa, int sb, int fn,\n"
"                                      float al, float be) {\n"
"  LOOP(i, n) {\n"
"    float x = a[sa ? i : 0], y = b ? b[sb ? i : 0] : 0.0f;\n"
"    o[i] = ewf(fn, x, y, al, be);\n"
"  }\n"
"}\n"
"\n"
"/* any strides (broadcasting, transposed views) over up to RT_MAXRANK dims */\n"
"extern \"C\" __global__ void k_ew_nd(float *o, const float *a, const float *b, ewp p) {\n"
"  LOOP(i, p.n) {\n"
"    i64 oa = 0, ob = 0;\n"
"    if (p.n <= 0x7fffffffLL) {\n"
"      int rem = (int)i;\n"
"      for (int d = p.rank - 1; d >= 0; d--) {\n"
"        int s = (int)p.shape[d], c = rem % s;\n"
"        rem /= s;\n"
"        oa += c * p.st[0][d];\n"
"        ob += c * p.st[1][d];\n"
"      }\n"
"    } else {\n"
"      i64 rem = i;\n"
"      for (int d = p.rank - 1; d >= 0; d--) {\n"
"        i64 s = p.shape[d], c = rem % s;\n"
"        rem /= s;\n"
"        oa += c * p.st[0][d];\n"
"        ob += c * p.st[1][d];\n"
"      }\n"
"    }\n"
"    o[i] = ewf(p.fn, a[oa], b ? b[ob] : 0.0f, p.alpha, p.beta);\n"
"  }\n"
"}\n"
"\n"
"/* ---- reductions over [outer, n, inner] ---- */\n"
"/* inner == 1: a block per row */\n"
"extern \"C\" __global__ void k_reduce_rows(float *y, const float *x, i64 outer, i64 n, int fn, float alpha) {\n"
"  __shared__ double shd[32];\n"
"  __shared__ float shf[32];\n"
"  ROWS(r, outer) {\n"
"    const float *xr = x + r * n;\n"
"    if (fn == RT_RSUM) {\n"
"      double s = 0;\n"
"      for (i64 j = threadIdx.x; j < n; j += blockDim.x) s += xr[j];\n"
"      s = block_sum(s, shd);\n"
"      if (threadIdx.x == 0) y[r] = (float)(s * alpha);\n"
"    } else {\n"
"      float m = row_max(xr, n, shf);\n"
"      if (threadIdx.x == 0) y[r] = m;\n"
"    }\n"
"  }\n"
"}\n"
"\n"
"/* inner > 1: blocks of 32 columns x blockDim.y row lanes, grid.y over outer, grid.z over chunks of\n"
"   rows; with one chunk the result goes to y, else each chunk's to part [outer, chunks, inner] */\n"
"extern \"C\" __global__ void k_reduce_cols(float *y, double *part, const float *x, i64 outer, i64 n, i64 inner, int fn,\n"
"                                          float alpha, i64 rows, i64 chunks) {\n"
"  __shared__ double shd[32][33];\n"
"  __shared__ float shf[32][33];\n"
"  i64 j = (i64)blockIdx.x * 32 + threadIdx.x;\n"
"  for (i64 z = blockIdx.z; z < chunks; z += gridDim.z)\n"
"    for (i64 o = blockIdx.y; o < outer; o += gridDim.y) {\n"
"      const float *xo = x + o * n * inner;\n"
"      i64 r1 = (z + 1) * rows < n ? (z + 1) * rows : n;\n"
"      double s = 0;\n"
"      float m = -INF;\n"
"      if (j < inner) {\n"
"        if (fn == RT_RSUM) for (i64 r = z * rows + threadIdx.y; r < r1; r += blockDim.y) s += xo[r * inner + j];\n"
"        else for (i64 r = z * rows + threadIdx.y; r < r1; r += blockDim.y) m = maxnan(xo[r * inner + j], m);\n"
"      }\n"
"      shd[threadIdx.y][threadIdx.x] = s;\n"
"      shf[threadIdx.y][threadIdx.x] = m;\n"
"      __syncthreads();\n"
"      if (threadIdx.y == 0 && j < inner) {\n"
"        for (int t = 1; t < (int)blockDim.y; t++) { s += shd[t][threadIdx.x]; m = maxnan(shf[t][threadIdx.x], m); }\n"
"        if (chunks == 1) y[o * inner + j] = fn == RT_RSUM ? (float)(s * alpha) : m;\n"
"        else part[(o * chunks + z) * inner + j] = fn == RT_RSUM ? s : (double)m;\n"
"      }\n"
"      __syncthreads();\n"
"    }\n"
"}\n"
"\n"
"/* the chunks' partial results of k_reduce_cols, combined in order */\n"
"extern \"C\" __global__ void k_reduce_fin(float *y, const double *part, i64 outer, i64 chunks, i64 inner, int fn,\n"
"                                         float alpha) {\n"
"  LOOP(t, outer * inner) {\n"
"    i64 o = t / inner, j = t % inner;\n"
"    double s = 0;\n"
"    float m = -INF;\n"
"    for (i64 c = 0; c < chunks; c++) {\n"
"      double v = part[(o * chunks + c) * inner + j];\n"
"      if (fn == RT_RSUM) s += v;\n"
"      else m = maxnan((float)v, m);\n"
"    }\n"
"    y[t] = fn == RT_RSUM ? (float)(s * alpha) : m;\n"
"  }\n"
"}\n"
"\n"
"/* dy shared evenly among the maxima of each (outer, inner) column */\n"
"extern \"C\" __global__ void k_max_grad(float *dx, const float *x, const float *dy, i64 outer, i64 n, i64 inner) {\n"
"  LOOP(t, outer * inner) {\n"
"    i64 o = t / inner, j = t % inner;\n"
"    const float *xc = x + o * n * inner + j;\n"
"    float *dc = dx + o * n * inner + j;\n"
"    float m = -INF, c = 0.0f;\n"
"    for (i64 r = 0; r < n; r++) m = maxnan(xc[r * inner], m);\n"
"    for (i64 r = 0; r < n; r++) c += xc[r * inner] == m ? 1.0f : 0.0f;\n"
"    float share = c > 0 ? dy[t] / c : 0.0f;\n"
"    for (i64 r = 0; r < n; r++) dc[r * inner] = xc[r * inner] == m ? share : 0.0f;\n"
"  }\n"
"}\n"
"\n"
"/* ---- softmax family: a block per row of n ---- */\n"
"extern \"C\" __global__ void k_softmax(float *y, const float *x, i64 outer, i64 n) {\n"
"  __shared__ double shd[32];\n"
"  __shared__ float shf[32];\n"
"  ROWS(r, outer) {\n"
"    const float *xr = x + r * n;\n"
"    float *yr = y + r * n;\n"
"    float m = row_max(xr, n, shf);\n"
"    double s = 0;\n"
"    for (i64 j = threadIdx.x; j < n; j += blockDim.x) { float e = expf(xr[j] - m); yr[j] = e; s += e; }\n"
"    s = block_sum(s, shd);\n"
"    float inv = (float)(1.0 / s);\n"
"    for (i64 j = threadIdx.x; j < n; j += blockDim.x) yr[j] *= inv;\n"
"  }\n"
"}\n"
"\n"
"extern \"C\" __global__ void k_log_softmax(float *y, const float *x, i64 outer, i64 n) {\n"
"  __shared__ double shd[32];\n"
"  __shared__ float shf[32];\n"
"  ROWS(r, outer) {\n"
"    const float *xr = x + r * n;\n"
"    float *yr = y + r * n;\n"
"    float m = row_max(xr, n, shf);\n"
"    double s = 0;\n"
"    for (i64 j = threadIdx.x; j < n; j += blockDim.x) s += expf(xr[j] - m);\n"
"    float l = (float)log(block_sum(s, shd));\n"
"    for (i64 j = threadIdx.x; j < n; j += blockDim.x) yr[j] = (xr[j] - m) - l;\n"
"  }\n"
"}\n"
"\n"
"extern \"C\" __global__ void k_softmax_grad(float *dx, const float *y, const float *dy, i64 outer, i64 n) {\n"
"  __shared__ double shd[32];\n"
"  ROWS(r, outer) {\n"
"    const float *yr = y + r * n, *gr = dy + r * n;\n"
"    float *dr = dx + r * n;\n"
"    double s = 0;\n"
"    for (i64 j = threadIdx.x; j < n; j += blockDim.x) s += (double)gr[j] * yr[j];\n"
"    float sf = (float)block_sum(s, shd);\n"
"    for (i64 j = threadIdx.x; j < n; j += blockDim.x) dr[j] = yr[j] * (gr[j] - sf);\n"
"  }\n"
"}\n"
"\n"
"extern \"C\" __global__ void k_log_softmax_grad(float *dx, const float *y, const float *dy, i64 outer, i64 n) {\n"
"  __shared__ double shd[32];\n"
"  ROWS(r, outer) {\n"
"    const float *yr = y + r * n, *gr = dy + r * n;\n"
"    float *dr = dx + r * n;\n"
"    double s = 0;\n"
"    for (i64 j = threadIdx.x; j < n; j += blockDim.x) s += gr[j];\n"
"    float sf = (float)block_sum(s, shd);\n"
"    for (i64 j = threadIdx.x; j < n; j += blockDim.x) dr[j] = gr[j] - expf(yr[j]) * sf;\n"
"  }\n"
"}\n"
"\n"
"/* ---- layer norm: biased variance, eps inside the square root; rms: the mean is 0 ---- */\n"
"__device__ void ln_stats(const float *x, i64 n, float eps, int rms, double *shd, float *mu, float *rs) {\n"
"  double s = 0;\n"
"  for (i64 j = threadIdx.x; j < n && !rms; j += blockDim.x) s += x[j];\n"
"  double m = n && !rms ? block_sum(s, shd) / n : 0.0;\n"
"  double v = 0;\n"
"  for (i64 j = threadIdx.x; j < n; j += blockDim.x) { double d = x[j] - m; v += d * d; }\n"
"  double var = n ? block_sum(v, shd) / n : 0.0;\n"
"  *mu = (float)m;\n"
"  *rs = (float)(1.0 / sqrt(var + eps));\n"
"}\n"
"\n"
"extern \"C\" __global__ void k_layernorm(float *y, const float *x, const float *g, const float *b, i64 outer, i64 n,\n"
"                                        float eps, int rms) {\n"
"  __shared__ double shd[32];\n"
"  ROWS(r, outer) {\n"
"    const float *xr = x + r * n;\n"
"    float *yr = y + r * n, mu, rs;\n"
"    ln_stats(xr, n, eps, rms, shd, &mu, &rs);\n"
"    for (i64 j = threadIdx.x; j < n; j += blockDim.x) {\n"
"      float v = (xr[j] - mu) * rs;\n"
"      if (g) v = v * g[j];\n"
"      if (b) v = v + b[j];\n"
"      yr[j] = v;\n"
"    }\n"
"  }\n"
"}\n"
"\n"
"/* dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma (rms: no mean(g)) */\n"
"extern \"C\" __global__ void k_layernorm_grad(float *dx, const float *x, const float *gam, const float *dy, i64 outer,\n"
"                                             i64 n, float eps, int rms) {\n"
"  __shared__ double shd[32];\n"
"  ROWS(r, outer) {\n"
"    const float *xr = x + r * n, *dr = dy + r * n;\n"
"    float *or_ = dx + r * n, mu, rs;\n"
"    ln_stats(xr, n, eps, rms, shd, &mu, &rs);\n"
"    double sg = 0, sgx = 0;\n"
"    for (i64 j = threadIdx.x; j < n; j += blockDim.x) {\n"
"      float gj = gam ? dr[j] * gam[j] : dr[j];\n"
"      sg += gj;\n"
"      sgx += gj * ((double)xr[j] - (double)mu);\n"
"    }\n"
"    sg = block_sum(sg, shd);\n"
"    sgx = block_sum(sgx, shd);\n"
"    float mg = n && !rms ? (float)(sg / n) : 0.0f, mgx = n ? (float)(sgx * rs / n) : 0.0f;\n"
"    for (i64 j = threadIdx.x; j < n; j += blockDim.x) {\n"
"      float gj = gam ? dr[j] * gam[j] : dr[j];\n"
"      float xh = (xr[j] - mu) * rs;\n"
"      or_[j] = rs * (gj - mg - xh * mgx);\n"
"    }\n"
"  }\n"
"}\n"
"\n"
"/* ---- embeddings: table rows off .. off+n-1 of n2; other ids give zeros; ids outside [0, n2) fail ---- */\n"
"extern \"C\" __global__ void k_gather(float *y, const float *tab, const int *ids, i64 outer, i64 n, i64 inner, i64 off,\n"
"                                     i64 n2, carve_status *st, int tag) {\n"
"  i64 w = inner > 0 ? inner : 1;\n"
"  LOOP(i, outer * w) {\n"
"    i64 r = i / w, j = i % w, id = ids[r], row = id - off;\n"
"    if (id < 0 || id >= n2) {\n"
"      if (j == 0) flag(st, tag, 1, n2, r, (int)id);\n"
"      if (j < inner) y[r * inner + j] = 0.0f;\n"
"      continue;\n"
"    }\n"
"    if (j < inner) y[r * inner + j] = row >= 0 && row < n ? tab[row * inner + j] : 0.0f;\n"
"  }\n"
"}\n"
"\n"
"/* t (zeroed before) += dy rows at their ids; repeated ids add up */\n"
"extern \"C\" __global__ void k_scatter(float *t, const int *ids, const float *dy, i64 outer, i64 n, i64 inner, i64 off,\n"
"                                      i64 n2, carve_status *st, int tag) {\n"
"  i64 w = inner > 0 ? inner : 1;\n"
"  LOOP(i, outer * w) {\n"
"    i64 r = i / w, j = i % w, id = ids[r], row = id - off;\n"
"    if (id < 0 || id >= n2) {\n"
"      if (j == 0) flag(st, tag, 1, n2, r, (int)id);\n"
"      continue;\n"
"    }\n"
"    if (row >= 0 && row < n && j < inner) atomicAdd(&t[row * inner + j], dy[r * inner + j]);\n"
"  }\n"
"}\n"
"\n"
"/* ---- cross-entropy: per-row losses in double, then their sum times alpha ---- */\n"
"extern \"C\" __global__ void k_xent_rows(double *part, const float *x, const int *lab, i64 outer, i64 n,\n"
"                                        carve_status *st, int tag) {\n"
"  __shared__ double shd[32];\n"
"  __shared__ float shf[32];\n"
"  ROWS(r, outer) {\n"
"    const float *xr = x + r * n;\n"
"    float m = row_max(xr, n, shf);\n"
"    double s = 0;\n"
"    for (i64 j = threadIdx.x; j < n; j += blockDim.x) s += expf(xr[j] - m);\n"
"    s = block_sum(s, shd);\n"
"    if (threadIdx.x == 0) {\n"
"      int l = lab[r];\n"
"      if (l < 0 || l >= n) { flag(st, tag, 2, n, r, l); part[r] = 0.0; }\n"
"      else part[r] = ((double)m + log(s)) - xr[l];\n"
"    }\n"
"  }\n"
"}\n"
"\n"
"extern \"C\" __global__ void k_xent_sum(float *out, const double *part, i64 outer, float alpha) {\n"
"  __shared__ double shd[32];\n"
"  double s = 0;\n"
"  for (i64 r = threadIdx.x; r < outer; r += blockDim.x) s += part[r];\n"
"  s = block_sum(s, shd);\n"
"  if (threadIdx.x == 0) out[0] = (float)(s * alpha);\n"
"}\n"
"\n"
"/* (softmax - onehot) * dloss * alpha */\n"
"extern \"C\" __global__ void k_xent_grad(float *dx, const float *x, const int *lab, const float *dloss, i64 outer, i64 n,\n"
"                                        float alpha, carve_status *st, int tag) {\n"
"  __shared__ double shd[32];\n"
"  __shared__ float shf[32];\n"
"  float g = dloss[0] * alpha;\n"
"  ROWS(r, outer) {\n"
"    const float *xr = x + r * n;\n"
"    float *dr = dx + r * n;\n"
"    int l = lab[r];\n"
"    float m = row_max(xr, n, shf);\n"
"    double s = 0;\n"
"    for (i64 j = threadIdx.x; j < n; j += blockDim.x) { float e = expf(xr[j] - m); dr[j] = e; s += e; }\n"
"    s = block_sum(s, shd);\n"
"    float sc = (float)(g / s);\n"
"    for (i64 j = threadIdx.x; j < n; j += blockDim.x) dr[j] *= sc;\n"
"    __syncthreads();\n"
"    if (threadIdx.x == 0) {\n"
"      if (l < 0 || l >= n) flag(st, tag, 2, n, r, l);\n"
"      else dr[l] -= g;\n"
"    }\n"
"  }\n"
"}\n"
"\n"
"/* in [outer, m, n]: entries with col > row + off become v */\n"
"extern \"C\" __global__ void k_causal_mask(float *y, const float *x, i64 outer, i64 m, i64 n, i64 off, float v) {\n"
"  LOOP(i, outer * m * n) {\n"
"    i64 c = i % n, r = (i / n) % m;\n"
"    y[i] = c > r + off ? v : x[i];\n"
"  }\n"
"}\n"
"\n"
"/* ---- StableHLO's gather and scatter (kern_index.c): 4-byte elements, f32 or i32 ---- */\n"
"/* index i of an integer array of type t, as rt_load_i reads it */\n"
"__device__ i64 ix_load(int t, const void *p, i64 i) {\n"
"  switch (t) {\n"
"  case RT_I64: return ((const i64 *)p)[i];\n"
"  case RT_UI32: return ((const unsigned *)p)[i];\n"
"  case RT_I16: return ((const short *)p)[i];\n"
"  case RT_UI16: return ((const unsigned short *)p)[i];\n"
"  case RT_I8: return ((const signed char *)p)[i];\n"
"  case RT_UI8: return ((const unsigned char *)p)[i];\n"
"  default: return ((const int *)p)[i];\n"
"  }\n"
"}\n"
"\n"
"/* the place in x of u's element e: its offset in *xf, and whether it lies in x;\n"
"   starts are clamped (so that the window fits) when p.clamp is set */\n"
"__device__ int ix_place(const ixp &p, const void *idx, i64 e, i64 *xf) {\n"
"  i64 o[RT_MAXRANK], pos[RT_MAXRANK], ib = 0;\n"
"  for (int a = p.ru - 1; a >= 0; a--) { o[a] = e % p.us[a]; e /= p.us[a]; }\n"
"  for (int d = 0; d < p.rx; d++) pos[d] = p.xbu[d] >= 0 ? o[p.xbu[d]] : 0;\n"
"  for (int a = 0; a < p.ru; a++) {\n"
"    if (p.uxd[a] >= 0) pos[p.uxd[a]] += o[a];\n"
"    else ib += o[a] * p.ust[a];\n"
"  }\n"
"  for (int k = 0; k < p.ncomp; k++) {\n"
"    int d = p.comp[k];\n"
"    i64 s = ix_load(p.it, idx, ib + k * p.cst);\n"
"    if (p.clamp) s = s < 0 ? 0 : s > p.hi[d] ? p.hi[d] : s;\n"
"    pos[d] += s;\n"
"  }\n"
"  int inside = 1;\n"
"  i64 f = 0;\n"
"  for (int d = 0; d < p.rx; d++) {\n"
"    if (pos[d] < 0 || pos[d] >= p.xs[d]) inside = 0;\n"
"    f += pos[d] * p.xst[d];\n"
"  }\n"
"  *xf = f;\n"
"  return inside;\n"
"}\n"
"\n"
"/* an element outside x reads zero (with clamped starts none is) */\n"
"extern \"C\" __global__ void k_ix_gather(unsigned *y, const unsigned *x, const void *idx, ixp p) {\n"
"  LOOP(e, p.nu) {\n"
"    i64 xf;\n"
"    y[e] = ix_place(p, idx, e, &xf) ? x[xf] : 0u;\n"
"  }\n"
"}\n"
"\n"
"/* replace: 1 + the last update that lands on each element of x (win zeroed before) */\n"
"extern \"C\" __global__ void k_ix_claim(unsigned *win, const void *idx, ixp p) {\n"
"  LOOP(e, p.nu) {\n"
"    i64 xf;\n"
"    if (ix_place(p, idx, e, &xf)) atomicMax(&win[xf], (unsigned)(e + 1));\n"
"  }\n"
"}\n"
"\n"
"/* a combined with b as combine() in kern_index.c: NaN wins max and min (as\n"
"   the quiet NaN the host's NAN is), +0 > -0; integers wrap */\n"
"__device__ unsigned ix_op(unsigned a, unsigned b, int how, int isfloat) {\n"
"  if (!isfloat) {\n"
"    int p = (int)a, q = (int)b;\n"
"    switch (how) {\n"
"    case RT_IX_ADD: return a + b;\n"
"    case RT_IX_MUL: return a * b;\n"
"    case RT_IX_MAX: return (unsigned)(p > q ? p : q);\n"
"    default: return (unsigned)(p < q ? p : q);\n"
"    }\n"
"  }\n"
"  float p = __uint_as_float(a), q = __uint_as_float(b), r;\n"
"  int neg = (int)(a >> 31);\n"
"  switch (how) {\n"
"  case RT_IX_ADD: r = p + q; break;\n"
"  case RT_IX_MUL: r = p * q; break;\n"
"  case RT_IX_MAX: r = p != p || q != q ? QNAN : p > q ? p : q > p ? q : neg ? q : p; break;\n"
"  default: r = p != p || q != q ? QNAN : p < q ? p : q < p ? q : neg ? p : q; break;\n"
"  }\n"
"  return __float_as_uint(r);\n"
"}\n"
"\n"
"/* out (a copy of the operand) combined with each update at its place.\n"
"   replace: only the last update of an element writes it (win from\n"
"   k_ix_claim), as the host's in-order loop leaves it. The others: a\n"
"   compare-and-swap loop, each combine rounded as on the host (atomicAdd\n"
"   on f32 would flush subnormals); where updates share a place they\n"
"   combine in any order, so f32 add and mul may differ in the last bits */\n"
"extern \"C\" __global__ void k_ix_scatter(unsigned *out, const unsigned *u, const void *idx, const unsigned *win,\n"
"                                         ixp p) {\n"
"  LOOP(e, p.nu) {\n"
"    i64 xf;\n"
"    if (!ix_place(p, idx, e, &xf)) continue;\n"
"    if (p.how == RT_IX_REPLACE) {\n"
"      if (win[xf] == (unsigned)(e + 1)) out[xf] = u[e];\n"
"      continue;\n"
"    }\n"
"    unsigned v = u[e], old = out[xf], seen;\n"
"    do {\n"
"      seen = old;\n"
"      old = atomicCAS(&out[xf], seen, ix_op(seen, v, p.how, p.isfloat));\n"
"    } while (old != seen);\n"
"  }\n"
"}\n"
"\n"
"/* ---- fused elementwise steps (RT_FUSED; kern_cpu.c's k_fused): one thread an element, each\n"
"   step's value in a register array; a comparison gives 0 or 1, an i1 input reads as 0 or 1 ---- */\n"
"struct fstep { int fn, a0, a1, a2; float al, be; };\n"
"struct fusedp {\n"
"  i64 n, shape[RT_MAXRANK], st[RT_MAXIN][RT_MAXRANK];\n"
"  const void *in[RT_MAXIN];\n"
"  int rank, nin, nsteps, bits;\n"
"  fstep step[RT_FUSE_MAXSTEPS];\n"
"};\n"
"__device__ float fpick(int fn, float x, float y, float z) {\n"
"  switch (fn) {\n"
"  case RT_CMP_EQ: return x == y ? 1.0f : 0.0f;\n"
"  case RT_CMP_NE: return x != y ? 1.0f : 0.0f;\n"
"  case RT_CMP_LT: return x < y ? 1.0f : 0.0f;\n"
"  case RT_CMP_LE: return x <= y ? 1.0f : 0.0f;\n"
"  case RT_CMP_GT: return x > y ? 1.0f : 0.0f;\n"
"  case RT_CMP_GE: return x >= y ? 1.0f : 0.0f;\n"
"  case RT_SELECT: return x != 0.0f ? y : z;\n"
"  }\n"
"  return 0.0f;\n"
"}\n"
"extern \"C\" __global__ void k_fused(float *o, fusedp p) {\n"
"  LOOP(i, p.n) {\n"
"    float v[RT_MAXIN + RT_FUSE_MAXSTEPS];\n"
"    i64 off[RT_MAXIN], rem = i;\n"
"    for (int k = 0; k < p.nin; k++) off[k] = 0;\n"
"    for (int d = p.rank - 1; d >= 0; d--) {\n"
"      i64 s = p.shape[d], c = rem % s;\n"
"      rem /= s;\n"
"      for (int k = 0; k < p.nin; k++) off[k] += c * p.st[k][d];\n"
"    }\n"
"    for (int k = 0; k < p.nin; k++)\n"
"      v[k] = (p.bits >> k & 1) ? (((const unsigned char *)p.in[k])[off[k]] ? 1.0f : 0.0f) : ((const float *)p.in[k])[off[k]];\n"
"    for (int t = 0; t < p.nsteps; t++) {\n"
"      fstep s = p.step[t];\n"
"      float x = v[s.a0], y = v[s.a1], z = v[s.a2];\n"
"      v[p.nin + t] = s.fn < RT_ABS ? ewf(s.fn, x, y, s.al, s.be) : fpick(s.fn, x, y, z);\n"
"    }\n"
"    o[i] = v[p.nin + p.nsteps - 1];\n"
"  }\n"
"}\n"
"\n"
"/* an elementwise op over dense [rows, w] and each column's sum in double, rows in order\n"
"   (kern_cpu.c's sums of rows: the same bits); a thread a column */\n"
"extern \"C\" __global__ void k_ew_colsum(float *o, const float *a, const float *b, float *sum, i64 rows, i64 w, int fn,\n"
"                                        float al, float be) {\n"
"  LOOP(c, w) {\n"
"    double acc = 0;\n"
"    for (i64 r = 0; r < rows; r++) {\n"
"      i64 at = r * w + c;\n"
"      float x = ewf(fn, a[at], b ? b[at] : 0.0f, al, be);\n"
"      o[at] = x;\n"
"      acc += x;\n"
"    }\n"
"    sum[c] = (float)acc;\n"
"  }\n"
"}\n"
"\n"
"/* torch.optim.Adam and AdamW (kern_cpu.c's ADAM_BODY, each product rounded): decay 1 adds\n"
"   wd p to the gradient, 2 scales p by wd first; ok (or NULL): a dynamic loss scale's verdict,\n"
"   0 leaving p (copied to o), m and v as they were */\n"
"extern \"C\" __global__ void k_adam(float *o, const float *p, const float *g, float *m, float *v, const float *lr_t,\n"
"                                   const float *eps_t, const unsigned char *ok, i64 n, float b1, float b2, float c1,\n"
"                                   float c2, float wd, int decay) {\n"
"  float lr = lr_t[0], eps = eps_t[0];\n"
"  int skip = ok && !ok[0];\n"
"  LOOP(i, n) {\n"
"    float pi = p[i];\n"
"    if (skip) { o[i] = pi; continue; }\n"
"    if (decay == 2) pi = pi * wd;\n"
"    float gr = decay == 1 ? g[i] + wd * pi : g[i];\n"
"    float mn = b1 * m[i] + c1 * gr, vn = b2 * v[i] + c2 * (gr * gr);\n"
"    m[i] = mn;\n"
"    v[i] = vn;\n"
"    o[i] = pi - mn * lr / (sqrtf(vn) + eps);\n"
"  }\n"
"}\n"
"\n"
"/* torch.optim.SGD (kern_cpu.c's SGD_BODY): m NULL without momentum */\n"
"extern \"C\" __global__ void k_sgd(float *o, const float *p, const float *g, float *m, const unsigned char *ok, i64 n,\n"
"                                  float nlr, float mu, float wd, int decay) {\n"
"  int skip = ok && !ok[0];\n"
"  LOOP(i, n) {\n"
"    float pi = p[i];\n"
"    if (skip) { o[i] = pi; continue; }\n"
"    float gr = decay ? g[i] + wd * pi : g[i];\n"
"    if (m) { gr = m[i] * mu + gr; m[i] = gr; }\n"
"    o[i] = pi + nlr * gr;\n"
"  }\n"
"}\n"
"\n"
"/* out viewed [outer, n, inner]: each element its index along n, as f32 or i32 */\n"
"extern \"C\" __global__ void k_iota(unsigned *o, i64 outer, i64 n, i64 inner, int isfloat) {\n"
"  LOOP(e, outer * n * inner) {\n"
"    i64 j = (e / inner) % n;\n"
"    o[e] = isfloat ? __float_as_uint((float)j) : (unsigned)(int)j;\n"
"  }\n"
"}\n";

/* The whole source: the numbers the kernels share with prog.h, then the body. */
char *cuda_source(void) {
  static const struct { const char *name; int value; } defs[] = {
    {"RT_MAXRANK", RT_MAXRANK}, {"RT_RSUM", RT_RSUM}, {"RT_RMAX", RT_RMAX},
    {"RT_NEG", RT_NEG}, {"RT_EXP", RT_EXP}, {"RT_LOG", RT_LOG}, {"RT_SQRT", RT_SQRT}, {"RT_RSQRT", RT_RSQRT},
    {"RT_TANH", RT_TANH}, {"RT_RELU", RT_RELU}, {"RT_GELU", RT_GELU}, {"RT_GELU_TANH", RT_GELU_TANH},
    {"RT_SIGMOID", RT_SIGMOID}, {"RT_SILU", RT_SILU}, {"RT_AFFINE", RT_AFFINE}, {"RT_ADD", RT_ADD},
    {"RT_SUB", RT_SUB}, {"RT_MUL", RT_MUL}, {"RT_DIV", RT_DIV}, {"RT_MAX", RT_MAX}, {"RT_MIN", RT_MIN},
    {"RT_GE", RT_GE}, {"RT_RELU_GRAD", RT_RELU_GRAD}, {"RT_GELU_GRAD", RT_GELU_GRAD},
    {"RT_GELU_TANH_GRAD", RT_GELU_TANH_GRAD}, {"RT_SILU_GRAD", RT_SILU_GRAD}, {"RT_AXPY", RT_AXPY},
    {"RT_AXPBY", RT_AXPBY}, {"RT_ADAM_DENOM", RT_ADAM_DENOM},
    {"RT_IX_REPLACE", RT_IX_REPLACE}, {"RT_IX_ADD", RT_IX_ADD}, {"RT_IX_MUL", RT_IX_MUL}, {"RT_IX_MAX", RT_IX_MAX},
    {"RT_I64", RT_I64}, {"RT_I8", RT_I8}, {"RT_UI8", RT_UI8}, {"RT_I16", RT_I16}, {"RT_UI16", RT_UI16},
    {"RT_UI32", RT_UI32}, {"RT_MAXIN", RT_MAXIN}, {"RT_FUSE_MAXSTEPS", RT_FUSE_MAXSTEPS}, {"RT_ABS", RT_ABS},
    {"RT_CMP_EQ", RT_CMP_EQ}, {"RT_CMP_NE", RT_CMP_NE}, {"RT_CMP_LT", RT_CMP_LT}, {"RT_CMP_LE", RT_CMP_LE},
    {"RT_CMP_GT", RT_CMP_GT}, {"RT_CMP_GE", RT_CMP_GE}, {"RT_SELECT", RT_SELECT},
  };
  size_t n = sizeof cuda_kernel_source + 64 * (sizeof defs / sizeof *defs);
  char *s = mem_alloc(n);
  size_t k = 0;
  for (size_t i = 0; i < sizeof defs / sizeof *defs; i++)
    k += (size_t)snprintf(s + k, n - k, "#define %s %d\n", defs[i].name, defs[i].value);
  snprintf(s + k, n - k, "%s", cuda_kernel_source);
  return s;
}

/* ---- compiling ---- */

/* No contraction into fused multiply-adds: the CPU kernels round each
   product (dy * gamma - mean in the layer norm gradient must cancel to
   exactly zero where the CPU's does). Part of the cache key. */
#define CUDA_NVRTC_OPTS "--std=c++17", "--fmad=false"

static int rtc_fail(const cuda_api *api, const char *call, nvrtcResult rc, char *err, size_t errlen) {
  const char *s = api->nvrtcGetErrorString ? api->nvrtcGetErrorString(rc) : NULL;
  return diag_errbuf(err, errlen, "%s: %s", call, s ? s : "NVRTC error");
}

/* src for arch ("sm_90") to a CUBIN in *img (malloc'd); -1 with NVRTC's log */
int cuda_compile(const cuda_api *api, const char *src, const char *arch, char **img, size_t *size, char *err,
                 size_t errlen) {
  char opt_arch[64];
  snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=%s", arch);
  const char *opts[] = {opt_arch, CUDA_NVRTC_OPTS};
  nvrtcProgram prog = NULL;
  nvrtcResult rc = api->nvrtcCreateProgram(&prog, src, "carve_kernels.cu", 0, NULL, NULL);
  if (rc) return rtc_fail(api, "nvrtcCreateProgram", rc, err, errlen);
  rc = api->nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof *opts), opts);
  if (rc) {
    size_t ln = 0;
    char *log = NULL;
    if (api->nvrtcGetProgramLogSize(prog, &ln) == 0 && ln > 1 && (log = malloc(ln + 1)) &&
        api->nvrtcGetProgramLog(prog, log) == 0) {
      log[ln] = 0;
      for (char *q = log; *q; q++) if (*q == '\n') *q = ' ';     /* one line */
      diag_errbuf(err, errlen, "NVRTC could not compile carve's kernels for %s: %s", arch, log);
    } else {
      rtc_fail(api, "nvrtcCompileProgram", rc, err, errlen);
    }
    free(log);
    api->nvrtcDestroyProgram(&prog);
    return -1;
  }
  size_t n = 0;
  rc = api->nvrtcGetCUBINSize(prog, &n);
  if (rc || n == 0) {
    api->nvrtcDestroyProgram(&prog);
    return rc ? rtc_fail(api, "nvrtcGetCUBINSize", rc, err, errlen)
              : diag_errbuf(err, errlen, "NVRTC made no CUBIN for %s", arch);
  }
  char *b = mem_alloc(n);
  rc = api->nvrtcGetCUBIN(prog, b);
  api->nvrtcDestroyProgram(&prog);
  if (rc) {
    free(b);
    return rtc_fail(api, "nvrtcGetCUBIN", rc, err, errlen);
  }
  *img = b;
  *size = n;
  return 0;
}

/* ---- the cache on disk ---- */

static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) { h ^= s[i]; h *= 0x100000001b3ull; }
  return h;
}

/* dir/carve-kernels-<hash>-<arch>.cubin, or "" when there is no cache */
void cuda_cache_path(const cuda_api *api, const char *dir, const char *src, const char *arch, char *path, size_t n) {
  path[0] = 0;
  if (!dir || !dir[0]) return;
  int maj = 0, min = 0;
  if (api->nvrtcVersion) api->nvrtcVersion(&maj, &min);
  char ver[256];
  static const char *const opts[] = {CUDA_NVRTC_OPTS};
  size_t k = (size_t)snprintf(ver, sizeof ver, "nvrtc %d.%d", maj, min);
  for (size_t i = 0; i < sizeof opts / sizeof *opts && k < sizeof ver; i++)
    k += (size_t)snprintf(ver + k, sizeof ver - k, " %s", opts[i]);
  uint64_t h = 0xcbf29ce484222325ull;
  h = fnv1a(h, src, strlen(src) + 1);
  h = fnv1a(h, arch, strlen(arch) + 1);
  h = fnv1a(h, ver, strlen(ver) + 1);
  snprintf(path, n, "%s/carve-kernels-%016" PRIx64 "-%s.cubin", dir, h, arch);
}

/* the default folder: $XDG_CACHE_HOME/carve or ~/.cache/carve, made if missing; "" if impossible */
void cuda_cache_dir(const char *want, char *dir, size_t n) {
  dir[0] = 0;
  if (want) {
    if (want[0] && (mkdir(want, 0755) == 0 || errno == EEXIST)) snprintf(dir, n, "%s", want);
    return;
  }
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  char base[512];
  if (xdg && xdg[0]) snprintf(base, sizeof base, "%s", xdg);
  else if (home && home[0]) snprintf(base, sizeof base, "%s/.cache", home);
  else return;
  if (mkdir(base, 0755) != 0 && errno != EEXIST) return;
  char d[600];
  snprintf(d, sizeof d, "%s/carve", base);
  if (mkdir(d, 0755) != 0 && errno != EEXIST) return;
  if (access(d, W_OK) != 0) return;
  snprintf(dir, n, "%s", d);
}

/* the whole file, or NULL */
char *cuda_cache_read(const char *path, size_t *size) {
  if (!path[0]) return NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *b = NULL;
  long len = -1;
  if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
    b = mem_alloc((size_t)len);
    if (fread(b, 1, (size_t)len, f) != (size_t)len) { free(b); b = NULL; }
  }
  fclose(f);
  if (b) *size = (size_t)len;
  return b;
}

/* written under a temporary name and renamed, so a reader never sees half a file; failures are ignored */
void cuda_cache_write(const char *path, const char *img, size_t size) {
  if (!path[0]) return;
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) return;
  int ok = fwrite(img, 1, size, f) == size;
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, path) != 0) remove(tmp);
}

int rt_cuda_compile_check(const rt_cuda_opts *o, const char *arch, char *err, size_t errlen) {
  cuda_api api;
  memset(&api, 0, sizeof api);
  if (cuda_load_nvrtc(&api, o ? o->lib_dir : NULL, err, errlen)) return -2;
  char *src = cuda_source(), *img = NULL;
  size_t n = 0;
  int rc = cuda_compile(&api, src, arch, &img, &n, err, errlen);
  free(img);
  free(src);
  cuda_unload(&api);
  return rc;
}

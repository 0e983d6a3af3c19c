/*
** cuda_int.h: shared by the cuda_*.c files and comm_nccl.c, nothing else.
** The few CUDA driver, cuBLAS, NVRTC and NCCL types and functions carve
** uses, declared here (no CUDA header at build time) and looked up at run
** time with dlopen/dlsym (cuda_load.c); the backend's state (cuda_ctx).
*/
#ifndef runtime_cuda_int_h
#define runtime_cuda_int_h

#include <stddef.h>
#include <stdint.h>
#include "runtime/backend.h"
#include "runtime/cuda.h"

/* ---- the driver API (cuda.h's values) ---- */
typedef int CUresult;                     /* 0: CUDA_SUCCESS */
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;
enum {
  CUDA_OK = 0,
  CU_ATTR_SM_COUNT = 16,                  /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT */
  CU_ATTR_CC_MAJOR = 75,                  /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
  CU_ATTR_CC_MINOR = 76
};

/* ---- cuBLAS ---- */
typedef int cublasStatus_t;               /* 0: CUBLAS_STATUS_SUCCESS */
typedef struct cublasContext *cublasHandle_t;
enum { CUBLAS_N = 0, CUBLAS_T = 1, CUBLAS_MATH_DEFAULT = 0, CUBLAS_MATH_TF32 = 3 };

/* ---- NVRTC ---- */
typedef int nvrtcResult;                  /* 0: NVRTC_SUCCESS */
typedef struct _nvrtcProgram *nvrtcProgram;

/* ---- NCCL ---- */
typedef int ncclResult_t;                 /* 0: ncclSuccess */
typedef struct ncclComm *ncclComm_t;
typedef struct { char internal[128]; } ncclUniqueId;
enum { NCCL_INT32 = 2, NCCL_FLOAT32 = 7, NCCL_SUM = 0, NCCL_MAX = 2, NCCL_MIN = 3 };

typedef struct cuda_api {
  void *hcuda, *hblas, *hrtc, *hnccl;     /* dlopen handles (NULL: not loaded) */
  /* driver */
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void **, void **);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  /* cuBLAS */
  cublasStatus_t (*cublasCreate)(cublasHandle_t *);
  cublasStatus_t (*cublasDestroy)(cublasHandle_t);
  cublasStatus_t (*cublasSetStream)(cublasHandle_t, CUstream);
  cublasStatus_t (*cublasSetMathMode)(cublasHandle_t, int);
  cublasStatus_t (*cublasSgemm)(cublasHandle_t, int, int, int, int, int, const float *, const float *, int,
                                const float *, int, const float *, float *, int);
  cublasStatus_t (*cublasSgemmStridedBatched)(cublasHandle_t, int, int, int, int, int, const float *, const float *,
                                              int, long long, const float *, int, long long, const float *, float *,
                                              int, long long, int);
  const char *(*cublasGetStatusString)(cublasStatus_t);   /* optional */
  /* NVRTC */
  nvrtcResult (*nvrtcVersion)(int *, int *);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                                    const char *const *);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t *);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char *);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t *);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char *);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram *);
  const char *(*nvrtcGetErrorString)(nvrtcResult);
  /* NCCL */
  ncclResult_t (*ncclGetUniqueId)(ncclUniqueId *);
  ncclResult_t (*ncclCommInitRank)(ncclComm_t *, int, ncclUniqueId, int);
  ncclResult_t (*ncclCommDestroy)(ncclComm_t);
  ncclResult_t (*ncclAllReduce)(const void *, void *, size_t, int, int, ncclComm_t, CUstream);
  ncclResult_t (*ncclAllGather)(const void *, void *, size_t, int, ncclComm_t, CUstream);
  ncclResult_t (*ncclReduceScatter)(const void *, void *, size_t, int, int, ncclComm_t, CUstream);
  ncclResult_t (*ncclSend)(const void *, size_t, int, int, ncclComm_t, CUstream);
  ncclResult_t (*ncclRecv)(void *, size_t, int, int, ncclComm_t, CUstream);
  ncclResult_t (*ncclGroupStart)(void);
  ncclResult_t (*ncclGroupEnd)(void);
  const char *(*ncclGetErrorString)(ncclResult_t);
} cuda_api;

/* cuda_load.c: each loads one library into api (a no-op when loaded);
** 0, or -1 with a message naming the library or the missing symbol. */
int  cuda_load_driver(cuda_api *api, const char *lib_dir, char *err, size_t errlen);
int  cuda_load_cublas(cuda_api *api, const char *lib_dir, char *err, size_t errlen);
int  cuda_load_nvrtc(cuda_api *api, const char *lib_dir, char *err, size_t errlen);
int  cuda_load_nccl(cuda_api *api, const char *lib_dir, char *err, size_t errlen);
void cuda_unload(cuda_api *api);
/* "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)" */
int  cuda_fail(const cuda_api *api, const char *call, CUresult rc, char *err, size_t errlen);

/* cuda_kernels.c: the kernels' CUDA C source, and their names in the
** order of enum cuda_fn. ORDER CUDA_FN */
enum cuda_fn {
  KF_FILL, KF_EW_FLAT, KF_EW_ND, KF_PERMUTE, KF_TRANSPOSE_TILED, KF_ROWS, KF_SCALE,
  KF_REDUCE_ROWS, KF_REDUCE_COLS, KF_REDUCE_FIN, KF_MAX_GRAD, KF_SOFTMAX, KF_LOG_SOFTMAX, KF_SOFTMAX_GRAD,
  KF_LOG_SOFTMAX_GRAD, KF_LAYERNORM, KF_LAYERNORM_GRAD, KF_GATHER, KF_SCATTER, KF_XENT_ROWS,
  KF_XENT_SUM, KF_XENT_GRAD, KF_CAUSAL_MASK, KF_IX_GATHER, KF_IX_CLAIM, KF_IX_SCATTER,
  KF_FUSED, KF_EW_COLSUM, KF_ADAM, KF_SGD, KF_IOTA,
  KF_N
};
extern const char cuda_kernel_source[];
extern const char *const cuda_kernel_names[KF_N];
char *cuda_source(void);                  /* malloc'd: prog.h's numbers as #defines, then the kernels */
/* NVRTC: src for arch ("sm_90") to a CUBIN in *img (malloc'd); -1 with the log in err */
int  cuda_compile(const cuda_api *api, const char *src, const char *arch, char **img, size_t *size, char *err,
                  size_t errlen);
/* The cache on disk: the folder (made if missing; "" for none), the file for
** a source and arch ("" for none), reading (NULL: absent) and writing it. */
void cuda_cache_dir(const char *want, char *dir, size_t n);
void cuda_cache_path(const cuda_api *api, const char *dir, const char *src, const char *arch, char *path, size_t n);
char *cuda_cache_read(const char *path, size_t *size);
void cuda_cache_write(const char *path, const char *img, size_t size);

/* The device-side error record the checking kernels fill (first failing
** kernel wins; among its threads the lowest row). Layout shared with the
** kernel source (struct carve_status there). */
typedef struct cuda_status {
  int tag;                                /* 1 + the buffer the kernel wrote; 0: no error */
  int code;                               /* CUDA_ERR_ID, CUDA_ERR_LABEL */
  long long bound;                        /* the range's end */
  unsigned long long key;                 /* row << 32 | (uint32) bad value; the minimum is kept */
} cuda_status;
enum { CUDA_ERR_ID = 1, CUDA_ERR_LABEL = 2 };

/* The elementwise and permute kernels' parameters, by value (layouts
** shared with the kernel source; RT_MAXRANK dims). */
typedef struct cuda_ewp {
  long long n;                            /* output elements */
  int64_t shape[RT_MAXRANK];              /* output dims, outermost first, rank used */
  int64_t st[2][RT_MAXRANK];              /* input element strides per dim */
  int rank, fn;
  float alpha, beta;
} cuda_ewp;

/* RT_FUSED's parameters, by value (layout shared with the kernel source's
** fusedp): an operand index a* is 0..nin-1 for an input, nin + j for step j. */
typedef struct cuda_fstep { int fn, a0, a1, a2; float al, be; } cuda_fstep;
typedef struct cuda_fusedp {
  long long n;                            /* output elements */
  int64_t shape[RT_MAXRANK];              /* output dims, rank used */
  int64_t st[RT_MAXIN][RT_MAXRANK];       /* each input's element strides */
  unsigned long long in[RT_MAXIN];        /* the inputs' device pointers */
  int rank, nin, nsteps, bits;            /* bits: input k is i1 where bit k is set */
  cuda_fstep step[RT_FUSE_MAXSTEPS];
} cuda_fusedp;

typedef struct cuda_perm {
  long long n;
  long long shape[RT_MAXRANK];            /* output dims */
  long long st[RT_MAXRANK];               /* the input's element stride of each output dim */
  int rank, pad;
} cuda_perm;

/* RT_GATHER's and RT_SCATTER's map (an rt_index) as the kernels read it,
** by value (layout shared with the kernel source): element e of u (the
** gather's result, the scatter's updates) lies in x where the indices put
** its window (kern_index.c's place). */
typedef struct cuda_ixp {
  long long nu;                           /* elements of u */
  long long us[RT_MAXRANK];               /* u's dims */
  long long ust[RT_MAXRANK];              /* dim of u that walks an index dim: its stride in the indices */
  long long xs[RT_MAXRANK], xst[RT_MAXRANK];   /* x's dims and strides */
  long long hi[RT_MAXRANK];               /* dim of x: the largest start that keeps the window inside */
  long long cst;                          /* the indices' stride between an index's components */
  int uxd[RT_MAXRANK];                    /* dim of u: the dim of x its window walks, or -1 (an index dim) */
  int xbu[RT_MAXRANK];                    /* dim of x: the dim of u it is batched with, or -1 */
  int comp[RT_MAXRANK];                   /* component k of an index: the dim of x it starts */
  int ru, rx, ncomp, it;                  /* ranks, components, the indices' rt_dtype */
  int clamp, how, isfloat, pad;           /* starts clamped; RT_IX_*; the data is f32 (else i32) */
} cuda_ixp;

/* The backend's state: the table handed out is its first member. */
typedef struct cuda_ctx {
  rt_backend be;
  cuda_api api;
  rt_cuda_opts opts;
  char lib_dir[512], cache_dir[512];
  CUdevice dev;
  CUcontext cx;                           /* the device's primary context (shared with cuBLAS) */
  int have_cx;
  CUstream stream;                        /* every kernel, copy and GEMM goes here, in order */
  cublasHandle_t blas;
  CUmodule mod;
  CUfunction fn[KF_N];
  int cc_major, cc_minor, sms;
  char devname[128];
  CUdeviceptr status;                     /* one cuda_status */
  CUdeviceptr work;                       /* partial results (cross-entropy rows, reduction chunks), grown on demand */
  size_t work_bytes;
  char cache_note[256];                   /* how the kernels were had (for rt_cuda_describe) */
  char describe[512];
} cuda_ctx;

/* cuda_backend.c, for comm_nccl.c: the backend's state (NULL when be is not
** a CUDA backend), and a device permute out = in viewed [a, b, c] -> [b, a, c]
** (4-byte elements) queued on the backend's stream. */
cuda_ctx *cuda_ctx_of(const rt_backend *be);
int cuda_swap01(cuda_ctx *c, CUdeviceptr out, CUdeviceptr in, long long a, long long b, long long cc, char *err,
                size_t errlen);

#endif

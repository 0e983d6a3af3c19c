/*
** cuda_load.c: the CUDA libraries, opened with dlopen when a backend asks.
** Each library is looked for under several names (the newest soname
** first) in a few places, and each function by its exported name (the
** driver's versioned ones, cuMemAlloc_v2 and friends, are what cuda.h's
** macros call). Every failure names the library or the symbol.
*/
#include "util/diag.h"
#include "runtime/cuda_int.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tries each name in each place: lib_dir, $CUDA_HOME/lib64, the loader's
   own search (LD_LIBRARY_PATH, ld.so.cache), then the usual folders. */
static void *open_lib(const char *what, const char *const *names, const char *lib_dir, char *err, size_t errlen) {
  const char *home = getenv("CUDA_HOME");
  const char *dirs[] = {lib_dir, home, "", "/usr/local/cuda/lib64", "/usr/local/nvidia/lib64",
                        "/usr/lib/x86_64-linux-gnu", "/usr/lib64"};
  char last[512] = "not found";
  char path[1024];
  for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
    if (!dirs[d]) continue;
    for (const char *const *n = names; *n; n++) {
      if (d == 0 && dirs[d][0]) snprintf(path, sizeof path, "%s/%s", dirs[d], *n);
      else if (d == 1 && dirs[d][0]) snprintf(path, sizeof path, "%s/lib64/%s", dirs[d], *n);
      else if (d == 2) snprintf(path, sizeof path, "%s", *n);
      else if (d > 2) snprintf(path, sizeof path, "%s/%s", dirs[d], *n);
      else continue;
      void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (h) return h;
      const char *e = dlerror();
      if (e && d == 2 && n == names) snprintf(last, sizeof last, "%s", e);   /* the loader on the first name */
    }
  }
  char tried[256] = "";
  size_t k = 0;
  for (const char *const *n = names; *n && k < sizeof tried; n++)
    k += (size_t)snprintf(tried + k, sizeof tried - k, "%s%s", k ? ", " : "", *n);
  diag_errbuf(err, errlen, "cannot load %s (tried %s): %s", what, tried, last);
  return NULL;
}

/* dlsym into a function pointer (POSIX guarantees the conversion) */
static int sym(void *h, const char *lib, const char *name, void *fp, int optional, char *err, size_t errlen) {
  void *s = dlsym(h, name);
  memcpy(fp, &s, sizeof s);
  if (!s && !optional) return diag_errbuf(err, errlen, "%s lacks the function %s (too old a version?)", lib, name);
  return 0;
}

#define SYM(lib, field, name) \
  do { if (sym(h, lib, name, &api->field, 0, err, errlen)) goto fail; } while (0)

int cuda_load_driver(cuda_api *api, const char *lib_dir, char *err, size_t errlen) {
  if (api->hcuda) return 0;
  static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
  void *h = open_lib("the CUDA driver (is an NVIDIA driver installed?)", names, lib_dir, err, errlen);
  if (!h) return -1;
  const char *L = "libcuda.so.1";
  SYM(L, cuInit, "cuInit");
  SYM(L, cuDriverGetVersion, "cuDriverGetVersion");
  SYM(L, cuDeviceGetCount, "cuDeviceGetCount");
  SYM(L, cuDeviceGet, "cuDeviceGet");
  SYM(L, cuDeviceGetAttribute, "cuDeviceGetAttribute");
  SYM(L, cuDeviceGetName, "cuDeviceGetName");
  SYM(L, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  SYM(L, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  SYM(L, cuCtxSetCurrent, "cuCtxSetCurrent");
  SYM(L, cuStreamCreate, "cuStreamCreate");
  SYM(L, cuStreamDestroy, "cuStreamDestroy_v2");
  SYM(L, cuStreamSynchronize, "cuStreamSynchronize");
  SYM(L, cuMemAlloc, "cuMemAlloc_v2");
  SYM(L, cuMemFree, "cuMemFree_v2");
  SYM(L, cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  SYM(L, cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  SYM(L, cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  SYM(L, cuMemsetD8Async, "cuMemsetD8Async");
  SYM(L, cuModuleLoadData, "cuModuleLoadData");
  SYM(L, cuModuleUnload, "cuModuleUnload");
  SYM(L, cuModuleGetFunction, "cuModuleGetFunction");
  SYM(L, cuLaunchKernel, "cuLaunchKernel");
  SYM(L, cuGetErrorName, "cuGetErrorName");
  SYM(L, cuGetErrorString, "cuGetErrorString");
  api->hcuda = h;
  return 0;
fail:
  dlclose(h);
  return -1;
}

int cuda_load_cublas(cuda_api *api, const char *lib_dir, char *err, size_t errlen) {
  if (api->hblas) return 0;
  static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so", NULL};
  void *h = open_lib("cuBLAS", names, lib_dir, err, errlen);
  if (!h) return -1;
  const char *L = "libcublas";
  SYM(L, cublasCreate, "cublasCreate_v2");
  SYM(L, cublasDestroy, "cublasDestroy_v2");
  SYM(L, cublasSetStream, "cublasSetStream_v2");
  SYM(L, cublasSetMathMode, "cublasSetMathMode");
  SYM(L, cublasSgemm, "cublasSgemm_v2");
  SYM(L, cublasSgemmStridedBatched, "cublasSgemmStridedBatched");
  sym(h, L, "cublasGetStatusString", &api->cublasGetStatusString, 1, err, errlen);
  api->hblas = h;
  return 0;
fail:
  dlclose(h);
  return -1;
}

int cuda_load_nvrtc(cuda_api *api, const char *lib_dir, char *err, size_t errlen) {
  if (api->hrtc) return 0;
  static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", NULL};
  void *h = open_lib("NVRTC", names, lib_dir, err, errlen);
  if (!h) return -1;
  const char *L = "libnvrtc";
  SYM(L, nvrtcVersion, "nvrtcVersion");
  SYM(L, nvrtcCreateProgram, "nvrtcCreateProgram");
  SYM(L, nvrtcCompileProgram, "nvrtcCompileProgram");
  SYM(L, nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize");
  SYM(L, nvrtcGetProgramLog, "nvrtcGetProgramLog");
  SYM(L, nvrtcGetCUBINSize, "nvrtcGetCUBINSize");
  SYM(L, nvrtcGetCUBIN, "nvrtcGetCUBIN");
  SYM(L, nvrtcDestroyProgram, "nvrtcDestroyProgram");
  SYM(L, nvrtcGetErrorString, "nvrtcGetErrorString");
  api->hrtc = h;
  return 0;
fail:
  dlclose(h);
  return -1;
}

int cuda_load_nccl(cuda_api *api, const char *lib_dir, char *err, size_t errlen) {
  if (api->hnccl) return 0;
  static const char *const names[] = {"libnccl.so.2", "libnccl.so", NULL};
  void *h = open_lib("NCCL", names, lib_dir, err, errlen);
  if (!h) return -1;
  const char *L = "libnccl.so.2";
  SYM(L, ncclGetUniqueId, "ncclGetUniqueId");
  SYM(L, ncclCommInitRank, "ncclCommInitRank");
  SYM(L, ncclCommDestroy, "ncclCommDestroy");
  SYM(L, ncclAllReduce, "ncclAllReduce");
  SYM(L, ncclAllGather, "ncclAllGather");
  SYM(L, ncclReduceScatter, "ncclReduceScatter");
  SYM(L, ncclSend, "ncclSend");
  SYM(L, ncclRecv, "ncclRecv");
  SYM(L, ncclGroupStart, "ncclGroupStart");
  SYM(L, ncclGroupEnd, "ncclGroupEnd");
  SYM(L, ncclGetErrorString, "ncclGetErrorString");
  api->hnccl = h;
  return 0;
fail:
  dlclose(h);
  return -1;
}

/* The libraries stay mapped: cuBLAS and NCCL register exit handlers and
   keep threads that would run into unmapped code after a dlclose. A second
   backend's dlopen finds them loaded. */
void cuda_unload(cuda_api *api) {
  memset(api, 0, sizeof *api);
}

int cuda_fail(const cuda_api *api, const char *call, CUresult rc, char *err, size_t errlen) {
  const char *name = NULL, *text = NULL;
  if (api->cuGetErrorName) api->cuGetErrorName(rc, &name);
  if (api->cuGetErrorString) api->cuGetErrorString(rc, &text);
  if (name && text) return diag_errbuf(err, errlen, "%s: %s (%s)", call, name, text);
  return diag_errbuf(err, errlen, "%s: CUDA error %d", call, rc);
}

/*
** cuda.h: the CUDA backend, a table of backend.h for one GPU. Nothing of
** CUDA is needed to build carve: the driver (libcuda.so.1), cuBLAS and
** NVRTC are loaded with dlopen when a backend is made, and the kernels are
** compiled from source by NVRTC for the device, once per backend (and kept
** on disk, so later runs load them). Where a library or a GPU is missing,
** making a backend fails with a message saying which.
**
** Memory is device memory (device_memory = 1): the executor's planned
** block is one cuMemAlloc. Everything runs in order on one stream; GEMMs
** go to cuBLAS (full fp32 unless allow_tf32), the other instructions to
** carve's own kernels, with the CPU kernels' formulas.
*/
#ifndef runtime_cuda_h
#define runtime_cuda_h

#include <stddef.h>
#include "runtime/backend.h"

typedef struct rt_cuda_opts {
  int device;               /* ordinal, 0 .. rt_cuda_device_count() - 1 */
  int allow_tf32;           /* GEMMs may round inputs to TF32 (faster, ~1e-3 relative error) */
  const char *lib_dir;      /* a folder tried first for the libraries; NULL: $CUDA_HOME/lib64,
                               the loader's own search, then /usr/local/cuda/lib64 */
  const char *cache_dir;    /* compiled kernels; NULL: $XDG_CACHE_HOME/carve or ~/.cache/carve;
                               "": no cache (an unwritable folder also means none) */
} rt_cuda_opts;

/* A backend on device o->device (o NULL: the defaults, device 0). NULL
** with a one-line reason in err: no driver, no such device, a library or
** symbol missing, kernels that did not compile. Free with rt_backend_free. */
rt_backend *rt_backend_cuda_new(const rt_cuda_opts *o, char *err, size_t errlen);

/* How many GPUs the driver sees: >= 0, or -1 with the reason (no driver). */
int rt_cuda_device_count(const rt_cuda_opts *o, char *err, size_t errlen);

/* Which instructions the CUDA backend has a kernel for (has[op] = 1; a
** kernel that only refuses, as attention's, counts as none), without a GPU;
** returns how many elementwise functions it runs (rt_backend.newfn). */
int rt_cuda_kernel_ops(unsigned char has[RT_NOPS]);

/* One line about a CUDA backend for logs: the device, its compute
** capability and where its kernels came from ("" for another backend). */
const char *rt_cuda_describe(const rt_backend *be);

/* Compiles every kernel's source with NVRTC for arch ("sm_90"), without a
** GPU or a driver: 0; -1 with NVRTC's log when the source does not
** compile; -2 when NVRTC cannot be loaded. For tests. */
int rt_cuda_compile_check(const rt_cuda_opts *o, const char *arch, char *err, size_t errlen);

#endif

/*
** backend.h: one table of kernel functions per device kind. The executor
** calls kernels and touches buffer memory only through this table, so a
** GPU backend (cuda_backend.c) slots in without touching the executor or
** the lowering. A kernel returns 0, or -1 after writing a one-line reason
** into err (an id out of range, say); it never prints and never exits.
**
** Every call takes the table's ctx first (NULL for the CPU, the device
** state for CUDA). On a device backend (device_memory set) the pointers
** that alloc returns are device addresses: only the table's own calls may
** read or write them, and a kernel may return before its work is done;
** sync waits for it and reports what failed on the device (an id out of
** range is detected there and reported at sync, as the CPU kernel's
** message, with the buffer the failing kernel wrote).
*/
#ifndef runtime_backend_h
#define runtime_backend_h

#include <stddef.h>
#include "runtime/prog.h"

typedef int (*rt_kernel)(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen);

/* RT_SHARD_SLICE reaches its kernel resolved by the executor (which knows
** this device's place in the group): the kernel copies rows [off, off + n2)
** of in0 viewed [outer, n, inner] to out viewed [outer, n2, inner]. Every
** kernel treats elements as 4 bytes (f32 and i32 alike). */

typedef struct rt_backend {
  const char *name;               /* "cpu", "cuda" */
  void *ctx;                      /* first argument of every call below */
  int device_memory;              /* 1: memory from alloc is not host memory */
  void *(*alloc)(void *ctx, size_t bytes);   /* 64-byte aligned; NULL when out of memory */
  void  (*free)(void *ctx, void *p);
  /* host <-> backend memory; both return when the copy is done */
  int (*upload)(void *ctx, void *dst, const void *src, size_t bytes, char *err, size_t errlen);
  int (*download)(void *ctx, void *dst, const void *src, size_t bytes, char *err, size_t errlen);
  int (*zero)(void *ctx, void *p, size_t bytes, char *err, size_t errlen);
  /* Waits for the work queued so far. -1 with a message when a kernel
  ** failed on the device; *where then names the buffer that kernel wrote
  ** (-1: unknown). NULL for a backend whose kernels finish before returning. */
  int (*sync)(void *ctx, int *where, char *err, size_t errlen);
  void (*release)(const struct rt_backend *be);   /* rt_backend_free; NULL: nothing to free */
  rt_kernel kernels[RT_NOPS];     /* NULL for the collectives: they go to rt_comm */
  unsigned dtypes;                /* a bit per rt_dtype its kernels read and write */
  int newfn;                      /* the elementwise functions it has: those below this one */
} rt_backend;

/* The CPU backend: static, never freed (rt_backend_free ignores it). */
const rt_backend *rt_backend_cpu(void);
/* The threads the host's kernels use: BLAS's count (OPENBLAS_NUM_THREADS). */
int rt_host_threads(void);
/* BLAS held to one thread from the first hold to the last release, for
** whoever spreads work over threads of its own (attention's slices, devices
** that are threads of one process): changing BLAS's thread count while
** another thread is inside a BLAS call corrupts that call's result, so a
** process whose threads call BLAS at once holds it for as long as they run. */
void rt_blas_hold(void);
void rt_blas_release(void);

/* Frees a backend made by a constructor (rt_backend_cuda_new in cuda.h);
** NULL and the CPU backend are fine. */
void rt_backend_free(const rt_backend *be);

#endif

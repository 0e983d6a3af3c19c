/*
** backend.h: one table of kernel functions per device kind. The executor
** calls kernels only through this table, so a GPU backend (cuBLAS,
** CUDA-aware MPI) slots in without touching the executor or the lowering.
** A kernel returns 0, or -1 after writing a one-line reason into err
** (an id out of range, say); it never prints and never exits.
*/
#ifndef runtime_backend_h
#define runtime_backend_h

#include <stddef.h>
#include "runtime/prog.h"

typedef int (*rt_kernel)(const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen);

typedef struct rt_backend {
  const char *name;
  void *(*alloc)(size_t bytes);   /* 64-byte aligned; NULL when out of memory */
  void  (*free)(void *p);
  rt_kernel kernels[RT_NOPS];     /* NULL for the collectives: they go to rt_comm */
} rt_backend;

const rt_backend *rt_backend_cpu(void);

#endif

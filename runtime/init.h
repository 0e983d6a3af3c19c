/*
** init.h: deterministic initial values computed from each element's
** global index, so that every partitioning of a model, and every rank,
** starts from the same numbers without communication.
*/
#ifndef runtime_init_h
#define runtime_init_h

#include <stdint.h>
#include "runtime/prog.h"

typedef enum rt_initkind { RT_INIT_NORMAL, RT_INIT_ZEROS, RT_INIT_ONES, RT_INIT_UNIFORM, RT_INIT_INTS } rt_initkind;

typedef struct rt_init {
  rt_initkind kind;
  double a, b;      /* NORMAL: std (mean 0); UNIFORM: lo, hi; INTS: ids uniform in [0, b) */
  uint64_t seed;    /* from the value's name, so different values differ */
} rt_init;

uint64_t rt_init_seed(const char *name);
/* Fill the block [off, off+local) of a tensor of global shape (row-major),
   large blocks by rows on up to `threads` threads: the same numbers
   whatever the count. */
void rt_init_block(const rt_init *in, rt_dtype t, int rank, const int64_t *global_shape,
                   const int64_t *off, const int64_t *local, void *dst, int threads);

#endif

/*
** mpi_util.h: the few whole-world operations carve run needs besides the
** program's collectives: agreeing on maxima (step time, peak memory) and
** bringing every rank's piece of a tensor to rank 0 (--save, --check).
*/
#ifndef runtime_mpi_util_h
#define runtime_mpi_util_h

#include <stddef.h>
#include "runtime/world.h"

/* x[i] = max over ranks of x[i], on every rank. */
int rt_mpi_max(double *x, int n);
/* Rank 0 gets every rank's `bytes` bytes, rank-major, in all (size bytes * ranks). */
int rt_mpi_gather(const void *local, size_t bytes, void *all);
/* Rank 0's n bytes to every rank. */
int rt_mpi_bcast(void *buf, size_t n);
void rt_mpi_barrier(void);
/* This rank's index among the ranks on its node and their number (collective
   over the world): which GPU a rank takes, and whether ranks share one. */
int rt_mpi_node_rank(int *local_rank, int *local_size);

/* The world of every rank (MPI_COMM_WORLD); call after rt_mpi_init. */
rt_world rt_mpi_world(void);

#endif

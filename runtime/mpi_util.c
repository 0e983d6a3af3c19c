/*
** mpi_util.c: whole-world helpers over MPI_COMM_WORLD.
*/
#include "runtime/mpi_util.h"
#include "runtime/comm_mpi.h"

#include <limits.h>
#include <mpi.h>

int rt_mpi_max(double *x, int n) {
  return MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

int rt_mpi_gather(const void *local, size_t bytes, void *all) {
  /* large tensors go in chunks that fit an int count */
  const size_t chunk = (size_t)1 << 30;
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (bytes <= chunk)
    return MPI_Gather(local, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int r = 1; r < size; r++) {
    if (rank == r) {
      for (size_t o = 0; o < bytes; o += chunk)
        if (MPI_Send((const char *)local + o, (int)(bytes - o < chunk ? bytes - o : chunk), MPI_BYTE, 0, 7, MPI_COMM_WORLD) != MPI_SUCCESS) return -1;
    } else if (rank == 0) {
      for (size_t o = 0; o < bytes; o += chunk)
        if (MPI_Recv((char *)all + (size_t)r * bytes + o, (int)(bytes - o < chunk ? bytes - o : chunk), MPI_BYTE, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) return -1;
    }
  }
  if (rank == 0) for (size_t o = 0; o < bytes; o++) ((char *)all)[o] = ((const char *)local)[o];
  return 0;
}

int rt_mpi_bcast(void *buf, size_t n) {
  return n <= INT_MAX && MPI_Bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

void rt_mpi_barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }

static int w_agree(void *impl, int status, const char *msg, char *err, size_t errlen) {
  return rt_mpi_agree(NULL, status, msg, err, errlen);
}
static int w_max(void *impl, double *x, int n) { return rt_mpi_max(x, n); }
static int w_gather(void *impl, const void *local, size_t bytes, void *all) { return rt_mpi_gather(local, bytes, all); }
static int w_bcast(void *impl, void *buf, size_t n) { return rt_mpi_bcast(buf, n); }

rt_world rt_mpi_world(void) {
  rt_world w = {NULL, rt_mpi_world_rank(), rt_mpi_world_size(), w_agree, w_max, w_gather, w_bcast};
  return w;
}

int rt_mpi_node_rank(int *local_rank, int *local_size) {
  MPI_Comm node = MPI_COMM_NULL;
  *local_rank = 0;
  *local_size = 1;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) return -1;
  int ok = MPI_Comm_rank(node, local_rank) == MPI_SUCCESS && MPI_Comm_size(node, local_size) == MPI_SUCCESS;
  MPI_Comm_free(&node);
  return ok ? 0 : -1;
}

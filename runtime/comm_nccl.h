/*
** comm_nccl.h: the program's collectives over NCCL, for runs with one GPU
** per rank. Built beside an rt_mpi (whose communicators give each group
** its members and carry NCCL's unique ids), it moves device memory
** directly (device_aware), on the CUDA backend's stream. Lives in
** libcarvempi.a with the rest of the MPI code.
**
** Choosing: NCCL refuses two ranks on one GPU, so take it only when every
** rank has a GPU of its own (rt_mpi_node_rank's local_size at most
** rt_cuda_device_count on every node, the device being local_rank);
** otherwise pass rt_mpi_comm(m) to the executor: with a CUDA backend it
** stages each collective through host memory.
*/
#ifndef runtime_comm_nccl_h
#define runtime_comm_nccl_h

#include <stddef.h>
#include "runtime/backend.h"
#include "runtime/comm_mpi.h"
#include "runtime/exec.h"

typedef struct rt_nccl rt_nccl;

/* Collective: every rank calls it with its own CUDA backend (cuda, from
** rt_backend_cuda_new) and the rt_mpi of the program. NULL on every rank,
** with the lowest failing rank's reason, when NCCL cannot be loaded or set
** up anywhere. m and cuda must outlive the result. */
rt_nccl *rt_nccl_new(rt_mpi *m, const rt_backend *cuda, char *err, size_t errlen);
const rt_comm *rt_nccl_comm(rt_nccl *n);         /* for rt_exec_new */
void rt_nccl_free(rt_nccl *n);                   /* NULL is fine */

#endif

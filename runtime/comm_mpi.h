/*
** comm_mpi.h: the MPI side of the runtime. One rank per device; the mesh
** axes of a program become communicators, and the collectives of
** prog.h run over them through the rt_comm that exec.h asks for.
** Kept in its own library (libcarvempi.a) so that nothing else that
** links libcarve ever calls MPI_Init.
*/
#ifndef runtime_comm_mpi_h
#define runtime_comm_mpi_h

#include <stddef.h>
#include "runtime/exec.h"
#include "runtime/prog.h"

typedef struct rt_mpi rt_mpi;

/* MPI_Init (call once from main; does nothing if MPI is already up). 0 or -1. */
int rt_mpi_init(int *argc, char ***argv);
/* This process's rank and the number of ranks (0 and 1 before rt_mpi_init). */
int rt_mpi_world_rank(void);
int rt_mpi_world_size(void);

/* Communicators for p's mesh and groups (collective: every rank calls it
   with the same program). The world size must equal the product of the
   mesh sizes. Rank r sits at coord[i] = (r / prod(mesh[i+1..])) % mesh[i]
   (row-major, axis 0 major). A group joins the ranks that agree on every
   coordinate outside it; a rank's index in a group is its coordinates on
   the group's axes, linearized major to minor in the group's axis order.
   Where all ranks of a group share a node, the group also gets a small
   shared-memory window that the fastest algorithms use (CARVE_MPI_SHM=0 in
   the environment turns them off). NULL with a message in err on failure;
   p must outlive the result. */
rt_mpi *rt_mpi_new(const rt_prog *p, char *err, size_t errlen);
void rt_mpi_free(rt_mpi *m);                    /* collective too; NULL is fine */
const rt_comm *rt_mpi_comm(rt_mpi *m);          /* for rt_exec_new */
int rt_mpi_coord(const rt_mpi *m, int axis);    /* -1 for an axis the mesh lacks */
const rt_prog *rt_mpi_prog(const rt_mpi *m);    /* the program m was made for */
/* The member at index root of group g sends n bytes to the others (a group
   of one device: nothing to do). For communicators built beside m (NCCL's). */
int rt_mpi_group_bcast(rt_mpi *m, int g, void *buf, size_t n, int root, char *err, size_t errlen);

/* Every rank passes its local status (0 ok, -1 failed, with msg). 0 when
   all are ok; else -1 on every rank, err holding the lowest failing rank's
   message as "rank R: msg". m NULL agrees over MPI_COMM_WORLD (so that a
   failed rt_mpi_new can take part). */
int rt_mpi_agree(rt_mpi *m, int status, const char *msg, char *err, size_t errlen);

/* A fatal error during a step: prints "carve: error: rank R: msg" on stderr
   and takes every rank down (MPI_Abort), so no rank waits forever. */
_Noreturn void rt_mpi_fail(const char *msg);

/* MPI_Finalize, if MPI is up and not yet finalized. */
void rt_mpi_finalize(void);

#endif

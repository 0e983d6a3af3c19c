/*
** comm_local.h: every device of a mesh in one process, one thread each,
** with collectives done in shared memory. It is the reference the MPI
** collectives are tested against, and it lets unit tests check that a
** partitioned program equals the unpartitioned one without MPI.
*/
#ifndef runtime_comm_local_h
#define runtime_comm_local_h

#include "runtime/exec.h"
#include "runtime/prog.h"
#include "runtime/world.h"

typedef struct rt_local rt_local;

rt_local *rt_local_new(const rt_prog *p);
void      rt_local_free(rt_local *l);
int       rt_local_devices(const rt_local *l);
const rt_comm *rt_local_comm(rt_local *l, int device);
/* The world of the run as device `device` sees it (agree, max, gather, bcast). */
const rt_world *rt_local_world(rt_local *l, int device);
/* Run fn on one thread per device; 0 when every call returned 0. */
int       rt_local_run(rt_local *l, int (*fn)(int device, void *arg), void *arg);

#endif

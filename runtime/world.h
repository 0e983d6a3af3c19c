/*
** world.h: what a run does across all of its devices besides the
** program's own collectives: agree that every device is ready (or name
** the first that is not), take maxima of measurements, and bring every
** device's piece of a tensor to device 0. The drivers of a run (interp/
** drive) see only this; it is implemented over MPI (mpi_util.c), over
** threads (comm_local.c), and for one device (world.c).
*/
#ifndef runtime_world_h
#define runtime_world_h

#include <stddef.h>

typedef struct rt_world {
  void *impl;
  int rank, size;        /* this device, and how many take part */
  /* Every device passes its status (0 ok, -1 failed, msg saying why). 0 when
  ** all are ok; else -1 on every device, err holding "rank R: msg" of the
  ** lowest failing rank. */
  int (*agree)(void *impl, int status, const char *msg, char *err, size_t errlen);
  int (*max)(void *impl, double *x, int n);                       /* x[i] = max over devices */
  /* Device 0 gets every device's bytes, rank-major, in all (size * bytes); others pass all = NULL. */
  int (*gather)(void *impl, const void *local, size_t bytes, void *all);
  int (*bcast)(void *impl, void *buf, size_t n);                 /* device 0's bytes to all */
} rt_world;

/* The world of one device (rank 0 of 1). */
const rt_world *rt_world_single(void);

#endif

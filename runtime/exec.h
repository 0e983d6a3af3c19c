/*
** exec.h: runs a per-device program. The same executor serves one device
** and each MPI rank; collectives go through an rt_comm, which is NULL on
** one device (a program with collectives then fails with an error).
*/
#ifndef runtime_exec_h
#define runtime_exec_h

#include <stddef.h>
#include "runtime/backend.h"
#include "runtime/prog.h"

/* Collectives over a group of mesh axes; implemented over MPI in comm_mpi.c
** and over NCCL in comm_nccl.c. A communicator that is not device_aware
** takes host memory: on a device backend the executor stages each
** collective through host memory for it (download, run, upload). */
typedef struct rt_comm {
  void *impl;
  int (*size)(void *impl, int group);                 /* devices in the group */
  int (*index)(void *impl, int group);                /* this device's index in it */
  int (*run)(void *impl, const rt_instr *ins, void *out, const void *in, char *err, size_t errlen);
  int device_aware;                                   /* run takes the backend's memory */
  /* This device's run failed: the others stop waiting for it (their
  ** collectives and receives fail too) rather than hang. NULL: none (MPI's
  ** ranks agree on failure after the run). */
  void (*abandon)(void *impl);
} rt_comm;

typedef struct rt_exec rt_exec;

rt_exec *rt_exec_new(const rt_prog *p, const rt_backend *be, const rt_comm *comm);
void     rt_exec_free(rt_exec *e);
/* Give an input buffer its data (copied in from host memory; bytes must
** match the local size). */
int      rt_exec_set(rt_exec *e, int buf, const void *data, size_t bytes, char *err, size_t errlen);
/* An input buffer's own memory, to be filled in place (allocated on first
** use; bytes must match the local size), which saves a copy and a
** temporary as large as the input. Host backends only: on a device
** backend NULL with err empty (use rt_exec_set there); NULL with a message
** for a wrong buffer or size, or when out of memory. */
void    *rt_exec_input(rt_exec *e, int buf, size_t bytes, char *err, size_t errlen);
/* Copy a bound input or a kept output out to host memory (bytes must match
** the local size); works on every backend. 0 or -1 with a message. */
int      rt_exec_get(rt_exec *e, int buf, void *dst, size_t bytes, char *err, size_t errlen);
/* Direct access to a bound input or a kept output after a run (NULL if
** absent). Host backends only: NULL for every buffer of a device backend
** (use rt_exec_get there). */
void    *rt_exec_data(rt_exec *e, int buf);
/* One run of the program. 0 or -1 with a message naming the instruction.
** On a device backend it returns when the device has finished the run, so
** that errors found there surface at the step that made them. */
int      rt_exec_run(rt_exec *e, char *err, size_t errlen);
/* After a training step: every input with carry_from takes that output's data. */
void     rt_exec_carry(rt_exec *e);
/* Time every instruction from now on (called again: from zero again);
** rt_exec_seconds gives the sums per instruction (NULL when not profiling).
** On a device backend each instruction is waited for, so the times are real
** and the run is slower. */
void     rt_exec_profile(rt_exec *e);
const double *rt_exec_seconds(const rt_exec *e);
/* Watch every f32 output for NaN or +Inf (host backends; off by default):
** rt_exec_first_nonfinite then gives the first instruction of the last run
** whose output held one, or -1. */
void     rt_exec_watch(rt_exec *e, int on);
int      rt_exec_first_nonfinite(const rt_exec *e);
/* Bytes a run will hold: every input and output, and the temporaries' block. */
size_t   rt_exec_need(const rt_exec *e);
/* Peak bytes of live buffers seen so far (inputs included). */
size_t   rt_exec_peak(const rt_exec *e);

#endif

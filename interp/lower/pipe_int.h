/*
** pipe_int.h: the pipeline pass's state, shared by interp/lower/pipeline.c
** (the stages' programs and the transfers between them) and
** interp/lower/pipe_sched.c (the order each stage runs its microbatches in).
*/
#ifndef interp_lower_pipe_int_h
#define interp_lower_pipe_int_h

#include "interp/lower/lower_int.h"

#include <stdint.h>

/* a stage's instructions, each with its place in the order of one device
   running the whole batch (pre, then each microbatch's forward and
   backward, then post): which write of a buffer a reader needs */
typedef struct ilist { rt_instr *a; int64_t *key; int n, cap; } ilist;

typedef struct pctx {
  const ir_graph *g;
  const sh_plan *plan;
  rt_prog *p;
  diag *d;
  int P, M, micro, failed;
  uint64_t *vmask;      /* IR value -> its stages */
  char *fwd;            /* IR value -> in the forward pass */
  int n0, nb0;          /* instructions and buffers of the SPMD program */
  rt_instr *ins;        /* its instructions (a copy) */
  uint64_t *imask;      /* instruction -> its stages */
  char *vary;           /* instruction -> reads a microbatch's piece (repeated for each) */
  char *acc;            /* instruction -> a sum over the microbatches */
  char *post;           /* instruction -> reads such a sum (runs after the last microbatch) */
  char *bwd;            /* varying instruction -> in the backward pass */
  char *wpass;          /* backward instruction -> makes only weights' gradients (zero-bubble's W pass) */
  struct slot **zb;     /* the zero-bubble schedule: stage -> its slots (3 M) */
  int V;                /* parts a stage holds (the interleaved schedule's chunks), else 1 */
  int *part;            /* IR value -> its part of the program (shard_stages), -1: where read */
  int *chunk;           /* varying instruction -> which of its stage's parts it belongs to */
  char *vbuf;           /* buffer -> one per microbatch */
  char *accout;         /* buffer -> a sum over the microbatches writes it */
  int **copy;           /* varying buffer -> its buffer for each microbatch */
  int *rest;            /* group -> the group without the microbatch axis (-1: none left) */
  int *sum;             /* accumulating instruction -> the buffer it accumulates into */
  ilist *list;          /* per stage */
} pctx;

/* A stage's turn: the forward (back 0), backward (1) or weights' gradients
   (2, under the zero-bubble schedule) of microbatch j, in part chunk. */
typedef struct slot { int back, chunk, j; } slot;

/* pipe_sched.c: helpers pipeline.c shares, and the schedules */
int  pipe_reads(const rt_instr *x, int b);              /* does x read b (an operand, or what it adds to) */
int  pipe_fail(pctx *c, int i, const char *what);       /* a located error about instruction i's value (-1: none) */
int  pipe_pass_of(const pctx *c, int i);               /* the pass instruction i runs in: 0, 1 or 2 */
void pipe_weight_pass(pctx *c);                        /* zero-bubble: the backward work that makes only weights' gradients */
void pipe_zero_bubble(pctx *c);                        /* zero-bubble: each stage's slots (c->zb) */
int  pipe_schedule(const pctx *c, int s, slot *out);   /* stage s's slots in order; their count */

#endif

/*
** zigzag.h: instructions over a group whose pieces are dealt zig-zag
** (rt_prog.zigzag, runtime/mesh.h): of a dim of 2P blocks, the device at
** index q of the group holds blocks q and 2P-1-q. The executor hands these
** instructions here; everything else runs as it does for pieces in order.
**
**   - all_gather: gathered in device order, then the blocks put in order;
**   - reduce_scatter: the blocks put in device order first;
**   - all_to_all: both;
**   - shard_slice and causal_mask: the kernel once for each half of each
**     outer slice, each half at its own place in the whole.
**
** Host memory only (a device backend refuses such programs).
*/
#ifndef runtime_zigzag_h
#define runtime_zigzag_h

#include <stddef.h>
#include "runtime/backend.h"
#include "runtime/exec.h"

/* A collective over a zig-zag group: comm runs it, with its blocks put in
** place before or after. 0, or -1 with why. */
int rt_zz_collective(const rt_prog *p, const rt_comm *comm, const rt_instr *ins, void *out, const void *in, char *why, size_t n);

/* shard_slice or causal_mask over a zig-zag group, at device index q of P:
** kernel run on each half of each outer slice. 0, or -1 with why. */
int rt_zz_rows(const rt_prog *p, const rt_backend *be, const rt_instr *ins, int q, int P, void *out, void *const *in, char *why,
               size_t n);

#endif

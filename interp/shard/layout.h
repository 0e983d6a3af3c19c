/*
** layout.h: the arithmetic of layouts, in one place: a value's local
** shape under a layout, the collectives that take a value from one
** layout to another (reshard steps), and the bytes each moves per device.
** The lowering emits these steps, the reports print them, the simulator
** and the search cost them.
*/
#ifndef interp_shard_layout_h
#define interp_shard_layout_h

#include <stdint.h>
#include "interp/shard/shard.h"
#include "runtime/prog.h"

/* Pieces a dim laid out as d is cut into: the product of its axes' sizes. */
int64_t layout_pieces(const sh_plan *p, const sh_dim *d);
/* Local shape of a tensor of shape global laid out as dims. */
void layout_local_shape(const sh_plan *p, const ir_shape *global, const sh_dim *dims, ir_shape *out);
int  layout_same(const sh_dim *a, const sh_dim *b, int rank);
/* Devices in a group of mesh axes (a bit set). */
int64_t layout_group_devices(const sh_plan *p, uint32_t axes);

/* One reshard step: a collective (or a local slice) over the axes in axes. */
typedef struct layout_step {
  rt_op op;              /* RT_ALL_REDUCE, RT_REDUCE_SCATTER, RT_ALL_GATHER, RT_ALL_TO_ALL, RT_SHARD_SLICE */
  int dim;               /* the dim it splits, gathers or scatters (all_to_all: the dim it splits) */
  int dim2;              /* all_to_all: the dim it joins */
  uint32_t axes;
} layout_step;

#define LAYOUT_MAXSTEPS (3 * IR_MAXRANK + 2)

/* The steps taking a value laid out as from, a partial sum over partial
** (to be summed), to the layout to: partial sums reduced (reduce-scattered
** where to splits that axis next), a minor axis moved between dims by one
** all-to-all, axes gathered minor first, new axes sliced locally. Returns
** how many (at most LAYOUT_MAXSTEPS). */
int layout_steps(const sh_plan *p, int rank, const sh_dim *from, uint32_t partial, const sh_dim *to, layout_step *st);
/* The local shape after step st, from the local shape s before it. */
void layout_step_shape(const sh_plan *p, const layout_step *st, const ir_shape *s, ir_shape *out);
/* Bytes one device sends or receives for st applied to a local shape s
** (the larger of its input and output; 0 for a local slice). */
int64_t layout_step_bytes(const sh_plan *p, const layout_step *st, const ir_shape *s, size_t elem);

#endif

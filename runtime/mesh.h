/*
** mesh.h: the geometry of a device mesh, in one place. Devices are
** numbered row-major over the mesh axes (axis 0 major): device d sits at
** coordinate (d / prod(mesh[i+1..])) % mesh[i] on axis i. A group of axes
** joins the devices that agree on every coordinate outside it; a device's
** index in a group is its coordinates on the group's axes, linearized in
** the group's order (major to minor); its color is the rest of its
** coordinates. The MPI communicators, the in-process mesh, the readers of
** each device's slice and the reports all use these and nothing else.
*/
#ifndef runtime_mesh_h
#define runtime_mesh_h

#include <stdint.h>
#include "runtime/prog.h"

/* The most devices a mesh may have: tactic files, --mesh and program
** files are refused above it (docs/commands.md "Limits and safeguards"), so that a device count,
** a device's number and its index in a group fit an int, and what is kept
** per device (carve show's map of blocks, a gather's pieces) stays small. */
#define RT_MAX_DEVICES (1 << 20)

int rt_mesh_devices(const rt_prog *p);                       /* 1 without a mesh */
int rt_mesh_coord(const rt_prog *p, int device, int axis);
int rt_mesh_index(const rt_prog *p, int device, int group);   /* 0 for group -1 */
int rt_mesh_color(const rt_prog *p, int device, int group);
int rt_mesh_group_size(const rt_prog *p, int group);          /* 1 for group -1 */
/* Is group one axis whose pieces are dealt zig-zag (rt_prog.zigzag)? Of a
** dim of 2P blocks split over it, the device at index q of P holds blocks
** q and 2P-1-q, in that order; over any other group, block q of P. */
int rt_mesh_zigzag(const rt_prog *p, int group);
/* The row of the whole that local row r is, of a dim whose pieces of n rows
** are split over group, at index q in it. */
int64_t rt_mesh_row(const rt_prog *p, int group, int q, int64_t n, int64_t r);
/* Where device's piece of buffer b lies in the full tensor: *nblk blocks
** (1, or 2 where a dim is split zig-zag), block k at off[k] (per dim) of
** shape[] each (the piece's, halved along the zig-zag dim *zdim, -1: none);
** block k is the piece's rows [k shape[zdim], (k + 1) shape[zdim]) there. */
void rt_mesh_blocks(const rt_prog *p, int device, int b, int64_t off[2][RT_MAXRANK], int64_t *shape, int *nblk, int *zdim);
/* The element of the full tensor (row-major over its global shape) that
** element k of device's piece of buffer b is. */
int64_t rt_mesh_global_index(const rt_prog *p, int device, int b, int64_t k);
/* A ring attention block (RT_ATTN_BLOCK, RT_ATTN_BLOCK_GRAD) placed for
** the device at index q of its group: into fixed, the places in the whole
** sequence of its queries (this device's) and of the keys it holds at that
** step (the device's split_dim places back), each two halves where the
** group deals zig-zag (RT_ATTN_ZIGZAG). -1 if a piece does not halve. */
int rt_mesh_ring_block(const rt_prog *p, const rt_instr *ins, int q, rt_instr *fixed);
/* Where device's piece of buffer b starts in the full tensor, per dim (its
** first block where it has two). */
void rt_mesh_block(const rt_prog *p, int device, int b, int64_t *off);

#endif

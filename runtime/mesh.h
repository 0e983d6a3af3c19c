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
/* Where device's piece of buffer b starts in the full tensor, per dim. */
void rt_mesh_block(const rt_prog *p, int device, int b, int64_t *off);

#endif

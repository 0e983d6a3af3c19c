/*
** kern_ring.h: the CPU kernels of ring attention's blocks (RT_ATTN_BLOCK,
** RT_ATTN_FINISH, RT_ATTN_BLOCK_GRAD), f32.
*/
#ifndef runtime_kern_ring_h
#define runtime_kern_ring_h

#include <stddef.h>
#include "runtime/prog.h"

int rt_kern_attn_block(const rt_instr *x, void *out, void *const *in, char *err, size_t errlen);
int rt_kern_attn_finish(const rt_instr *x, void *out, void *const *in, char *err, size_t errlen);
int rt_kern_attn_block_grad(const rt_instr *x, void *out, void *const *in, char *err, size_t errlen);
/* The scores a block (placed: runtime/mesh.h's rt_mesh_ring_block) computes,
** those its causal mask leaves out of every pair of segments skipped: the
** work of a ring step on one device. */
int64_t rt_attn_block_scores(const rt_instr *x);

#endif

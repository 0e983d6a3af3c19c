/*
** kern_attn.h: the CPU kernels of RT_ATTENTION and RT_ATTENTION_GRAD
** (f32), blocked so that no [s, s] score matrix is stored. threads: how
** many threads may share the slices (BLAS's count).
*/
#ifndef runtime_kern_attn_h
#define runtime_kern_attn_h

#include <stddef.h>
#include "runtime/prog.h"

int rt_kern_attention(int threads, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen);

/* The work of one slice of s positions, as the kernel blocks it: the
** score elements it computes (masked ones of a computed block included)
** and its block GEMM calls. Each score costs 2 dk FLOPs per GEMM over
** it: two GEMMs in the forward, five in the gradient. For the simulator,
** which costs the kernel by its blocks. */
void rt_attention_blocks(int64_t s, int causal, int grad, double *scores, double *calls);

#endif

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

#endif

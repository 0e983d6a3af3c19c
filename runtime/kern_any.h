/*
** kern_any.h: the CPU kernels for element types other than f32 (kern_any.c),
** called by kern_cpu.c's kernels when an instruction's buffers are not all
** f32; the f32 loops stay as they are. Internal to runtime/.
*/
#ifndef runtime_kern_any_h
#define runtime_kern_any_h

#include <stddef.h>
#include "runtime/prog.h"

/* Every buffer the instruction reads and writes is f32 (the fast path). */
int rt_all_f32(const rt_instr *ins, int nin);

int rt_any_ew(const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen);
void rt_any_fill(const rt_instr *ins, void *out);
int rt_any_reduce(const rt_instr *ins, void *out, const void *in, char *err, size_t errlen);
void rt_any_iota(const rt_instr *ins, void *out);
int rt_any_gemm(const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen);

#endif

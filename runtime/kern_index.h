/*
** kern_index.h: RT_GATHER and RT_SCATTER on the host (kern_index.c), and
** the check that an instruction's rt_index fits its buffers, which the
** executor runs before any kernel (a program read from a file included).
*/
#ifndef runtime_kern_index_h
#define runtime_kern_index_h

#include <stddef.h>
#include "runtime/prog.h"

int rt_kern_gather(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen);
int rt_kern_scatter(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen);
/* 0 when ins's rt_index agrees with its buffers' ranks, shapes and types;
** else -1 with the reason in why. */
int rt_index_check(const rt_prog *p, const rt_instr *ins, char *why, size_t n);

#endif

/*
** kern_f64.h: the composite kernels of f64 programs (kern_f64.c), called
** by kern_cpu.c's kernels when an instruction writes f64. Internal to
** runtime/.
*/
#ifndef runtime_kern_f64_h
#define runtime_kern_f64_h

#include <stddef.h>
#include "runtime/prog.h"

/* softmax, log-softmax, layer norm, cross-entropy, the causal mask, the
** gradients of max and the embedding, attention: f64 operands (ids and
** labels i32), computed in double. */
int rt_f64_kernel(const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen);

/* Is every one of the outer labels in [0, n) (over split classes, [0, n2):
** every device's)? Else an error naming the first that is not
** (cross-entropy's check, in f32 and f64). */
int rt_check_labels(const rt_instr *ins, const int32_t *lab, char *err, size_t errlen);

#endif

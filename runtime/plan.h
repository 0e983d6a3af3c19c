/*
** plan.h: where a program's temporaries live. A temporary lives from the
** instruction that first writes it to the last that reads it; since the
** program is fixed, these lifetimes are known before it runs, and all
** temporaries are placed once in one block (largest first, each at the
** lowest offset that no temporary alive at the same time covers), so that
** two share memory whenever their lifetimes do not meet, and an
** elementwise result may take the place of an input that dies there. The executor
** allocates by this plan; the simulator predicts memory from it.
*/
#ifndef runtime_plan_h
#define runtime_plan_h

#include <stddef.h>
#include <stdint.h>
#include "runtime/prog.h"

#define RT_PLAN_ALIGN 64         /* every temporary starts on a 64-byte boundary */

typedef struct rt_memplan {
  size_t block;                  /* bytes of the block: the highest placed end */
  size_t *offset;                /* per buffer: a temporary's place in the block */
  int32_t *first_write;          /* per buffer: first instruction writing it (-1: none) */
  int32_t *last_use;             /* per buffer: last instruction reading or writing it (-1: none) */
  int32_t *share;                /* per buffer: the temporary whose place it takes (written over
                                    in place), else itself */
  size_t peak_live;              /* the most temporary bytes alive at one instruction */
  int32_t peak_at;               /* that instruction (-1: no temporaries) */
} rt_memplan;

/* Plan p's temporaries. Cost: about n log n in the temporaries, plus the
** overlaps each has in time. */
void rt_memplan_make(const rt_prog *p, rt_memplan *m);
void rt_memplan_free(rt_memplan *m);
/* A buffer's bytes, rounded up as the plan places it. */
size_t rt_memplan_size(const rt_prog *p, int b);

#endif

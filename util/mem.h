/*
** mem.h: heap memory outside arenas (work arrays, growable lists, text).
** Out of memory is the one condition carve cannot report gracefully: it
** prints one line and exits 1.
*/
#ifndef util_mem_h
#define util_mem_h

#include <stddef.h>
#include <stdlib.h>

void *mem_alloc(size_t n);
void *mem_calloc(size_t n, size_t m);
void *mem_realloc(void *p, size_t n);
/* qsort that takes no array at all for fewer than two elements (qsort
** itself must not be given a null pointer, even for none). */
static inline void mem_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
  if (n > 1) qsort(base, n, size, cmp);
}
_Noreturn void mem_oom(void);

#endif

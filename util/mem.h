/*
** mem.h: heap memory outside arenas (work arrays, growable lists, text).
** Out of memory is the one condition carve cannot report gracefully: it
** prints one line and exits 1.
*/
#ifndef util_mem_h
#define util_mem_h

#include <stddef.h>

void *mem_alloc(size_t n);
void *mem_calloc(size_t n, size_t m);
void *mem_realloc(void *p, size_t n);
_Noreturn void mem_oom(void);

#endif

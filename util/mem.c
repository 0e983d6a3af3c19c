/*
** mem.c: malloc that never returns NULL.
*/
#include "util/mem.h"

#include <stdio.h>
#include <stdlib.h>

_Noreturn void mem_oom(void) {
  fputs("carve: error: out of memory\n", stderr);
  exit(1);
}

void *mem_alloc(size_t n) { void *p = malloc(n ? n : 1); if (!p) mem_oom(); return p; }
void *mem_calloc(size_t n, size_t m) { void *p = calloc(n ? n : 1, m ? m : 1); if (!p) mem_oom(); return p; }
void *mem_realloc(void *p, size_t n) { p = realloc(p, n ? n : 1); if (!p) mem_oom(); return p; }

/*
** arena.h: bump allocation for everything that lives as long as one
** compilation (syntax trees, IR, sharding state), freed as a whole.
** Interned names live in an arena too and compare by pointer.
*/
#ifndef util_arena_h
#define util_arena_h

#include <stddef.h>
#include <stdint.h>
#include "util/mem.h"

typedef struct arena_block arena_block;

typedef struct arena {
  arena_block *head;     /* newest block first */
  size_t used;           /* bytes handed out, for reports */
  struct intern_slot *slots;   /* open-addressing table of interned names */
  size_t nslots, ninterned;
} arena;

void  arena_init(arena *a);
void  arena_free(arena *a);              /* frees every block; a is reusable after arena_init */
void *arena_alloc(arena *a, size_t n);   /* zeroed, 16-byte aligned; aborts only on OOM */
void *arena_dup(arena *a, const void *p, size_t n);
char *arena_strndup(arena *a, const char *s, size_t n);
char *arena_printf(arena *a, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));
/* Grow an arena array: returns a copy with room for newcap elements. */
void *arena_grow(arena *a, void *old, size_t oldcap, size_t newcap, size_t elem);

/* The one string of these bytes in this arena; equal names are equal pointers. */
const char *arena_intern(arena *a, const char *s, size_t n);
const char *arena_intern_cstr(arena *a, const char *s);
/* The interned copy if there is one, else NULL (adds nothing). */
const char *arena_find_interned(const arena *a, const char *s, size_t n);


#endif

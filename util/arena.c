/*
** arena.c: block-chained bump allocator with an intern table.
*/
#include "util/arena.h"
#include "util/mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct arena_block {
  arena_block *next;
  size_t cap, off;
  _Alignas(16) unsigned char data[];
};

struct intern_slot { const char *s; size_t n; uint64_t h; };

#define ARENA_BLOCK 65536

void arena_init(arena *a) { memset(a, 0, sizeof *a); }

void arena_free(arena *a) {
  arena_block *b = a->head;
  while (b) { arena_block *n = b->next; free(b); b = n; }
  free(a->slots);
  memset(a, 0, sizeof *a);
}

void *arena_alloc(arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  arena_block *b = a->head;
  if (!b || b->cap - b->off < n) {
    size_t cap = n > ARENA_BLOCK / 2 ? n : ARENA_BLOCK;
    b = malloc(sizeof *b + cap);
    if (!b) mem_oom();
    b->cap = cap; b->off = 0;
    if (n > ARENA_BLOCK / 2 && a->head) {   /* big: keep the current block open */
      b->next = a->head->next; a->head->next = b;
    } else { b->next = a->head; a->head = b; }
  }
  void *p = b->data + b->off;
  b->off += n;
  a->used += n;
  memset(p, 0, n);
  return p;
}

void *arena_dup(arena *a, const void *p, size_t n) {
  void *q = arena_alloc(a, n);
  if (n) memcpy(q, p, n);
  return q;
}

char *arena_strndup(arena *a, const char *s, size_t n) {
  char *q = arena_alloc(a, n + 1);
  memcpy(q, s, n);
  q[n] = 0;
  return q;
}

char *arena_printf(arena *a, const char *fmt, ...) {
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *q = arena_alloc(a, (size_t)n + 1);
  vsnprintf(q, (size_t)n + 1, fmt, aq);
  va_end(aq);
  return q;
}

void *arena_grow(arena *a, void *old, size_t oldcap, size_t newcap, size_t elem) {
  void *p = arena_alloc(a, newcap * elem);
  if (old && oldcap) memcpy(p, old, oldcap * elem);
  return p;
}

static uint64_t hash_bytes(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;          /* FNV-1a */
  for (size_t i = 0; i < n; i++) { h ^= (unsigned char)s[i]; h *= 1099511628211ull; }
  return h;
}

static void intern_rehash(arena *a) {
  size_t ncap = a->nslots ? a->nslots * 2 : 256;
  struct intern_slot *ns = mem_calloc(ncap, sizeof *ns);
  for (size_t i = 0; i < a->nslots; i++) {
    struct intern_slot *o = &a->slots[i];
    if (!o->s) continue;
    size_t j = o->h & (ncap - 1);
    while (ns[j].s) j = (j + 1) & (ncap - 1);
    ns[j] = *o;
  }
  free(a->slots);
  a->slots = ns;
  a->nslots = ncap;
}

const char *arena_intern(arena *a, const char *s, size_t n) {
  if ((a->ninterned + 1) * 2 > a->nslots) intern_rehash(a);
  uint64_t h = hash_bytes(s, n);
  size_t j = h & (a->nslots - 1);
  while (a->slots[j].s) {
    struct intern_slot *e = &a->slots[j];
    if (e->h == h && e->n == n && memcmp(e->s, s, n) == 0) return e->s;
    j = (j + 1) & (a->nslots - 1);
  }
  const char *c = arena_strndup(a, s, n);
  a->slots[j] = (struct intern_slot){c, n, h};
  a->ninterned++;
  return c;
}

const char *arena_find_interned(const arena *a, const char *s, size_t n) {
  if (!a->nslots) return NULL;
  uint64_t h = hash_bytes(s, n);
  size_t j = h & (a->nslots - 1);
  while (a->slots[j].s) {
    const struct intern_slot *e = &a->slots[j];
    if (e->h == h && e->n == n && memcmp(e->s, s, n) == 0) return e->s;
    j = (j + 1) & (a->nslots - 1);
  }
  return NULL;
}

const char *arena_intern_cstr(arena *a, const char *s) { return arena_intern(a, s, strlen(s)); }

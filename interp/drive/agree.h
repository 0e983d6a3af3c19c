/*
** agree.h: before a run's first step, its ranks make sure they were given
** the same things: each hashes what it was given (files, options, the
** headers of its input files) into a list of named digests, and rank 0
** compares every rank's list with its own. A mismatch is one error on
** every rank, naming the ranks and what differs, instead of a run that
** computes something else or hangs in a collective.
*/
#ifndef interp_drive_agree_h
#define interp_drive_agree_h

#include <stddef.h>
#include <stdint.h>

#include "runtime/world.h"

#define AGREE_MAX 32

typedef struct agree_list {
  int n;
  const char *what[AGREE_MAX];    /* "model file", "--train", ... (the same on every rank) */
  uint64_t h[AGREE_MAX];
} agree_list;

/* Add an item: some bytes, a text (NULL: not given; blanks ignored), a
** whole file, or a safetensors file's header (NULL path: not given). */
void agree_bytes(agree_list *l, const char *what, const void *p, size_t n);
void agree_text(agree_list *l, const char *what, const char *text);
void agree_file(agree_list *l, const char *what, const char *path);
void agree_header(agree_list *l, const char *what, const char *path);

/* Collective over w: 0 when every rank's list equals rank 0's; else -1 on
** every rank with err naming each differing rank and items. */
int agree_check(const rt_world *w, const agree_list *l, char *err, size_t errlen);

#endif

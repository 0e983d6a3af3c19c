/*
** prof.h: syntax trees of device profiles (profiles/NAME.profile): one
** statement a line, a key then items, each item a value or key = value:
**
**   flops  f32 = 67e12  bf16 = 989.4e12     # a comment
**   memory 80GB
**   link   intra  bandwidth = 450e9  latency = 3us
**
** Values are numbers (with an exponent, or glued to a unit of bytes or of
** time: 80GB, 16GiB, 3us, 2ms), words, or "strings". lang only reads the
** shape of the file; interp/sim/profile.c gives the keys their meaning and
** reports its errors at the offsets kept here.
*/
#ifndef lang_prof_h
#define lang_prof_h

#include <stdint.h>
#include "util/arena.h"
#include "util/diag.h"

typedef enum prof_vkind { PROF_NUM, PROF_WORD, PROF_STR } prof_vkind;

typedef struct prof_item {
  const char *key;         /* key = value; NULL for a bare value (interned) */
  uint32_t key_off;
  prof_vkind kind;
  double num;              /* NUM, units applied: bytes, seconds */
  const char *text;        /* WORD, STR (contents); NUM as written (interned) */
  uint32_t off;            /* the value */
} prof_item;

typedef struct prof_line {
  const char *key;         /* interned */
  uint32_t off;
  prof_item *items;
  int nitems;
} prof_line;

typedef struct prof_file {
  const diag_src *src;
  prof_line *lines;
  int nlines;
} prof_file;

/* Read a profile. NULL after the first error (located, with a caret). */
prof_file *prof_parse(arena *a, diag *d, const diag_src *src);

#endif

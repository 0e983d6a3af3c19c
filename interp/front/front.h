/*
** front.h: the readers of programs into the IR, chosen by the file's
** type. A reader turns one source into one checked graph (the model the
** caller names, or the only one). Model files (.cir) are read by
** front/build.c; a new format (StableHLO's .mlir) adds a row to the table
** in front.c and nothing else changes.
*/
#ifndef interp_front_front_h
#define interp_front_front_h

#include "interp/ir/ir.h"

/* How to read: the model to take (NULL: the only one, or main), and
** as_written: keep the program's own spelling (a StableHLO composite is
** read as its decomposition, not as carve's op of its name). */
typedef struct front_opts {
  const char *model;
  int as_written;
} front_opts;

typedef ir_graph *(*front_reader)(arena *a, diag *d, const diag_src *src, const front_opts *o);

typedef struct front_format {
  const char *ext;         /* ".cir" */
  const char *what;        /* "a model file" */
  front_reader read;
} front_format;

/* The format of path, by its extension (unknown ones: .cir, the default). */
const front_format *front_format_of(const char *path);
/* Load path and read it with its format's reader. NULL after an error in d. */
ir_graph *front_read(arena *a, diag *d, const char *path, const front_opts *o);

#endif

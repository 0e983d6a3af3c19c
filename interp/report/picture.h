/*
** picture.h: which device holds which block of a value, drawn as text
** (carve show, the REPL's show) or as SVG for documents. Devices are
** named by rank (d3), ranks being row-major over the mesh axes as in
** runtime/mesh.h. A value split on two dims is a grid (rows: the pieces of
** the first split dim, columns: those of the second); one split dim, or
** three and more, a list of blocks with their index ranges; a value split
** nowhere is held whole by every device. A partial sum is marked on every
** block: the devices listed hold addends that sum to it. A pipeline's
** microbatches are no devices: a block of a value split over them names
** the microbatch its devices hold it in. A piece dealt zig-zag shows its
** two halves (0:8+24:32).
*/
#ifndef interp_report_picture_h
#define interp_report_picture_h

#include "interp/shard/shard.h"
#include "util/strbuf.h"

/* The value's global shape and sharding, then the picture; rank >= 0:
** only what that rank holds (its block's index ranges). */
void report_picture(strbuf *b, const sh_plan *p, int value, int rank /* -1 all devices */);
/* The same picture as a standalone SVG document. */
void report_picture_svg(strbuf *b, const sh_plan *p, int value);

#endif

/*
** picture.c: which device holds which block of a value, as text and SVG.
*/
#include "interp/report/picture.h"

#include <stdlib.h>
#include <string.h>

/* Beyond these the grid becomes a list, and a list is cut short. */
#define GRID_MAXCOLS 16
#define MAXBLOCKS 64
/* A legend of coordinates for meshes of at most this many devices. */
#define LEGEND_MAX 16

typedef struct pic {
  const sh_plan *p;
  const ir_value *x;
  int v;
  int64_t ndev;
  int nsplit, split[IR_MAXRANK];          /* the split dims, in order */
  int64_t pieces[IR_MAXRANK], len[IR_MAXRANK];
  int64_t nblocks;
  uint32_t partial;                       /* kept as a partial sum over these axes */
  int64_t nslot;                          /* places on the mesh: devices x microbatches */
  int64_t *block_of;                      /* place -> its block (row-major over the split dims); -1: none
                                             (a pipeline's device of another stage) */
  int64_t *dev_of, *mb_of;                /* place -> its device (row-major over the mesh's device axes)
                                             and its microbatch */
  int micro;                              /* the microbatch axis (-1: none), no devices of its own */
  int micro_splits;                       /* the value is split over the microbatches */
  uint64_t stages;                        /* a pipeline's: the stages that hold the value (0: not pipelined) */
  arena a;
} pic;

static int64_t coord(const sh_plan *p, int64_t dev, int axis) {
  int64_t below = 1;
  for (int i = axis + 1; i < p->mesh.n; i++) below *= p->mesh.size[i];
  return (dev / below) % p->mesh.size[axis];
}

/* The piece of dim d a device holds: its coordinates on the dim's axes, major to minor. */
static int64_t piece(const pic *c, int64_t dev, int d) {
  const sh_dim *dim = &c->p->lay[c->v].dim[d];
  int64_t k = 0;
  for (int i = 0; i < dim->n; i++) k = k * c->p->mesh.size[dim->ax[i]] + coord(c->p, dev, dim->ax[i]);
  return k;
}

/* Is dim d's piece dealt zig-zag (two half blocks a device, runtime/mesh.c)? */
static int zigzag(const pic *c, int d) {
  const sh_dim *dim = &c->p->lay[c->v].dim[d];
  return dim->n == 1 && (c->p->mesh.zigzag >> dim->ax[0] & 1);
}

static void pic_init(pic *c, const sh_plan *p, int v) {
  memset(c, 0, sizeof *c);
  arena_init(&c->a);
  c->p = p;
  c->v = v;
  c->x = p->g->vals[v];
  c->ndev = shard_devices(p);
  c->micro = p->pipe.axis >= 0 && p->pipe.micro >= 0 ? p->pipe.micro : -1;
  c->nslot = c->micro >= 0 ? c->ndev * p->mesh.size[c->micro] : c->ndev;
  c->nblocks = 1;
  for (int d = 0; d < c->x->shape.rank; d++) {
    const sh_dim *dim = &p->lay[v].dim[d];
    int64_t n = 1;
    for (int i = 0; i < dim->n; i++) n *= p->mesh.size[dim->ax[i]];
    c->pieces[d] = n;
    c->len[d] = n ? c->x->shape.d[d] / n : 0;
    if (dim->n) { c->split[c->nsplit++] = d; c->nblocks *= n; }
    for (int i = 0; i < dim->n; i++) if (dim->ax[i] == c->micro) c->micro_splits = 1;
  }
  c->partial = shard_keeps_partial(p, v) ? p->lay[v].partial : 0;
  c->block_of = mem_alloc(sizeof(int64_t) * (size_t)(3 * c->nslot + 1));
  c->dev_of = c->block_of + c->nslot;
  c->mb_of = c->dev_of + c->nslot;
  if (p->pipe.axis >= 0) {
    sh_stages st;
    diag d;
    diag_init(&d);
    if (shard_stages(p, &st, &d) == 0) c->stages = st.mask[v];
    shard_stages_free(&st);
    diag_free(&d);
  }
  for (int64_t q = 0; q < c->nslot; q++) {
    int64_t k = 0, dev = 0;
    for (int i = 0; i < c->nsplit; i++) k = k * c->pieces[c->split[i]] + piece(c, q, c->split[i]);
    c->block_of[q] = c->stages && !(c->stages >> coord(p, q, p->pipe.axis) & 1) ? -1 : k;
    for (int i = 0; i < p->mesh.n; i++) if (i != c->micro) dev = dev * p->mesh.size[i] + coord(p, q, i);
    c->dev_of[q] = dev;
    c->mb_of[q] = c->micro >= 0 ? coord(p, q, c->micro) : 0;
  }
}

/* The block device dev holds in microbatch mb (-1: none). */
static int64_t block_at(const pic *c, int64_t dev, int64_t mb) {
  for (int64_t q = 0; q < c->nslot; q++) if (c->dev_of[q] == dev && c->mb_of[q] == mb) return c->block_of[q];
  return -1;
}

static void pic_free(pic *c) {
  free(c->block_of);
  arena_free(&c->a);
}

/* The piece of split dim number i (0..nsplit-1) in block k. */
static int64_t block_piece(const pic *c, int64_t k, int i) {
  for (int j = c->nsplit - 1; j > i; j--) k /= c->pieces[c->split[j]];
  return k % c->pieces[c->split[i]];
}

/* "lo:hi" of dim d's piece k; "lo:hi+lo2:hi2" for the two halves of a piece dealt zig-zag */
static void range(strbuf *b, const pic *c, int d, int64_t k) {
  if (!zigzag(c, d)) {
    sb_printf(b, "%lld:%lld", (long long)(k * c->len[d]), (long long)((k + 1) * c->len[d]));
    return;
  }
  int64_t h = c->len[d] / 2, far = 2 * c->pieces[d] - 1 - k;
  sb_printf(b, "%lld:%lld+%lld:%lld", (long long)(k * h), (long long)((k + 1) * h), (long long)(far * h), (long long)((far + 1) * h));
}

/* "[0:4, 0:6]": the index ranges of block k (whole dims in full) */
static void block_ranges(strbuf *b, const pic *c, int64_t k) {
  sb_putc(b, '[');
  for (int d = 0, i = 0; d < c->x->shape.rank; d++) {
    if (d) sb_puts(b, ", ");
    if (i < c->nsplit && c->split[i] == d) range(b, c, d, block_piece(c, k, i++));
    else range(b, c, d, 0);
  }
  sb_putc(b, ']');
}

/* "d0-d3 d8": the devices holding block k, consecutive ranks as runs; a long list is cut short.
** A block of a value split over the microbatches: ", microbatch m" after them. */
static void block_devices(strbuf *b, const pic *c, int64_t k) {
  int64_t mb = 0;
  for (int64_t q = 0; q < c->nslot; q++) if (c->block_of[q] == k) { mb = c->mb_of[q]; break; }
  char *held = mem_calloc((size_t)c->ndev + 1, 1);
  for (int64_t q = 0; q < c->nslot; q++) if (c->block_of[q] == k && c->mb_of[q] == mb) held[c->dev_of[q]] = 1;
  int64_t n = 0, runs = 0, shown = 0;
  for (int64_t q = 0; q < c->ndev; q++) n += held[q];
  for (int64_t q = 0; q < c->ndev; q++) {
    if (!held[q]) continue;
    int64_t e = q;
    while (e + 1 < c->ndev && held[e + 1]) e++;
    if (runs < 4) {
      sb_printf(b, "%sd%lld", runs ? " " : "", (long long)q);
      if (e > q) sb_printf(b, "%sd%lld", e == q + 1 ? " " : "-", (long long)e);
      shown += e - q + 1;
    }
    runs++;
    q = e;
  }
  if (shown < n) sb_printf(b, " ... (%lld devices)", (long long)n);
  if (c->micro_splits) sb_printf(b, ", microbatch %lld", (long long)mb);
  free(held);
}

static void header(strbuf *b, pic *c) {
  const sh_plan *p = c->p;
  const ir_value *x = c->x;
  ir_shape ls;
  shard_local(p, c->v, &ls);
  sb_printf(b, "%s: %s%s, sharding %s, local %s%s", x->name, ir_dtype_name(x->dtype), ir_shape_str(&c->a, &x->shape),
            shard_str(p, c->v, &c->a), ir_dtype_name(x->dtype), ir_shape_str(&c->a, &ls));
  if (c->partial) sb_printf(b, ", a partial sum over %s", shard_axes_str(p, c->partial, &c->a));
  sb_putc(b, '\n');
  /* the device axes; a pipeline's microbatches are named on the pipeline line */
  int ax[SH_MAXAXES], nax = 0;
  for (int i = 0; i < p->mesh.n; i++) if (i != c->micro) ax[nax++] = i;
  sb_puts(b, "mesh:");
  for (int i = 0; i < nax; i++) sb_printf(b, "%s %s=%lld", i ? "," : "", p->mesh.name[ax[i]], (long long)p->mesh.size[ax[i]]);
  if (nax == 0) sb_puts(b, " one device");
  sb_printf(b, " (%lld device%s", (long long)c->ndev, c->ndev == 1 ? "" : "s");
  if (nax > 1 && c->ndev <= LEGEND_MAX) {
    sb_puts(b, " as (");
    for (int i = 0; i < nax; i++) sb_printf(b, "%s%s", i ? ", " : "", p->mesh.name[ax[i]]);
    sb_puts(b, "):");
    for (int64_t q = 0; q < c->nslot; q++) {
      if (c->mb_of[q]) continue;
      sb_printf(b, " d%lld=(", (long long)c->dev_of[q]);
      for (int i = 0; i < nax; i++) sb_printf(b, "%s%lld", i ? "," : "", (long long)coord(p, q, ax[i]));
      sb_putc(b, ')');
    }
  } else if (nax > 1) {
    sb_puts(b, ", numbered row-major over (");
    for (int i = 0; i < nax; i++) sb_printf(b, "%s%s", i ? ", " : "", p->mesh.name[ax[i]]);
    sb_putc(b, ')');
  } else if (nax == 1 && c->ndev > 1) {
    sb_printf(b, ": d0..d%lld are %s=0..%lld", (long long)(c->ndev - 1), p->mesh.name[ax[0]], (long long)(c->ndev - 1));
  }
  sb_puts(b, ")\n");
  if (c->stages) {
    int64_t S = p->mesh.size[p->pipe.axis];
    if (S < 64 && c->stages == (1ull << S) - 1)
      sb_printf(b, "pipeline: on every stage of '%s'", p->mesh.name[p->pipe.axis]);
    else {
      sb_puts(b, "pipeline: on stage");
      for (int s = 0, n = 0; s < 64; s++) if (c->stages >> s & 1) sb_printf(b, "%s %d", n++ ? "," : "", s);
      sb_printf(b, " of '%s' (the devices of the other stages hold none of it)", p->mesh.name[p->pipe.axis]);
    }
    if (c->micro >= 0)
      sb_printf(b, "; %lld microbatches ('%s'), which each device runs in turn", (long long)p->mesh.size[c->micro], p->mesh.name[c->micro]);
    sb_putc(b, '\n');
  }
}

/* "dim 0 on batch, dim 2 on model+batch" */
static void split_text(strbuf *b, const pic *c, int from, int to) {
  for (int i = from; i < to; i++) {
    const sh_dim *dim = &c->p->lay[c->v].dim[c->split[i]];
    sb_printf(b, "%sdim %d on ", i > from ? ", " : "", c->split[i]);
    for (int k = 0; k < dim->n; k++) sb_printf(b, "%s%s", k ? "+" : "", c->p->mesh.name[dim->ax[k]]);
  }
}

/* Axes that neither split the value nor make it partial: every device along them holds the same. */
static void replicated_text(strbuf *b, const pic *c) {
  uint32_t used = c->partial;
  for (int d = 0; d < c->x->shape.rank; d++)
    for (int k = 0; k < c->p->lay[c->v].dim[d].n; k++) used |= 1u << c->p->lay[c->v].dim[d].ax[k];
  int any = 0;
  for (int i = 0; i < c->p->mesh.n; i++)
    if (!((used >> i) & 1) && c->p->mesh.size[i] > 1 && !(c->stages && i == c->p->pipe.axis) && i != c->micro)
      sb_printf(b, "%s%s", any++ ? ", " : "; copies on ", c->p->mesh.name[i]);
}

static void pad(strbuf *b, size_t n) { while (n--) sb_putc(b, ' '); }

static void grid(strbuf *b, pic *c) {
  int d0 = c->split[0], d1 = c->split[1];
  int64_t rows = c->pieces[d0], cols = c->pieces[d1];
  const char *part = c->partial ? arena_printf(&c->a, " partial over %s", shard_axes_str(c->p, c->partial, &c->a)) : "";
  sb_puts(b, "rows: ");
  split_text(b, c, 0, 1);
  sb_puts(b, "; columns: ");
  split_text(b, c, 1, 2);
  replicated_text(b, c);
  sb_putc(b, '\n');
  /* every cell's text first, for the widths */
  strbuf t;
  sb_init(&t);
  size_t *w = mem_calloc((size_t)cols + 1, sizeof *w), rw = 0;
  char **cell = mem_calloc((size_t)(rows * cols) + 1, sizeof *cell);
  char **rlab = mem_calloc((size_t)rows + 1, sizeof *rlab), **clab = mem_calloc((size_t)cols + 1, sizeof *clab);
  for (int64_t j = 0; j < cols; j++) {
    sb_clear(&t);
    range(&t, c, d1, j);
    clab[j] = arena_strndup(&c->a, sb_str(&t), t.n);
    w[j] = t.n;
  }
  for (int64_t i = 0; i < rows; i++) {
    sb_clear(&t);
    range(&t, c, d0, i);
    rlab[i] = arena_strndup(&c->a, sb_str(&t), t.n);
    if (t.n > rw) rw = t.n;
    for (int64_t j = 0; j < cols; j++) {
      sb_clear(&t);
      block_devices(&t, c, i * cols + j);
      sb_puts(&t, part);
      cell[i * cols + j] = arena_strndup(&c->a, sb_str(&t), t.n);
      if (t.n > w[j]) w[j] = t.n;
    }
  }
  pad(b, rw + 2);
  for (int64_t j = 0; j < cols; j++) {
    sb_printf(b, " | %s", clab[j]);
    if (j + 1 < cols) pad(b, w[j] - strlen(clab[j]));
  }
  sb_putc(b, '\n');
  for (size_t k = 0; k < rw + 2; k++) sb_putc(b, '-');
  for (int64_t j = 0; j < cols; j++) {
    sb_puts(b, "-+-");
    for (size_t k = 0; k < w[j]; k++) sb_putc(b, '-');
  }
  sb_putc(b, '\n');
  for (int64_t i = 0; i < rows; i++) {
    sb_printf(b, "  %s", rlab[i]);
    pad(b, rw - strlen(rlab[i]));
    for (int64_t j = 0; j < cols; j++) {
      sb_printf(b, " | %s", cell[i * cols + j]);
      if (j + 1 < cols) pad(b, w[j] - strlen(cell[i * cols + j]));
    }
    sb_putc(b, '\n');
  }
  free(w);
  free(cell);
  free(rlab);
  free(clab);
  sb_free(&t);
}

static void list(strbuf *b, pic *c) {
  const char *part = c->partial ? arena_printf(&c->a, "  partial over %s", shard_axes_str(c->p, c->partial, &c->a)) : "";
  sb_printf(b, "%lld block%s", (long long)c->nblocks, c->nblocks == 1 ? "" : "s");
  if (c->nsplit) { sb_puts(b, " ("); split_text(b, c, 0, c->nsplit); sb_putc(b, ')'); }
  replicated_text(b, c);
  sb_puts(b, ":\n");
  strbuf t;
  sb_init(&t);
  int64_t shown = c->nblocks < MAXBLOCKS ? c->nblocks : MAXBLOCKS;
  size_t w = 0;
  for (int64_t k = 0; k < shown; k++) {
    sb_clear(&t);
    block_ranges(&t, c, k);
    if (t.n > w) w = t.n;
  }
  for (int64_t k = 0; k < shown; k++) {
    sb_clear(&t);
    block_ranges(&t, c, k);
    sb_printf(b, "  %s", sb_str(&t));
    pad(b, w - t.n + 2);
    block_devices(b, c, k);
    sb_printf(b, "%s\n", part);
  }
  if (shown < c->nblocks) sb_printf(b, "  ... and %lld more blocks\n", (long long)(c->nblocks - shown));
  sb_free(&t);
}

void report_picture(strbuf *b, const sh_plan *p, int value, int rank) {
  pic c;
  pic_init(&c, p, value);
  header(b, &c);
  if (rank >= 0) {
    if (rank >= c.ndev) sb_printf(b, "rank %d is outside the mesh (0..%lld)\n", rank, (long long)(c.ndev - 1));
    else {
      sb_printf(b, "rank %d", rank);
      int64_t q0 = 0;                   /* its place in microbatch 0 */
      while (c.dev_of[q0] != rank || c.mb_of[q0]) q0++;
      if (p->mesh.n - (c.micro >= 0) > 0) {
        sb_puts(b, " (");
        for (int i = 0, n = 0; i < p->mesh.n; i++)
          if (i != c.micro) sb_printf(b, "%s%s=%lld", n++ ? ", " : "", p->mesh.name[i], (long long)coord(p, q0, i));
        sb_putc(b, ')');
      }
      sb_puts(b, " holds ");
      if (c.block_of[q0] < 0) sb_puts(b, "none of it (another stage computes it)");
      else if (!c.micro_splits) block_ranges(b, &c, c.block_of[q0]);
      else {
        int64_t m = p->mesh.size[c.micro], shown = m < 8 ? m : 8;
        for (int64_t mb = 0; mb < shown; mb++) {
          sb_puts(b, mb ? ", " : "");
          block_ranges(b, &c, block_at(&c, rank, mb));
          sb_printf(b, " in microbatch %lld", (long long)mb);
        }
        if (shown < m) sb_printf(b, " ... (%lld microbatches)", (long long)m);
      }
      if (c.partial) sb_printf(b, ", its addend of the partial sum over %s", shard_axes_str(p, c.partial, &c.a));
      else if (!c.nsplit) sb_puts(b, ", the whole");
      sb_putc(b, '\n');
    }
  } else if (!c.nsplit && !c.partial) {
    sb_puts(b, "every device holds the whole\n");
  } else if (c.nsplit == 2 && c.pieces[c.split[1]] <= GRID_MAXCOLS && c.pieces[c.split[0]] <= MAXBLOCKS) {
    grid(b, &c);
  } else {
    list(b, &c);
  }
  if (rank < 0 && c.partial)
    sb_printf(b, "a partial sum: the devices of a block hold addends (along %s) that sum to it\n", shard_axes_str(p, c.partial, &c.a));
  pic_free(&c);
}

/* ---- SVG ---- */

static void xml_text(strbuf *b, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '&': sb_puts(b, "&amp;"); break;
    case '<': sb_puts(b, "&lt;"); break;
    case '>': sb_puts(b, "&gt;"); break;
    case '"': sb_puts(b, "&quot;"); break;
    default: sb_putc(b, *s);
    }
  }
}

/* Light fills, one per device (by the first device of a block). */
static const char *const fills[] = {"#cfe2f3", "#d9ead3", "#fff2cc", "#f4cccc", "#d9d2e9", "#fce5cd", "#d0e0e3", "#ead1dc"};

void report_picture_svg(strbuf *b, const sh_plan *p, int value) {
  pic c;
  pic_init(&c, p, value);
  /* rows: the pieces of the first split dim; columns: every combination of the others */
  int64_t rows = c.nsplit ? c.pieces[c.split[0]] : 1, cols = c.nsplit ? c.nblocks / rows : 1;
  int cut = rows > MAXBLOCKS || cols > GRID_MAXCOLS;
  if (rows > MAXBLOCKS) rows = MAXBLOCKS;
  if (cols > GRID_MAXCOLS) cols = GRID_MAXCOLS;
  const int cw = 190, ch = c.partial ? 66 : 50, top = 70, left = 20;
  strbuf t, t2;
  sb_init(&t);
  sb_init(&t2);
  ir_shape ls;
  shard_local(p, value, &ls);
  sb_printf(&t, "%s: %s%s, sharding %s", c.x->name, ir_dtype_name(c.x->dtype), ir_shape_str(&c.a, &c.x->shape), shard_str(p, value, &c.a));
  sb_puts(&t2, "mesh");
  for (int i = 0, n = 0; i < p->mesh.n; i++)
    if (i != c.micro) sb_printf(&t2, "%s %s=%lld", n++ ? "," : "", p->mesh.name[i], (long long)p->mesh.size[i]);
  if (c.micro >= 0) sb_printf(&t2, ", %lld microbatches in turn", (long long)p->mesh.size[c.micro]);
  sb_printf(&t2, ", local %s%s", ir_dtype_name(c.x->dtype), ir_shape_str(&c.a, &ls));
  if (c.nsplit) { sb_puts(&t2, "; "); split_text(&t2, &c, 0, c.nsplit); }
  else if (!c.partial) sb_puts(&t2, "; every device holds the whole");
  /* wide enough for the two lines of text (monospace: about 0.6 em a character) */
  int width = left * 2 + (int)cols * cw, height = top + (int)rows * ch + (cut ? 40 : 20);
  int wt = left * 2 + (int)(t.n * 9), wt2 = left * 2 + (int)(t2.n * 8);
  if (wt > width) width = wt;
  if (wt2 > width) width = wt2;
  sb_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"12\">\n",
            width, height, width, height);
  sb_printf(b, "  <rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", width, height);
  sb_printf(b, "  <text x=\"%d\" y=\"22\" font-size=\"14\" font-weight=\"bold\">", left);
  xml_text(b, sb_str(&t));
  sb_puts(b, "</text>\n");
  sb_printf(b, "  <text x=\"%d\" y=\"44\">", left);
  xml_text(b, sb_str(&t2));
  sb_puts(b, "</text>\n");
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) {
      int64_t k = i * (c.nsplit ? c.nblocks / c.pieces[c.split[0]] : 1) + j, first = 0;
      for (int64_t q = 0; q < c.nslot; q++) if (c.block_of[q] == k) { first = c.dev_of[q]; break; }
      int x = left + (int)j * cw, y = top + (int)i * ch;
      sb_printf(b, "  <g>\n    <rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"#333333\"%s/>\n", x, y, cw, ch,
                fills[first % (int64_t)(sizeof fills / sizeof fills[0])], c.partial ? " stroke-dasharray=\"4 2\"" : "");
      sb_clear(&t);
      block_ranges(&t, &c, k);
      sb_printf(b, "    <text x=\"%d\" y=\"%d\">", x + 8, y + 19);
      xml_text(b, sb_str(&t));
      sb_puts(b, "</text>\n");
      sb_clear(&t);
      block_devices(&t, &c, k);
      sb_printf(b, "    <text x=\"%d\" y=\"%d\" font-weight=\"bold\">", x + 8, y + 37);
      xml_text(b, sb_str(&t));
      sb_puts(b, "</text>\n");
      if (c.partial) {
        sb_clear(&t);
        sb_printf(&t, "partial over %s", shard_axes_str(p, c.partial, &c.a));
        sb_printf(b, "    <text x=\"%d\" y=\"%d\" font-style=\"italic\">", x + 8, y + 55);
        xml_text(b, sb_str(&t));
        sb_puts(b, "</text>\n");
      }
      sb_puts(b, "  </g>\n");
    }
  if (cut) {
    sb_printf(b, "  <text x=\"%d\" y=\"%d\">", left, top + (int)rows * ch + 24);
    sb_printf(b, "(the first %lld x %lld blocks of %lld)", (long long)rows, (long long)cols, (long long)c.nblocks);
    sb_puts(b, "</text>\n");
  }
  sb_puts(b, "</svg>\n");
  sb_free(&t);
  sb_free(&t2);
  pic_free(&c);
}

/*
** zigzag.c: collectives and row slices over a group whose pieces are dealt
** zig-zag (see zigzag.h).
*/
#include "runtime/zigzag.h"
#include "runtime/mesh.h"
#include "util/diag.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* x viewed [outer, 2P blocks of h rows, inner] (elements of es bytes): its
** blocks from device order (block 2j + k: device j's half k) to the whole's
** order (block j for k = 0, 2P-1-j for k = 1), or back (to_device). */
static void deal(char *dst, const char *src, int64_t outer, int P, int64_t h, int64_t inner, size_t es, int to_device) {
  size_t row = (size_t)(h * inner) * es;
  for (int64_t o = 0; o < outer; o++)
    for (int j = 0; j < P; j++)
      for (int k = 0; k < 2; k++) {
        int64_t dev = 2 * (int64_t)j + k, whole = k ? 2 * (int64_t)P - 1 - j : j;
        int64_t from = to_device ? whole : dev, to = to_device ? dev : whole;
        memcpy(dst + (size_t)(o * 2 * P + to) * row, src + (size_t)(o * 2 * P + from) * row, row);
      }
}

/* outer and inner of a shape around dim d */
static void around(const rt_instr *x, const int64_t *shape, int d, int64_t *outer, int64_t *inner) {
  *outer = *inner = 1;
  for (int i = 0; i < d; i++) *outer *= shape[i];
  for (int i = d + 1; i < x->rank; i++) *inner *= shape[i];
}

int rt_zz_collective(const rt_prog *p, const rt_comm *comm, const rt_instr *ins, void *out, const void *in, char *why, size_t n) {
  if (ins->op != RT_ALL_GATHER && ins->op != RT_REDUCE_SCATTER && ins->op != RT_ALL_TO_ALL)
    return comm->run(comm->impl, ins, out, in, why, n);   /* all_reduce, the ring's sends: no order to keep */
  int P = rt_mesh_group_size(p, ins->group);
  size_t es = rt_dtype_size((rt_dtype)p->bufs[ins->out].dtype), bi = (size_t)p->bufs[ins->in[0]].nelem * es;
  size_t bo = (size_t)p->bufs[ins->out].nelem * es;
  if (ins->op == RT_ALL_GATHER) {        /* [outer, n, inner] -> [outer, P n, inner], then in order */
    if (ins->n % 2) return diag_errbuf(why, n, "a piece of %" PRId64 " rows does not halve for the zig-zag order", ins->n);
    char *t = malloc(bo ? bo : 1);
    if (!t) return diag_errbuf(why, n, "out of memory (%zu bytes)", bo);
    int rc = comm->run(comm->impl, ins, t, in, why, n);
    if (!rc) deal(out, t, ins->outer, P, ins->n / 2, ins->inner, es, 0);
    free(t);
    return rc;
  }
  if (ins->op == RT_REDUCE_SCATTER) {    /* the whole put in device order, then each device its piece's sums */
    if (ins->n % (2 * P)) return diag_errbuf(why, n, "%" PRId64 " rows do not split into %d blocks for the zig-zag order", ins->n, 2 * P);
    char *t = malloc(bi ? bi : 1);
    if (!t) return diag_errbuf(why, n, "out of memory (%zu bytes)", bi);
    deal(t, in, ins->outer, P, ins->n / (2 * P), ins->inner, es, 1);
    int rc = comm->run(comm->impl, ins, out, t, why, n);
    free(t);
    return rc;
  }
  if (ins->op == RT_ALL_TO_ALL) {        /* split_dim dealt to the devices, concat_dim then put in order */
    int64_t oshape[RT_MAXRANK], o1, i1, o2, i2;
    memcpy(oshape, ins->shape, sizeof oshape);
    oshape[ins->split_dim] /= P;
    oshape[ins->concat_dim] *= P;
    if (ins->shape[ins->split_dim] % (2 * P) || oshape[ins->concat_dim] % (2 * P))
      return diag_errbuf(why, n, "an all_to_all whose dims do not split into %d blocks for the zig-zag order", 2 * P);
    around(ins, ins->shape, ins->split_dim, &o1, &i1);
    around(ins, oshape, ins->concat_dim, &o2, &i2);
    char *t = malloc((bi > bo ? bi : bo) + 1);
    if (!t) return diag_errbuf(why, n, "out of memory (%zu bytes)", bi > bo ? bi : bo);
    deal(t, in, o1, P, ins->shape[ins->split_dim] / (2 * P), i1, es, 1);
    int rc = comm->run(comm->impl, ins, out, t, why, n);
    if (!rc) {
      memcpy(t, out, bo);
      deal(out, t, o2, P, oshape[ins->concat_dim] / (2 * P), i2, es, 0);
    }
    free(t);
    return rc;
  }
  return -1;
}

int rt_zz_rows(const rt_prog *p, const rt_backend *be, const rt_instr *ins, int q, int P, void *out, void *const *in, char *why,
               size_t n) {
  size_t es = rt_dtype_size((rt_dtype)ins->odt);
  rt_instr sub = *ins;
  void *sin[RT_MAXIN];
  memcpy(sin, in, sizeof sin);
  sub.outer = 1;
  if (ins->op == RT_SHARD_SLICE) {       /* rows [q h, (q + 1) h) and [(2P-1-q) h, (2P-q) h) of each slice */
    int64_t piece = ins->n / P, h = piece / 2;
    if (ins->n % P || piece % 2)
      return diag_errbuf(why, n, "%" PRId64 " rows do not split into %d blocks for the zig-zag order", ins->n, 2 * P);
    sub.n2 = h;
    for (int64_t o = 0; o < ins->outer; o++)
      for (int k = 0; k < 2; k++) {
        sub.off = rt_mesh_row(p, ins->group, q, piece, k * h);
        sin[0] = (char *)in[0] + (size_t)(o * ins->n * ins->inner) * es;
        if (be->kernels[RT_SHARD_SLICE](be->ctx, &sub, (char *)out + (size_t)((o * piece + k * h) * ins->inner) * es, sin, why, n))
          return -1;
      }
    return 0;
  }
  /* a causal mask of this device's rows: each half at its own place in the whole */
  int64_t m = ins->m, h = m / 2;
  if (m % 2) return diag_errbuf(why, n, "a piece of %" PRId64 " rows does not halve for the zig-zag order", m);
  sub.m = h;
  for (int64_t o = 0; o < ins->outer; o++)
    for (int k = 0; k < 2; k++) {
      size_t at = (size_t)((o * m + k * h) * ins->n) * es;
      sub.off = ins->off + rt_mesh_row(p, ins->group, q, m, k * h);
      sin[0] = (char *)in[0] + at;
      if (be->kernels[RT_CAUSAL_MASK](be->ctx, &sub, (char *)out + at, sin, why, n)) return -1;
    }
  return 0;
}

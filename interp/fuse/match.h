/*
** match.h: what the rewrites of fuse/ read a graph with. Values are seen
** through the reshapes that only add or drop size-1 dims (keepdims).
*/
#ifndef interp_fuse_match_h
#define interp_fuse_match_h

#include "interp/fuse/fuse.h"

/* value id if it is an op of kind k, else NULL */
ir_value *fm_op(const ir_graph *g, int id, ir_opkind k);
/* id seen through reshapes that only add or drop size-1 dims */
int fm_strip(const ir_graph *g, int id);
/* 1 with *x when id is a literal scalar */
int fm_lit(const ir_graph *g, int id, double *x);
/* a literal within f32 rounding of want */
int fm_lit_near(const ir_graph *g, int id, double want);
/* the reduction of kind k over exactly dim d of some x, as id keeps it
** (keepdims, or reshaped back to a size-1 dim d); its operand in *x */
int fm_reduced(const ir_graph *g, int id, ir_opkind k, int d, int *x);
/* x's mean over dim d, as a mean or as sum / n (jnp.mean), kept */
int fm_mean(const ir_graph *g, int id, int d, int *x);
/* the max of x over dim d, kept, plain or as maximum(-inf, max) (an
** initial value) or select(is_finite(m), m, 0) (logsumexp's guard) */
int fm_max(const ir_graph *g, int id, int d, int *x);
/* The factors of a product: id and, through muls (and a division by a
** literal, as its reciprocal), what it multiplies, up to max of them;
** the literals' product in *k. The count, or -1 when there are more. */
int fm_factors(const ir_graph *g, int id, int *f, int max, double *k);
/* Rewrite value v in place into op k over args with attrs at (checked:
** -1 and v unchanged when the shape rule refuses or gives another shape). */
int fm_become(ir_graph *g, ir_value *v, ir_opkind k, const int *args, int nargs, const ir_attrs *at);

/* the passes (each counts what it rewrote) */
void fuse_acts(ir_graph *g, fuse_counts *c);
void fuse_rows(ir_graph *g, fuse_counts *c);
void fuse_attention_bshd(ir_graph *g, fuse_counts *c);

#endif

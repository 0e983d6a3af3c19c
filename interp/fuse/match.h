/*
** match.h: what the rewrites of fuse/ read a graph with. Values are seen
** through the reshapes that only add or drop size-1 dims (keepdims).
*/
#ifndef interp_fuse_match_h
#define interp_fuse_match_h

#include "interp/fuse/fuse.h"

/* attributes of no op in particular: dim d (-1: none), no dims */
ir_attrs fm_attrs(int d);
/* value id if it is an op of kind k, else NULL */
ir_value *fm_op(const ir_graph *g, int id, ir_opkind k);
/* id seen through reshapes that only add or drop size-1 dims */
int fm_strip(const ir_graph *g, int id);
/* a and b the same elements in the same order, differing only by size-1 dims */
int fm_same_but_ones(const ir_shape *a, const ir_shape *b);
/* The dim of x that dim d of v reads when x broadcasts to v as NumPy
** aligns them (from the last dim), else -1 (x absent there, or size 1
** where v is not) */
int fm_align(const ir_shape *v, const ir_shape *x, int d);
/* the same for v's operand k: a broadcast's, an elementwise op's, or a
** reshape's that only adds or drops size-1 dims */
int fm_dim_in(const ir_graph *g, const ir_value *v, int k, int d);
/* the dim of v that reads dim e of its operand k, else -1 */
int fm_dim_out(const ir_graph *g, const ir_value *v, int k, int e);
/* The dim of id along which it holds its index (an iota seen through
** reshapes, broadcasts, converts and jnp.tri's + 0), else -1 */
int fm_index_dim(const ir_graph *g, int id);
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
/* root = the mean of *v over all its elements: a mean, or sums over every
** dim divided by their count */
int fm_mean_all(const ir_graph *g, const ir_value *root, int *v);
/* The factors of a product: id and, through muls (and a division by a
** literal, as its reciprocal), what it multiplies, up to max of them;
** the literals' product in *k. The count, or -1 when there are more. */
int fm_factors(const ir_graph *g, int id, int *f, int max, double *k);
/* Rewrite value v in place into op k over args with attrs at (checked:
** -1 and v unchanged when the shape rule refuses or gives another shape). */
int fm_become(ir_graph *g, ir_value *v, ir_opkind k, const int *args, int nargs, const ir_attrs *at);
/* A new op under a fresh name made from name: its id, or -1 when the shape
** rule refuses it */
int fm_add_op(ir_graph *g, const char *name, ir_opkind k, const int *args, int nargs, const ir_attrs *at);

/* the masks of attention scores (mask.c): id = s with a causal mask
** applied (by select, or added) that a program builds from iotas, its
** fill at or below -1e4; 1 and s in *s, else 0 */
int fm_causal(const ir_graph *g, int id, int *s);
/* id = select(every score of a row is -inf, 0, p) (PyTorch's safe
** softmax) with p the softmax of those scores: p; else id */
int fm_unguard_rows(const ir_graph *g, int id);

/* the passes (each counts what it rewrote) */
void fuse_acts(ir_graph *g, fuse_counts *c);
void fuse_rows(ir_graph *g, fuse_counts *c);
void fuse_onehot_xent(ir_graph *g, fuse_counts *c);
void fuse_attention(ir_graph *g, fuse_counts *c);
void fuse_updates(ir_graph *g, fuse_counts *c);

#endif

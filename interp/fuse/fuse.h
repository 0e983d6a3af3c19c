/*
** fuse.h: programs written in primitive ops (JAX's, optax's, flax's and
** PyTorch's exports; a model file spelled out) rewritten into carve's
** composite ops, so that they get the fused kernels, sharding rules,
** recomputation and simulator costs a model file written with them gets:
**   rows.c   softmax, log_softmax, layer norm, RMS norm, integer-label cross-entropy
**   act.c    gelu (tanh and erf forms), silu
**   optim.c  optax's SGD (with momentum), Adam and AdamW updates
**   xent.c   cross-entropy against one-hot integer labels
**   attn.c   attention with the heads after the sequence (JAX's einsums,
**            flax's, jax.nn.dot_product_attention) or before it
**            (PyTorch's), grouped-query k and v repeated, a causal mask
**            by select or added (mask.c)
** then ir_fuse_attention (interp/ir/fuse.c) for carve's own spelling.
** Each rewrite keeps what the program computes (up to rounding); what does
** not match exactly stays as written. Call on a linked graph, before
** autodiff (so that the backward pass is carve's own).
*/
#ifndef interp_fuse_fuse_h
#define interp_fuse_fuse_h

#include "interp/ir/ir.h"

typedef struct fuse_counts {
  int softmax, log_softmax, layernorm, rmsnorm, cross_entropy, gelu, silu, attention;
  int sgd, adam;           /* optax's updates (optim.c) */
} fuse_counts;

/* Rewrite g in place (values renumbered, users relinked); counts may be NULL. */
void fuse_program(ir_graph *g, fuse_counts *counts);

#endif

/*
** train.h: training steps. Reverse-mode autodiff over the IR (grad.c),
** then the optimizer update written as IR (optim.c), so that every later
** pass (sharding, lowering, simulation) sees one program; the --train
** option read into a train_spec (options.c).
*/
#ifndef interp_train_h
#define interp_train_h

#include "interp/ir/ir.h"

/* TRAIN_STEP: a program that is a training step of its own (an imported
** JAX step, a model file returning new values): no --train, the update is
** the program's. TRAIN_ADAMW: Adam with decoupled weight decay
** (torch.optim.AdamW, optax.adamw). */
typedef enum train_kind { TRAIN_NONE, TRAIN_SGD, TRAIN_ADAM, TRAIN_STEP, TRAIN_ADAMW } train_kind;

/* What the backward pass computes again rather than keeps (remat.c):
** REMAT_NAMED is cheap's, and besides the forward values whose names
** match one of the globs in train_spec.remat_names, GEMMs included. */
typedef enum train_remat { REMAT_NONE, REMAT_CHEAP, REMAT_FULL, REMAT_NAMED } train_remat;

#define LOSS_SCALE_GROWTH 2000    /* good steps before a dynamic loss scale doubles (torch's growth_interval) */

typedef struct train_spec {
  train_kind kind;
  double lr;
  double momentum;                 /* sgd */
  double beta1, beta2, eps;        /* adam */
  double weight_decay;             /* sgd, adam: L2 added to the gradient, as torch.optim does;
                                      adamw: p scaled by 1 - lr weight_decay before the step */
  train_remat remat;               /* remat = none | cheap | full | "GLOB, GLOB" */
  ir_dtype precision;              /* the forward's compute type: f32 (as the model says), or bf16 or f16
                                      with f32 parameters, gradients and state (precision.c) */
  double loss_scale;               /* the backward starts from this instead of 1, and each parameter's
                                      gradient is divided by it (a power of two: exact): f16's
                                      gradients stay above its smallest numbers. 0 as parsed: 1024
                                      for f16, else 1 */
  int dynamic;                     /* loss_scale = dynamic: loss_scale is where the scale starts; halved
                                      and the step skipped when a gradient is not finite, doubled after
                                      LOSS_SCALE_GROWTH good steps (torch's GradScaler) */
  const char *remat_names;         /* REMAT_NAMED: the globs, as written */
  loc remat_at;                    /* where they were written, for errors */
} train_spec;

/* "sgd(lr = 0.01)", "adam(lr = 1e-3, beta1 = 0.9)", "adamw(lr = 3e-4)" (options.c): -1 with a
** located error ("--train:1:17: error: ..."). The source text lives in a. */
int train_parse(arena *a, const char *text, train_spec *t, diag *d);

/* Mixed precision (precision.c): the forward of g computes in t, its f32
** parameters and inputs converted where read, the loss converted back to
** f32. 0, or -1 with an error in d. */
int train_precision(ir_graph *g, ir_dtype t, diag *d);

/* Append grad.P for every parameter P the loss depends on (the model must
** return one f32 scalar). Returns 0 or -1. */
int grad_build(ir_graph *g, diag *d);
/* The same, the backward started from seed instead of 1 (loss scaling). */
int grad_build_seeded(ir_graph *g, double seed, int seed_value, diag *d);   /* seed_value >= 0: that value's */

/* Recompute in the backward pass (values from nfwd on) the forward values
** it reads that t->remat allows, from values kept anyway, instead of
** keeping them: clones named remat.NAME placed before their first reader.
** Returns how many forward values are no longer kept, or -1 (a glob of
** t->remat_names that names no forward value is an error). */
int remat_build(ir_graph *g, int nfwd, const train_spec *t, diag *d);

/* grad_build, then the update: new.P (and new.adam.m.P, new.adam.v.P,
** new.adam.step for Adam). Outputs become the loss then the new values,
** each carrying into the leaf it replaces. */
int train_build(ir_graph *g, const train_spec *t, diag *d);

#endif

/*
** lower.h: IR -> per-device program (runtime/prog.h). Every IR value gets
** a buffer (literal scalars are folded into the instructions that read
** them where they can be); einsum and matmul become GEMMs with operand
** layouts chosen to avoid copies; row-wise ops that work along a dim other
** than the last are framed by transposes.
*/
#ifndef interp_lower_h
#define interp_lower_h

#include "interp/ir/ir.h"
#include "interp/shard/shard.h"
#include "runtime/prog.h"

typedef struct lower_result {
  int *buf_of;          /* IR value id -> buffer (-1: folded or unused); malloc'd */
  uint32_t *partial;    /* IR value id -> the mesh axes its buffer holds a partial sum over
                           (the plan passes it on unreduced); malloc'd, all 0 on one device */
  int nvals;
} lower_result;

#define LOWER_TINY_BYTES  ((int64_t)4 << 10)
#define LOWER_TINY_BUCKET ((int64_t)1 << 20)

typedef struct lower_opts {
  /* Every value of an op gets a buffer of its own, kept after the run as an
  ** output: no folds into neighbours, no in-place updates. Bisection reads
  ** every intermediate value of a step this way. */
  int keep_values;
  /* For tests only: the k-th all_reduce emitted (from 1; 0: none) becomes a
  ** plain copy, a planted wrong collective for bisection to find. */
  int drop_collective;
  /* Optimizer updates value by value rather than one fused instruction per
  ** parameter (backends without the fused kernels; tests compare the two). */
  int no_fused_optim;
  /* Gradients' all-reduces (and reduce-scatters of first-dim splits) over
  ** the same devices joined into buckets of up to this many bytes, in the
  ** order the backward pass produces them (bucket.c). 0: only the tiny
  ** ones (at most LOWER_TINY_BYTES each: biases, norm gains) are joined,
  ** into buckets of at most LOWER_TINY_BUCKET (none under keep_values);
  ** -1: each alone. */
  int64_t bucket_bytes;
  /* Keep the transposes around attention and GEMMs as lowered (fold.c
  ** takes them into the kernels otherwise; tests compare the two). */
  int no_fold;
  /* Keep the adds after GEMMs (fold.c has the GEMMs add into the result
  ** otherwise, which rounds in another order; tests compare the two). */
  int no_fold_adds;
  /* Leave the optimizer updates after the backward pass (hoist.c moves
  ** each to just after its gradient is final otherwise; tests compare). */
  int no_hoist;
  /* Keep a layer norm's gamma gradient as layernorm, mul and reduce_sum,
  ** cross-entropy's loss apart from its gradient, and a bias gradient's
  ** reduce_sum apart from the elementwise op before it (normgrad.c,
  ** lossgrad.c and biasgrad.c fold each otherwise; tests compare). */
  int no_fold_rows;
  /* A language model's loss (the projection onto the classes, cross-entropy
  ** and their gradients) runs in chunks of rows whose logits take at most
  ** this many bytes (lmloss.c; 0: 256 MiB); below 0, or no_fold_rows, keeps
  ** it unfused. */
  int64_t loss_chunk_bytes;
  /* Keep chains of elementwise instructions apart (fuse.c joins them into
  ** one pass each otherwise; the numbers are the same, tests compare). */
  int no_fuse_elementwise;
  /* Every bf16 or f16 value is held and computed in f32 instead (a
  ** parameter or input of those types read into f32): the same step
  ** without the low precision's rounding, against which --check and
  ** --bisect measure it. */
  int widen;
} lower_opts;

/* Lower g into the program of one device of the plan's mesh (plan NULL:
** the unpartitioned program), into p (initialised here). -1 with an error in d,
** p and r then holding nothing to free. */
int lower_program(const ir_graph *g, const sh_plan *plan, rt_prog *p, lower_result *r, diag *d);
/* The same with options (NULL: none). */
int lower_program_opts(const ir_graph *g, const sh_plan *plan, const lower_opts *o, rt_prog *p, lower_result *r, diag *d);
void lower_result_free(lower_result *r);
/* The optimizer updates that lower as one instruction (on one device):
** folded[v] = -1 for a value computed inside one, the arrays the update
** reads and writes (7 for Adam, 5 or 3 for SGD) for its result, else 0.
** For estimates that do not lower (the search's). */
void lower_fused_updates(const ir_graph *g, signed char *folded);
/* The rows of a language model's loss that one chunk runs (lmloss.c):
** rows of classes f32 logits in chunks of at most chunk_bytes (0: the
** default). Its scratch holds that many rows of logits. */
int64_t lower_lm_loss_chunk_rows(int64_t rows, int64_t classes, int64_t chunk_bytes);

#endif

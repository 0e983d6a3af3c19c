# examples/gpt2_small.tac with the logits and their gradient kept whole on
# 'model' (as it was before the vocabulary-parallel loss): the logits are
# gathered for cross_entropy, whose gradient is computed whole and sliced.
# tests/e2e/gpu.sh runs it: the GPU has no kernel for the split loss yet.
version 1
mesh batch = 2, model = 2

use "batch"     as bp  (axis = batch)
use "megatron"  as mp  (axis = model)
use "zero"      as z3  (axis = batch, stage = 3)
use "embedding" as emb (axis = model)

tactic keep_logits(axis = model) {
  replicate value "logits" on axis
  replicate value "bwd.loss.logits" on axis
}

schedule bp, mp, keep_logits, emb, z3

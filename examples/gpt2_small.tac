# The full recipe: BP + MP + ZeRO-3 + the embedding table split by vocabulary
# on 'model' (the logits projection shares the table).
version 1
mesh batch = 2, model = 2                # --mesh on the command line overrides

use "batch"     as bp  (axis = batch)
use "megatron"  as mp  (axis = model)
use "zero"      as z3  (axis = batch, stage = 3)
use "embedding" as emb (axis = model)

schedule bp, mp, emb, z3                 # the logits split by vocabulary too: a vocabulary-parallel loss

# BP + MP + ZeRO-3 for GPT-2. The embedding tactic is left out: the vocabulary
# of 50257 rows does not split evenly (Megatron pads it to 50304; carve never
# pads silently). gpt2_small.tac shows the full recipe with the embedding split.
version 1
mesh batch = 2, model = 2                # --mesh on the command line overrides

use "batch"     as bp  (axis = batch)
use "megatron"  as mp  (axis = model)
use "zero"      as z3  (axis = batch, stage = 3)
schedule bp, mp, z3

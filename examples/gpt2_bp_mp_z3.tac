# BP + MP + ZeRO stage 3: parameters too are split over 'batch' and gathered
# before each use.
version 1
mesh batch = 2, model = 2
use "batch"    as bp (axis = batch)
use "megatron" as mp (axis = model)
use "zero"     as z3 (axis = batch, stage = 3)
schedule bp, mp, z3

# Batch parallelism with ZeRO stage 3: parameters, gradients and Adam state
# split over the data-parallel ranks, parameters gathered before each use.
version 1
mesh batch = 4
use "batch" as bp (axis = batch)
use "zero"  as z3 (axis = batch, stage = 3)
schedule bp, z3

# BP + MP + ZeRO stage 1: only the Adam state is split over 'batch'; gradients
# are all-reduced whole, each rank updates its part, the parameters are gathered.
version 1
mesh batch = 2, model = 2
use "batch" as bp (axis = batch)
use "megatron" as mp (axis = model)
use "zero" as z1 (axis = batch, stage = 1)
schedule bp, mp, z1

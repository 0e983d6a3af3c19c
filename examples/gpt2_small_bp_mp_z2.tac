# BP + MP + ZeRO stage 2: optimizer state and gradients split over 'batch'.
version 1
mesh batch = 2, model = 2
use "batch"    as bp (axis = batch)
use "megatron" as mp (axis = model)
use "zero"     as z2 (axis = batch, stage = 2)
schedule bp, mp, z2

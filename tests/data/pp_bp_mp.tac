# A 3-D plan: pipeline stages x batch x Megatron on 8 devices.
version 1
mesh stage = 2, batch = 2, model = 2
use "batch" as bp (axis = batch)
use "megatron" as mp (axis = model)
use "pipeline" as pp (axis = stage, microbatches = 2)
schedule bp, mp, pp

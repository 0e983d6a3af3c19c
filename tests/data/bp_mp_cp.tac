# batch x Megatron x context parallelism on 8 devices
version 1
mesh batch = 2, model = 2, cp = 2
use "batch" as bp (axis = batch)
use "megatron" as mp (axis = model)
use "context" as cp (axis = cp)
schedule bp, mp, cp

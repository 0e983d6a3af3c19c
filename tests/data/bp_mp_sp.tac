# batch, Megatron and sequence parallelism on 2 x 2 devices
version 1
mesh batch = 2, model = 2
use "batch"    as bp (axis = batch)
use "megatron" as mp (axis = model)
use "sequence" as sp (axis = model)
schedule bp, mp, sp

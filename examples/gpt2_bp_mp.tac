# Batch parallelism across 'batch', Megatron inside each replica on 'model'.
version 1
mesh batch = 2, model = 2
use "batch"    as bp (axis = batch)
use "megatron" as mp (axis = model)
schedule bp, mp

# a batch split and Megatron's split of the block: the norms run on whole
# rows of each device's batch (their scales replicated)
version 1
mesh batch = 2, model = 2
use "batch" as bp (axis = batch)
use "megatron" as mp (axis = model)
schedule bp, mp

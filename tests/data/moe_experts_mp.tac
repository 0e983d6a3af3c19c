# Experts and tokens on e, each expert's hidden dim on model (Megatron
# inside the experts).
version 1
mesh e = 2, model = 2
use "experts" as ep (axis = e)
use "batch" as bp (axis = e)
use "megatron" as mp (axis = model)
schedule ep, bp, mp

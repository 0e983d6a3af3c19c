# Megatron tensor parallelism with sequence parallelism on the same axis:
# the residual stream and the norms split by sequence, an all-gather before
# each column-parallel GEMM, a reduce-scatter after each row-parallel one.
version 1
mesh model = 2
use "megatron" as mp (axis = model)
use "sequence" as sp (axis = model)
schedule mp, sp

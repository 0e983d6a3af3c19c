# Megatron tensor parallelism: attention heads and the MLP hidden dim split on
# 'model'; carve finds them from the graph, not from the names.
version 1
mesh model = 4
use "megatron" as mp (axis = model)
schedule mp

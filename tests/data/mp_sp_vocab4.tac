# Megatron, the vocabulary split embedding and sequence parallelism, 4 ways on one axis
version 1
mesh model = 4
use "megatron"  as mp  (axis = model)
use "embedding" as emb (axis = model)
use "sequence"  as sp  (axis = model)
schedule mp, emb, sp

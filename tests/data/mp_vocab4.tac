# tests/data/mp_vocab.tac over 4 devices: each holds a quarter of the classes
version 1
mesh model = 4
use "megatron"  as mp  (axis = model)
use "embedding" as emb (axis = model)
schedule mp, emb

# Megatron for the MLP: w1 split by columns, w2 by rows (propagation).
version 1
mesh model = 2
use "megatron" as mp (axis = model)
schedule mp

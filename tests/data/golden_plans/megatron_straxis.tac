# the axis given as a string
mesh model = 2
use "megatron" as mp (axis = "model")
schedule mp

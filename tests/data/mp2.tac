# Megatron on a 2-device axis
version 1
mesh model = 2
use "megatron" as mp (axis = model)
schedule mp

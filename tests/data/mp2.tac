mesh model = 2
use "megatron" as mp (axis = model)
schedule mp

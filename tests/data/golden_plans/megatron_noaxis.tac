# megatron without its axis
mesh model = 2
use "megatron" as mp ()
schedule mp

# context and megatron on one axis: the sequence split zig-zag moves to the
# heads and back by all_to_alls
version 1
mesh a = 2
use "context" as cp (axis = a)
use "megatron" as mp (axis = a)
schedule cp, mp

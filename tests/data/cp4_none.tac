# context parallelism over 4 devices, each device one block of the sequence
# in order (no causal balance)
version 1
mesh cp = 4
use "context" as cp (axis = cp, balance = "none")
schedule cp

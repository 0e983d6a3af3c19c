# (see pipeline_carry.cir)
version 1
mesh a = 2
use "pipeline" as pp (axis = a, microbatches = 1, order = "1f1b")
schedule pp

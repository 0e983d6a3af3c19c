# (see pipeline_update_early.cir)
version 1
mesh a = 2
use "pipeline" as pp (axis = a, microbatches = 2, order = "1f1b")
schedule pp

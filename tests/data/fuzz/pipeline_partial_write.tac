# (see pipeline_partial_write.cir)
version 1
mesh a = 2
use "pipeline" as pp (axis = a, microbatches = 4, order = "gpipe")
schedule pp

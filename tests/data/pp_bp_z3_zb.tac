# Zero-bubble pipeline stages beside batch and ZeRO-3 on the other axis.
version 1
mesh stage = 2, batch = 2
use "batch" as bp (axis = batch)
use "zero" as z3 (axis = batch, stage = 3)
use "pipeline" as pp (axis = stage, microbatches = 4, order = "zb-h1")
schedule bp, z3, pp

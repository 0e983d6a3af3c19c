# Pipeline stages beside context parallelism (ring attention over fused attention).
version 1
mesh stage = 2, cp = 2
use "context" as cp (axis = cp)
use "pipeline" as pp (axis = stage, microbatches = 2)
schedule cp, pp

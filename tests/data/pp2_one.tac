# Pipeline stages: 2, the whole batch at once (one microbatch).
version 1
mesh stage = 2
use "pipeline" as pp (axis = stage, microbatches = 1)
schedule pp

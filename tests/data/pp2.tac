# Pipeline stages: 2, four microbatches a step, 1F1B.
version 1
mesh stage = 2
use "pipeline" as pp (axis = stage, microbatches = 4)
schedule pp

# Pipeline stages: 4, eight microbatches a step, 1F1B.
version 1
mesh stage = 4
use "pipeline" as pp (axis = stage, microbatches = 8)
schedule pp

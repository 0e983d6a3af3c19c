# Pipeline stages: 4, four microbatches a step, GPipe.
version 1
mesh stage = 4
use "pipeline" as pp (axis = stage, microbatches = 4, order = "gpipe")
schedule pp

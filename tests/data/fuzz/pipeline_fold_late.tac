# two stages, four microbatches, GPipe (tests/data/fuzz/pipeline_fold_late.cir)
version 1
mesh a = 2
use "pipeline" as pp (axis = a, microbatches = 4, order = "gpipe")
schedule pp

# fuzz_diff: the model of pipeline_unhoisted_hang.cir on two stages, 4 microbatches, 1F1B
version 1
mesh a = 2
use "pipeline" as pp (axis = a, microbatches = 4, order = "1f1b")
schedule pp

# Pipeline parallelism: the small GPT on 2 stages, each data-parallel
# half of its batch in 2 microbatches, 1F1B; batch parallelism on a second axis.
version 1
mesh stage = 2, batch = 2
use "batch"    as bp (axis = batch)
use "pipeline" as pp (axis = stage, microbatches = 2)
schedule bp, pp

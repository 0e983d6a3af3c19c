# Expert parallelism from the standard library on the mixture-of-experts
# layers in tests/data: the experts split on e, then the tokens (their
# groups, or the tokens themselves where there are no groups) on e too.
version 1
mesh e = 4
use "experts" as ep (axis = e)
use "batch" as bp (axis = e)
schedule ep, bp

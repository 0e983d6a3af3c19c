# expect: 4:1: error: zero shards optimizer state: apply it to a training step (--train adam(...))
# stage: semantic
mesh b = 2
use "zero" as z (axis = b, stage = 2)
schedule z

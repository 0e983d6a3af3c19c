# expect: 4:5: error: no stdlib tactic 'batchh'; did you mean 'batch'? (the stdlib has batch, context, embedding, experts, megatron
# stage: semantic
mesh b = 2
use "batchh" as bp (axis = b)
schedule bp

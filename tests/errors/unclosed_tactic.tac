# expect: 7:1: error: unexpected end of input, expected '}' to close tactic 'emb'
# stage: syntax
mesh model = 2
tactic emb(axis = model) {
  shard param "wte" dim 0 on axis
  replicate value "logits" on axis

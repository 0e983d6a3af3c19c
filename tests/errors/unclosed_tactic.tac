# expect: 4:26: error: unclosed '{' opened here: expected '}' to close tactic 'emb' before the end of the input
# stage: syntax
mesh model = 2
tactic emb(axis = model) {
  shard param "wte" dim 0 on axis
  replicate value "logits" on axis

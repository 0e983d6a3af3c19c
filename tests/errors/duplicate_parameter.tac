# expect: 3:18: error: parameter 'axis' is listed twice in tactic 'emb'
# stage: syntax
tactic emb(axis, axis = model) {
  shard param "wte" dim 0 on axis
}

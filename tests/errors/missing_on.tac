# expect: 5:27: error: unexpected 'model', expected 'on'
# stage: syntax
mesh model = 2
tactic emb {
  shard param "wte" dim 0 model
}

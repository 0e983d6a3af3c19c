# expect: 5:1: error: unexpected 'tactic' inside tactic 'a'; is its '}' missing?
# stage: syntax
tactic a {
  replicate params on model
tactic b {
  shard inputs dim 0 on batch
}

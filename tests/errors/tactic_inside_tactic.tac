# expect: 3:10: error: unclosed '{' opened here: expected '}' to close tactic 'a' before 'tactic' on line 5
# stage: syntax
tactic a {
  replicate params on model
tactic b {
  shard inputs dim 0 on batch
}

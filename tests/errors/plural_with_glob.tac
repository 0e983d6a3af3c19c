# expect: 5:16: error: unexpected 'l*.w1': 'params' selects all of them; write 'param' and a name or glob to select some
# stage: syntax
mesh model = 2
tactic mlp {
  shard params l*.w1 dim 1 on model
}

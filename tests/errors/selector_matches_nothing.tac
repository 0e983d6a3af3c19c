# expect: 5:15: error: no param matches 'wq'; did you mean 'w'? (--lenient makes this a warning)
# stage: semantic
mesh model = 2
tactic t {
  shard param "wq" dim 0 on model
}
schedule t

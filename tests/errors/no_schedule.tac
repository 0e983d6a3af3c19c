# expect: 1:1: error: no schedule
# stage: semantic
mesh b = 2
tactic t {
  shard input "x" dim 0 on b
}

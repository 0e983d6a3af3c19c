# expect: 5:23: error: dim 2 is out of range for 'x' of rank 2
# stage: semantic
mesh b = 2
tactic t {
  shard input "x" dim 2 on b
}
schedule t

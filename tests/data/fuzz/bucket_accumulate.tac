version 1
mesh a = 2
tactic t {
  shard param "w1" dim 1 on a
  shard param "w0" dim 0 on a
}
schedule t

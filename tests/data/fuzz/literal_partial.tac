mesh a = 2
tactic t {
  shard param "w" dim 0 on a
}
schedule t

# the norms' scales and the hidden dim split: each norm needs its whole
# row, so the rows are gathered before it and split again after
version 1
mesh a = 2, b = 2
tactic t {
  shard param "g1" dim 0 on a
  shard param "gf" dim 0 on b
  shard input "x" dim 2 on a
  shard input "y" dim 1 on b
}
schedule t

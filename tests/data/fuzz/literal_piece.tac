# w split on its last dim: the concat's backward slices a split literal
version 1
mesh a = 4
tactic t {
  shard param "w" dim last on a
}
schedule t

# the rows of w: its product with x is a partial sum
version 1
mesh a = 2
tactic rows(axis = a) {
  shard param "w" dim 0 on axis
}
schedule rows

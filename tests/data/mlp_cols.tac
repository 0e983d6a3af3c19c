# Splits the MLP's outputs by columns (a later dim), for tests of folded
# elementwise updates and scalings on a split that is not the leading one.
mesh model = 2
tactic cols {
  shard input "y" dim 1 on model
}
schedule cols

# h split by columns: the point gather looks its column up (a whole dim),
# the row gather's window spans the table's columns (split with them)
mesh a = 2, b = 2
tactic mp {
  shard param "w" dim 1 on a
  shard param "table" dim 1 on b
  shard input "ids" dim 0 on b
}
schedule mp

# the ids and labels split by rows: each device gathers its rows, and the
# table's gradient and the scatter-add are partial sums, one all-reduce each
mesh a = 2, b = 2
tactic bp {
  shard input "ids" dim 0 on a
  shard input "lab" dim 0 on a
  shard param "table" dim 1 on b
}
schedule bp

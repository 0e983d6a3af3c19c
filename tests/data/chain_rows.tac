# Splits tests/data/chain.cir by rows: its output (a vector) ends up split too.
mesh b = 2
tactic rows {
  shard input "x" dim 0 on b
}
schedule rows

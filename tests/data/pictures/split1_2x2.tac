# One split dim on a 2x2 mesh: two blocks, each held by the two devices along b.
mesh a = 2, b = 2
tactic t1 { shard input "t" dim 0 on a }
schedule t1

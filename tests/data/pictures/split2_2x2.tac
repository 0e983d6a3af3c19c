# Two split dims on a 2x2 mesh: a grid of four blocks, one device each.
mesh a = 2, b = 2
tactic t1 { shard input "t" dim 0 on a
            shard input "t" dim 2 on b }
schedule t1

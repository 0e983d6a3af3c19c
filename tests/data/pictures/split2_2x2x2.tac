# Two split dims on a 2x2x2 mesh: a grid whose blocks are each held by two devices (copies on c).
mesh a = 2, b = 2, c = 2
tactic t1 { shard input "t" dim 2 on b
            shard input "t" dim 0 on c }
schedule t1

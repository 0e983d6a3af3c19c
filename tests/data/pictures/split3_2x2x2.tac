# Three split dims on a 2x2x2 mesh: eight blocks, one device each, as a list.
mesh a = 2, b = 2, c = 2
tactic t1 { shard input "t" dim 0 on a
            shard input "t" dim 1 on b
            shard input "t" dim 2 on c }
schedule t1

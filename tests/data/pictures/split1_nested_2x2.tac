# One dim split on both axes of a 2x2 mesh (a, then each piece on b): four blocks.
mesh a = 2, b = 2
tactic t1 { shard input "t" dim 0 on a }
tactic t2 { shard input "t" dim 0 on b }
schedule t1, t2

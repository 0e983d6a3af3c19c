# w's rows split on b: h = matmul(x, w) is a partial sum over b, passed on
# unreduced to the scaling; x split by rows on a.
mesh a = 2, b = 2
tactic t1 { shard param "w" dim 0 on b
            shard input "x" dim 0 on a }
schedule t1

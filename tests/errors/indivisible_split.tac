# expect: 5:3: error: cannot split dim 0 of 'x' (size 8) into 3 pieces on 'b': it is not divisible
# stage: semantic
mesh b = 3
tactic t {
  shard input "x" dim 0 on b
}
schedule t

# A random plan (test_partition's random_plans_equal_one_device) that once
# ran 5e-3 off one device: k's projection is a partial sum over 'model'
# passed on unreduced, which takes 'model' from q's input gradient einsum,
# whose heads then contract over 'batch'; the sum over 'batch' was not
# reduced (the contraction was judged before any operand was passed on).
version 1
mesh batch = 2, model = 2
tactic t {
  shard param "l*.attn.wk" dim 1 on batch
  shard param "l*.attn.wq" dim 0 on model
  shard param "l*.attn.wq" dim 0 on batch
  shard param "wte" dim 1 on batch
  shard param "l*.attn.wv" dim 2 on batch
  shard param "l*.attn.wq" dim 2 on batch
}
schedule t

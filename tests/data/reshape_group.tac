# A random plan (test_partition) that once lowered to a zero-size copy:
# k's projection ends split 8 ways (model+batch) on its 32 columns, which
# the head split reshapes into [4 heads, 8]; 8 pieces do not divide 4
# heads, so the reshape takes 'model' only and gathers 'batch' first.
version 1
mesh batch = 4, model = 2
use "batch" as bp (axis = batch)
use "megatron" as mp (axis = model)
tactic t {
  shard param "wk" dim 0 on model
  shard param "wo" dim 0 on model
  shard param "wv" dim 0 on batch
  shard param "emb" dim 0 on batch
  shard param "emb" dim 1 on model
  shard param "wk" dim 1 on batch
}
schedule mp, t, bp

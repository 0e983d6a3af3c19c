# A plan `carve auto` found (tests/e2e/auto.sh): the heads of wq split on
# batch, the positions on batch then model. Attention's gradient arrives
# with its sequence dim split batch+model and is wanted with its heads on
# batch: 'batch' must leave the sequence dim before it splits the heads
# (gather model, gather batch, then slice), or the pieces mix devices.
version 1
mesh batch = 2, model = 2
tactic t {
  shard param "l*.attn.wq" dim 1 on batch
  shard param "wpe" dim 0 on batch
  shard param "wpe" dim 0 on model
}
schedule t

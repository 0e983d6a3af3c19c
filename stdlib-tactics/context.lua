-- context.lua: context parallelism on an axis of its own.
--
--   use "context" as cp (axis = cp)
--
--   use "context" as cp (axis = cp, balance = "zigzag" | "none")
--
-- Every input is split along its second dim (the sequence), and the
-- sequence stays split through attention: each device keeps its own
-- queries, and every other activation stays split too.
--
-- balance = "zigzag" (the default) deals the sequence to the P devices of
-- the axis in 2P blocks, device q holding blocks q and 2P-1-q, as
-- Megatron-Core's context parallelism does: under a causal mask the last
-- positions attend to the most keys, and this way every device has as
-- many early positions as late ones, so every device does the same work.
-- balance = "none" gives device q block q of P (the last device then
-- computes every block of keys for its queries, the first one block).
--
-- Fused attention (carve's default) runs as ring attention: the blocks of
-- keys and values pass around the devices of the axis by point-to-point
-- sends, each device adding each block to an online softmax of its
-- queries, so no device ever holds the whole sequence's keys; the
-- backward passes the blocks around again with their gradients, which
-- arrive back where they started. Attention as written (carve --no-fuse)
-- gathers the keys and values over the axis before the scores (an
-- all-gather, as Transformer Engine's all_gather context parallelism and
-- Llama 3's training do), the causal mask masks each device's rows as the
-- whole would, and the backward reduce-scatters their gradients back onto
-- the sequence. Either way attention's memory falls as 1/n.

return function(ctx, args)
  local axis = ctx:axis(args)
  ctx:ring(args)
  ctx:together(function()
    for _, x in ipairs(ctx:values("input")) do ctx:shard(x, 1, axis) end     -- the sequence
  end)
end

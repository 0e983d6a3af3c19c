-- context.lua: context parallelism on an axis of its own.
--
--   use "context" as cp (axis = cp)
--
-- Every input is split along its second dim (the sequence), and the
-- sequence stays split through attention: each device keeps its own
-- queries, and every other activation stays split too.
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
  ctx:ring()
  ctx:together(function()
    for _, x in ipairs(ctx:values("input")) do ctx:shard(x, 1, axis) end     -- the sequence
  end)
end

-- context.lua: context parallelism on an axis of its own.
--
--   use "context" as cp (axis = cp)
--
-- Every input is split along its second dim (the sequence), and the
-- sequence stays split through attention. Each device keeps its own
-- queries; the keys and values are gathered over the axis before the
-- scores (an all-gather, as Transformer Engine's all_gather context
-- parallelism and Llama 3's training do), the causal mask masks each
-- device's rows as the whole would, and the backward reduce-scatters the
-- keys' and values' gradients back onto the sequence. The scores, the
-- softmax and every other activation are split: attention's memory falls
-- as 1/n.
--
-- The fused attention op keeps the sequence whole (each device would
-- compute all of it): the tactic warns where the program has one, which
-- is an error unless --lenient. Run attention as written (carve
-- --no-fuse).

return function(ctx, args)
  local axis = ctx:axis(args)
  for _, v in ipairs(ctx:values()) do
    local op = v.producer
    if op and op.kind == "attention" then
      ctx:warn(("context: attention '%s' is fused, and the fused op keeps the sequence whole: each device would compute all of it; " ..
                "run with --no-fuse to split it (the scores, the mask and the softmax as written)"):format(v.name))
      break
    end
  end
  ctx:together(function()
    for _, x in ipairs(ctx:values("input")) do ctx:shard(x, 1, axis) end     -- the sequence
  end)
end

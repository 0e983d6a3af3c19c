-- pipeline.lua: pipeline parallelism on an axis of its own.
--
--   use "pipeline" as pp (axis = stage, microbatches = 8, order = "1f1b")
--
-- The program is cut into as many stages as the axis has devices: where
-- the fewest values cross from one part to the next (the residual stream
-- between blocks), the busiest part as little busy as can be, or at the values that
-- `at = ["h3", "h6"]` names (each ends a stage). Each device computes its
-- stage's forward and backward pass and holds its stage's weights; the
-- activations travel to the next stage and their gradients back, by
-- point-to-point sends. The batch is split into microbatches that each
-- device runs one after another, in the order of the schedule: "1f1b"
-- (the default: stage s runs stages - s - 1 forwards ahead, then one
-- forward and one backward in turn, holding at most that many
-- microbatches' activations), "gpipe" (every forward, then every
-- backward) or "interleaved" (Megatron's virtual stages: each stage holds
-- `chunks` parts of the program, default 2, and the microbatches pass
-- through them in turn: a smaller bubble for more transfers) or "zb-h1"
-- (zero-bubble: each backward's weights' gradients run apart from the rest,
-- later, where 1F1B's stages would wait). Gradients
-- are summed over the microbatches and the optimizer
-- updates once per step, as one device on the whole batch does.
-- microbatches defaults to the number of stages. Parameters and optimizer
-- state stay whole on every microbatch.
--
-- Schedule it after the tactics that split the batch over other axes.

return function(ctx, args)
  ctx:axis(args)
  local micro, batch = ctx:pipeline(args)
  if not micro then return end                                            -- one microbatch
  ctx:together(function()
    -- every microbatch sees the whole of each parameter and state: where an
    -- op meets the batch with a parameter along the same dim, the
    -- microbatch takes its rows of it
    for _, w in ipairs(ctx:values("param")) do ctx:replicate(w, micro) end
    for _, w in ipairs(ctx:values("state")) do ctx:replicate(w, micro) end
    -- the batch: the inputs whose first dim is the batch's (an input without
    -- it, a bias fed as data, stays whole on every microbatch)
    for _, x in ipairs(ctx:values("input")) do
      if x.shape[1] == batch then ctx:shard(x, 0, micro) end
    end
  end)
end

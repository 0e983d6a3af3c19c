-- zero.lua: ZeRO (Rajbhandari et al.) on a data-parallel axis.
--
--   use "zero" as z (axis = batch, stage = 1 | 2 | 3)
--
-- stage 1 splits the optimizer state, 2 also the gradients, 3 also the
-- parameters, each on its first dim the axis divides; what is below the
-- stage is kept whole on the axis (a replicate), so that propagation does
-- not split it either. The actions are taken together (ctx:together), in
-- program order, and propagate once at the end.

local function contains(list, x)
  for _, y in ipairs(list) do
    if y == x then return true end
  end
  return false
end

-- the first dim (0-based) of v that can take the axis now, or nil
local function first_divisible(ctx, v, axis, size)
  local dims, _, whole = ctx:sharding(v)
  local sizes = ctx:mesh()
  for _, d in ipairs(dims) do
    if contains(d, axis) then return nil end
  end
  for i, d in ipairs(dims) do
    if not contains(whole[i], axis) then
      local n = size
      for _, a in ipairs(d) do n = n * sizes[a] end
      if v.shape[i] % n == 0 then return i - 1 end
    end
  end
  return nil
end

local level = {state = 1, grad = 2, param = 3}

return function(ctx, args)
  local axis, size = ctx:axis(args)
  local stage = args.stage
  if stage ~= nil and math.type(stage) ~= "integer" then ctx:error("stage must be 1, 2 or 3", "stage") end
  if stage == nil then
    ctx:error(('zero needs a stage: use "zero" as %s (axis = ..., stage = 1, 2 or 3)'):format(ctx.tactic))
  end
  if stage < 1 or stage > 3 then ctx:error(("zero: stage must be 1, 2 or 3, not %d"):format(stage)) end
  if not ctx.train then ctx:error("zero shards optimizer state: apply it to a training step (--train adam(...))") end
  ctx:together(function()
    for _, v in ipairs(ctx:values()) do
      local l = level[v.kind]
      if l and l <= stage then
        local dim = first_divisible(ctx, v, axis, size)
        if dim then ctx:shard(v, dim, axis, "storage") end   -- a storage split: gathered where used
      elseif l then
        ctx:replicate(v, axis)          -- below the stage: kept whole on the axis
      end
    end
  end)
end

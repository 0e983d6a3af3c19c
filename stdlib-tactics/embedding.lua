-- embedding.lua: the rows (vocabulary) of every embedding table.
--
--   use "embedding" as emb (axis = model)
--
-- A lookup into a table split by rows is a partial sum over the axis (each
-- device holds some rows); a tied output projection follows by
-- propagation. Tables are never padded: rows that do not divide are an
-- error (Megatron pads GPT-2's 50257 to 50304; carve leaves that to the
-- model).

return function(ctx, args)
  local axis, size = ctx:axis(args)
  local sizes = ctx:mesh()
  local n = 0
  ctx:together(function()
    for _, v in ipairs(ctx:values()) do
      local op = v.producer
      if op and op.kind == "embedding" then
        local t = op.operands[1]
        local rows = (ctx:sharding(t))[1]
        local pieces, split = size, false
        for _, a in ipairs(rows) do
          pieces = pieces * sizes[a]
          split = split or a == axis
        end
        if t.kind == "param" and not split then
          if t.shape[1] % pieces ~= 0 then
            ctx:error(("embedding: the %d rows of '%s' do not split into %d pieces on '%s'; pad the table to a multiple (Megatron pads 50257 to 50304)")
                      :format(t.shape[1], t.name, size, axis))
          end
          ctx:shard(t, 0, axis)
          n = n + 1
        end
      end
    end
  end)
  if n == 0 then ctx:warn("embedding: the program has no embedding table") end
end

-- gelu_split.lua: the custom tactic built step by step in docs/lua.md ("A
-- tactic in five steps"). Every matmul weight whose output feeds a gelu (through a bias
-- add) is split by columns on args.axis; propagation splits its partner.
-- A split is kept only when the simulator says the step gets faster.

-- true when value v reaches a gelu, directly or through adds (a bias)
local function feeds_gelu(v, depth)
  for _, op in ipairs(v.users) do
    if op.kind == "gelu" or op.kind == "gelu_tanh" then return true end
    if op.kind == "add" and depth < 2 and feeds_gelu(op.results[1], depth + 1) then return true end
  end
  return false
end

return function(ctx, args)
  local axis = args.axis or ctx:error("gelu_split needs an axis: tactic t = lua \"gelu_split.lua\" (axis = ...)")
  for _, v in ipairs(ctx:values()) do
    local op = v.producer
    local w = op and op.kind == "matmul" and op.operands[2]
    if w and w.kind == "param" and feeds_gelu(v, 0) then
      local before = ctx:cost()
      local mark = ctx:mark()
      local ok, why = ctx:shard(w, -1, axis)
      if not ok then
        print(("%s: not split (%s)"):format(w.name, why))
      else
        local after = ctx:cost()
        if after.time < before.time then
          print(("%s: split, step %.3f -> %.3f ms"):format(w.name, before.time * 1e3, after.time * 1e3))
        else
          ctx:rollback(mark)
          print(("%s: kept whole, a split would take %.3f ms, not %.3f"):format(w.name, after.time * 1e3, before.time * 1e3))
        end
      end
    end
  end
end

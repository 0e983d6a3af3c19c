-- experts.lua: expert parallelism (GShard, Switch, DeepSpeed-MoE), found
-- from the graph.
--
--   use "experts" as ep (axis = data)
--   use "batch" as bp (axis = data)
--   schedule ep, bp
--
-- An expert weight is a parameter with a dim that a contraction keeps as a
-- batch dim of the product: in einsum("egcd,edf->egcf", xin, w1) the
-- experts' dim e is in both operands and the result. The experts' part of
-- the program is every value that dim reaches through ops whose operands
-- all have it (the experts' inputs, their hidden values, outputs,
-- gradients and optimizer state). The tactic splits that dim of all of
-- them on the axis, and keeps the expert dim whole on the axis where it
-- meets the tokens' part of the program (the dispatch and combine masks,
-- the gates): the tokens stay split the way the next tactic splits them,
-- and the lowering moves them to the experts and back at the dispatch and
-- the combine (an all_to_all where the tokens have a group dim split on
-- the axis; a reduce-scatter and an all-gather where they do not), once
-- each way in the forward and once each way in the backward.
--
-- Schedule it before the tactic that splits the tokens on the same axis
-- (batch): a split that reached the experts' values first would leave no
-- room for the experts' own.

local function is_contraction(op) return op.kind == "matmul" or op.kind == "einsum" end

-- the dim (0-based) of dims that has factor f, or nil
local function dim_of(dims, f)
  for j, g in ipairs(dims) do
    if g == f then return j - 1 end
  end
  return nil
end

-- the factor dim d (0-based) of v has in op, or nil (v read or made there)
local function factor_of(fr, op, v, d)
  if op.results[1] == v then return fr.result[d + 1] end
  for k, o in ipairs(op.operands) do
    if o == v then return fr.operands[k][d + 1] end
  end
  return nil
end

-- the expert dim (0-based) of parameter p read by contraction op as
-- operand k, or nil: a pass factor every operand and the result have
local function expert_dim(ctx, op, k)
  local fr = ctx:factors(op)
  if not fr or #op.operands < 2 then return nil end
  for i, f in ipairs(fr.operands[k]) do
    if f and fr.kind[f] == "pass" and dim_of(fr.result, f) then
      local all = true
      for b = 1, #op.operands do
        if not dim_of(fr.operands[b], f) then all = false end
      end
      if all then return i - 1 end
    end
  end
  return nil
end

-- An op is inside the experts' part when the factor f of the expert dim
-- passes through it and every operand with a shape, and its result, have
-- that factor.
local function inside(fr, op, f)
  if not f or fr.kind[f] ~= "pass" or not dim_of(fr.result, f) then return false end
  for k, o in ipairs(op.operands) do
    if #o.shape > 0 and o.kind ~= "constant" and not dim_of(fr.operands[k], f) then return false end
  end
  return true
end

return function(ctx, args)
  local axis, size = ctx:axis(args)
  local sizes = ctx:mesh()

  -- the expert weights and their expert dims
  local region, order = {}, {}       -- value -> expert dim (0-based)
  local function add(v, d)
    if region[v] == nil then
      region[v] = d
      order[#order + 1] = v
    end
  end
  for _, p in ipairs(ctx:values("param")) do
    for _, op in ipairs(p.users) do
      if is_contraction(op) then
        for k, o in ipairs(op.operands) do
          if o == p then
            local d = expert_dim(ctx, op, k)
            if d then add(p, d) end
          end
        end
      end
    end
  end
  if #order == 0 then
    ctx:warn("experts: no expert weight found (no parameter with a dim that a contraction keeps as a batch dim, as einsum(\"egcd,edf->egcf\") keeps the experts' e)")
    return
  end

  -- the experts' part, and where it meets the tokens'
  local border, border_order = {}, {}   -- value -> {dim, op} where it meets the experts
  local i = 1
  while i <= #order do
    local v, d = order[i], region[order[i]]
    i = i + 1
    local ops = {}
    if v.producer then ops[1] = v.producer end
    for _, op in ipairs(v.users) do ops[#ops + 1] = op end
    for _, op in ipairs(ops) do
      local fr = ctx:factors(op)
      if fr then
        local f = factor_of(fr, op, v, d)
        local ok = inside(fr, op, f)
        local vals = {{op.results[1], fr.result}}
        for k, o in ipairs(op.operands) do vals[#vals + 1] = {o, fr.operands[k]} end
        for _, pair in ipairs(vals) do
          local w = pair[1]
          local wd = w.kind ~= "constant" and dim_of(pair[2], f)
          if wd then
            if ok then
              add(w, wd)
            elseif region[w] == nil and not border[w] then
              border[w] = {wd, op}
              border_order[#border_order + 1] = w
            end
          end
        end
      end
    end
  end

  -- a value the axis already splits another way leaves no room (a tactic
  -- that split the tokens came first)
  for _, v in ipairs(order) do
    local axes = ctx:sharding(v)
    for dd, list in ipairs(axes) do
      for _, a in ipairs(list) do
        if a == axis and dd - 1 ~= region[v] then
          ctx:warn(("experts: '%s' is already split on '%s' on dim %d, so its experts cannot be; schedule experts before the tactic that splits the tokens on '%s'")
                   :format(v.name, axis, dd - 1, axis))
          return
        end
      end
    end
  end

  ctx:together(function()
    for _, w in ipairs(border_order) do
      if region[w] == nil then
        local d, op = border[w][1], border[w][2]
        ctx:replicate(w, axis, d)
        ctx:note(w, ("experts: dim %d kept whole on '%s' where it meets the experts (%s '%s'): the tokens are moved to the experts there")
                    :format(d, axis, op.kind, op.results[1].name))
      end
    end
    for _, v in ipairs(order) do
      if v.kind == "param" then
        local pieces = size
        for _, a in ipairs((ctx:sharding(v))[region[v] + 1]) do pieces = pieces * sizes[a] end
        if v.shape[region[v] + 1] % pieces ~= 0 then
          ctx:error(("experts: the %d experts of '%s' (dim %d) do not split into %d pieces on '%s'")
                    :format(v.shape[region[v] + 1], v.name, region[v], pieces, axis))
        end
        ctx:shard(v, region[v], axis)
      end
    end
  end)
end

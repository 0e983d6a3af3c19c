-- megatron.lua: Megatron-LM tensor parallelism, found from the graph.
--
--   use "megatron" as mp (axis = model)
--
-- A column-parallel weight is a parameter whose free dim flows forward,
-- through ops that keep it split, into a contraction with another
-- parameter that sums it away: the first weight of an MLP pair
-- (matmul -> elementwise -> matmul), the query, key and value projections
-- of attention, whose heads reach the output projection through the
-- softmax block (written with einsum, or with reshape and transpose).
-- Nothing is found by name. The tactic splits that dim of each such weight
-- on the axis; propagation splits the rest: the row-parallel partner,
-- biases, activations, gradients and optimizer state.
--
-- The splits are made together (ctx:together): each is decided on the
-- plan as the earlier tactics left it, and propagation runs once at the
-- end, as a tactic file's block does.

-- pieces dim d (0-based) of v is cut into now
local function pieces(ctx, v, d)
  local sizes = ctx:mesh()
  local n = 1
  for _, a in ipairs((ctx:sharding(v))[d + 1]) do n = n * sizes[a] end
  return n
end

-- the values the first output (the loss) depends on: the forward program
local function forward_set(ctx)
  local fwd, outs = {}, ctx:outputs()
  if #outs == 0 then return fwd end
  local stack = {outs[1]}
  fwd[outs[1]] = true
  while #stack > 0 do
    local v = table.remove(stack)
    local op = v.producer
    if op then
      for _, a in ipairs(op.operands) do
        if not fwd[a] then
          fwd[a] = true
          stack[#stack + 1] = a
        end
      end
    end
  end
  return fwd
end

local function is_contraction(op) return op.kind == "matmul" or op.kind == "einsum" end

-- the parameter v is, seen through ops that only move or retype its
-- elements (an imported program reshapes and transposes its weights
-- before each dot), or nil
local layout = {reshape = true, transpose = true, convert = true}
local function param_behind(v)
  while v.kind ~= "param" do
    local op = v.producer
    if not op or not layout[op.kind] or #op.operands ~= 1 then return nil end
    v = op.operands[1]
  end
  return v
end

-- the result dim (0-based) that factor f maps to, or nil
local function result_dim(fr, f)
  local rd
  for j, g in ipairs(fr.result) do
    if g == f then rd = j - 1 end
  end
  return rd
end

-- Follow the factor of dim `dim` of value x forward: true when every path
-- ends summed away by a contraction with a parameter (those parameters
-- are marked in partner); else false and why, for ctx:note.
local function reaches_row_partner(ctx, fwd, x, dim, depth, partner)
  if depth > 48 then return false, "more than 48 ops and no second weight" end
  local found = false
  for _, op in ipairs(x.users) do
    local w = op.results[1]
    if fwd[w] then
      local at = ("%s '%s'"):format(op.kind, w.name)
      local fr = ctx:factors(op)
      if not fr then return false, at .. ", which has no sharding rule" end
      for a, operand in ipairs(op.operands) do
        if operand == x then
          local f = fr.operands[a][dim + 1]
          if not f or fr.kind[f] == "whole" then
            local why = at .. ", which needs that dim of '" .. x.name .. "' whole"
            if op.kind == "slice" then
              why = why .. ": the slice takes a part of a dim a split would cut into contiguous blocks (a fused weight's " ..
                    "parts, such as q, k and v side by side, are split by heads when the weight is written with a dim of its own for them)"
            end
            return false, why
          end
          if fr.kind[f] == "contract" then
            if op.kind == "cross_entropy" then    -- the classes: a vocabulary split, not megatron's
              return false, at .. ", the loss over its classes: megatron leaves the vocabulary whole (the embedding " ..
                            "tactic, or a shard of the weight's classes, splits it; the loss is then vocabulary-parallel)"
            end
            if not is_contraction(op) then return false, at .. ", which sums it away where only a product with a second weight may" end
            local other = false
            for b, o in ipairs(op.operands) do
              local p = b ~= a and param_behind(o)
              if p then
                other = true
                partner[p] = true
              end
            end
            if not other then return false, at .. ", which contracts it with '" .. op.operands[a == 1 and 2 or 1].name .. "', not with a weight" end
            found = true
          else
            local rd = result_dim(fr, f)
            if not rd then return false, at .. ", which drops that dim" end
            local ok, why = reaches_row_partner(ctx, fwd, w, rd, depth + 1, partner)
            if not ok then return false, why end
            found = true
          end
        end
      end
    end
  end
  if not found then return false, "'" .. x.name .. "', which nothing on the way to the loss reads" end
  return true
end

return function(ctx, args)
  local axis, size = ctx:axis(args)
  local fwd = forward_set(ctx)
  local done, partner = {}, {}      -- partner: row-parallel weights, split by propagation
  local n, undivided, undivided_dim = 0, nil, 0
  local declined, declined_order = {}, {}   -- weights not taken: why, in program order
  ctx:together(function()
    for _, v in ipairs(ctx:values()) do
      local op = v.producer
      if fwd[v] and op and is_contraction(op) then
        local fr = ctx:factors(op)
        for k, w in ipairs(fr and op.operands or {}) do
          local p = param_behind(w)      -- split w (propagation splits p)
          if p and not done[p] and not partner[p] then
            for i = 1, #w.shape do
              local f = fr.operands[k][i]
              if f and fr.kind[f] == "pass" then
                local rd = result_dim(fr, f)
                local found = {}
                local ok, why = false, "the contraction's result, which drops that dim"
                if rd ~= nil then ok, why = reaches_row_partner(ctx, fwd, v, rd, 0, found) end
                if not ok and not declined[p] then
                  declined[p] = ("megatron: not a column-parallel weight: dim %d of '%s' leads to %s"):format(i - 1, w.name, why)
                  declined_order[#declined_order + 1] = p
                end
                if ok then
                  for q in pairs(found) do partner[q] = true end
                  if w.shape[i] % (pieces(ctx, w, i - 1) * size) ~= 0 then
                    if not undivided then undivided, undivided_dim = w, i - 1 end
                  else
                    ctx:shard(w, i - 1, axis)   -- refused (a conflict, recorded): the weight is still done
                    done[p] = true
                    n = n + 1
                    break
                  end
                end
              end
            end
          end
        end
      end
    end
  end)
  -- why each weight it looked at and left is not split on the axis (carve
  -- explain); a weight propagation split after all (a row-parallel
  -- partner) needs no note
  for _, p in ipairs(declined_order) do
    local split = false
    for _, axes in ipairs((ctx:sharding(p))) do
      for _, a in ipairs(axes) do split = split or a == axis end
    end
    if not split then ctx:note(p, declined[p]) end
  end
  if n == 0 and undivided then
    ctx:warn(("megatron: the column-parallel weights are not divisible into %d pieces on '%s' (dim %d of '%s' has %d)")
             :format(size, axis, undivided_dim, undivided.name, undivided.shape[undivided_dim + 1]))
  elseif n == 0 then
    ctx:warn("megatron: no column-parallel weight found (no weight whose output is summed away by a second weight)")
  end
end

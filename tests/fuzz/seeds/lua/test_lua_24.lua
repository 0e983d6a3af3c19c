local function third(v)
  return v.shape.nope + 1
end
local function second(v) local r = third(v) return r end
local function first(v) local r = second(v) return r end
return function(ctx, args)
  first(ctx:value('w1'))
end

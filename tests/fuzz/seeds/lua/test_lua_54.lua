return function(ctx)
  local s = string.rep('x', 1 << 30)
end

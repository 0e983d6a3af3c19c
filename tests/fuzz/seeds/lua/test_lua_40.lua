return function(ctx)
  local t = nil
  return t[1]
end

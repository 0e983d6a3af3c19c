return function(ctx)
  local t = {}
  for i = 1, 10 * 1024 * 1024 * 1024 // 8 do t[i] = i end
end

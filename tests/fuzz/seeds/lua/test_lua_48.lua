return function(ctx)
  local s = string.rep('x', 1 << 20)
  while true do
    local t = s .. 'y'
  end
end

return function(ctx)
  local s = string.rep('p', 999)
  while true do
    print(s)
  end
end

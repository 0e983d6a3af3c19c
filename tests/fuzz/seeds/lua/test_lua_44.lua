return function(ctx)
  while true do
    pcall(function() while true do end end)
    xpcall(function() while true do end end, function() while true do end end)
  end
end

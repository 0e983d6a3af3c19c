return function(ctx)
  local x = {}
  setmetatable(x, {__gc = function() while true do end end})
end

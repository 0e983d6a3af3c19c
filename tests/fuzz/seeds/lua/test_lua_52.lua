return function(ctx)
  local mt = {}
  local x = setmetatable({}, mt)
  mt.__gc = function() while true do end end
  x = nil
  collectgarbage()
  assert(getmetatable(setmetatable({}, {})) ~= nil)
end

return function(ctx)
  setmetatable({}, {__gc = function() ctx:shard('w1', 1, 'model') end})
  saved = ctx
end

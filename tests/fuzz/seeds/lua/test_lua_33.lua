return function(ctx)
  local ok = ctx:shard('x', 0, 'model')
end

return function(ctx)
  ctx:shard('nope', 0, 'model')
end

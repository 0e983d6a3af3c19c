return function(ctx)
  ctx:shard('w1', 5, 'model')
end

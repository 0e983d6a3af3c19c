return function(ctx)
  ctx:shard('w1', 0, 'nope')
end

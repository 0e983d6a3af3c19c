return function(ctx)
  ctx:shard({}, 0, 'model')
end

return function(ctx)
  ctx.shard(nil, 'w1', 0, 'model')
end

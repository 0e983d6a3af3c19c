return function(ctx)
  local v = ctx:value('w1')
  local fake = {id = v.id, name = 'w1'}
  ctx:shard(fake, 0, 'model')
end

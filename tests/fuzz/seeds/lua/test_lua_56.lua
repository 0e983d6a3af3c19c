return function(ctx)
  assert(not pcall(string.rep, 'x', 1 << 30))
  ctx:shard('w1', 1, 'model')
end

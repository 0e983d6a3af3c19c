return function(ctx, args)
  assert(ctx:replicate('h', 'model', -1))
  local dims, partial, whole = ctx:sharding('h')
  assert(#whole[1] == 0 and whole[2][1] == 'model')
  assert(ctx:shard('w1', 1, 'model'))
  assert(#(ctx:sharding('h'))[2] == 0, 'the replicate stops propagation')
  assert(ctx:shard('w2', 0, 'model'))
  dims, partial = ctx:sharding('out')
  assert(#partial == 1 and partial[1] == 'model', 'out is a partial sum over model')
  local n = 0 for _, a in pairs(partial) do n = n + 1 end
  assert(n == 1)
  dims, partial = ctx:sharding('w2')
  assert(#partial == 0)
end

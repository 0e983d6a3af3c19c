return function(ctx, args)
  assert(ctx:shard('w1', 0, args.axis, 'storage') == true)
  assert((ctx:sharding('w1'))[1][1] == 'model')
  local _, partial = ctx:sharding('h.matmul')
  assert(#partial == 0 and #(ctx:sharding('x'))[2] == 0, 'activations are not split')
end

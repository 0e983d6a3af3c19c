return function(ctx, args)
  local h = ctx:value('h')
  local op = h.producer
  op.results = 5; op.kind = {}; op.operands = 'x'
  assert(tostring(op) == "op gelu -> 'h'", tostring(op))
  print(op)
  h.name = nil; h.id = 'x'; h.producer = 7
  assert(tostring(h) == "value 'h'", tostring(h))
  assert(ctx:factors(op).kind[1] == 'pass')
  local _, partial = ctx:sharding(h)
  assert(getmetatable(partial) == 'carve.partial')
  partial[next(partial)] = 1e9
  assert(#partial == 0)
  ctx:shard(h, 1, args.axis)
end

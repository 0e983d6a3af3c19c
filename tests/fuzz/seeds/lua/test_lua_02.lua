return function(ctx, args)
  local w1 = ctx:value('w1')
  assert(w1.name == 'w1' and w1.kind == 'param' and w1.dtype == 'f32')
  assert(#w1.shape == 2 and w1.shape[1] == 8 and w1.shape[2] == 32)
  assert(w1.producer == nil)
  assert(#w1.users == 2 and w1.users[1].kind == 'matmul' and w1.users[2].results[1].name == 'new.w1', w1.users[2].results[1].name)
  local mm = w1.users[1]
  assert(mm.operands[1] == ctx:value('x') and mm.operands[2] == w1)
  assert(mm.results[1] == ctx:value('h.matmul'))
  assert(ctx:value('h.matmul').producer == mm, 'op tables are cached too')
  assert(ctx:value('grad.w1').kind == 'grad' and ctx:value('adam.v.w2').kind == 'state')
  assert(ctx:value('x').kind == 'input' and ctx:value('h').kind == 'value')
  local seen = {}
  seen[ctx:value('h')] = true
  assert(seen[ctx:value('h')], 'values work as keys')
  local loss = ctx:outputs()[1]
  assert(loss.name == 'loss' and #loss.shape == 0)
  local scale = loss.producer.operands[1].producer
  assert(scale.kind == 'mul')
  local sub = ctx:value('out').users[1]
  assert(sub.kind == 'sub')
  assert(tostring(w1) == "value 'w1'" and tostring(mm) == "op matmul -> 'h.matmul'", tostring(mm))
end

return function(ctx, args)
  local function names(vs) local r = {} for i, v in ipairs(vs) do r[i] = v.name end return table.concat(r, ' ') end
  assert(names(ctx:values('param')) == 'w1 w2 b1', names(ctx:values('param')))
  assert(names(ctx:values('params')) == 'w1 w2 b1')
  assert(names(ctx:values('input')) == 'x y')
  assert(names(ctx:values('param', 'w*')) == 'w1 w2')
  assert(names(ctx:values('grad')) == 'grad.w2 grad.b1 grad.w1', names(ctx:values('grad')))
  assert(names(ctx:values('state', 'adam.m.*')) == 'adam.m.w1 adam.m.w2 adam.m.b1', names(ctx:values('state', 'adam.m.*')))
  assert(names(ctx:values('value', 'h*')) == 'h.matmul h.add h', names(ctx:values('value', 'h*')))
  assert(#ctx:values('param', 'nothing') == 0)
  for _, v in ipairs(ctx:values()) do assert(v.kind ~= 'constant') end
  assert(#ctx:values() == #ctx:values('value'))
  assert(ctx:values('param')[1] == ctx:value('w1'), 'the same table each time')
  assert(ctx:value('nope') == nil)
  local ok, err = pcall(ctx.values, ctx, 'weights')
  assert(not ok and err:find("unknown kind 'weights'"), err)
end

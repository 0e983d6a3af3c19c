return function(ctx)
  local s = 'x'
  for i = 1, 34 do s = s .. s end
  ctx:shard('w1', 1, 'model')
end

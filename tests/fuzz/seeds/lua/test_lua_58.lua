return function(ctx)
  local n = 0
  for i = 1, 4096 do
    local t = {}
    for j = 1, 1024 do t[j] = j end
    n = n + #t
  end
  assert(n == 4096 * 1024)
  ctx:shard('w1', 1, 'model')
end

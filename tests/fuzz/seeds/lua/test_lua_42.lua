return function(ctx) if math.random(1, 2) == 1 then ctx:shard('w1', 1, 'model') else ctx:shard('x', 0, 'model') end end

return function(ctx, args)
  local w = ctx:value('w1')
  if w then
    local ok = ctx:shard(w, 1, args.axis)
  end
end

return function(ctx, args)
  local m = ctx:mark()
  ctx:note('w1', 'tried and taken back')
  ctx:rollback(m)
  ctx:note(ctx:value('w2'), 'left whole: it is small')
  local ok, err = pcall(ctx.note, ctx, 'nope', 'x')
  assert(not ok and err:find("no value named 'nope'"), err)
end

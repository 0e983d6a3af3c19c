return function(ctx)
  while true do
    pcall(ctx.values, ctx)
  end
end

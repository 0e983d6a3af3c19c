return function(ctx)
  pcall(ctx.cost, ctx)
end

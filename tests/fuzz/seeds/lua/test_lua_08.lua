return function(ctx, args)
  local sizes, names = ctx:mesh()
  assert(sizes.batch == 4 and sizes.model == 2 and #names == 2 and names[1] == 'batch' and names[2] == 'model')
  assert(ctx.tactic == 'custom' and ctx.train == 'sgd')
end

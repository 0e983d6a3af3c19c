return function(ctx)
  ctx:rollback({})
end

return function(ctx)
  ctx:replicate('w1', 'model', 2)
end

return function(ctx)
  error('no place', 0)
end

return function(ctx)
  while true do
    ctx:cost()
  end
end

return function(ctx, args)
  ctx:warn('careful')
  ctx:error('bad axis ' .. args.axis, 'axis')
end

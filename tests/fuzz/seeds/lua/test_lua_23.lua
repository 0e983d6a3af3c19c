return function(ctx) pcall(ctx.error, ctx, 'caught') end

return function(ctx, args) assert(ctx.tactic == 'mine' and args.axis == 'model' and args.k == 1) end

return function(ctx) assert(ctx.train == nil) end

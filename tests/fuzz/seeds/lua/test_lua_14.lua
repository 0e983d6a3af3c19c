return function(ctx, args) assert(ctx:shard('w1', 0, args.axis, 'split')) end

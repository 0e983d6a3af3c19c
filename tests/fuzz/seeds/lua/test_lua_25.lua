return function(ctx) error('plain') end

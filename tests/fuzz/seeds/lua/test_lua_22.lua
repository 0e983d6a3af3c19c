return function(ctx) ctx:warn('careful') error('not reached') end

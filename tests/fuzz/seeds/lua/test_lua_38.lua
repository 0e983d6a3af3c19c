return function(ctx) collectgarbage('stop') end

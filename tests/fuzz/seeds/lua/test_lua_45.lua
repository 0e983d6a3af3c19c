return function(ctx) while true do end end

return function(ctx) return string.rep('x', 10 * 1024 * 1024 * 1024) end

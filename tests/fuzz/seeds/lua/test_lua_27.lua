return function(ctx) error(setmetatable({}, {__tostring = function() return 'shown' end})) end

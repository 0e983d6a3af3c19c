-- a script may say anything in its own messages, "internal error" too
return function(ctx, args) ctx:error("internal error: the script says so") end

# A custom Lua tactic (examples/gelu_split.lua, see docs/lua.md "A tactic in five steps")
# after batch parallelism.
version 1
mesh batch = 2, model = 2
use "batch" as bp (axis = batch)
tactic gs = lua "gelu_split.lua" (axis = model)
schedule bp, gs

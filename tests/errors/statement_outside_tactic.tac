# expect: 4:1: error: 'shard' must be inside a 'tactic NAME { ... }' block (or typed in the REPL)
# stage: syntax
mesh batch = 2, model = 2
shard param "wte" dim 0 on model

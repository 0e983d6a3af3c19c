# fused_score.lua on attn_reshape.cir (tests/e2e/errors.sh)
version 1
mesh model = 2
tactic t = lua "fused_score.lua" (axis = model)
schedule t

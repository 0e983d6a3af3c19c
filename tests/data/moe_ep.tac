# Expert parallelism on tests/data/moe_gshard.cir, written by hand: the
# experts' weights split by expert, the groups of tokens on the same axis.
# Equal to one device. The stdlib's experts (tests/data/moe_experts.tac)
# moves the tokens as GShard does; this plan moves more.
version 1
mesh e = 4
tactic experts(axis = e) {
  shard param "w1" dim 0 on axis
  shard param "w2" dim 0 on axis
}
tactic groups(axis = e) {
  shard inputs dim 0 on axis
}
schedule experts, groups

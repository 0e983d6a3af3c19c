# Expert parallelism on tests/data/moe_gshard.cir, written by hand: the
# experts' weights split by expert, the groups of tokens on the same axis.
# Equal to one device; the collectives are not yet GShard's (nine small
# all-to-alls where GShard has a dispatch and a combine each way).
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

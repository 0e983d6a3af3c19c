# the classes of tests/data/shifted_logits.cir split in two
version 1
mesh model = 2
tactic classes(axis = model) {
  shard param "w" dim 1 on axis
}
schedule classes

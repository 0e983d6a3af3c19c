# batch parallelism: every input is split along its first dim (the batch);
# propagation splits the activations, and leaves each parameter gradient a
# partial sum over the axis, reduced once per step.
version 1

tactic batch(axis = batch) {
  shard inputs dim 0 on axis
}

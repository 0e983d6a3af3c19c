# Data parallelism for bench/mlp_step.cir. The stdlib "batch" tactic
# (examples/mlp_bp.tac) splits inputs, and this model has none: its x is a
# parameter, so that dx is computed. Split x by rows instead; propagation
# splits h and y by rows and leaves grad.w1, grad.w2 partial sums over the
# axis, reduced once per step, while grad.x stays local to each rank's rows.
version 1
mesh batch = 2

tactic dp(axis = batch) {
  shard param "x" dim 0 on axis
}

schedule dp

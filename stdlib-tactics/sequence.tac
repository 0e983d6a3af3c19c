# Megatron sequence parallelism, beside megatron on the same axis (schedule
# it after megatron): every input is split along its second dim (the
# sequence), so the residual stream, the norms and the dropout-free
# elementwise ops between the blocks are computed on each device's part of
# the sequence. Each column-parallel GEMM reads its input gathered (an
# all-gather), each row-parallel GEMM's partial sum is reduce-scattered
# back onto the sequence, and the norms' parameter gradients are reduced.
version 1

tactic sequence(axis = model) {
  shard inputs dim 1 on axis
}

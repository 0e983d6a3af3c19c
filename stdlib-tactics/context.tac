# Context parallelism on an axis of its own: every input is split along
# its second dim (the sequence), and the sequence stays split through
# attention. Each device keeps its own queries; the keys and values are
# gathered over the axis before the scores (an all-gather, as Transformer
# Engine's all_gather context parallelism and Llama 3's training do), the
# causal mask masks each device's rows as the whole would, and the
# backward reduce-scatters the keys' and values' gradients back onto the
# sequence. The scores, the softmax and every other activation are split:
# attention's memory falls as 1/n. Attention must run as written (carve
# --no-fuse): the fused attention keeps the sequence whole.
version 1

tactic context(axis = context) {
  shard inputs dim 1 on axis
}

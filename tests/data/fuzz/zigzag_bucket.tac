# fuzz_diff: the model of zigzag_bucket.cir, its gains and rows split over an axis dealt zig-zag
version 1
mesh a = 2
use "context" as cp (axis = a)
tactic t {
  shard param "w1" dim 0 on a
  shard param "w0" dim 0 on a
}
schedule cp, t

# Names a value that fused attention rewrote away ('p', the softmax of the
# scores, now computed inside the attention op that replaced matmul(p, v)):
# tests/e2e/errors.sh checks that the error says where it went.
version 1
mesh model = 2
tactic t {
  shard value "p" dim 1 on model
}
schedule t

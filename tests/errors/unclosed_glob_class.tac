# expect: 4:24: error: unclosed '[' in a glob
# stage: syntax
tactic attn {
  shard param l*.attn.w[qkv dim 1 on model
}

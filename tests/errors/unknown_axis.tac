# expect: 5:28: error: unknown axis 'modle'; the mesh has batch, model
# stage: semantic
mesh batch = 2, model = 2
tactic t {
  shard input "x" dim 0 on modle
}
schedule t

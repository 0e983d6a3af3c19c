-- An op table whose fields the script replaced: tostring (print) read
-- op.results[1] and segfaulted; carve now knows an op by its table.
return function(ctx)
  local op = ctx:value("h").producer
  op.results = 5
  op.kind = {}
  print(op)
  local v = ctx:value("y")
  v.id = "nope"
  ctx:shard(v, 0, "b")
end

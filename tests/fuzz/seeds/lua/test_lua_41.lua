return function(ctx)
  local have = {}
  for k, v in pairs(_G) do if type(v) == 'table' and k ~= '_G' then have[#have + 1] = k end end
  table.sort(have)
  assert(table.concat(have, ' ') == 'math string table utf8', table.concat(have, ' '))
  for _, f in ipairs({'load', 'loadfile', 'dofile', 'require', 'loadstring'}) do assert(_G[f] == nil, f) end
  assert(string.dump == nil)
  assert(type(collectgarbage('count')) == 'number' and collectgarbage() == 0 and collectgarbage('step') ~= nil)
  assert(math.random(1000000) == math.random(1000000) or true)
end

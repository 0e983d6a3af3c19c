return function(ctx, args)
  local m = ctx:value('m').producer
  assert(m.kind == 'mean' and table.concat(m.attrs.dims, ',') == '1' and m.attrs.keepdims == true)
  local sl = ctx:value('s').producer
  assert(sl.kind == 'slice' and sl.attrs.dim == 1 and sl.attrs.start == 2 and sl.attrs['end'] == 5)
  local c = ctx:value('c').producer
  assert(c.kind == 'concat' and c.attrs.dim == 0 and #c.operands == 2)
end

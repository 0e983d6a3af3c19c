return function(ctx, args)
  local r = ctx:value('q').producer
  assert(r.kind == 'transpose' and table.concat(r.attrs.perm, ',') == '0,2,1,3')
  local rs = r.operands[1].producer
  assert(rs.kind == 'reshape' and table.concat(rs.attrs.shape, ',') == '4,16,4,8')
  assert(rs.operands[1].producer.kind == 'matmul')
end

return function(ctx, args)
  local q = ctx:value('l0.q').producer
  assert(q.kind == 'einsum' and q.spec == 'bsd,dhk->bhsk' and q.attrs.spec == 'bsd,dhk->bhsk')
  local p = ctx:value('l0.p').producer
  assert(p.kind == 'softmax' and p.attrs.dim == 3, p.attrs.dim)
  assert(p.operands[1].producer.kind == 'causal_mask')
  local a = ctx:value('l0.a').producer
  assert(a.kind == 'layernorm' and a.attrs.dim == 2 and math.abs(a.attrs.eps - 1e-5) < 1e-12)
  assert(#a.operands == 3 and a.operands[2].name == 'l0.ln1.g')
  local emb = ctx:value('x0').producer.operands[1].producer
  assert(emb.kind == 'embedding' and emb.spec == nil)
  local s = ctx:value('l0.s').producer
  assert(s.kind == 'mul' and s.operands[2].kind == 'constant' and s.operands[2].value == 0.25)
  assert(ctx:value('loss').producer.kind == 'cross_entropy')
  assert(ctx:value('l0.h').producer.kind == 'gelu_tanh')
end

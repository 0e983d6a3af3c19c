return function(ctx, args)
  assert(args.axis == 'model' and args.name == 'a string')
  assert(math.type(args.n) == 'integer' and args.n == 3 and args.neg == -2)
  assert(math.type(args.f) == 'float' and args.f == 2.5)
  assert(math.type(args.mem) == 'integer' and args.mem == 16 * 1024 * 1024 * 1024, args.mem)
  assert(#args.list == 3 and args.list[1] == 1 and args.list[2][1] == 2 and args.list[2][2] == 'x' and args.list[3] == 's')
  assert(args.r.lo == 1 and args.r.hi == 64)
  local n = 0 for _ in pairs(args) do n = n + 1 end
  assert(n == 8, n)
end

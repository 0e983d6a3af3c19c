-- Names a value that fused attention rewrote away ('p' of attn_reshape.cir):
-- tests/e2e/errors.sh checks that ctx:shard's error says where it went.
return function(ctx, args)
  ctx:shard("p", 1, args.axis)
end

#!/bin/sh
# gen_chain.sh N: an N-layer chain (a matmul and a tanh per layer: 2N ops,
# written one line per layer) for timing the passes on long programs.
n=$1
awk -v n="$n" 'BEGIN {
  print "model chain {"
  print "  input x : f32[8, 16]"
  for (i = 0; i < n; i++) printf "  param w%d : f32[16, 16]\n", i
  prev = "x"
  for (i = 0; i < n; i++) { printf "  h%d = tanh(matmul(%s, w%d))\n", i + 1, prev, i; prev = "h" (i + 1) }
  printf "  loss = mean(mul(%s, %s))\n", prev, prev
  print "  return loss"
  print "}"
}'

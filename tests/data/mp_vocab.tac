# Megatron with the tied embedding split by vocabulary on the same axis:
# the logits come out split by class, and cross_entropy is the
# vocabulary-parallel one (no logits gathered)
version 1
mesh model = 2
use "megatron"  as mp  (axis = model)
use "embedding" as emb (axis = model)
schedule mp, emb

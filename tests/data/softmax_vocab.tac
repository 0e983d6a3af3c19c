# the vocabulary split: the logits come out split by class
version 1
mesh model = 2
use "embedding" as emb (axis = model)
schedule emb

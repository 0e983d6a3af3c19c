# The logits kept whole on 'model' beside the vocabulary split: the loss is
# computed whole, its gradient split by class as the tied table's gradient
# wants it (the rows' statistics then come from the whole logits, with no
# collective)
version 1
mesh batch = 2, model = 2
use "batch"     as bp  (axis = batch)
use "megatron"  as mp  (axis = model)
use "embedding" as emb (axis = model)

tactic keep_logits(axis = model) {
  replicate value "logits" on axis
}

schedule bp, mp, keep_logits, emb

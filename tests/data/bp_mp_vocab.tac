# batch + Megatron + the vocabulary split: the loss a partial sum over
# both axes (its rows by batch, its classes by model), reduced once
version 1
mesh batch = 2, model = 2
use "batch"     as bp  (axis = batch)
use "megatron"  as mp  (axis = model)
use "embedding" as emb (axis = model)
schedule bp, mp, emb

# the embedding tactic alone
mesh model = 2
use "embedding" as emb (axis = model)
schedule emb

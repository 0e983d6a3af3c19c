# the vocabulary split over 4 devices
version 1
mesh model = 4
use "embedding" as emb (axis = model)
schedule emb

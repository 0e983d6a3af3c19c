# an axis the mesh does not have
mesh batch = 2
use "zero" as z (axis = nope, stage = 1)
schedule z

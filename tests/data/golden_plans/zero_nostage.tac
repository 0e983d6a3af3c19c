# zero without its stage
mesh batch = 2
use "zero" as z (axis = batch)
schedule z

# a stage zero does not have
mesh batch = 2
use "zero" as z (axis = batch, stage = 4)
schedule z

# a stage that is not a number
mesh batch = 2
use "zero" as z (axis = batch, stage = two)
schedule z

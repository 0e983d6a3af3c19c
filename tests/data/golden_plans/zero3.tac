# ZeRO-3 alone
mesh batch = 2
use "zero" as z3 (axis = batch, stage = 3)
schedule z3

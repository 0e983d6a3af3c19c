# expect: cannot split dim 0 of 'x' (size 8) into 3 pieces on 'batch'
# (the error is in the library's batch.tac; a note names the use line below)
version 1
mesh batch = 3
use "batch" as bp (axis = batch)
schedule bp

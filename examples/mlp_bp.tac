# Batch parallelism for the MLP: x and y split by rows.
version 1
mesh batch = 2
use "batch" as bp (axis = batch)
schedule bp

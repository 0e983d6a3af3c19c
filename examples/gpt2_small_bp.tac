# Batch (data) parallelism: inputs split on their batch dim; each parameter
# gradient is a partial sum over 'batch', all-reduced once per step.
version 1
mesh batch = 4
use "batch" as bp (axis = batch)
schedule bp

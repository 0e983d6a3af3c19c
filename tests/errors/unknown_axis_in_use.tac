# expect: 4:30: error: unknown axis 'batch' given as 'axis'; the mesh has model
# stage: semantic
mesh model = 2
use "batch"    as bp (axis = batch)
schedule bp

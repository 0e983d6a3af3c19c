# expect: 4:5: error: no stdlib tactic 'batchh'
# stage: semantic
mesh b = 2
use "batchh" as bp (axis = b)
schedule bp

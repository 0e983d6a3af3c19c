# expect: 3:5: error: unterminated string: a string must end on the line where it starts
# stage: syntax
use "batch as bp (axis = batch)
schedule bp

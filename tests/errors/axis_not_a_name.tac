# expect: 4:29: error: axis must be an axis name
# stage: semantic
mesh model = 2
use "experts" as ep (axis = 2)
schedule ep

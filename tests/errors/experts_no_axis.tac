# expect: 4:1: error: experts needs an axis: use "experts" as ep (axis = ...)
# stage: semantic
mesh model = 2
use "experts" as ep
schedule ep

# expect: 3:43: error: unexpected ')': there is no open '(' to close
# stage: syntax
use "zero" as z3 (axis = batch, stage = 3))

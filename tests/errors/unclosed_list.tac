# expect: 5:1: error: unexpected end of input, expected ']' to close the list
# stage: syntax
mesh model = 2, batch = 2
tactic found = auto (axes = [[model, batch], [batch

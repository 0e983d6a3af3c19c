# expect: 4:46: error: unclosed '[' opened here: expected ']' to close the list before the end of the input
# stage: syntax
mesh model = 2, batch = 2
tactic found = auto (axes = [[model, batch], [batch

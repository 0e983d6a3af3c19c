# expect: 3:40: error: unexpected 'GiB': write a size without a space, as in 16GiB
# stage: syntax
tactic found = auto (memory_limit = 16 GiB)

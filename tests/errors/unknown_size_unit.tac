# expect: 4:55: error: unknown unit 'GiG'; sizes take B, KB, MB, GB, TB, KiB, MiB, GiB or TiB, durations ms, s, min or h
# stage: syntax
mesh model = 2
tactic found = auto (axes = [model], memory_limit = 16GiG)
schedule found

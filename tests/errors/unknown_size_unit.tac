# expect: 4:55: error: unknown size unit 'GiG'; use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB
# stage: syntax
mesh model = 2
tactic found = auto (axes = [model], memory_limit = 16GiG)
schedule found

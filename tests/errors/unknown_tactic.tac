# expect: 7:14: error: unknown tactic 'mp' in the schedule; define it with 'tactic mp { ... }' or 'use "..." as mp'
# stage: semantic
mesh b = 2
tactic bp {
  shard inputs dim 0 on b
}
schedule bp, mp

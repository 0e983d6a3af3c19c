# every parameter split on its largest divisible dim (the imported programs'
# batches, 33 and 1, do not divide): tests/e2e/import.sh runs the chess model
# and BERT under it on 2 and 4 ranks
version 1
mesh model = 2
tactic split(axis = model) {
  shard params dim largest on axis
}
schedule split

// expect: 1:1: error: no module or function in file; an MLIR file holds 'module { ... }' or func.func
// stage: syntax
// only comments

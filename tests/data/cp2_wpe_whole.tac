# context parallelism over 2 devices with the positions' table kept whole:
# its rows are sliced to each device's two blocks of the sequence (zig-zag)
version 1
mesh cp = 2
use "context" as cp (axis = cp)
tactic keepw {
  replicate param "wpe" on cp
}
schedule keepw, cp

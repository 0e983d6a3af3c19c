# context parallelism over 4 devices
version 1
mesh cp = 4
use "context" as cp (axis = cp)
schedule cp

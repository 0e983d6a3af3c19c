# context parallelism over 2 devices
version 1
mesh cp = 2
use "context" as cp (axis = cp)
schedule cp

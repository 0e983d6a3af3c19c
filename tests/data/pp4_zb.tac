# Pipeline stages: 4, eight microbatches a step, zero-bubble (ZB-H1).
version 1
mesh stage = 4
use "pipeline" as pp (axis = stage, microbatches = 8, order = "zb-h1")
schedule pp

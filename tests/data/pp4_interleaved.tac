# Pipeline stages, interleaved: 4 stages of 2 parts each (half a layer each), eight microbatches.
version 1
mesh stage = 4
use "pipeline" as pp (axis = stage, microbatches = 8, order = "interleaved", chunks = 2,
                      at = ["l0.x", "x1", "l1.x", "x2", "l2.x", "x3", "l3.x"])
schedule pp

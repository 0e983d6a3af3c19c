# Pipeline stages, interleaved: 2 stages of 2 parts each (a layer each), four microbatches.
version 1
mesh stage = 2
use "pipeline" as pp (axis = stage, microbatches = 4, order = "interleaved", at = ["x1", "x2", "x3"])
schedule pp

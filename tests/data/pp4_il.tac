# Pipeline stages, interleaved: 4 stages of 2 parts each (found from the program), eight microbatches.
version 1
mesh stage = 4
use "pipeline" as pp (axis = stage, microbatches = 8, order = "interleaved")
schedule pp

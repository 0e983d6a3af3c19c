// expect: 4:29: error: a mesh axis is written "name"=size with a size of at least 1
// stage: syntax
module @m {
  sdy.mesh @mesh = <["x"=2, "y"=0]>
}

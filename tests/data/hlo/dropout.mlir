// An MLP with dropout as JAX writes it: the PRNG key is an input (ui32[2]),
// threefry2x32 makes the random bits, bitcast_convert the uniform floats,
// and select the mask. tests/e2e/import.sh trains it (SGD on y^2: the loss
// must fall) with the key fed as data.
module @jit_dropout {
  func.func private @threefry2x32(%k0: tensor<ui32>, %k1: tensor<ui32>, %x0: tensor<64xui32>, %x1: tensor<64xui32>) -> (tensor<64xui32>, tensor<64xui32>) {
    %c = stablehlo.constant dense<466688986> : tensor<ui32>
    %k2a = stablehlo.xor %k0, %k1 : tensor<ui32>
    %k2 = stablehlo.xor %k2a, %c : tensor<ui32>
    %bk0 = stablehlo.broadcast_in_dim %k0, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %bk1 = stablehlo.broadcast_in_dim %k1, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %bk2 = stablehlo.broadcast_in_dim %k2, dims = [] : (tensor<ui32>) -> tensor<64xui32>
    %v1 = stablehlo.add %x0, %bk0 : tensor<64xui32>
    %v2 = stablehlo.add %x1, %bk1 : tensor<64xui32>
    %v3 = stablehlo.add %v1, %v2 : tensor<64xui32>
    %v4 = stablehlo.constant dense<13> : tensor<64xui32>
    %v5 = stablehlo.shift_left %v2, %v4 : tensor<64xui32>
    %v6 = stablehlo.constant dense<19> : tensor<64xui32>
    %v7 = stablehlo.shift_right_logical %v2, %v6 : tensor<64xui32>
    %v8 = stablehlo.or %v5, %v7 : tensor<64xui32>
    %v9 = stablehlo.xor %v3, %v8 : tensor<64xui32>
    %v10 = stablehlo.add %v3, %v9 : tensor<64xui32>
    %v11 = stablehlo.constant dense<15> : tensor<64xui32>
    %v12 = stablehlo.shift_left %v9, %v11 : tensor<64xui32>
    %v13 = stablehlo.constant dense<17> : tensor<64xui32>
    %v14 = stablehlo.shift_right_logical %v9, %v13 : tensor<64xui32>
    %v15 = stablehlo.or %v12, %v14 : tensor<64xui32>
    %v16 = stablehlo.xor %v10, %v15 : tensor<64xui32>
    %v17 = stablehlo.add %v10, %v16 : tensor<64xui32>
    %v18 = stablehlo.constant dense<26> : tensor<64xui32>
    %v19 = stablehlo.shift_left %v16, %v18 : tensor<64xui32>
    %v20 = stablehlo.constant dense<6> : tensor<64xui32>
    %v21 = stablehlo.shift_right_logical %v16, %v20 : tensor<64xui32>
    %v22 = stablehlo.or %v19, %v21 : tensor<64xui32>
    %v23 = stablehlo.xor %v17, %v22 : tensor<64xui32>
    %v24 = stablehlo.add %v17, %v23 : tensor<64xui32>
    %v25 = stablehlo.constant dense<6> : tensor<64xui32>
    %v26 = stablehlo.shift_left %v23, %v25 : tensor<64xui32>
    %v27 = stablehlo.constant dense<26> : tensor<64xui32>
    %v28 = stablehlo.shift_right_logical %v23, %v27 : tensor<64xui32>
    %v29 = stablehlo.or %v26, %v28 : tensor<64xui32>
    %v30 = stablehlo.xor %v24, %v29 : tensor<64xui32>
    %v31 = stablehlo.add %v24, %bk1 : tensor<64xui32>
    %v32 = stablehlo.add %v30, %bk2 : tensor<64xui32>
    %v33 = stablehlo.constant dense<1> : tensor<64xui32>
    %v34 = stablehlo.add %v32, %v33 : tensor<64xui32>
    %v35 = stablehlo.add %v31, %v34 : tensor<64xui32>
    %v36 = stablehlo.constant dense<17> : tensor<64xui32>
    %v37 = stablehlo.shift_left %v34, %v36 : tensor<64xui32>
    %v38 = stablehlo.constant dense<15> : tensor<64xui32>
    %v39 = stablehlo.shift_right_logical %v34, %v38 : tensor<64xui32>
    %v40 = stablehlo.or %v37, %v39 : tensor<64xui32>
    %v41 = stablehlo.xor %v35, %v40 : tensor<64xui32>
    %v42 = stablehlo.add %v35, %v41 : tensor<64xui32>
    %v43 = stablehlo.constant dense<29> : tensor<64xui32>
    %v44 = stablehlo.shift_left %v41, %v43 : tensor<64xui32>
    %v45 = stablehlo.constant dense<3> : tensor<64xui32>
    %v46 = stablehlo.shift_right_logical %v41, %v45 : tensor<64xui32>
    %v47 = stablehlo.or %v44, %v46 : tensor<64xui32>
    %v48 = stablehlo.xor %v42, %v47 : tensor<64xui32>
    %v49 = stablehlo.add %v42, %v48 : tensor<64xui32>
    %v50 = stablehlo.constant dense<16> : tensor<64xui32>
    %v51 = stablehlo.shift_left %v48, %v50 : tensor<64xui32>
    %v52 = stablehlo.constant dense<16> : tensor<64xui32>
    %v53 = stablehlo.shift_right_logical %v48, %v52 : tensor<64xui32>
    %v54 = stablehlo.or %v51, %v53 : tensor<64xui32>
    %v55 = stablehlo.xor %v49, %v54 : tensor<64xui32>
    %v56 = stablehlo.add %v49, %v55 : tensor<64xui32>
    %v57 = stablehlo.constant dense<24> : tensor<64xui32>
    %v58 = stablehlo.shift_left %v55, %v57 : tensor<64xui32>
    %v59 = stablehlo.constant dense<8> : tensor<64xui32>
    %v60 = stablehlo.shift_right_logical %v55, %v59 : tensor<64xui32>
    %v61 = stablehlo.or %v58, %v60 : tensor<64xui32>
    %v62 = stablehlo.xor %v56, %v61 : tensor<64xui32>
    %v63 = stablehlo.add %v56, %bk2 : tensor<64xui32>
    %v64 = stablehlo.add %v62, %bk0 : tensor<64xui32>
    %v65 = stablehlo.constant dense<2> : tensor<64xui32>
    %v66 = stablehlo.add %v64, %v65 : tensor<64xui32>
    %v67 = stablehlo.add %v63, %v66 : tensor<64xui32>
    %v68 = stablehlo.constant dense<13> : tensor<64xui32>
    %v69 = stablehlo.shift_left %v66, %v68 : tensor<64xui32>
    %v70 = stablehlo.constant dense<19> : tensor<64xui32>
    %v71 = stablehlo.shift_right_logical %v66, %v70 : tensor<64xui32>
    %v72 = stablehlo.or %v69, %v71 : tensor<64xui32>
    %v73 = stablehlo.xor %v67, %v72 : tensor<64xui32>
    %v74 = stablehlo.add %v67, %v73 : tensor<64xui32>
    %v75 = stablehlo.constant dense<15> : tensor<64xui32>
    %v76 = stablehlo.shift_left %v73, %v75 : tensor<64xui32>
    %v77 = stablehlo.constant dense<17> : tensor<64xui32>
    %v78 = stablehlo.shift_right_logical %v73, %v77 : tensor<64xui32>
    %v79 = stablehlo.or %v76, %v78 : tensor<64xui32>
    %v80 = stablehlo.xor %v74, %v79 : tensor<64xui32>
    %v81 = stablehlo.add %v74, %v80 : tensor<64xui32>
    %v82 = stablehlo.constant dense<26> : tensor<64xui32>
    %v83 = stablehlo.shift_left %v80, %v82 : tensor<64xui32>
    %v84 = stablehlo.constant dense<6> : tensor<64xui32>
    %v85 = stablehlo.shift_right_logical %v80, %v84 : tensor<64xui32>
    %v86 = stablehlo.or %v83, %v85 : tensor<64xui32>
    %v87 = stablehlo.xor %v81, %v86 : tensor<64xui32>
    %v88 = stablehlo.add %v81, %v87 : tensor<64xui32>
    %v89 = stablehlo.constant dense<6> : tensor<64xui32>
    %v90 = stablehlo.shift_left %v87, %v89 : tensor<64xui32>
    %v91 = stablehlo.constant dense<26> : tensor<64xui32>
    %v92 = stablehlo.shift_right_logical %v87, %v91 : tensor<64xui32>
    %v93 = stablehlo.or %v90, %v92 : tensor<64xui32>
    %v94 = stablehlo.xor %v88, %v93 : tensor<64xui32>
    %v95 = stablehlo.add %v88, %bk0 : tensor<64xui32>
    %v96 = stablehlo.add %v94, %bk1 : tensor<64xui32>
    %v97 = stablehlo.constant dense<3> : tensor<64xui32>
    %v98 = stablehlo.add %v96, %v97 : tensor<64xui32>
    %v99 = stablehlo.add %v95, %v98 : tensor<64xui32>
    %v100 = stablehlo.constant dense<17> : tensor<64xui32>
    %v101 = stablehlo.shift_left %v98, %v100 : tensor<64xui32>
    %v102 = stablehlo.constant dense<15> : tensor<64xui32>
    %v103 = stablehlo.shift_right_logical %v98, %v102 : tensor<64xui32>
    %v104 = stablehlo.or %v101, %v103 : tensor<64xui32>
    %v105 = stablehlo.xor %v99, %v104 : tensor<64xui32>
    %v106 = stablehlo.add %v99, %v105 : tensor<64xui32>
    %v107 = stablehlo.constant dense<29> : tensor<64xui32>
    %v108 = stablehlo.shift_left %v105, %v107 : tensor<64xui32>
    %v109 = stablehlo.constant dense<3> : tensor<64xui32>
    %v110 = stablehlo.shift_right_logical %v105, %v109 : tensor<64xui32>
    %v111 = stablehlo.or %v108, %v110 : tensor<64xui32>
    %v112 = stablehlo.xor %v106, %v111 : tensor<64xui32>
    %v113 = stablehlo.add %v106, %v112 : tensor<64xui32>
    %v114 = stablehlo.constant dense<16> : tensor<64xui32>
    %v115 = stablehlo.shift_left %v112, %v114 : tensor<64xui32>
    %v116 = stablehlo.constant dense<16> : tensor<64xui32>
    %v117 = stablehlo.shift_right_logical %v112, %v116 : tensor<64xui32>
    %v118 = stablehlo.or %v115, %v117 : tensor<64xui32>
    %v119 = stablehlo.xor %v113, %v118 : tensor<64xui32>
    %v120 = stablehlo.add %v113, %v119 : tensor<64xui32>
    %v121 = stablehlo.constant dense<24> : tensor<64xui32>
    %v122 = stablehlo.shift_left %v119, %v121 : tensor<64xui32>
    %v123 = stablehlo.constant dense<8> : tensor<64xui32>
    %v124 = stablehlo.shift_right_logical %v119, %v123 : tensor<64xui32>
    %v125 = stablehlo.or %v122, %v124 : tensor<64xui32>
    %v126 = stablehlo.xor %v120, %v125 : tensor<64xui32>
    %v127 = stablehlo.add %v120, %bk1 : tensor<64xui32>
    %v128 = stablehlo.add %v126, %bk2 : tensor<64xui32>
    %v129 = stablehlo.constant dense<4> : tensor<64xui32>
    %v130 = stablehlo.add %v128, %v129 : tensor<64xui32>
    %v131 = stablehlo.add %v127, %v130 : tensor<64xui32>
    %v132 = stablehlo.constant dense<13> : tensor<64xui32>
    %v133 = stablehlo.shift_left %v130, %v132 : tensor<64xui32>
    %v134 = stablehlo.constant dense<19> : tensor<64xui32>
    %v135 = stablehlo.shift_right_logical %v130, %v134 : tensor<64xui32>
    %v136 = stablehlo.or %v133, %v135 : tensor<64xui32>
    %v137 = stablehlo.xor %v131, %v136 : tensor<64xui32>
    %v138 = stablehlo.add %v131, %v137 : tensor<64xui32>
    %v139 = stablehlo.constant dense<15> : tensor<64xui32>
    %v140 = stablehlo.shift_left %v137, %v139 : tensor<64xui32>
    %v141 = stablehlo.constant dense<17> : tensor<64xui32>
    %v142 = stablehlo.shift_right_logical %v137, %v141 : tensor<64xui32>
    %v143 = stablehlo.or %v140, %v142 : tensor<64xui32>
    %v144 = stablehlo.xor %v138, %v143 : tensor<64xui32>
    %v145 = stablehlo.add %v138, %v144 : tensor<64xui32>
    %v146 = stablehlo.constant dense<26> : tensor<64xui32>
    %v147 = stablehlo.shift_left %v144, %v146 : tensor<64xui32>
    %v148 = stablehlo.constant dense<6> : tensor<64xui32>
    %v149 = stablehlo.shift_right_logical %v144, %v148 : tensor<64xui32>
    %v150 = stablehlo.or %v147, %v149 : tensor<64xui32>
    %v151 = stablehlo.xor %v145, %v150 : tensor<64xui32>
    %v152 = stablehlo.add %v145, %v151 : tensor<64xui32>
    %v153 = stablehlo.constant dense<6> : tensor<64xui32>
    %v154 = stablehlo.shift_left %v151, %v153 : tensor<64xui32>
    %v155 = stablehlo.constant dense<26> : tensor<64xui32>
    %v156 = stablehlo.shift_right_logical %v151, %v155 : tensor<64xui32>
    %v157 = stablehlo.or %v154, %v156 : tensor<64xui32>
    %v158 = stablehlo.xor %v152, %v157 : tensor<64xui32>
    %v159 = stablehlo.add %v152, %bk2 : tensor<64xui32>
    %v160 = stablehlo.add %v158, %bk0 : tensor<64xui32>
    %v161 = stablehlo.constant dense<5> : tensor<64xui32>
    %v162 = stablehlo.add %v160, %v161 : tensor<64xui32>
    return %v159, %v162 : tensor<64xui32>, tensor<64xui32>
  }
  func.func public @main(%w1: tensor<16x32xf32> {jax.arg_info = "params['w1']"}, %w2: tensor<32x4xf32> {jax.arg_info = "params['w2']"},
                         %x: tensor<8x16xf32> {jax.arg_info = "x"}, %key: tensor<2xui32> {jax.arg_info = "rng"}) -> (tensor<f32> {jax.result_info = "loss"}) {
    %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %t = stablehlo.tanh %h : tensor<8x32xf32>
    %ka = stablehlo.slice %key [0:1] : (tensor<2xui32>) -> tensor<1xui32>
    %kb = stablehlo.slice %key [1:2] : (tensor<2xui32>) -> tensor<1xui32>
    %ka0 = stablehlo.reshape %ka : (tensor<1xui32>) -> tensor<ui32>
    %kb0 = stablehlo.reshape %kb : (tensor<1xui32>) -> tensor<ui32>
    %io = stablehlo.iota dim = 0 : tensor<128xui32>
    %h0 = stablehlo.slice %io [0:64] : (tensor<128xui32>) -> tensor<64xui32>
    %h1 = stablehlo.slice %io [64:128] : (tensor<128xui32>) -> tensor<64xui32>
    %r:2 = call @threefry2x32(%ka0, %kb0, %h0, %h1) : (tensor<ui32>, tensor<ui32>, tensor<64xui32>, tensor<64xui32>) -> (tensor<64xui32>, tensor<64xui32>)
    %bits = stablehlo.concatenate %r#0, %r#1, dim = 0 : (tensor<64xui32>, tensor<64xui32>) -> tensor<128xui32>
    %c9 = stablehlo.constant dense<9> : tensor<128xui32>
    %sh = stablehlo.shift_right_logical %bits, %c9 : tensor<128xui32>
    %one = stablehlo.constant dense<1065353216> : tensor<128xui32>
    %m = stablehlo.or %sh, %one : tensor<128xui32>
    %f = stablehlo.bitcast_convert %m : (tensor<128xui32>) -> tensor<128xf32>
    %c1 = stablehlo.constant dense<1.000000e+00> : tensor<128xf32>
    %u = stablehlo.subtract %f, %c1 : tensor<128xf32>
    %u2 = stablehlo.reshape %u : (tensor<128xf32>) -> tensor<8x16xf32>
    %u3 = stablehlo.concatenate %u2, %u2, dim = 1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x32xf32>
    %p = stablehlo.constant dense<9.000000e-01> : tensor<8x32xf32>
    %keep = stablehlo.compare  LT, %u3, %p,  FLOAT : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xi1>
    %ts = stablehlo.divide %t, %p : tensor<8x32xf32>
    %z = stablehlo.constant dense<0.000000e+00> : tensor<8x32xf32>
    %d = stablehlo.select %keep, %ts, %z : tensor<8x32xi1>, tensor<8x32xf32>
    %y = stablehlo.dot_general %d, %w2, contracting_dims = [1] x [0] : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
    %y2 = stablehlo.multiply %y, %y : tensor<8x4xf32>
    %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %s = stablehlo.reduce(%y2 init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<f32>
    return %s : tensor<f32>
  }
}

# Google Cloud TPU v4 (one chip, two TensorCores).
# Sources: Cloud TPU v4 documentation (cloud.google.com/tpu/docs/v4): peak
# 275 TFLOPS per chip (bf16), 32 GiB HBM2 at 1,200 GB/s, 3D mesh/torus
# interconnect, all-reduce bandwidth 1.1 PB/s per pod of 4,096 chips (about
# 270 GB/s a chip).
# carve's assumptions: f32 GEMMs at full precision take 6 bf16 passes
# (f32 = 275/6); an axis on the torus rings over two links (ici, 100 GB/s one
# way); between slices the data-center network gives about 12.5 GB/s a chip
# (dcn); 4 chips a host share a node; GEMM efficiency, launch cost and
# latencies as for GPUs until calibrated.
device     "Google TPU v4"
memory     32GiB
bandwidth  1200e9
flops      f32 = 45.8e12  bf16 = 275e12  f16 = 275e12
gemm       1e6  0.02
gemm       1e8  0.25
gemm       1e9  0.55
gemm       1e10 0.75
gemm       1e11 0.85
gemm       1e12 0.90
launch     1us
node       4096
link       ici  bandwidth = 100e9  latency = 2us
link       dcn  bandwidth = 12.5e9 latency = 20us

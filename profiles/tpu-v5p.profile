# Google Cloud TPU v5p (one chip).
# Sources: Cloud TPU v5p documentation (cloud.google.com/tpu/docs/v5p):
# peak 459 TFLOPS per chip (bf16), 95 GB HBM2e at 2,765 GB/s, inter-chip
# interconnect 1,200 GB/s per chip (both directions, 3D torus), data-center
# network 50 Gb/s per chip.
# carve's assumptions: f32 GEMMs at full precision take 6 bf16 passes
# (f32 = 459/6); the ICI's 1,200 GB/s over six links is 100 GB/s each way a
# link and an axis rings over two (ici, 200 GB/s); dcn 6.25 GB/s a chip;
# GEMM efficiency, launch cost and latencies as for GPUs until calibrated.
device     "Google TPU v5p"
memory     95GB
bandwidth  2765e9
flops      f32 = 76.5e12  bf16 = 459e12  f16 = 459e12
gemm       1e6  0.02
gemm       1e8  0.25
gemm       1e9  0.55
gemm       1e10 0.75
gemm       1e11 0.85
gemm       1e12 0.90
launch     1us
node       8960
link       ici  bandwidth = 200e9  latency = 2us
link       dcn  bandwidth = 6.25e9 latency = 20us

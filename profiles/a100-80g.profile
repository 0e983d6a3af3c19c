# NVIDIA A100 SXM4 80GB.
# Sources: NVIDIA A100 Tensor Core GPU datasheet (2021): FP32 19.5 TFLOPS,
# TF32 156 TFLOPS, BF16 and FP16 312 TFLOPS (dense), 80 GB HBM2e at
# 2,039 GB/s, NVLink 600 GB/s (300 GB/s each way). Between nodes: one
# 200 Gb/s HDR InfiniBand adapter a GPU in a DGX A100 (25 GB/s each way).
# carve's assumptions (calibrate to replace them): GEMM efficiency by size,
# launch cost, latencies.
device     "NVIDIA A100 SXM4 80GB"
memory     80GB
bandwidth  2039e9
flops      f32 = 19.5e12  tf32 = 156e12  bf16 = 312e12  f16 = 312e12
gemm       1e6  0.02
gemm       1e8  0.25
gemm       1e9  0.55
gemm       1e10 0.70
gemm       1e11 0.80
gemm       1e12 0.85
launch     5us
node       8
link       intra  bandwidth = 300e9  latency = 5us     # NVLink 3 (NVSwitch), one way
link       inter  bandwidth = 25e9   latency = 10us    # HDR InfiniBand, 200 Gb/s a GPU

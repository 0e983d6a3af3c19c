# NVIDIA H100 SXM5 80GB.
# Sources: NVIDIA H100 Tensor Core GPU datasheet (2023): FP32 67 TFLOPS,
# TF32 989 TFLOPS and BF16/FP16 1,979 TFLOPS with sparsity, so 494.7 and
# 989.4 TFLOPS dense; 80 GB HBM3 at 3.35 TB/s; NVLink 900 GB/s (450 GB/s each
# way). Between nodes: a DGX H100 has eight 400 Gb/s NDR InfiniBand ports,
# one a GPU (50 GB/s each way).
# carve's assumptions (calibrate to replace them): GEMM efficiency by size,
# launch cost, latencies.
device     "NVIDIA H100 SXM5 80GB"
memory     80GB
bandwidth  3.35e12
flops      f32 = 67e12  tf32 = 494.7e12  bf16 = 989.4e12  f16 = 989.4e12
gemm       1e6  0.02
gemm       1e8  0.25
gemm       1e9  0.55
gemm       1e10 0.70
gemm       1e11 0.80
gemm       1e12 0.85
launch     5us
node       8
link       intra  bandwidth = 450e9  latency = 3us     # NVLink 4 (NVSwitch), one way
link       inter  bandwidth = 50e9   latency = 10us    # NDR InfiniBand, 400 Gb/s a GPU

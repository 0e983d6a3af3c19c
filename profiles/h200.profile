# NVIDIA H200 SXM 141GB.
# Sources: NVIDIA H200 Tensor Core GPU datasheet (2024): the compute of the
# H100 SXM (FP32 67 TFLOPS; TF32 494.7, BF16/FP16 989.4 TFLOPS dense),
# 141 GB HBM3e at 4.8 TB/s, NVLink 900 GB/s (450 GB/s each way). Between
# nodes: one 400 Gb/s NDR InfiniBand port a GPU in HGX H200 systems.
# carve's assumptions (calibrate to replace them): GEMM efficiency by size,
# launch cost, latencies.
device     "NVIDIA H200 SXM 141GB"
memory     141GB
bandwidth  4.8e12
flops      f32 = 67e12  tf32 = 494.7e12  bf16 = 989.4e12  f16 = 989.4e12
gemm       1e6  0.02
gemm       1e8  0.25
gemm       1e9  0.55
gemm       1e10 0.70
gemm       1e11 0.80
gemm       1e12 0.85
launch     5us
node       8
link       intra  bandwidth = 450e9  latency = 3us     # NVLink 4, one way
link       inter  bandwidth = 50e9   latency = 10us    # NDR InfiniBand, 400 Gb/s a GPU

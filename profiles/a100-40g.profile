# NVIDIA A100 SXM4 40GB.
# Sources: NVIDIA A100 Tensor Core GPU datasheet (2021): FP32 19.5 TFLOPS,
# TF32 156 TFLOPS, BF16 and FP16 312 TFLOPS (dense), 40 GB HBM2 at 1,555 GB/s,
# NVLink 600 GB/s (both directions together: 300 GB/s each way). Between
# nodes: a DGX A100 has eight 200 Gb/s HDR InfiniBand adapters, one a GPU
# (25 GB/s each way).
# Not from the datasheet (carve's assumptions, to be replaced by a
# calibration on the machine): the GEMM efficiency by size, the fixed cost
# of launching an instruction, the links' latencies.
device     "NVIDIA A100 SXM4 40GB"
memory     40GB
bandwidth  1555e9
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

#!/usr/bin/env bash
# bench/gpu_bench.sh CARVE: GPT-2 small (examples/gpt2.cir, 124M parameters,
# 8 x 1024 tokens) Adam step time and peak GPU memory, carve --device-kind
# cuda against eager PyTorch float32 on the same GPU (TF32 off in both).
# Needs a GPU and python3 with torch; prints a table.
set -u
carve=${1:?usage: bench/gpu_bench.sh CARVE}
src=$(cd "$(dirname "$0")/.." && pwd)
steps=${STEPS:-6}
c=$("$carve" run "$src/examples/gpt2.cir" --train 'adam(lr = 1e-4)' --steps "$steps" --json --device-kind cuda) || { echo "carve failed"; exit 1; }
t=$(python3 "$src/bench/torch_gpt.py" --device cuda --steps "$steps") || { echo "torch failed"; exit 1; }
c32=$("$carve" run "$src/examples/gpt2.cir" --train 'adam(lr = 1e-4)' --steps "$steps" --json --device-kind cuda --tf32) || { echo "carve --tf32 failed"; exit 1; }
t32=$(python3 "$src/bench/torch_gpt.py" --device cuda --steps "$steps" --tf32) || { echo "torch --tf32 failed"; exit 1; }
python3 - "$c" "$t" "$c32" "$t32" <<'PY'
import json, sys, datetime
c, t, c32, t32 = (json.loads(x) for x in sys.argv[1:5])
print("GPT-2 small Adam step, 8 x 1024 tokens, fp32 (TF32 off), %s, %s, torch %s" % (t["device"], datetime.date.today(), t["torch"]))
print("%-22s %12s %14s" % ("", "step (ms)", "peak (GiB)"))
print("%-22s %12.1f %14.2f" % ("carve --device-kind cuda", 1e3 * c["step_time"], c["peak_memory"] / 2**30))
print("%-22s %12.1f %14.2f" % ("PyTorch eager", 1e3 * t["step_time"], t["peak_memory"] / 2**30))
print("ratio carve / PyTorch: time %.3f, memory %.3f" % (c["step_time"] / t["step_time"], c["peak_memory"] / t["peak_memory"]))
print("%-22s %12.1f %14.2f" % ("carve --tf32", 1e3 * c32["step_time"], c32["peak_memory"] / 2**30))
print("%-22s %12.1f %14.2f" % ("PyTorch eager, TF32", 1e3 * t32["step_time"], t32["peak_memory"] / 2**30))
print("ratio with TF32: time %.3f" % (c32["step_time"] / t32["step_time"]))
print("first losses: carve %s, torch %s (different random data and init: same scale expected)" %
      (["%.3f" % x for x in c["losses"][:3]], ["%.3f" % x for x in t["losses"][:3]]))
PY

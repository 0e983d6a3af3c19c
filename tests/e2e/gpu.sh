#!/usr/bin/env bash
# carve run --device-kind cuda: the small GPT trained on the GPU equals the
# CPU run; partitioned over ranks that share the GPU it equals one device
# (--check); profiles and errors work there. Skipped (exit 77, with the
# reason) on machines without a usable GPU.
set -u
ex="$SRCDIR/examples"
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$CARVE" run "$ex/mlp_small.cir" --steps 1 --device-kind cuda > "$tmp/probe" 2>&1; then
  echo "SKIP: no GPU here: $(head -1 "$tmp/probe")"
  exit 77
fi
rel() { python3 -c "
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
print(max(abs(x - y) / abs(y) for x, y in zip(a['losses'], b['losses'])))" "$1" "$2"; }
under() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)" "$1" "$2"; }

# 1. one device: GPU against CPU, five Adam steps of the small GPT
"$CARVE" run "$ex/gpt2_small.cir" --train 'adam(lr = 1e-3)' --steps 5 --json > "$tmp/cpu.json" &&
"$CARVE" run "$ex/gpt2_small.cir" --train 'adam(lr = 1e-3)' --steps 5 --json --device-kind cuda > "$tmp/gpu.json" || bad "gpt2_small on cuda did not run"
e=$(rel "$tmp/gpu.json" "$tmp/cpu.json" 2>/dev/null)
echo "gpt2_small, 5 Adam steps: largest loss relative error, cuda vs cpu: $e"
under "${e:-1}" 1e-5 && ok || bad "cuda losses differ from the CPU's: $e"
# an SGD step and a forward program too
"$CARVE" run "$ex/mlp_small.cir" --train 'sgd(lr = 0.1, momentum = 0.9)' --steps 4 --json > "$tmp/c2.json" &&
"$CARVE" run "$ex/mlp_small.cir" --train 'sgd(lr = 0.1, momentum = 0.9)' --steps 4 --json --device-kind cuda > "$tmp/g2.json" &&
under "$(rel "$tmp/g2.json" "$tmp/c2.json")" 1e-5 && ok || bad "mlp_small sgd on cuda"
"$CARVE" run "$ex/gpt2_small.cir" --steps 1 --json > "$tmp/c3.json" && "$CARVE" run "$ex/gpt2_small.cir" --steps 1 --json --device-kind cuda > "$tmp/g3.json" &&
under "$(rel "$tmp/g3.json" "$tmp/c3.json")" 1e-5 && ok || bad "forward gpt2_small on cuda"
# 2. ranks sharing the GPU, collectives through host memory, checked against one device (the GPU)
run_mpi() { mpirun --allow-run-as-root --oversubscribe -n "$@"; }
# (the embedding split with the logits kept whole: the vocabulary-parallel
# loss of gpt2_small.tac has no CUDA kernel yet, refused below)
for spec in "4 gpt2_small_bp_mp.tac" "2 gpt2_small_mp.tac --mesh model=2" "4 ../tests/data/keep_logits.tac"; do
  set -- $spec
  n=$1; shift
  out=$(run_mpi "$n" "$CARVE" run "$ex/gpt2_small.cir" "$ex/$@" --train 'adam(lr = 1e-3)' --steps 3 --check --json --device-kind cuda 2>"$tmp/err")
  e=$(python3 -c "import json, sys; print(json.loads(sys.argv[1])['max_rel_error'])" "$out" 2>/dev/null)
  echo "$n ranks on one GPU, $*: max_rel_error against one device $e"
  under "${e:-1}" 1e-5 && ok || bad "$n ranks sharing the GPU ($*): $out $(head -3 "$tmp/err")"
done
run_mpi 4 "$CARVE" run "$ex/gpt2_small.cir" "$ex/gpt2_small.tac" --train 'adam(lr = 1e-3)' --steps 1 --device-kind cuda > "$tmp/o" 2> "$tmp/e"
[ $? -ne 0 ] && grep -q "classes split between devices .* has no CUDA kernel yet" "$tmp/e" && ok ||
  bad "the vocabulary-parallel loss on cuda is not refused: $(head -3 "$tmp/e")"
# 3. profile and a device-side error
"$CARVE" run "$ex/gpt2_small.cir" --train 'adam(lr = 1e-3)' --steps 2 --profile --device-kind cuda > "$tmp/prof" 2>&1 &&
grep -q "^  gemm " "$tmp/prof" && ok || bad "--profile on cuda: $(head -5 "$tmp/prof")"
printf 'model m {\n input ids : i32[4]\n param t : f32[8, 2]\n loss = sum(embedding(t, ids))\n return loss\n}\n' > "$tmp/ids.cir"
python3 - "$tmp/ids.safetensors" <<'PY'
import json, struct, sys
data = struct.pack("<4i", 1, 2, 9, 3)
h = json.dumps({"ids": {"dtype": "I32", "shape": [4], "data_offsets": [0, len(data)]}}).encode()
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h + data)
PY
"$CARVE" run "$tmp/ids.cir" --steps 1 --data "$tmp/ids.safetensors" --device-kind cuda > "$tmp/o" 2> "$tmp/e"
[ $? -eq 1 ] && grep -q "id 9" "$tmp/e" && ok || bad "an id out of range on the GPU: $(cat "$tmp/e")"
echo "gpu: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

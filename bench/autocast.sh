# bench/autocast.sh: section 10 of `make bench`, sourced by bench/run.sh
# (it uses out, outf, progress, calc, verdict, first_error, $CARVE, $SRCDIR,
# $LOG and $TORCH_PY from there).
#   carve's mixed precision (precision = bf16: every op in bf16, f32 master
#   weights) against PyTorch's autocast to bf16 on the CPU, on the same GPT
#   (bench/autocast.py writes the parameters and the batch for both), each
#   beside its own f32 training. Target: carve's bf16 losses within 2^-7
#   (bf16's rounding, twice) of torch's, relative, over 8 Adam steps.

AC_TARGET=0.0078125

# ac_row NAME MODEL [SIZES...]: the four trajectories and how far apart they are
ac_row() {
	name=$1 model=$2
	shift 2
	progress "mixed precision against torch.autocast: $name"
	if ! timeout 1200 "$TORCH_PY" "$SRCDIR/bench/autocast.py" "$CARVE" "$model" "$LOG/ac.$name" --steps 8 "$@" \
		> "$LOG/ac.$name.json" 2> "$LOG/ac.$name.err"; then
		outf '   %-12s not measured: %s\n' "$name" "$(first_error "$LOG/ac.$name.err")"
		return
	fi
	set -- $(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
def far(a, b): return max(abs(x - y) / abs(y) for x, y in zip(j[a], j[b]))
print("%.2e %.2e %.2e %.2e %.4f %.4f" % (far("carve_f32", "torch_f32"), far("carve_bf16", "torch_bf16"),
      far("carve_bf16", "carve_f32"), far("torch_bf16", "torch_f32"), j["carve_bf16"][-1], j["torch_bf16"][-1]))' "$LOG/ac.$name.json")
	outf '   %-12s %10s %10s %4s %12s %12s %9s %9s\n' "$name" "$1" "$2" "$(verdict "$2" $AC_TARGET)" "$3" "$4" "$5" "$6"
}

out "10. Mixed precision against PyTorch autocast (CPU)"
out "   The GPT of examples/ trained 8 Adam steps from the same parameters and batch: carve with"
out "   precision = bf16 against torch.autocast(\"cpu\", bfloat16), each beside its own f32 run. Columns:"
out "   the largest relative loss difference, f32 carve/torch, bf16 carve/torch (target <= $AC_TARGET), and"
out "   each framework's bf16 against its own f32; the last bf16 losses."
out ""
if [ -n "$TORCH_PY" ]; then
	outf '   %-12s %10s %10s %4s %12s %12s %9s %9s\n' "model" "f32" "bf16" "" "carve bf16/f32" "torch bf16/f32" "carve" "torch"
	ac_row gpt2_small "$SRCDIR/examples/gpt2_small.cir"
	bash "$SRCDIR/bench/gen_gpt.sh" gpt_4x256 4 4 256 64 4096 128 4 1024 "autocast bench: 4 layers, d 256" 0.125 > "$LOG/ac.gpt_4x256.cir"
	ac_row gpt_4x256 "$LOG/ac.gpt_4x256.cir" --layers 4 --heads 4 --d 256 --head-dim 64 --ffn 1024 --vocab 4096 --seq 128 --batch 4
else
	out "   skipped (python3-torch is not installed; it is never a dependency of the build or the tests)"
fi
out ""

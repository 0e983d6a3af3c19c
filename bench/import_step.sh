# bench/import_step.sh: section 9 of `make bench`, sourced by bench/run.sh
# (it uses out, outf, progress, calc, verdict, json_num, first_error,
# $CARVE, $SRCDIR and $LOG from there).
#   Imported programs against the model files they came from: each model's
#   Adam step exported (carve export --train) and imported back, and GPT-2
#   small written as JAX prints it (tests/hlo/jax_gpt.py), run on this
#   machine beside the model file (2 BLAS threads, the two back to back),
#   simulated on h100-sxm, and applied under every plan of examples/ for
#   its collectives. Targets: measured step within 1.10x and memory within
#   1.05x of the model file's, simulated within 5 %, the same collectives.

IMP_TARGET_T=1.10 IMP_TARGET_M=1.05
EX=$SRCDIR/examples

# imp_measure TAG PROGRAM STEPS [--train T]: median step (s) and max RSS (KiB) into $LOG/imp.TAG.*
imp_measure() {
	tag=$1 prog=$2 steps=$3
	shift 3
	if [ -x /usr/bin/time ]; then
		OPENBLAS_NUM_THREADS=2 timeout 900 /usr/bin/time -f '%M' -o "$LOG/imp.$tag.rss" "$CARVE" run "$prog" "$@" \
			--steps "$steps" --json > "$LOG/imp.$tag.json" 2> "$LOG/imp.$tag.err"
	else
		OPENBLAS_NUM_THREADS=2 timeout 900 "$CARVE" run "$prog" "$@" --steps "$steps" --json \
			> "$LOG/imp.$tag.json" 2> "$LOG/imp.$tag.err"
	fi
}
imp_rss() { tail -n 1 "$LOG/imp.$1.rss" 2>/dev/null | grep -E '^[0-9]+$'; }

# imp_sim PROGRAM [--train T]: "seconds bytes" of carve simulate on h100-sxm
imp_sim() {
	"$CARVE" simulate "$@" --device h100-sxm --json 2>/dev/null |
		python3 -c 'import json, sys; j = json.load(sys.stdin); print(j["time"]["total"], j["memory"]["peak"])' 2>/dev/null
}

# imp_coll PROGRAM TACTICS [--train T]: "count bytes" of the collectives carve apply plans
imp_coll() {
	"$CARVE" apply "$@" --json 2>/dev/null |
		python3 -c 'import json, sys; c = json.load(sys.stdin)["collectives"]; print(len(c), sum(x["bytes"] for x in c))' 2>/dev/null
}

# imp_row NAME NATIVE TRAIN IMPORTED STEPS [ITRAIN]: ITRAIN, the imported program's --train when it
# is a forward program (an exported step has its update inside)
imp_row() {
	name=$1 native=$2 tr=$3 imported=$4 steps=$5 itr=${6:-}
	progress "imported against native: $name, $steps steps each"
	imp_measure "$name.native" "$native" "$steps" --train "$tr"
	if [ -n "$itr" ]; then imp_measure "$name.imported" "$imported" "$steps" --train "$itr"
	else imp_measure "$name.imported" "$imported" "$steps"; fi
	n_s=$(json_num step_time < "$LOG/imp.$name.native.json") i_s=$(json_num step_time < "$LOG/imp.$name.imported.json")
	n_r=$(imp_rss "$name.native") i_r=$(imp_rss "$name.imported")
	if [ -z "$n_s" ] || [ -z "$i_s" ]; then
		outf '   %-16s not measured: %s\n' "$name" "$(first_error "$LOG/imp.$name.$( [ -z "$n_s" ] && echo native || echo imported).err")"
		return
	fi
	t_r=$(calc '%.3f' "$i_s / $n_s")
	m_r=$( [ -n "$n_r" ] && [ -n "$i_r" ] && calc '%.3f' "$i_r / $n_r" || echo "")
	if [ -n "$itr" ]; then set -- $(imp_sim "$native" --train "$tr") $(imp_sim "$imported" --train "$itr")
	else set -- $(imp_sim "$native" --train "$tr") $(imp_sim "$imported"); fi
	s_r=$( [ $# -eq 4 ] && calc '%.3f' "$3 / $1" || echo "-")
	m_s=$( [ $# -eq 4 ] && calc '%.3f' "$4 / $2" || echo "-")
	outf '   %-16s %8.3f s %8.3f s %6s %4s %8s %8s %6s %4s %7s %7s\n' "$name" "$n_s" "$i_s" "$t_r" "$(verdict "$t_r" $IMP_TARGET_T)" \
		"$( [ -n "$n_r" ] && calc '%.2fG' "$n_r / 1048576" || echo -)" "$( [ -n "$i_r" ] && calc '%.2fG' "$i_r / 1048576" || echo -)" \
		"${m_r:--}" "$( [ -n "$m_r" ] && verdict "$m_r" $IMP_TARGET_M || echo -)" "$s_r" "$m_s"
}

# imp_plans NAME NATIVE TRAIN IMPORTED PLANS...: the collectives under each plan
imp_plans() {
	name=$1 native=$2 tr=$3 imported=$4
	shift 4
	same=0 all=0 diff=""
	for t in "$@"; do
		a=$(imp_coll "$native" "$EX/$t" --train "$tr")
		b=$(imp_coll "$imported" "$EX/$t")
		all=$((all + 1))
		if [ -n "$a" ] && [ "$a" = "$b" ]; then same=$((same + 1)); else diff="$diff $t ($a vs $b)"; fi
	done
	outf '   %-16s the same collectives under %d of %d plans%s\n' "$name" "$same" "$all" "${diff:+; differ:$diff}"
}

out "9. Imported programs against their model files"
out "   Each model's Adam step exported (carve export --train 'adam(..)') and imported back, and GPT-2 small"
out "   written as JAX prints it (tests/hlo/jax_gpt.py, flax layer norms, gelu, integer-label cross-entropy;"
out "   its forward program, trained by --train like the model file), run back to back with the model file on"
out "   this machine (2 BLAS threads, median step after the first; max RSS by /usr/bin/time), and simulated"
out "   on h100-sxm (ratios imported / native). Targets: step <= ${IMP_TARGET_T}x, memory <= ${IMP_TARGET_M}x."
out ""
outf '   %-16s %10s %10s %6s %4s %8s %8s %6s %4s %7s %7s\n' "program" "native" "imported" "ratio" "" "RSS" "imported" "ratio" "" "sim t" "sim mem"
progress "exporting the steps"
"$CARVE" export "$EX/mlp.cir" --train 'adam(lr = 1e-4)' -o "$LOG/imp.mlp.mlir" --quiet > "$LOG/imp.export.err" 2>&1
"$CARVE" export "$EX/gpt2_small.cir" --train 'adam(lr = 1e-3)' -o "$LOG/imp.gpt2_small.mlir" --quiet >> "$LOG/imp.export.err" 2>&1
"$CARVE" export "$EX/gpt2.cir" --train 'adam(lr = 1e-4)' -o "$LOG/imp.gpt2.mlir" --quiet >> "$LOG/imp.export.err" 2>&1
python3 "$SRCDIR/tests/hlo/jax_gpt.py" --layers 12 --dim 768 --heads 12 --seq 1024 --batch 8 --vocab 50257 > "$LOG/imp.jax_gpt2.mlir"
imp_row mlp "$EX/mlp.cir" 'adam(lr = 1e-4)' "$LOG/imp.mlp.mlir" 11
imp_row gpt2_small "$EX/gpt2_small.cir" 'adam(lr = 1e-3)' "$LOG/imp.gpt2_small.mlir" 31
imp_row gpt2 "$EX/gpt2.cir" 'adam(lr = 1e-4)' "$LOG/imp.gpt2.mlir" 2
imp_row jax_gpt2 "$EX/gpt2.cir" 'adam(lr = 1e-4)' "$LOG/imp.jax_gpt2.mlir" 2 'adam(lr = 1e-4)'
out ""
imp_plans mlp "$EX/mlp.cir" 'adam(lr = 1e-4)' "$LOG/imp.mlp.mlir" mlp_bp.tac mlp_mp.tac
imp_plans gpt2_small "$EX/gpt2_small.cir" 'adam(lr = 1e-3)' "$LOG/imp.gpt2_small.mlir" gpt2_small.tac gpt2_small_bp.tac \
	gpt2_small_mp.tac gpt2_small_bp_mp.tac gpt2_small_bp_mp_z1.tac gpt2_small_bp_mp_z2.tac gpt2_small_bp_mp_z3.tac gpt2_small_bp_z3.tac
imp_plans gpt2 "$EX/gpt2.cir" 'adam(lr = 1e-4)' "$LOG/imp.gpt2.mlir" gpt2.tac gpt2_bp.tac gpt2_mp.tac gpt2_bp_mp.tac \
	gpt2_bp_mp_z2.tac gpt2_bp_mp_z3.tac
out "   (the JAX-spelled GPT-2 names its parameters otherwise, so the plans of examples/ do not apply to it)"
out ""
# The same JAX spelling read as written (--no-fuse: no composite op recognised), its elementwise
# chains joined into one pass each (interp/lower/fuse.c) against kept apart, back to back.
progress "elementwise chains fused against apart"
python3 "$SRCDIR/tests/hlo/jax_gpt.py" --layers 4 --dim 256 --heads 4 --seq 256 --batch 4 --vocab 4096 > "$LOG/imp.jax_mid.mlir"
imp_measure jax_mid.fused "$LOG/imp.jax_mid.mlir" 6 --train 'adam(lr = 1e-4)' --no-fuse
imp_measure jax_mid.apart "$LOG/imp.jax_mid.mlir" 6 --train 'adam(lr = 1e-4)' --no-fuse --test-unfused-elementwise
f_s=$(json_num step_time < "$LOG/imp.jax_mid.fused.json") a_s=$(json_num step_time < "$LOG/imp.jax_mid.apart.json")
if [ -n "$f_s" ] && [ -n "$a_s" ]; then
	outf '   %-16s as written, 4 layers of 256, 4 x 256 tokens: step %.3f s with elementwise chains fused, %.3f s apart (%s x)\n' \
		jax_mid "$f_s" "$a_s" "$(calc '%.3f' "$f_s / $a_s")"
else
	outf '   %-16s not measured: %s\n' jax_mid "$(first_error "$LOG/imp.jax_mid.$( [ -z "$f_s" ] && echo fused || echo apart).err")"
fi
out ""

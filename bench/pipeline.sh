# bench/pipeline.sh, sourced by bench/run.sh after section 5 (it uses the
# 2-rank profile calibrated there): pipeline stages on 2 ranks.
#   - the bubble carve simulate predicts for stage 0 (its idle share of the
#     step) against the one measured: stage 0's time blocked in recv over
#     its time in instructions (carve run --profile, rank 0);
#   - the step time and peak memory of 2 stages against batch parallelism
#     on the same 2 ranks, on a 4-layer GPT (tests/data/gpt_pp.cir).
PP_MODEL=$SRCDIR/tests/data/gpt_pp.cir
PP_STEPS=21
progress "pipeline stages on 2 ranks: bubble predicted and measured, against batch parallelism"
out "5b. Pipeline stages on 2 ranks (tests/data/gpt_pp.cir: 4 layers, batch 8, SGD; profile of 2 ranks from section 5)"
out "   bubble: stage 0's idle share of the step, predicted (carve simulate) and measured (its time in recv over its time"
out "   in instructions, carve run --profile); the ideal of equal stages is (p - 1) / (m + p - 1), zero-bubble's"
out "   (p - 1) / (3 m + p - 1) with its three passes alike"
out ""
out "   plan                                       step measured  predicted    peak/rank   bubble measured  predicted  ideal"
export OPENBLAS_NUM_THREADS=1
printf 'version 1\nmesh batch = 2\nuse "batch" as bp (axis = batch)\nschedule bp\n' > "$LOG/pp_bp2.tac"
pp_row() {  # pp_row ID NAME TACTICS
	id=$1 name=$2 tac=$3
	$MPIRUN "$CARVE" run "$PP_MODEL" "$tac" --train 'sgd(lr = 0.1)' --steps "$PP_STEPS" --json > "$LOG/pp_$id.run" 2> "$LOG/pp_$id.err"
	$MPIRUN "$CARVE" run "$PP_MODEL" "$tac" --train 'sgd(lr = 0.1)' --steps "$PP_STEPS" --profile > "$LOG/pp_$id.prof" 2>> "$LOG/pp_$id.err"
	"$CARVE" simulate "$PP_MODEL" "$tac" --train 'sgd(lr = 0.1)' --device "$LOG/cal2.profile" --json > "$LOG/pp_$id.sim" 2>> "$LOG/pp_$id.err"
	python3 - "$LOG/pp_$id.run" "$LOG/pp_$id.prof" "$LOG/pp_$id.sim" "$name" >> "$OUT.body" <<'PY' || out "   $name: failed: $(first_error "$LOG/pp_$id.err")"
import json, re, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
prof, s = open(sys.argv[2]).read(), json.load(open(sys.argv[3]))
rt, st = r["step_time"], s["time"]["total"]
total = float(re.search(r"per step[^:]*: ([0-9.]+) ms in instructions", prof).group(1))
m = re.search(r"^\s*recv\s+([0-9.]+) ms", prof, re.M)
pp = s.get("pipeline")
if pp:
    measured = "%14.1f%%" % (100 * float(m.group(1)) / total if m else 0)
    predicted = "%9.1f%%" % (100 * (st - pp["busy"][0]) / st)
    ideal = "%5.1f%%" % (100 * pp["ideal_bubble"])
else:
    measured, predicted, ideal = "%15s" % "-", "%10s" % "-", "%6s" % "-"
print("   %-42s %9.2f ms %9.2f ms %9.2f MiB %s %s %s" % (sys.argv[4], 1e3 * rt, 1e3 * st, r["peak_memory"] / 2**20, measured, predicted, ideal))
PY
}
pp_row bp2 "batch parallel (batch = 2)" "$LOG/pp_bp2.tac"
pp_row pp2 "2 stages, 4 microbatches, 1F1B" "$SRCDIR/tests/data/pp2.tac"
printf 'version 1\nmesh stage = 2\nuse "pipeline" as pp (axis = stage, microbatches = 8, order = "gpipe")\nschedule pp\n' > "$LOG/pp2_g8.tac"
pp_row pp2g8 "2 stages, 8 microbatches, GPipe" "$LOG/pp2_g8.tac"
printf 'version 1\nmesh stage = 2\nuse "pipeline" as pp (axis = stage, microbatches = 8)\nschedule pp\n' > "$LOG/pp2_8.tac"
pp_row pp2_8 "2 stages, 8 microbatches, 1F1B" "$LOG/pp2_8.tac"
printf 'version 1\nmesh stage = 2\nuse "pipeline" as pp (axis = stage, microbatches = 8, order = "zb-h1")\nschedule pp\n' > "$LOG/pp2_zb8.tac"
pp_row pp2_zb8 "2 stages, 8 microbatches, zero-bubble" "$LOG/pp2_zb8.tac"
unset OPENBLAS_NUM_THREADS
out "   target: the predicted bubble within a few points of the measured one; on a model this small batch parallelism"
out "   wins (its one all-reduce of the gradients costs less than the bubble), as on any one node"
out ""

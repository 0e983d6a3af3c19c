# bench/auto_search.sh: section 7 of `make bench`, sourced by bench/run.sh
# (it uses out, progress, calc, $CARVE, $SRCDIR and $LOG from there).
#   issue 10: carve auto on GPT shapes against the expert schedules, each
#   simulated on the same device profile (h100-sxm): the search's CPU time,
#   its plan's simulated step time and peak memory, the best expert plan's,
#   and Monte Carlo tree search (the Automap/PartIR baseline) given as many
#   evaluations as the beam search used.

AUTO_TRAIN='adam(lr = 1e-4)'

# auto_case ID "TITLE" MODEL "MESH" LIMIT_BYTES "AUTO ARGS"
auto_case() {
	id=$1 title=$2 model=$3 mesh=$4 limit=$5 args=$6
	base="version 1
mesh $mesh"
	# the experts: batch, + megatron, + embedding rows, + ZeRO-1 (each where it applies), with
	# the axes in both roles (data parallel on the first axis and Megatron on the second, and
	# the other way round), since the search may use either axis for either
	best_t="" best_name="" best_m=""
	axes=$(echo "$mesh" | sed 's/ *= *[0-9]*//g; s/,/ /g')
	set -- $axes
	for roles in "$1 $2" "$2 $1"; do
		set -- $roles
		B=$1 M=$2
		for e in bp bp_mp bp_mp_emb bp_mp_emb_z1; do
			tac=$LOG/auto_$id.$e.$B.tac
			{
				echo "$base"
				echo "use \"batch\" as bp (axis = $B)"
				case $e in *mp*) echo "use \"megatron\" as mp (axis = $M)" ;; esac
				case $e in *emb*) echo "use \"embedding\" as emb (axis = $M)" ;; esac
				case $e in *z1*) echo "use \"zero\" as z1 (axis = $B, stage = 1)" ;; esac
				echo "schedule $(echo $e | sed 's/_/, /g')"
			} > "$tac"
			"$CARVE" simulate "$model" "$tac" --train "$AUTO_TRAIN" --json --quiet > "$tac.json" 2> "$tac.err" || continue
			set -- $(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(j["time"]["total"], j["memory"]["peak"])' "$tac.json")
			t=$1 m=$2
			[ "$(calc '%d' "$m <= $limit")" = 1 ] || continue   # an expert plan must fit too
			if [ -z "$best_t" ] || [ "$(calc '%d' "$t < $best_t")" = 1 ]; then best_t=$t best_m=$m best_name="$e/$B"; fi
		done
	done
	# the search, then MCTS with as many evaluations
	printf '%s\ntactic found = auto (%s)\nschedule found\n' "$base" "$args" > "$LOG/auto_$id.search.tac"
	/usr/bin/env time -f '%U %S %e' -o "$LOG/auto_$id.time" timeout 600 "$CARVE" auto "$model" "$LOG/auto_$id.search.tac" \
		--train "$AUTO_TRAIN" -o "$LOG/auto_$id.found.tac" --json --quiet > "$LOG/auto_$id.json" 2> "$LOG/auto_$id.err"
	if [ $? -ne 0 ]; then out "   $title: carve auto failed: $(first_error "$LOG/auto_$id.err")"; return; fi
	set -- $(tail -1 "$LOG/auto_$id.time")
	cpu=$(calc '%.2f' "$1 + $2")
	evals=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["tactics"][0]["evaluations"])' "$LOG/auto_$id.json")
	printf '%s\ntactic found = auto (%s, strategy = mcts, budget = %s)\nschedule found\n' "$base" "$args" "$evals" > "$LOG/auto_$id.mcts.tac"
	timeout 600 "$CARVE" auto "$model" "$LOG/auto_$id.mcts.tac" --train "$AUTO_TRAIN" -o "$LOG/auto_$id.mcts_found.tac" \
		--json --quiet > "$LOG/auto_$id.mcts.json" 2> "$LOG/auto_$id.mcts.err"
	python3 - "$LOG/auto_$id.json" "$LOG/auto_$id.mcts.json" "$title" "$cpu" "${best_t:-0}" "${best_m:-0}" "${best_name:-none}" >> "$OUT.body" <<'PY' || out "   $title: failed to read the results"
import json, sys
a = json.load(open(sys.argv[1]))["tactics"][0]
try:
    m = json.load(open(sys.argv[2]))["tactics"][0]
    mcts = "%9.2f ms" % (1e3 * m["after"]["step_seconds"])
except Exception:
    mcts = "   failed"
title, cpu, et, em, en = sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6]), sys.argv[7]
t, mem = a["after"]["step_seconds"], a["after"]["peak_bytes"]
print("   %-34s %6.2f s %6d   %9.2f ms %8.2f GiB   %9.2f ms %8.2f GiB  %-24s %6.3f   %s" % (
    title, cpu, a["evaluations"], 1e3 * t, mem / 2**30, 1e3 * et, em / 2**30, (en.replace("_", "+").replace("/", " (bp on ") + ")") if "/" in en else en, t / et if et else 0, mcts))
PY
}

progress "automatic search: GPT-2 small on 8 and 32 devices, GPT-3 on 512"
out "7. carve auto against expert schedules, simulated on h100-sxm (issue 10)"
out "   search: beam search over (value group, dim, axis), default options (objective time, memory limit the"
out "   device's 80 GB) unless given; expert: the fastest that fits the same limit of bp, bp+mp,"
out "   bp+mp+emb, bp+mp+emb+z1 (stdlib tactics), batch parallel on either axis and Megatron on the other;"
out "   MCTS: strategy = mcts with the beam's evaluation count as its budget. CPU = user + system seconds."
out ""
out "   model, devices                     search  evals   found step   peak          expert step   peak       (which)                  found/   MCTS step"
out "                                       cpu                                                                                      expert"
sh "$SRCDIR/bench/gen_gpt.sh" gpt2s 12 12 768 64 50304 1024 32 3072 "GPT-2 small shape, batch 32" 0.125 > "$LOG/auto_gpt2s.cir"
auto_case g8 "GPT-2 small, batch=2 model=4 (8)" "$LOG/auto_gpt2s.cir" "batch = 2, model = 4" 80e9 "axes = [batch, model]"
auto_case g32 "GPT-2 small, batch=4 model=8 (32)" "$LOG/auto_gpt2s.cir" "batch = 4, model = 8" 80e9 "axes = [batch, model]"
sh "$SRCDIR/bench/gen_gpt.sh" gpt3 96 96 12288 128 50304 2048 1536 49152 "GPT-3 175B shape" 0.08838834764831845 > "$LOG/auto_gpt3.cir"
auto_case g512 "GPT-3 175B, batch=64 model=8 (512)" "$LOG/auto_gpt3.cir" "batch = 64, model = 8" 4398046511104 "axes = [batch, model], memory_limit = 4TiB"
out "   targets: found within 5% of the expert's step time (found/expert <= 1.05), each search under 10 s."
out "   GPT-3 in f32 fits no 80 GB device under any of these plans (parameters and Adam state alone are"
out "   2.8 TB, 350 GB a device over 8 model shards), hence its memory_limit of 4 TiB for the search and the experts alike."
out ""

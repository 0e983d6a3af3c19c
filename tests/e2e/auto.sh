#!/usr/bin/env bash
# carve auto from the command line: the file it writes loads back and runs
# under mpirun equal to one device; --json; the errors; auto tactics inside
# apply and run (and a time budget refused under mpirun, where each rank
# would search on its own).
set -u
ex="$SRCDIR/examples"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export LSAN_OPTIONS="suppressions=$SRCDIR/tests/mpi/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
MPIRUN="timeout 300 mpirun --oversubscribe -x LSAN_OPTIONS -x ASAN_OPTIONS"
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
run() { timeout 300 "$@" > "$tmp/out" 2> "$tmp/err"; }
T="--train adam(lr=1e-3)"

cat > "$tmp/search.tac" <<'EOF'
version 1
mesh batch = 2, model = 2
# memory first: the search must split something on a model this small
tactic found = auto (objective = memory, seed = 3)
schedule found
EOF

# 1. carve auto writes a tactic file; it says what it found; stderr is quiet off a terminal
run "$CARVE" auto "$ex/gpt2_small.cir" "$tmp/search.tac" $T -o "$tmp/found.tac"
[ $? -eq 0 ] && grep -q "^wrote $tmp/found.tac (it loads back to exactly this plan)" "$tmp/out" && grep -q "found_1: estimated step" "$tmp/out" \
  && [ ! -s "$tmp/err" ] && ok || bad "carve auto: $(cat "$tmp/out" "$tmp/err")"
grep -q "^tactic found_1 {" "$tmp/found.tac" && grep -q "^schedule found_1" "$tmp/found.tac" && grep -q "^# ---- found by carve auto" "$tmp/found.tac" \
  && ! grep -q "^tactic found = auto" "$tmp/found.tac" && ok || bad "the written file: $(cat "$tmp/found.tac")"

# 2. the file is a plain tactic file: apply takes it, and the same seed writes the same file
run "$CARVE" apply "$ex/gpt2_small.cir" "$tmp/found.tac" $T
[ $? -eq 0 ] && ok || bad "apply found.tac: $(cat "$tmp/err")"
run "$CARVE" auto "$ex/gpt2_small.cir" "$tmp/search.tac" $T -o "$tmp/again.tac" --quiet
grep -v "evaluations" "$tmp/found.tac" > "$tmp/a"; grep -v "evaluations" "$tmp/again.tac" > "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" && ok || bad "seed 3 twice: $(diff "$tmp/a" "$tmp/b")"

# 3. --json
run "$CARVE" auto "$ex/gpt2_small.cir" "$tmp/search.tac" $T -o "$tmp/j.tac" --json
[ $? -eq 0 ] && python3 - "$tmp/out" <<'PY' && ok || bad "--json: $(cat "$tmp/out" "$tmp/err")"
import json, sys
j = json.load(open(sys.argv[1]))
t = j["tactics"][0]
assert t["name"] == "found" and t["objective"] == "memory" and t["seed"] == 3 and t["strategy"] == "beam"
assert t["evaluations"] > 0 and t["fits"] is True
assert t["after"]["peak_bytes"] < t["before"]["peak_bytes"]
assert t["actions"] and t["actions"][0]["tactic"] == "found_1" and t["actions"][0]["statements"][0].startswith("shard ")
PY

# 4. the found plan runs on 4 ranks equal to one device
out=$($MPIRUN -n 4 "$CARVE" run "$ex/gpt2_small.cir" "$tmp/found.tac" $T --steps 2 --check --json 2>"$tmp/err")
python3 -c "
import json, sys
j = json.loads(sys.argv[1]); sys.exit(0 if j['max_rel_error'] <= 1e-5 and j['ranks'] == 4 else 1)" "$out" 2>/dev/null \
  && ok || bad "found plan on 4 ranks: $out $(head -3 "$tmp/err")"

# 5. an auto tactic inside carve run: every rank searches alike (a budget in evaluations)
cat > "$tmp/inrun.tac" <<'EOF'
version 1
mesh batch = 2
tactic found = auto (budget = 200)
schedule found
EOF
out=$($MPIRUN -n 2 "$CARVE" run "$ex/gpt2_small.cir" "$tmp/inrun.tac" $T --steps 2 --check --json 2>"$tmp/err")
python3 -c "
import json, sys
j = json.loads(sys.argv[1]); sys.exit(0 if j['max_rel_error'] <= 1e-5 and j['ranks'] == 2 else 1)" "$out" 2>/dev/null \
  && ok || bad "auto inside run on 2 ranks: $out $(head -3 "$tmp/err")"
sed -i 's/budget = 200/budget = 5s/' "$tmp/inrun.tac"
$MPIRUN -n 2 "$CARVE" run "$ex/gpt2_small.cir" "$tmp/inrun.tac" $T --steps 1 > "$tmp/out" 2> "$tmp/err"
[ $? -ne 0 ] && grep -q "inrun.tac:3:1: error: auto tactic 'found' has a time budget, and each of the 2 ranks" "$tmp/err" \
  && ok || bad "time budget under mpirun: $(cat "$tmp/err")"

# 6. errors: one located line, exit 1 (2 for usage)
run "$CARVE" auto "$ex/gpt2_small.cir" "$tmp/search.tac" $T
[ $? -eq 2 ] && grep -q "carve auto needs -o FOUND.tac" "$tmp/err" && ok || bad "no -o: $(cat "$tmp/err")"
run "$CARVE" auto "$ex/gpt2_small.cir" "$ex/gpt2_small_bp.tac" $T -o "$tmp/x.tac"
[ $? -eq 1 ] && grep -q "the schedule runs no auto tactic" "$tmp/err" && [ ! -e "$tmp/x.tac" ] && ok || bad "no auto tactic: $(cat "$tmp/err")"
printf 'version 1\nmesh model = 2\ntactic f = auto (memory_limit = 1KiB)\nschedule f\n' > "$tmp/tiny.tac"
run "$CARVE" auto "$ex/gpt2_small.cir" "$tmp/tiny.tac" $T -o "$tmp/x.tac"
[ $? -eq 1 ] && grep -q "tiny.tac:3:1: error: nothing the search found fits in 1.0 KiB a device: the smallest plan needs .* (largest: " "$tmp/err" \
  && [ ! -e "$tmp/x.tac" ] && ok || bad "nothing fits: $(cat "$tmp/err")"
# where activations are most of what does not fit, the error says how to recompute them;
# under remat = cheap (no GEMM recomputed) it names GEMMs; under full it says no more
run "$CARVE" auto "$ex/mlp.cir" "$tmp/tiny.tac" --train 'sgd(lr = 0.1)' -o "$tmp/x.tac"
[ $? -eq 1 ] && grep -q "search more axes, or recompute activations in the backward pass (--train '..., remat = cheap', 'full' or \"GLOB\" naming GEMMs" "$tmp/err" \
  && ok || bad "nothing fits, activations: $(cat "$tmp/err")"
run "$CARVE" auto "$ex/mlp.cir" "$tmp/tiny.tac" --train 'sgd(lr = 0.1, remat = cheap)' -o "$tmp/x.tac"
[ $? -eq 1 ] && grep -q "or recompute GEMMs too (--train '..., remat = full' or \"GLOB\" naming them" "$tmp/err" && ok || bad "nothing fits, cheap: $(cat "$tmp/err")"
run "$CARVE" auto "$ex/mlp.cir" "$tmp/tiny.tac" --train 'sgd(lr = 0.1, remat = full)' -o "$tmp/x.tac"
[ $? -eq 1 ] && grep -q "search more axes$" "$tmp/err" && ok || bad "nothing fits, full: $(cat "$tmp/err")"
printf 'version 1\nmesh model = 2\ntactic f = auto (budget = 10 parsecs)\nschedule f\n' > "$tmp/bad.tac"
run "$CARVE" auto "$ex/gpt2_small.cir" "$tmp/bad.tac" $T -o "$tmp/x.tac"
[ $? -eq 1 ] && [ "$(grep -c error "$tmp/err")" -eq 1 ] && grep -q "bad.tac:3:" "$tmp/err" && ok || bad "bad budget: $(cat "$tmp/err")"
# 9. strategies that take a whole axis (try = [...]): under a limit the search
# alone cannot meet, pipeline stages; the file written holds the use line,
# says what was tried, and runs under mpirun equal to one device
printf 'version 1\nmesh a = 4\ntactic found = auto (axes = [a], try = [context, pipeline], memory_limit = 1900KiB, seed = 1)\nschedule found\n' > "$tmp/whole.tac"
run "$CARVE" auto "$SRCDIR/tests/data/gpt_pp.cir" "$tmp/whole.tac" $T -o "$tmp/whole_found.tac"
[ $? -eq 0 ] && grep -q "^use \"pipeline\" as found_pp (axis = a, microbatches = 8)$" "$tmp/whole_found.tac" && grep -q "^schedule found_pp$" "$tmp/whole_found.tac" \
  && grep -q "<- kept" "$tmp/out" && grep -q 'use "context" as found_cp (axis = a)' "$tmp/out" && ok || bad "auto with try: $(cat "$tmp/out" "$tmp/err")"
out=$($MPIRUN -n 4 "$CARVE" run "$SRCDIR/tests/data/gpt_pp.cir" "$tmp/whole_found.tac" $T --steps 2 --check --json 2>"$tmp/err") &&
  python3 -c "import json, sys; sys.exit(0 if json.loads(sys.argv[1])['max_rel_error'] <= 1e-4 else 1)" "$out" && ok ||
  bad "the pipeline auto chose, on 4 ranks: $out $(head -3 "$tmp/err")"

chmod 500 "$tmp" 2>/dev/null
if [ "$(id -u)" -ne 0 ]; then
  run "$CARVE" auto "$ex/gpt2_small.cir" "$tmp/search.tac" $T -o "$tmp/ro/x.tac"
  [ $? -eq 1 ] && grep -q "cannot write" "$tmp/err" && ok || bad "unwritable: $(cat "$tmp/err")"
fi
chmod 700 "$tmp"

echo "auto: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

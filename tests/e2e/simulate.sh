#!/usr/bin/env bash
# carve simulate and carve calibrate from the command line: the JSON
# contract, --compare, --sweep, the errors, memory over capacity, and a
# calibrated profile read back.
set -u
# under --enable-sanitizers: what OpenMPI and OpenBLAS keep until exit is not ours
# (tests/mpi/lsan.supp; MPI's components stay loaded so that their stacks can be named)
export LSAN_OPTIONS="suppressions=$SRCDIR/tests/mpi/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export OMPI_MCA_mca_base_component_disable_dlclose=1
mpirun() { command mpirun -x LSAN_OPTIONS -x ASAN_OPTIONS "$@"; }
ex="$SRCDIR/examples"
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { timeout 300 "$@" > "$tmp/out" 2> "$tmp/err"; }
. "$SRCDIR/tests/e2e/mpi_env.sh"     # exports for mpirun; $MPIRUN
T="--train adam(lr=1e-3)"

# recomputing activations (remat in --train): less memory, more compute, as simulated;
# naming each MLP's first projection lies between cheap and full in both
for r in none cheap full named; do
  pol=$r; [ $r = named ] && pol='"l*.h.matmul"'
  "$CARVE" simulate "$ex/gpt2.cir" --train "adam(lr = 1e-3, remat = $pol)" --device h100-sxm --json > "$tmp/remat.$r" 2> "$tmp/err" || bad "simulate remat = $pol: $(cat "$tmp/err")"
done
python3 - "$tmp/remat.none" "$tmp/remat.cheap" "$tmp/remat.full" "$tmp/remat.named" <<'PY' && ok || bad "remat: $(head -c 300 "$tmp/remat.full")"
import json, sys
n, c, f, m = (json.load(open(p)) for p in sys.argv[1:5])
peak = lambda j: j["memory"]["peak"]
step = lambda j: j["time"]["total"]
print("remat none/cheap/full: %.2f / %.2f / %.2f GiB, %.1f / %.1f / %.1f ms" % (
    peak(n) / 2**30, peak(c) / 2**30, peak(f) / 2**30, step(n) * 1e3, step(c) * 1e3, step(f) * 1e3))
assert peak(f) < peak(c) < peak(n) and peak(f) < 0.5 * peak(n)
assert step(n) <= step(c) < step(f) < 1.5 * step(n)
print("remat \"l*.h.matmul\": %.2f GiB, %.1f ms" % (peak(m) / 2**30, step(m) * 1e3))
assert peak(f) < peak(m) < peak(c) and step(c) < step(m) < step(f)
PY

run "$CARVE" simulate "$ex/gpt2.cir" "$ex/gpt2.tac" $T --device h100-sxm --json
[ $? -eq 0 ] && python3 - "$tmp/out" <<'PY' && ok || bad "simulate --json contract: $(head -c 300 "$tmp/out") $(cat "$tmp/err")"
import json, sys
j = json.load(open(sys.argv[1]))
m, t = j["memory"], j["time"]
for k in ("params", "grads", "optimizer", "activations", "peak"): assert m[k] >= 0, k
for k in ("compute", "communication", "total"): assert t[k] > 0, k
assert abs(t["total"] - t["compute"] - t["communication"]) < 3e-9 * t["total"]   # three numbers of 9 digits
assert m["peak"] > m["params"] + m["optimizer"]
PY
run "$CARVE" simulate "$ex/gpt2_small.cir" $T
[ $? -eq 0 ] && grep -q "on 1 device of h100-sxm" "$tmp/out" && grep -q "^step time" "$tmp/out" && ok || bad "one device: $(head -3 "$tmp/out") $(cat "$tmp/err")"
run "$CARVE" simulate "$ex/gpt2_small.cir" "$ex/gpt2_small_bp.tac" $T --compare "$ex/gpt2_small_bp_mp_z3.tac" --device a100-80g
[ $? -eq 0 ] && grep -q "^reduce_scatter" "$tmp/out" && grep -qE "^(A|B) is faster|equally fast" "$tmp/out" && ok || bad "--compare: $(cat "$tmp/out" "$tmp/err")"
# a sweep: every shape, those that do not divide said so, the fastest named
run "$CARVE" simulate "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac" $T --sweep 'batch=1..8, model=[1, 3, 4]' --device h100-sxm
[ $? -eq 0 ] && [ "$(grep -cE '^batch=' "$tmp/out")" -eq 12 ] && grep -q "^batch=2,model=3 .*not divisible" "$tmp/out" && grep -q "^fastest that fits: batch=" "$tmp/out" && ok || bad "--sweep: $(cat "$tmp/out" "$tmp/err")"
# pipeline stages: the stage timelines and the bubble beside the ideal; a
# sweep over stage counts, the microbatches not counted as devices
run "$CARVE" simulate "$ex/gpt2_small.cir" "$ex/gpt2_small_pp.tac" $T --device h100-sxm
[ $? -eq 0 ] && grep -q "^gpt2_small on 4 devices" "$tmp/out" && grep -q "^pipeline: 2 stages, 2 microbatches; the busiest stage idles .* (p - 1) / (m + p - 1) = 33.3%)" "$tmp/out" &&
  [ "$(grep -c '^  stage [01] ' "$tmp/out")" -eq 2 ] && ok || bad "pipeline: $(cat "$tmp/out" "$tmp/err")"
# the zero-bubble schedule: the same work as 1F1B in a shorter step, the
# first stage's memory no larger
: > "$tmp/err"
for o in 1f1b zb-h1; do
  printf 'version 1\nmesh stage = 4\nuse "pipeline" as pp (axis = stage, microbatches = 8, order = "%s")\nschedule pp\n' $o > "$tmp/pp_$o.tac"
  "$CARVE" simulate "$SRCDIR/tests/data/gpt_pp.cir" "$tmp/pp_$o.tac" --train 'sgd(lr = 0.1)' --device h100-sxm --json > "$tmp/pp_$o.json" 2>> "$tmp/err"
done
python3 -c "
import json, sys
a, b = (json.load(open(sys.argv[k])) for k in (1, 2))
assert b['time']['total'] < 0.95 * a['time']['total'], (a['time'], b['time'])
assert abs(b['time']['compute'] - a['time']['compute']) < 1e-9 * a['time']['compute'] + 1e-12
assert b['pipeline']['peak'][0] <= a['pipeline']['peak'][0] and b['pipeline']['bubble'] < a['pipeline']['bubble']
" "$tmp/pp_1f1b.json" "$tmp/pp_zb-h1.json" 2>> "$tmp/err" && ok || bad "zero-bubble against 1F1B: $(cat "$tmp/err")"
run "$CARVE" simulate "$ex/gpt2_small.cir" "$ex/gpt2_small_pp.tac" $T --sweep 'stage=1..2, batch=[1, 2]'
[ $? -eq 0 ] && grep -qE '^stage=2,batch=2 +4 ' "$tmp/out" && grep -qE '^stage=1,batch=1 +1 ' "$tmp/out" && ! grep -q micro "$tmp/out" && ok || bad "pipeline --sweep: $(cat "$tmp/out" "$tmp/err")"
run "$CARVE" simulate "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac" $T --sweep 'batch=1..4' --json
[ $? -eq 0 ] && python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert len(j['meshes'])==3 and j['fastest']" "$tmp/out" && ok || bad "--sweep --json: $(cat "$tmp/out")"
# errors: one located line, exit 1 (2 for usage)
run "$CARVE" simulate "$ex/gpt2_small.cir" --device h900
[ $? -eq 1 ] && grep -q "no device profile 'h900' (in .*h100-sxm" "$tmp/err" && ok || bad "unknown device: $(cat "$tmp/err")"
printf 'memory 80GB\nbandwidth 1e12\nflops f32 = 1e12\nlink fast bandwidth = 1e9 latncy = 1us\n' > "$tmp/bad.profile"
run "$CARVE" simulate "$ex/gpt2_small.cir" --device "$tmp/bad.profile"
[ $? -eq 1 ] && grep -q "bad.profile:4:27: error: link has no setting 'latncy'" "$tmp/err" && ok || bad "broken profile: $(cat "$tmp/err")"
run "$CARVE" simulate "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac" $T --links 'batch=intra, modle=inter'
[ $? -eq 1 ] && grep -q "^--links:1:14: error: no mesh axis 'modle' (the mesh has batch, model)" "$tmp/err" && ok || bad "--links: $(cat "$tmp/err")"
run "$CARVE" simulate "$ex/gpt2_small.cir" --sweep 'batch=1..4'
[ $? -eq 2 ] && grep -q "needs a tactic file" "$tmp/err" && ok || bad "--sweep without tactics: $(cat "$tmp/err")"
# memory over capacity: a warning naming what fills it; an error under --strict
printf 'device "tiny"\nmemory 1MB\nbandwidth 1e12\nflops f32 = 1e12\n' > "$tmp/tiny.profile"
run "$CARVE" simulate "$ex/gpt2_small.cir" $T --device "$tmp/tiny.profile"
[ $? -eq 0 ] && grep -q "carve: warning: gpt2_small needs .* a device, more than the 976.6 KiB of tiny (largest: " "$tmp/err" && ok || bad "over capacity: $(cat "$tmp/err")"
run "$CARVE" simulate "$ex/gpt2_small.cir" $T --device "$tmp/tiny.profile" --strict
[ $? -eq 1 ] && grep -q "carve: error: gpt2_small needs" "$tmp/err" && ok || bad "over capacity --strict: $(cat "$tmp/err")"
# calibrate, then the profile is read back; under mpirun the link is measured too
OPENBLAS_NUM_THREADS=1 run "$CARVE" calibrate -o "$tmp/here.profile"
[ $? -eq 0 ] && grep -q "^flops " "$tmp/here.profile" && grep -q "^kernel  *softmax " "$tmp/here.profile" && grep -q "^kernel  *adam " "$tmp/here.profile" && grep -q "^kernel  *sgd " "$tmp/here.profile" && grep -q "^kernel  *attention_grad " "$tmp/here.profile" && ok || bad "calibrate: $(cat "$tmp/out" "$tmp/err")"
run "$CARVE" simulate "$ex/gpt2_small.cir" $T --device "$tmp/here.profile" --json
[ $? -eq 0 ] && ok || bad "simulate on the calibrated profile: $(cat "$tmp/err")"
OPENBLAS_NUM_THREADS=1 run $MPIRUN -n 2 "$CARVE" calibrate -o "$tmp/two.profile"
[ $? -eq 0 ] && grep -q "^link  *intra bandwidth = " "$tmp/two.profile" && grep -q "all_to_all.bandwidth" "$tmp/two.profile" && ok || bad "calibrate on 2 ranks: $(cat "$tmp/out" "$tmp/err")"
run "$CARVE" simulate "$ex/gpt2_small.cir" "$ex/gpt2_small_bp.tac" $T --mesh batch=2 --device "$tmp/two.profile"
[ $? -eq 0 ] && grep -q "batch=2 (intra)" "$tmp/out" && ok || bad "simulate on the 2-rank profile: $(cat "$tmp/out" "$tmp/err")"
# ring attention under the causal mask costs the device that computes the most at each
# step: with the sequence dealt zig-zag every device computes the same, less than the
# last device dealt in order
for t in cp4 cp4_none; do
  "$CARVE" simulate "$SRCDIR/tests/data/gpt_s2048.cir" "$SRCDIR/tests/data/$t.tac" $T --json > "$tmp/ring.$t" 2> "$tmp/err" || bad "simulate $t: $(cat "$tmp/err")"
done
python3 - "$tmp/ring.cp4" "$tmp/ring.cp4_none" <<'PY' && ok || bad "zig-zag against in order, simulated: $(head -c 300 "$tmp/ring.cp4")"
import json, sys
z, n = (json.load(open(p))["kinds"] for p in sys.argv[1:3])
zz, no = z["attn_block"] + z["attn_block_grad"], n["attn_block"] + n["attn_block_grad"]
print("ring attention's blocks simulated: %.1f us zig-zag, %.1f us in order" % (zz * 1e6, no * 1e6))
sys.exit(0 if zz < 0.9 * no else 1)
PY

echo "simulate: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# The debugging tools from the command line: carve show (text, --rank, --svg,
# errors), carve diff (BP against BP + Megatron on gpt2_small: exactly the
# Megatron weights and 8 all-reduces, --json), and numerics bisection under
# mpirun (a correct plan has no mismatch; a planted wrong collective,
# --test-drop-collective K, is found at the value the K-th all-reduce of
# `carve apply` makes) and from saved programs (carve lower -o, carve bisect).
set -u
ex="$SRCDIR/examples"
pics="$SRCDIR/tests/data/pictures"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$SRCDIR/tests/e2e/mpi_env.sh"     # exports for mpirun; $MPIRUN
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
expect_rc() {  # expect_rc RC DESCRIPTION CMD...
  local want=$1 what=$2; shift 2
  timeout 120 "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" -eq "$want" ]; then ok; else bad "$what: exit $rc, wanted $want"; sed 's/^/    /' "$tmp/err" | head -5; fi
}
train='adam(lr = 1e-3)'

# ---- show ----
expect_rc 0 "show a 2-D split" "$CARVE" show "$pics/pic.cir" "$pics/split2_2x2.tac" t
cmp -s "$tmp/out" "$pics/split2_2x2.txt" && ok || bad "show prints the golden picture: $(diff "$tmp/out" "$pics/split2_2x2.txt" | head -5)"
expect_rc 0 "show --rank" "$CARVE" show "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac" l0.h --rank 3
grep -q "rank 3 (batch=1, model=1) holds \[2:4, 0:32, 128:256\]" "$tmp/out" && ok || bad "rank 3's block of l0.h: $(cat "$tmp/out")"
expect_rc 0 "show --svg" "$CARVE" show "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac" grad.l0.mlp.w1 --train "$train" --svg "$tmp/w1.svg"
python3 -c "import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); assert d.documentElement.tagName == 'svg'" "$tmp/w1.svg" \
  && ok || bad "the SVG is well-formed XML"
# a pipeline: the value's stage, and the other stage's devices hold none of it;
# the microbatches run in turn on each of the 4 devices, not on devices of their own
expect_rc 0 "show a pipelined value" "$CARVE" show "$ex/gpt2_small.cir" "$ex/gpt2_small_pp.tac" x2 --train "$train"
grep -q "^mesh: stage=2, batch=2 (4 devices " "$tmp/out" &&
grep -q "^pipeline: on stage 1 of 'stage' (the devices of the other stages hold none of it); 2 microbatches ('micro')" "$tmp/out" &&
grep -q "^  \[3:4, 0:32, 0:64\]  d3, microbatch 1$" "$tmp/out" &&
  ! grep -qE '  d[0-1](,| |$)' "$tmp/out" && ok || bad "show x2 under the pipeline: $(cat "$tmp/out")"
expect_rc 0 "show --rank on another stage" "$CARVE" show "$ex/gpt2_small.cir" "$ex/gpt2_small_pp.tac" x1 --train "$train" --rank 3
grep -q "holds none of it (another stage computes it)" "$tmp/out" && ok || bad "show x1 --rank 3: $(cat "$tmp/out")"
expect_rc 1 "show --rank past the devices (microbatches are none)" "$CARVE" show "$ex/gpt2_small.cir" "$ex/gpt2_small_pp.tac" x1 --train "$train" --rank 4
expect_rc 1 "show an unknown value" "$CARVE" show "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac" nothing
grep -q "carve: error: no value named 'nothing'" "$tmp/err" && ok || bad "unknown value message: $(cat "$tmp/err")"
expect_rc 1 "show --rank outside the mesh" "$CARVE" show "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac" l0.h --rank 4
expect_rc 2 "show without a value" "$CARVE" show "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac"
expect_rc 1 "show --svg into a missing folder" "$CARVE" show "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac" l0.h --svg /nonexistent/x.svg

# ---- diff ----
expect_rc 0 "diff BP against BP+MP" "$CARVE" diff "$ex/gpt2_small.cir" "$ex/gpt2_small_bp.tac" "$ex/gpt2_small_bp_mp.tac" --train "$train" --json
python3 - "$tmp/out" <<'PY' && ok || bad "diff --json: the Megatron weights and 8 all-reduces"
import json, sys
j = json.load(open(sys.argv[1]))
params = [(v["pattern"], v["numbers"]) for v in j["values"] if v["kind"] == "param"]
want = ["l{i}.attn.wq", "l{i}.attn.wk", "l{i}.attn.wv", "l{i}.attn.wo", "l{i}.mlp.w1", "l{i}.mlp.b1", "l{i}.mlp.w2"]
assert [p for p, _ in params] == want, params
assert all(n == {"i": [0, 1]} for _, n in params), params
added = j["collectives"]["added"]
assert sum(c["count"] for c in added) == 8 and all(c["kind"] == "all_reduce" and c["axes"] == "{model}" for c in added), added
assert j["collectives"]["removed"] == [], j["collectives"]["removed"]
assert j["mesh_differs"] and j["a"]["mesh"] == {"batch": 4} and j["b"]["mesh"] == {"batch": 2, "model": 2}
# 31 and 39 each alone; the 16 tiny gradients (biases, norm gains) join one bucket
assert j["a"]["collectives"]["all_reduce"]["count"] == 16 and j["b"]["collectives"]["all_reduce"]["count"] == 24, j["a"]["collectives"]
assert j["b"]["simulated"]["time"]["total"] > 0
print("diff: %d values in %d patterns differ; +%d all_reduce" % (j["values_changed"], len(j["values"]), len(added)))
PY
expect_rc 0 "diff as text" "$CARVE" diff "$ex/gpt2_small.cir" "$ex/gpt2_small_bp.tac" "$ex/gpt2_small_bp_mp.tac" --train "$train"
grep -q "^  parameters (14 values in 7 patterns):" "$tmp/out" && grep -q "only in B (8):" "$tmp/out" && grep -q "^meshes differ" "$tmp/out" \
  && ok || bad "diff text: $(head -12 "$tmp/out")"
expect_rc 2 "diff with one tactic file" "$CARVE" diff "$ex/gpt2_small.cir" "$ex/gpt2_small_bp.tac"
grep -q "diff needs a model file and two tactic files" "$tmp/err" && ok || bad "diff usage: $(cat "$tmp/err")"
expect_rc 1 "diff with a broken tactic file" "$CARVE" diff "$ex/gpt2_small.cir" "$ex/gpt2_small_bp.tac" "$SRCDIR/tests/errors/missing_on.tac"

# ---- bisection under mpirun ----
out=$($MPIRUN -n 4 "$CARVE" run "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac" --train "$train" --check --bisect 2>"$tmp/err")
[[ "$out" == "bisect: no value differs beyond 1e-4; the largest error is "* ]] && ok || bad "a correct plan: $out $(head -3 "$tmp/err")"
"$CARVE" apply "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac" --train "$train" --json --bucket 0 > "$tmp/apply.json"   # bisect joins no reduction
for k in 1 5 11 39; do
  out=$($MPIRUN -n 4 "$CARVE" run "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac" --train "$train" --check --bisect --json \
        --test-drop-collective $k 2>"$tmp/err")
  python3 - "$tmp/apply.json" "$out" $k <<'PY' && ok || bad "dropped all_reduce $k: $out $(head -3 "$tmp/err")"
import json, sys
ar = [c for c in json.load(open(sys.argv[1]))["collectives"] if c["kind"] == "all_reduce"]
k = int(sys.argv[3]); want = ar[k - 1]
j = json.loads(sys.argv[2]); m = j["mismatch"]
assert m and m["value"] == want["value"], (m, want)
assert m["made_by"] == [] and m["reduced_by_plan"] == "{" + ", ".join(want["axes"]) + "}", m
assert all(b["error"] <= 1e-4 for b in j["before"]), j["before"]
print("dropped all_reduce %d of %s over %s: found at '%s' (error %.2g)" % (k, want["value"], want["axes"], m["value"], m["error"]))
PY
done
out=$($MPIRUN -n 2 "$CARVE" run "$ex/mlp_small.cir" "$ex/mlp_mp.tac" --train 'sgd(lr = 0.1)' --steps 3 --bisect --tolerance 1e-5 2>"$tmp/err")
[[ "$out" == "bisect: no value differs beyond 1e-5;"* ]] && [[ "$out" == *"of step 3 compared"* ]] && ok || bad "step 3 of the MLP: $out"
# a partial sum of another type than f32 is summed over its devices too (f64
# to 1e-9; bf16 with SGD to its tolerance, measured against f32 as well)
out=$($MPIRUN -n 2 "$CARVE" run "$SRCDIR/tests/data/gpt_pp_f64.cir" "$SRCDIR/tests/data/mp2.tac" --train 'sgd(lr = 0.1)' --bisect 2>"$tmp/err")
[[ "$out" == "bisect: no value differs beyond 1e-9;"* ]] && ok || bad "f64 partial sums: $out $(head -3 "$tmp/err")"
out=$($MPIRUN -n 4 "$CARVE" run "$ex/gpt2_small.cir" "$ex/gpt2_small_mp.tac" --train 'sgd(lr = 0.1, precision = bf16)' --bisect 2>"$tmp/err")
[[ "$out" == "bisect: no value differs beyond 0.05;"* ]] && ok || bad "bf16 partial sums: $out $(head -3 "$tmp/err")"
# Adam in bf16: the first mismatch is an update where rounding decides a
# gradient's sign, and the report says so
out=$($MPIRUN -n 4 "$CARVE" run "$ex/gpt2_small.cir" "$ex/gpt2_small_mp.tac" --train 'adam(lr = 1e-3, precision = bf16)' --bisect 2>"$tmp/err")
[[ "$out" == "bisect: first mismatch at 'adam."*"  (Adam's update in low precision: "* ]] && [[ "$out" == *"values over the tolerance, each at most 4 times"* ]] &&
  ok || bad "bf16 Adam: $out $(head -3 "$tmp/err")"
expect_rc 2 "--bisect without a tactic file" "$CARVE" run "$ex/mlp_small.cir" --bisect
expect_rc 2 "a bad --tolerance" "$CARVE" run "$ex/mlp_small.cir" "$ex/mlp_mp.tac" --bisect --tolerance -3
expect_rc 2 "--bisect with --save" "$CARVE" run "$ex/mlp_small.cir" "$ex/mlp_mp.tac" --bisect --save "$tmp/x.safetensors"

# ---- saved programs ----
lower() { "$CARVE" lower "$ex/gpt2_small.cir" "$@" --train "$train" --keep-values > /dev/null 2> "$tmp/err" || bad "lower $*: $(cat "$tmp/err")"; }
lower "$ex/gpt2_small_bp_mp.tac" -o "$tmp/bpmp.prog"
lower -o "$tmp/one.prog"
lower "$ex/gpt2_small_bp_mp.tac" --test-drop-collective 11 -o "$tmp/bad.prog"
expect_rc 0 "bisect two good programs" "$CARVE" bisect "$tmp/bpmp.prog" "$tmp/one.prog"
grep -q "^bisect: no value differs beyond 1e-4" "$tmp/out" && ok || bad "saved good programs: $(cat "$tmp/out")"
expect_rc 1 "bisect a planted wrong collective (a mismatch: exit 1)" "$CARVE" bisect "$tmp/bad.prog" "$tmp/one.prog" --json
python3 -c "
import json, sys
j = json.load(open(sys.argv[1])); m = j['mismatch']
assert m['value'] == 'bwd.l1.h.matmul.da' and m['reduced_by_plan'] == '{model}', m
" "$tmp/out" && ok || bad "saved planted: $(cat "$tmp/out")"
# ring attention's transfers and the sequence dealt zig-zag read back from a program file
lower "$SRCDIR/tests/data/cp2.tac" -o "$tmp/cp.prog"
grep -q "^zigzag 1$" "$tmp/cp.prog" && ok || bad "the zig-zag axes in a program file: $(sed -n 4,5p "$tmp/cp.prog")"
expect_rc 0 "bisect ring attention over a sequence dealt zig-zag" "$CARVE" bisect "$tmp/cp.prog" "$tmp/one.prog"
grep -q "^bisect: no value differs beyond 1e-4" "$tmp/out" && ok || bad "a context-parallel program: $(cat "$tmp/out")"
# pipeline stages in a program file: each instruction and buffer with its
# stages; the 4-layer GPT over 2 and 4 stages (zero-bubble) against one
# device, and a file whose transfers were edited (re-stamped) is refused
# at the receive that would wait for ever
for t in pp2 pp4_zb; do
  "$CARVE" lower "$SRCDIR/tests/data/gpt_pp_f64.cir" "$SRCDIR/tests/data/$t.tac" --train 'adam(lr = 1e-3)' -o "$tmp/$t.prog" > /dev/null 2> "$tmp/err" ||
    bad "lower -o $t: $(cat "$tmp/err")"
done
"$CARVE" lower "$SRCDIR/tests/data/gpt_pp_f64.cir" --train 'adam(lr = 1e-3)' -o "$tmp/one64.prog" > /dev/null 2> "$tmp/err" || bad "lower -o one64: $(cat "$tmp/err")"
grep -q "^stages 0$" "$tmp/pp2.prog" && ok || bad "the stage axis in a program file: $(sed -n 4,6p "$tmp/pp2.prog")"
# carve explain of a pipelined plan: where a value runs, and why there
"$CARVE" explain "$SRCDIR/tests/data/gpt_pp.cir" "$SRCDIR/tests/data/pp4_zb.tac" grad.wte --train 'sgd(lr = 0.1)' > "$tmp/ex" 2>&1
grep -q "on stage 0: the gradient of 'wte', which stages 0, 3 read: each sums its own part" "$tmp/ex" && ok || bad "explain grad.wte: $(cat "$tmp/ex")"
"$CARVE" explain "$SRCDIR/tests/data/gpt_pp.cir" "$SRCDIR/tests/data/pp4_zb.tac" x1 --train 'sgd(lr = 0.1)' > "$tmp/ex" 2>&1
grep -q "it ends stage 0: each microbatch's piece goes to stage 1" "$tmp/ex" && ok || bad "explain x1: $(cat "$tmp/ex")"
# carve lower --rank of a pipelined plan: the rank's stage, and only what that stage holds
"$CARVE" lower "$SRCDIR/tests/data/gpt_pp.cir" "$SRCDIR/tests/data/pp4_zb.tac" --train 'sgd(lr = 0.1)' --rank 3 > "$tmp/r3" 2> "$tmp/err"
grep -q "^(the ranks of stage 3 run its instructions" "$tmp/r3" && grep -q "^  l3.mlp.w1 " "$tmp/r3" && ! grep -q "^  l0.mlp.w1 " "$tmp/r3" && ok ||
  bad "lower --rank 3 of a pipeline: $(head -8 "$tmp/r3") $(cat "$tmp/err")"
for t in pp2 pp4_zb; do
  expect_rc 0 "bisect pipeline stages ($t)" "$CARVE" bisect "$tmp/$t.prog" "$tmp/one64.prog" --steps 2 --tolerance 1e-10
  grep -q "^bisect: no value differs beyond 1e-10" "$tmp/out" && grep -q "(28[0-9] values of step 2 compared" "$tmp/out" && ok ||
    bad "a pipelined program ($t): $(cat "$tmp/out")"
done
python3 - "$tmp/pp2.prog" "$tmp/pp2_hang.prog" <<'PY'
import re, sys
def fnv(b):                               # the program file's checksum (interp/drive/progfile.c)
    h = 1469598103934665603
    for c in b: h = ((h ^ c) * 1099511628211) & 0xffffffffffffffff
    return h
t = open(sys.argv[1], 'rb').read()
body = t[:t.rfind(b'\nend ') + 1].split(b'\n')
k = next(i for i, l in enumerate(body) if l.startswith(b'instr op recv'))
body[k] = re.sub(rb' off (\d+)', lambda m: b' off %d' % (int(m.group(1)) + 1000), body[k], count=1)
body = b'\n'.join(body)
open(sys.argv[2], 'wb').write(body + b'end %016x\n' % fnv(body))
PY
expect_rc 1 "a pipelined program whose transfers were edited" "$CARVE" bisect "$tmp/pp2_hang.prog" "$tmp/one64.prog"
grep -q "pp2_hang.prog:[0-9]*:1: error: the stages' transfers would wait for ever: stage 0 at instruction" "$tmp/err" && ok ||
  bad "edited transfers: $(cat "$tmp/err")"
expect_rc 2 "lower --keep-values without -o" "$CARVE" lower "$ex/gpt2_small.cir" --keep-values
sed -i '20s/f32/i32/' "$tmp/bpmp.prog"
expect_rc 1 "a changed program file" "$CARVE" bisect "$tmp/bpmp.prog" "$tmp/one.prog"
grep -q "checksum does not match" "$tmp/err" && grep -q "bpmp.prog:" "$tmp/err" && ok || bad "changed file: $(cat "$tmp/err")"
expect_rc 1 "not a program file" "$CARVE" bisect "$ex/gpt2_small.cir" "$tmp/one.prog"
grep -q "not a carve program file" "$tmp/err" && ok || bad "not a program: $(cat "$tmp/err")"
expect_rc 2 "bisect with one file" "$CARVE" bisect "$tmp/one.prog"
# a program's constants travel in the file: two programs that differ in one constant's element
for c in 3.25 3.5; do
  cat > "$tmp/k$c.mlir" <<EOF
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<[1.5, -2.0, $c, 0.5]> : tensor<4xf32>
  %y = stablehlo.multiply %x, %c : tensor<4xf32>
  return %y : tensor<4xf32>
}
EOF
  "$CARVE" lower "$tmp/k$c.mlir" -o "$tmp/k$c.prog" --keep-values > /dev/null 2> "$tmp/err" || bad "lower k$c.mlir: $(cat "$tmp/err")"
done
expect_rc 1 "bisect programs with a constant each (they differ: exit 1)" "$CARVE" bisect "$tmp/k3.5.prog" "$tmp/k3.25.prog"
grep -q "'c'" "$tmp/out" && ! grep -q "^bisect: no value differs" "$tmp/out" && ok || bad "constants in program files: $(cat "$tmp/out")"

echo "debug: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# carve export end to end:
# (a) the four real StableHLO programs: export(import(file)) imports to the
#     same IR (op counts per kind, arguments and results: names, shapes,
#     dtypes), and the Llama block's sdy shardings survive;
# (b) carve's own examples under their tactic files: the exported program
#     runs to the same outputs as the model file, and its argument
#     shardings are what 'carve apply --json' reports;
# (c) --train: the exported training step imports, checks, and one step of
#     it gives carve's own step (loss and every updated parameter and state);
# and the command's errors.
set -u
models=${STABLEHLO_MODELS:-$SRCDIR/../shared/third_party/stablehlo-models}
[ -d "$models" ] || models=/work/shared/third_party/stablehlo-models
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
ex=$SRCDIR/examples

# the IR of a program, summarised: op counts per kind, then each argument
# and result as "kind name dtype[shape]"
summary() {  # FILE [--train OPT]
  "$CARVE" check "$@" --print 2>"$tmp/err" | python3 -c '
import re, sys, collections
ops = collections.Counter(); decl = []
for line in sys.stdin:
    m = re.match(r"\s*(input|param|state)\s+(\S+)\s*:\s*(\S+\[[^\]]*\]|\S+)", line)
    if m: decl.append(" ".join(m.groups())); continue
    m = re.match(r"\s*return\s+(.*)", line)
    if m: decl.append("return " + m.group(1).strip()); continue
    m = re.match(r"\s*\S+\s*=\s*([a-z_]+)\(", line)
    if m: ops[m.group(1)] += 1
for k in sorted(ops): print(k, ops[k])
for d in decl: print(d)'
}

# (a) round trips of the real programs
if [ -d "$models" ]; then
  for f in stablehlo-exports/searchless_chess_9m stablehlo-exports/pt_bert tt-mlir/sdy_llama_attn_prefill_manual byteir/NanoGPT_BW_input; do
    m=$models/$f.mlir; b=$(basename "$f")
    summary "$m" >"$tmp/$b.a" || { bad "check $b: $(head -3 "$tmp/err")"; continue; }
    timeout 300 "$CARVE" export "$m" -o "$tmp/$b.mlir" --quiet 2>"$tmp/err" && ok || { bad "export $b: $(head -3 "$tmp/err")"; continue; }
    summary "$tmp/$b.mlir" >"$tmp/$b.b" || { bad "re-import $b: $(head -3 "$tmp/err")"; continue; }
    diff "$tmp/$b.a" "$tmp/$b.b" >"$tmp/diff" && ok || bad "$b: the exported program imports differently: $(head -12 "$tmp/diff")"
  done
  # Llama: the sdy shardings, as a tactic file, go out and come back the same
  llama=$models/tt-mlir/sdy_llama_attn_prefill_manual.mlir
  "$CARVE" import "$llama" -o "$tmp/llama.cir" --tactics-out "$tmp/llama.tac" --quiet &&
    "$CARVE" export "$llama" "$tmp/llama.tac" -o "$tmp/llama_sh.mlir" --quiet 2>"$tmp/err" &&
    "$CARVE" import "$tmp/llama_sh.mlir" -o "$tmp/llama2.cir" --tactics-out "$tmp/llama2.tac" --quiet 2>>"$tmp/err" && ok ||
    bad "llama with shardings: $(head -3 "$tmp/err")"
  grep -q 'sdy.mesh @mesh = <\["_axis_0"=2\]>' "$tmp/llama_sh.mlir" && ok || bad "llama: no sdy.mesh"
  for a in p0.1 p1.6 p5.32 p7.69; do
    grep -h "\"$a\" dim" "$tmp/llama.tac" >"$tmp/s1"; grep -h "\"$a\" dim" "$tmp/llama2.tac" >"$tmp/s2"
    [ -s "$tmp/s1" ] && cmp -s "$tmp/s1" "$tmp/s2" && ok || bad "llama: $a's sharding changed: $(cat "$tmp/s1") -> $(cat "$tmp/s2")"
  done
else
  echo "no $models: (a) skipped"
fi

# (b) carve's examples: same outputs, shardings as apply reports them
same() {  # A B: equal up to float rounding (relative 1e-5 per tensor)
  python3 - "$1" "$2" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
b = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
assert len(a) == len(b) and a, "different outputs: %d vs %d" % (len(a), len(b))
for x, y in zip(a, b):
    assert x["shape"] == y["shape"] and x["dtype"] == y["dtype"], (x["name"], x["shape"], y["shape"])
    num = sum((p - q) ** 2 for p, q in zip(x["values"], y["values"]))
    den = sum(q * q for q in y["values"]) or 1
    assert (num / den) ** 0.5 < 1e-5, (x["name"], y["name"], (num / den) ** 0.5)
PY
}
shardings_agree() {  # EXPORTED.mlir APPLY.json
  python3 - "$1" "$2" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
head = text[text.index("@main("):text.index(") -> (")]
got = {}
for m in re.finditer(r'#sdy\.sharding<@mesh, \[(.*?)\]>[^}]*\} loc\("([^"]+)"\)', head):
    dims = re.findall(r'\{([^}]*)\}', m.group(1))
    got[m.group(2)] = [re.findall(r'"([^"]+)"', d) for d in dims]
want = {v["name"]: v["sharding"] for v in json.load(open(sys.argv[2]))["values"] if v["kind"] in ("input", "param", "state")}
assert got and set(got) == set(want), (sorted(got), sorted(want))
for n in want:
    assert got[n] == want[n], (n, got[n], want[n])
PY
}
for pair in "mlp_small.cir mlp_bp.tac" "mlp_small.cir mlp_mp.tac" "gpt2_small.cir gpt2_small_bp_mp.tac" "gpt2_small.cir gpt2_small_mp.tac"; do
  set -- $pair; m=$1; t=$2; b=${m%.cir}.${t%.tac}
  "$CARVE" export "$ex/$m" "$ex/$t" -o "$tmp/$b.mlir" --quiet 2>"$tmp/err" && ok || { bad "export $b: $(head -3 "$tmp/err")"; continue; }
  grep -q '^  sdy.mesh @mesh = <\["' "$tmp/$b.mlir" && grep -q 'func.func public @main(' "$tmp/$b.mlir" && ok || bad "$b: no mesh or @main"
  "$CARVE" run "$ex/$m" --steps 1 --print-outputs >"$tmp/$b.1" 2>"$tmp/err" || { bad "run $m: $(head -3 "$tmp/err")"; continue; }
  "$CARVE" run "$tmp/$b.mlir" --steps 1 --print-outputs >"$tmp/$b.2" 2>"$tmp/err" || { bad "run exported $b: $(head -3 "$tmp/err")"; continue; }
  same "$tmp/$b.2" "$tmp/$b.1" 2>"$tmp/err" && ok || bad "$b: outputs differ: $(tail -1 "$tmp/err")"
  "$CARVE" apply "$ex/$m" "$ex/$t" --json >"$tmp/$b.json" 2>/dev/null
  shardings_agree "$tmp/$b.mlir" "$tmp/$b.json" 2>"$tmp/err" && ok || bad "$b: argument shardings differ from apply --json: $(tail -1 "$tmp/err")"
done
# the exported forward program under its own shardings runs split too
if command -v mpirun >/dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  export LSAN_OPTIONS="suppressions=$SRCDIR/tests/mpi/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
  "$CARVE" import "$tmp/mlp_small.mlp_bp.mlir" -o "$tmp/mlpx.cir" --tactics-out "$tmp/mlpx.tac" --quiet 2>"$tmp/err" &&
    timeout 300 mpirun --oversubscribe -x LSAN_OPTIONS -x ASAN_OPTIONS -n 2 "$CARVE" run "$tmp/mlp_small.mlp_bp.mlir" "$tmp/mlpx.tac" \
      --steps 1 --print-outputs >"$tmp/mlpx.2" 2>>"$tmp/err" && same "$tmp/mlpx.2" "$tmp/mlp_small.mlp_bp.1" 2>>"$tmp/err" && ok ||
    bad "exported mlp on 2 ranks under its own shardings: $(tail -3 "$tmp/err")"
fi

# (c) training steps: the exported step re-imports, checks, and one step of
# it equals carve's own step (the loss, then every new parameter and state)
# (param_product: a parameter whose new value is not written over it)
for pair in "mlp_small.cir adam(lr = 1e-2)" "mlp_small.cir sgd(lr = 0.1, momentum = 0.9)" "gpt2_small.cir adam(lr = 3e-3)" \
    "../tests/data/param_product.cir sgd(lr = 0.5)" "../tests/data/param_product.cir adam(lr = 0.1)" \
    "../tests/data/bits_math.cir sgd(lr = 0.01)"; do
  m=${pair%% *}; opt=${pair#* }; b=$(basename "${m%.cir}").${opt%%(*}
  "$CARVE" export "$ex/$m" --train "$opt" -o "$tmp/$b.mlir" --quiet 2>"$tmp/err" && ok || { bad "export --train $b: $(head -3 "$tmp/err")"; continue; }
  "$CARVE" check "$tmp/$b.mlir" >/dev/null 2>"$tmp/err" && ok || { bad "check exported step $b: $(head -3 "$tmp/err")"; continue; }
  "$CARVE" run "$ex/$m" --train "$opt" --steps 1 --print-outputs >"$tmp/$b.1" 2>"$tmp/err" || { bad "run --train $b: $(head -3 "$tmp/err")"; continue; }
  "$CARVE" run "$tmp/$b.mlir" --steps 1 --print-outputs >"$tmp/$b.2" 2>"$tmp/err" || { bad "run exported step $b: $(head -3 "$tmp/err")"; continue; }
  same "$tmp/$b.2" "$tmp/$b.1" 2>"$tmp/err" && ok || bad "$b: the exported step differs: $(tail -1 "$tmp/err")"
done
# (d) an exported (or imported) forward program that ends in a loss trains
# with --train: 3 Adam steps give carve's own losses, on 1 process and on 2
# ranks under the batch tactic, where --check compares with one device (the
# losses to float rounding: layernorm and softmax are spelled out there)
losses() { grep -o 'loss [-0-9.e]*' "$1" | tr '\n' ' '; }
"$CARVE" export "$ex/gpt2_small.cir" -o "$tmp/gfwd.mlir" --quiet 2>"$tmp/err" &&
  "$CARVE" run "$tmp/gfwd.mlir" --train 'adam(lr = 1e-3)' --steps 3 >"$tmp/gfwd.out" 2>"$tmp/err" &&
  "$CARVE" run "$ex/gpt2_small.cir" --train 'adam(lr = 1e-3)' --steps 3 >"$tmp/gcir.out" 2>>"$tmp/err" &&
  python3 -c 'import sys; a, b = (list(map(float, x.split()[1::2])) for x in sys.argv[1:]); assert len(a) == 3 == len(b)
assert all(abs(x - y) <= 1e-5 * abs(y) for x, y in zip(a, b)), (a, b)' "$(losses "$tmp/gfwd.out")" "$(losses "$tmp/gcir.out")" 2>>"$tmp/err" && ok ||
  bad "--train on an exported forward program: $(losses "$tmp/gfwd.out") vs $(losses "$tmp/gcir.out") $(tail -2 "$tmp/err")"
if command -v mpirun >/dev/null; then
  printf 'version 1\nmesh batch = 2\nuse "batch" as bp (axis = batch)\nschedule bp\n' >"$tmp/bp.tac"
  out=$(timeout 300 mpirun --oversubscribe -x LSAN_OPTIONS -x ASAN_OPTIONS -n 2 "$CARVE" run "$tmp/gfwd.mlir" "$tmp/bp.tac" \
        --train 'adam(lr = 1e-3)' --steps 3 --check 2>"$tmp/err")
  [[ "$out" == *"tolerance 0.0001: within"* ]] && ok || bad "--train on an exported forward program, 2 ranks: $out $(tail -2 "$tmp/err")"
fi

# with a plan: the step's arguments carry the plan's shardings (grads are not arguments)
"$CARVE" export "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac" --train 'adam(lr = 3e-3)' -o "$tmp/step_sh.mlir" --quiet 2>"$tmp/err" && ok || bad "export --train with a plan: $(head -3 "$tmp/err")"
"$CARVE" apply "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac" --train 'adam(lr = 3e-3)' --json >"$tmp/step_sh.json" 2>/dev/null
shardings_agree "$tmp/step_sh.mlir" "$tmp/step_sh.json" 2>"$tmp/err" && ok || bad "step shardings differ from apply --json: $(tail -1 "$tmp/err")"

# carve's own training step through StableHLO and back: composites keep
# attention, layer norm, cross-entropy and their gradients whole, and the
# Adam update is fused again, so the imported step lowers to the same
# instructions, simulates to the same time and memory, moves the same
# collectives under every stock plan, and trains to the same losses
round_trip() {  # MODEL TRAIN STEPS TACTIC... (STEPS 0: too large to run here)
  local m=$ex/$1 tr=$2 steps=$3 sim
  shift 3
  "$CARVE" export "$m" --train "$tr" -o "$tmp/rt.mlir" --quiet 2>"$tmp/err" || { bad "export $m: $(head -2 "$tmp/err")"; return; }
  a=$("$CARVE" lower "$m" --train "$tr" | grep -oE '= [a-z_0-9]+' | sort | uniq -c)
  b=$("$CARVE" lower "$tmp/rt.mlir" | grep -oE '= [a-z_0-9]+' | sort | uniq -c)
  [ "$a" = "$b" ] && ok || bad "$(basename "$m") $tr: the imported step lowers to other instructions: $(diff <(echo "$a") <(echo "$b") | head -6)"
  for dev in h100-sxm a100-80g; do
    sim=$(python3 -c "
import json, subprocess, sys
def s(*a): return json.loads(subprocess.check_output(['$CARVE', 'simulate', *a, '--device', '$dev', '--json']))
n, i = s('$m', '--train', '$tr'), s('$tmp/rt.mlir')
for k in ('total',): assert abs(n['time'][k] - i['time'][k]) <= 0.05 * n['time'][k], ('time', n['time'], i['time'])
assert abs(n['memory']['peak'] - i['memory']['peak']) <= 0.05 * n['memory']['peak'], ('peak', n['memory'], i['memory'])" 2>&1) && ok ||
      bad "$(basename "$m") $tr on $dev: the imported step simulates otherwise: $(echo "$sim" | tail -1)"
  done
  for t in "$@"; do
    a=$("$CARVE" apply "$m" "$ex/$t" --train "$tr" --json | python3 -c 'import json,sys; c=json.load(sys.stdin)["collectives"]; print(len(c), sum(x["bytes"] for x in c))')
    b=$("$CARVE" apply "$tmp/rt.mlir" "$ex/$t" --json 2>"$tmp/err" | python3 -c 'import json,sys; c=json.load(sys.stdin)["collectives"]; print(len(c), sum(x["bytes"] for x in c))' 2>>"$tmp/err")
    [ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "$(basename "$m") $tr under $t: collectives $a, imported $b $(head -2 "$tmp/err")"
  done
  [ "$steps" -gt 0 ] || return 0
  a=$("$CARVE" run "$m" --train "$tr" --steps "$steps" --json) && b=$("$CARVE" run "$tmp/rt.mlir" --steps "$steps" --json 2>"$tmp/err") &&
    python3 -c "
import json, sys
a, b = (json.loads(x)['losses'] for x in sys.argv[1:])
assert all(abs(x - y) <= 1e-5 * abs(y) for x, y in zip(a, b)), (a, b)" "$a" "$b" 2>>"$tmp/err" && ok ||
    bad "$(basename "$m") $tr: the imported step trains otherwise: $(tail -2 "$tmp/err")"
}
round_trip gpt2_small.cir 'adam(lr = 1e-3)' 4 gpt2_small_bp.tac gpt2_small_mp.tac gpt2_small_bp_mp.tac gpt2_small_bp_mp_z1.tac \
  gpt2_small_bp_mp_z2.tac gpt2_small_bp_mp_z3.tac gpt2_small_bp_z3.tac gpt2_small.tac
round_trip gpt2_small.cir 'sgd(lr = 0.1, momentum = 0.9)' 4 gpt2_small_bp_mp.tac
round_trip mlp_small.cir 'adam(lr = 1e-3)' 4 mlp_bp.tac mlp_mp.tac
round_trip gpt2.cir 'adam(lr = 1e-4)' 0 gpt2_bp.tac gpt2_mp.tac gpt2_bp_mp.tac gpt2_bp_mp_z2.tac gpt2_bp_mp_z3.tac gpt2.tac

# each composite computes what its decomposition does: the f64 step's
# outputs (loss, new parameters and state) with the composites taken whole
# and with --no-fuse (their decompositions run) agree to 1e-12
sed 's/f32\[/f64[/g' "$ex/gpt2_small.cir" >"$tmp/g64.cir"
"$CARVE" export "$tmp/g64.cir" --train 'adam(lr = 1e-3)' -o "$tmp/g64.mlir" --quiet 2>"$tmp/err" &&
  "$CARVE" run "$tmp/g64.mlir" --steps 1 --print-outputs >"$tmp/g64.a" 2>>"$tmp/err" &&
  "$CARVE" run "$tmp/g64.mlir" --steps 1 --print-outputs --no-fuse >"$tmp/g64.b" 2>>"$tmp/err" &&
  [ "$(grep -c composite "$tmp/g64.mlir")" -gt 20 ] && python3 - "$tmp/g64.a" "$tmp/g64.b" <<'PY' 2>>"$tmp/err" && ok || bad "composites against their decompositions: $(tail -3 "$tmp/err")"
import json, sys
a, b = ([json.loads(l) for l in open(p) if l.startswith("{")] for p in sys.argv[1:])
assert len(a) == len(b) > 60, (len(a), len(b))
for x, y in zip(a, b):
    num = sum((p - q) ** 2 for p, q in zip(x["values"], y["values"]))
    den = sum(q * q for q in y["values"]) or 1
    assert (num / den) ** 0.5 <= 1e-12, (x["name"], (num / den) ** 0.5)
PY

# import -o keeps carve's composites as its ops; with --no-fuse it writes
# their decompositions
"$CARVE" export "$ex/mlp_small.cir" --train 'adam(lr = 1e-3)' -o "$tmp/ms.mlir" --quiet 2>"$tmp/err" &&
  "$CARVE" import "$tmp/ms.mlir" -o "$tmp/ms1.cir" --quiet 2>>"$tmp/err" && "$CARVE" import "$tmp/ms.mlir" -o "$tmp/ms2.cir" --no-fuse --quiet 2>>"$tmp/err" &&
  [ "$(grep -c '= gelu(' "$tmp/ms1.cir")" = 1 ] && [ "$(grep -c '= gelu(' "$tmp/ms2.cir")" = 0 ] && "$CARVE" check "$tmp/ms2.cir" >/dev/null 2>>"$tmp/err" && ok ||
  bad "import -o with and without --no-fuse: $(head -2 "$tmp/err")"

# integers beyond 2^53 and NaN's sign survive export and import
printf 'model m {\n  input x : i64[2]\n  c = constant([9223372036854775807, -9223372036854775808], [2], i64)\n  f = constant(["-nan", "nan"], [2], f32)\n  y = add(x, c)\n  return y, f\n}\n' >"$tmp/ext.cir"
"$CARVE" export "$tmp/ext.cir" -o "$tmp/ext.mlir" --quiet 2>"$tmp/err" && grep -q 'dense<\[9223372036854775807, -9223372036854775808\]>' "$tmp/ext.mlir" &&
  grep -q 'dense<\[0xFFC00000, 0x7FC00000\]>' "$tmp/ext.mlir" && "$CARVE" import "$tmp/ext.mlir" -o "$tmp/ext2.cir" --quiet 2>>"$tmp/err" &&
  grep -q 'constant(\[9223372036854775807, -9223372036854775808\], \[2\], i64)' "$tmp/ext2.cir" && grep -q 'constant(\["-nan", "nan"\]' "$tmp/ext2.cir" && ok ||
  bad "i64 extremes and NaN signs through export and import: $(cat "$tmp/err"; grep constant "$tmp/ext.mlir" "$tmp/ext2.cir")"

# errors: one located line, exit 1 (2 for usage), never a crash
expect_err() {  # RC WANT CMD...
  local rc=$1 want=$2; shift 2
  out=$("$@" 2>&1 >/dev/null); got=$?
  first=$(printf '%s\n' "$out" | head -1)
  [ "$got" -eq "$rc" ] && [[ "$first" == *"$want"* ]] && [[ "$first" =~ ^([^:]+:[0-9]+:[0-9]+|carve):\ error:\  ]] && ok ||
    bad "$* -> exit $got: $first (wanted $rc, '$want')"
}
expect_err 2 "export needs -o" "$CARVE" export "$ex/mlp_small.cir"
expect_err 1 "-o:" "$CARVE" export "$ex/mlp_small.cir" -o "$tmp/no/such/dir/x.mlir"
expect_err 1 "-o:" "$CARVE" export "$ex/mlp_small.cir" -o "$tmp"
expect_err 1 "error:" "$CARVE" export "$tmp/missing.cir" -o "$tmp/x.mlir"
expect_err 1 "model" "$CARVE" export "$ex/mlp_small.cir" --model nosuch -o "$tmp/x.mlir"
expect_err 1 "error:" "$CARVE" export "$ex/mlp_small.cir" --train 'adam(lr = )' -o "$tmp/x.mlir"
[ ! -e "$tmp/x.mlir" ] && ok || bad "a failed export left a file"

echo "export: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

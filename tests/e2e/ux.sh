#!/usr/bin/env bash
# Rough edges a new user hit, one section each: run --print-outputs without
# --steps, non-finite outputs of a forward program, bisect's exit status,
# apply's summary, "did you mean", every option in its command's --help
# synopsis, unclosed brackets reported where they open, swapped file
# arguments, a sweep where no mesh divides the model, numbers printed
# exactly, the operands of a fused SGD update, README's mpirun lines.
set -u
ex="$SRCDIR/examples"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$SRCDIR/tests/e2e/mpi_env.sh"     # exports for mpirun; $MPIRUN
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
run() {  # run RC DESCRIPTION CMD...: stdout in $tmp/out, stderr in $tmp/err
  local want=$1 what=$2; shift 2
  timeout 300 "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" -eq "$want" ]; then ok; else bad "$what: exit $rc, wanted $want"; sed 's/^/    /' "$tmp/err" | head -5; fi
}
has() {  # has FILE TEXT DESCRIPTION: the file holds the text
  grep -qF -- "$2" "$tmp/$1" && ok || { bad "$3: no '$2' in $1:"; sed 's/^/    /' "$tmp/$1" | head -8; }
}
hasnt() {  # hasnt FILE TEXT DESCRIPTION
  grep -qF -- "$2" "$tmp/$1" && { bad "$3: '$2' in $1:"; sed 's/^/    /' "$tmp/$1" | head -8; } || ok
}
json_lines() {  # every line of $tmp/out is one JSON object
  python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert lines, "no output"
for l in lines: json.loads(l)
' "$tmp/out" && ok || { bad "$1: stdout is not JSON lines only:"; sed 's/^/    /' "$tmp/out" | head -5; }
}

# ---- 1. run --print-outputs: one step by default without --train; stdout JSON lines only ----
printf 'model fwd {\n  input x : f32[2, 3]\n  param w : f32[3, 2] = normal(0.05)\n  y = matmul(x, w)\n  return y\n}\n' > "$tmp/fwd.cir"
run 0 "a forward program with --print-outputs and no --steps" "$CARVE" run "$tmp/fwd.cir" --print-outputs
json_lines "forward --print-outputs"
has err "step 1  sum of the output" "the step line goes to stderr"
run 0 "a step of its own with --print-outputs and no --steps" "$CARVE" run "$SRCDIR/tests/data/hlo/jax_sgd_step.mlir" --print-outputs
json_lines "an imported step's --print-outputs"
[ "$(wc -l < "$tmp/out")" -ge 2 ] && ok || bad "an imported step prints each output: $(cat "$tmp/out")"
run 2 "--train still needs --steps" "$CARVE" run "$ex/mlp_small.cir" --train 'sgd(lr = 0.1)' --print-outputs
run 0 "run without --train or --steps: one step" "$CARVE" run "$tmp/fwd.cir"
has out "step 1  sum of the output" "a forward program runs once"
run 0 "--print-outputs with --steps 2" "$CARVE" run "$ex/mlp_small.cir" --train 'sgd(lr = 0.1)' --steps 2 --print-outputs
json_lines "training --print-outputs"
has err "step 2  loss" "training step lines go to stderr with --print-outputs"
has err "median step" "the report goes to stderr with --print-outputs"

# ---- 2. non-finite outputs of a forward program: printed, a note, exit 0 ----
printf 'model inf {\n  input x : f32[4]\n  z = sub(x, x)\n  y = log(z)\n  n = div(z, z)\n  return y, n\n}\n' > "$tmp/inf.cir"
run 0 "a forward program whose outputs are -inf and NaN" "$CARVE" run "$tmp/inf.cir" --print-outputs
json_lines "non-finite outputs"
has out '"values":["-inf", "-inf", "-inf", "-inf"]' "-inf spelt as a string"
has out '"values":["nan", "nan", "nan", "nan"]' "NaN spelt as a string"
[ "$(grep -c 'carve: note: step 1: the output holds NaN or infinite values' "$tmp/err")" -eq 1 ] && ok ||
  bad "one note for the non-finite outputs: $(cat "$tmp/err")"
hasnt err "learning rate" "a forward program is not told about learning rates"
run 0 "a forward program's non-finite sum, several steps" "$CARVE" run "$tmp/inf.cir" --steps 3
[ "$(grep -c 'carve: note:' "$tmp/err")" -eq 1 ] && ok || bad "the note once over three steps: $(cat "$tmp/err")"
# a training loss that turns infinite still stops the run
printf 'model bad {\n  input x : f32[4]\n  param w : f32[4] = ones\n  z = sub(mul(x, w), mul(x, w))\n  loss = log(mean(mul(z, z)))\n  return loss\n}\n' > "$tmp/badloss.cir"
run 1 "a training loss of -inf stops" "$CARVE" run "$tmp/badloss.cir" --train 'sgd(lr = 0.1)' --steps 1
has err "lower the learning rate" "the training loss's message"

# ---- 3. bisect and run --bisect: exit 1 on a mismatch ----
"$CARVE" lower "$ex/mlp_small.cir" "$ex/mlp_mp.tac" --train 'sgd(lr = 0.1)' --keep-values -o "$tmp/mp.prog" >/dev/null 2>"$tmp/err" &&
  "$CARVE" lower "$ex/mlp_small.cir" --train 'sgd(lr = 0.1)' --keep-values -o "$tmp/one.prog" >/dev/null 2>>"$tmp/err" &&
  "$CARVE" lower "$ex/mlp_small.cir" "$ex/mlp_mp.tac" --train 'sgd(lr = 0.1)' --keep-values --test-drop-collective 1 \
    -o "$tmp/bad.prog" >/dev/null 2>>"$tmp/err" && ok || bad "lower -o: $(cat "$tmp/err")"
run 0 "bisect of two programs that agree" "$CARVE" bisect "$tmp/mp.prog" "$tmp/one.prog"
has out "bisect: no value differs" "the programs agree"
run 1 "bisect of a planted wrong collective" "$CARVE" bisect "$tmp/bad.prog" "$tmp/one.prog"
has out "first mismatch" "the mismatch is reported"
run 1 "bisect --json of a planted wrong collective" "$CARVE" bisect "$tmp/bad.prog" "$tmp/one.prog" --json
python3 -c "import json, sys; assert json.load(open(sys.argv[1]))['mismatch']" "$tmp/out" && ok || bad "bisect --json: $(cat "$tmp/out")"
run 0 "run --bisect of a correct plan" $MPIRUN -n 2 "$CARVE" run "$ex/mlp_small.cir" "$ex/mlp_mp.tac" --train 'sgd(lr = 0.1)' --bisect
run 1 "run --bisect of a planted wrong collective" $MPIRUN -n 2 "$CARVE" run "$ex/mlp_small.cir" "$ex/mlp_mp.tac" --train 'sgd(lr = 0.1)' \
  --bisect --test-drop-collective 1
has out "first mismatch" "run --bisect reports the mismatch"

# ---- 4. apply: a summary by default, the listing with --verbose, --json unchanged ----
T=(--train 'adam(lr = 1e-3)')
run 0 "apply's summary" "$CARVE" apply "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac" "${T[@]}"
[ "$(wc -l < "$tmp/out")" -le 24 ] && ok || bad "the summary fits a screen: $(wc -l < "$tmp/out") lines"
has out "mesh: batch=2, model=2  (4 devices)" "the summary's mesh"
has out "tactics applied, in order: bp (split " "the summary's tactics"
grep -qE "^values: [0-9]+, [0-9]+ split: [0-9]+ of 30 params, " "$tmp/out" && ok || bad "the summary's counts: $(cat "$tmp/out")"
has out "conflicts: 0" "the summary's conflicts"
grep -qE "^memory per device: [0-9.]+ [KMG]iB" "$tmp/out" && ok || bad "the summary's memory: $(cat "$tmp/out")"
grep -qE "^total: [0-9]+ all_reduce \([0-9.]+ [KMG]?i?B\)$" "$tmp/out" && ok || bad "the summary's collectives: $(cat "$tmp/out")"
hasnt out "local shape" "the summary lists no values"
run 0 "apply --verbose" "$CARVE" apply "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac" "${T[@]}" --verbose
grep -qE "^l0\.mlp\.w1 +param +\[64, 256\] +\[-, model\]" "$tmp/out" && grep -q "^collectives per step and device:$" "$tmp/out" &&
  grep -q "^  all_reduce " "$tmp/out" && ok || bad "apply --verbose lists every value and collective: $(head -5 "$tmp/out")"
run 0 "apply --json" "$CARVE" apply "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac" "${T[@]}" --json
python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
assert set(j) == {'mesh', 'values', 'conflicts', 'collectives'}, set(j)
assert len(j['values']) > 500 and all(isinstance(c['bytes'], int) for c in j['collectives'])
" "$tmp/out" && ok || bad "apply --json is unchanged: $(head -c 300 "$tmp/out")"
printf 'version 1\nmesh model = 2\nuse "megatron" as mp (axis = model)\ntactic rows {\n  shard param "w1" dim 0 on model\n}\nschedule mp, rows\n' > "$tmp/conflict.tac"
run 0 "apply's summary with a conflict" "$CARVE" apply "$ex/mlp_small.cir" "$tmp/conflict.tac"
has out "conflicts: 1 (1 refused tactic statement" "the summary counts the conflict"

# ---- 6. did you mean ----
run 2 "an unknown command" "$CARVE" chekc "$ex/mlp.cir"
has err "carve: error: unknown command 'chekc'; did you mean 'check'?" "a command misspelt"
run 2 "an unknown option" "$CARVE" run "$ex/mlp_small.cir" --stesp 3
has err "carve: error: unknown option '--stesp'; did you mean '--steps'? (see 'carve run --help')" "an option misspelt"
run 2 "an unknown option, nothing close" "$CARVE" run "$ex/mlp_small.cir" --frobnicate
hasnt err "did you mean" "no suggestion far from every option"
printf 'model net {\n  input x : f32[8, 4]\n  param fc1.weight : f32[4, 4]\n  y = mean(matmul(x, fc1.weight))\n  return y\n}\n' > "$tmp/net.cir"
printf 'version 1\nmesh m = 2\ntactic t {\n  shard param "fc1.weigth" dim 1 on m\n}\nschedule t\n' > "$tmp/typo.tac"
run 1 "a misspelt param in a selector" "$CARVE" apply "$tmp/net.cir" "$tmp/typo.tac"
has err "typo.tac:4:15: error: no param matches 'fc1.weigth'; did you mean 'fc1.weight'?" "a param misspelt"
printf 'version 1\nmesh m = 2\nuse "megatorn" as mp (axis = m)\nschedule mp\n' > "$tmp/stdlib.tac"
run 1 "a misspelt stdlib tactic" "$CARVE" apply "$tmp/net.cir" "$tmp/stdlib.tac"
has err "stdlib.tac:3:5: error: no stdlib tactic 'megatorn'; did you mean 'megatron'?" "a stdlib tactic misspelt"
run 1 "a misspelt value for explain" "$CARVE" explain "$ex/mlp_small.cir" "$ex/mlp_mp.tac" w3
has err "no value named 'w3' in model 'mlp_small'; did you mean 'w1'?" "a value misspelt"
printf 'version 1\nmesh m = 2\ntactic t = auto (axes = [m], values = ["l0.mpl.w1"], budget = 5)\nschedule t\n' > "$tmp/av.tac"
run 1 "a misspelt value in auto's values" "$CARVE" auto "$ex/gpt2_small.cir" "$tmp/av.tac" -o "$tmp/av_out.tac"
has err "av.tac:3:40: error: no value matches 'l0.mpl.w1'; did you mean 'l0.mlp.w1'?" "auto's values misspelt"
printf 'show l0.mpl.w1\n' | "$CARVE" repl "$ex/gpt2_small.cir" "$ex/gpt2_small_mp.tac" >"$tmp/out" 2>&1
has out "no value named 'l0.mpl.w1'; did you mean 'l0.mlp.w1'?" "a value misspelt in the REPL"

# ---- 7. every option a command takes is in its --help synopsis ----
python3 - "$SRCDIR/cli/main.c" "$CARVE" <<'PY' && ok || bad "--help synopses"
import re, subprocess, sys
src, carve = open(sys.argv[1]).read(), sys.argv[2]
table = re.findall(r'\{"([a-z]+)", cli_[a-z]+, \d+, \d+, "([a-z0-9 -]*)"', src)
assert len(table) >= 14, "only %d commands read from cli/main.c's table" % len(table)
missing = []
for name, opts in table:
    out = subprocess.run([carve, name, "--help"], capture_output=True, text=True).stdout
    synopsis = out.split("\n\n")[0]          # "usage: carve ..." up to the first blank line
    for o in opts.split():
        flag = "-o" if o == "out" else "--" + o
        if not o.startswith("test-") and not re.search(re.escape(flag) + r"(?![a-z0-9-])", synopsis):
            missing.append("%s %s" % (name, flag))
if missing:
    print("options missing from their command's --help synopsis: " + ", ".join(missing))
    sys.exit(1)
PY

# ---- 8. an unclosed bracket is reported where it opened ----
printf 'model m {\n  input x : f32[4, 8]\n  param w : f32[8, 8]\n  h = matmul(x, w\n  y = mean(h)\n  return y\n}\n' > "$tmp/paren.cir"
run 1 "a missing ')'" "$CARVE" check "$tmp/paren.cir"
head -1 "$tmp/err" | grep -qF "paren.cir:4:13: error: unclosed '(' opened here: expected ')' to close the call of 'matmul' before 'y' on line 5" &&
  ok || bad "the missing ')' at its '(': $(cat "$tmp/err")"
has err "paren.cir:4:18: note: the ')' is missing here at the end of line 4" "a note where the ')' was due"
printf 'model m {\n  input x : f32[4, 8\n  y = mean(x)\n  return y\n}\n' > "$tmp/bracket.cir"
run 1 "a missing ']'" "$CARVE" check "$tmp/bracket.cir"
head -1 "$tmp/err" | grep -qF "bracket.cir:2:16: error: unclosed '[' opened here" && ok || bad "the missing ']': $(cat "$tmp/err")"
printf 'version 1\nmesh b = 2\ntactic t {\n  shard input "x" dim 0 on b\nschedule t\n' > "$tmp/brace.tac"
run 1 "a missing '}' in a tactic file" "$CARVE" apply "$ex/mlp_small.cir" "$tmp/brace.tac"
head -1 "$tmp/err" | grep -qF "brace.tac:3:10: error: unclosed '{' opened here: expected '}' to close tactic 't' before 'schedule' on line 5" &&
  ok || bad "the missing '}': $(cat "$tmp/err")"
printf 'version 1\nmesh b = 2\nuse "batch" as bp (axis = b\nschedule bp\n' > "$tmp/paren.tac"
run 1 "a missing ')' in a tactic file" "$CARVE" apply "$ex/mlp_small.cir" "$tmp/paren.tac"
head -1 "$tmp/err" | grep -qF "paren.tac:3:19: error: unclosed '(' opened here" && ok || bad "the tactic file's missing ')': $(cat "$tmp/err")"

# ---- 9. swapped file arguments ----
run 2 "apply X.tac X.cir" "$CARVE" apply "$ex/mlp_bp.tac" "$ex/mlp_small.cir"
has err "is a tactic file and '$ex/mlp_small.cir' a model: the model comes first, as in carve apply $ex/mlp_small.cir $ex/mlp_bp.tac" \
  "swapped files: the model comes first"
cp "$ex/mlp_bp.tac" "$tmp/plan.txt"; cp "$ex/mlp_small.cir" "$tmp/model.txt"
run 2 "swapped files known by their contents" "$CARVE" simulate "$tmp/plan.txt" "$tmp/model.txt"
has err "the model comes first" "swapped files by content"
run 2 "a tactic file alone where the model goes" "$CARVE" check "$ex/mlp_bp.tac"
has err "'$ex/mlp_bp.tac' is a tactic file, and the model comes first" "a tactic file alone"
run 0 "files in their order" "$CARVE" apply "$tmp/model.txt" "$tmp/plan.txt"

# ---- 10. simulate --sweep where no mesh divides the model ----
run 0 "a sweep no mesh of which divides the model" "$CARVE" simulate "$ex/mlp_small.cir" "$ex/mlp_bp.tac" --sweep 'batch=[3, 5]'
has out "no mesh of the sweep divides the model: each is refused above (batch=3: cannot split dim 0 of 'x' (size 16) into 3 pieces on 'batch'" \
  "the sweep says no mesh divides the model"
hasnt out "fits in" "not a matter of memory"
run 0 "the same sweep in JSON" "$CARVE" simulate "$ex/mlp_small.cir" "$ex/mlp_bp.tac" --sweep 'batch=[3, 5]' --json
python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
assert j['planned'] == 0 and j['fastest'] is None and all('error' in m for m in j['meshes']), j
" "$tmp/out" && ok || bad "sweep --json: planned 0 when no mesh divides: $(head -c 300 "$tmp/out")"

# ---- 11. numbers: integers exact, floats in their shortest round trip ----
run 0 "check --print" "$CARVE" check "$tmp/fwd.cir" --print
has out "param w : f32[3, 2] = normal(0.05)" "normal(0.05) printed as written"
run 0 "simulate --json" "$CARVE" simulate "$ex/gpt2.cir" --train 'adam(lr = 1e-3)' --json
python3 -c "
import json, re, sys
text = open(sys.argv[1]).read()
m = json.loads(text)['memory']
assert all(isinstance(v, int) for v in m.values()), m
assert m['peak'] > 10**9 and re.search(r'\"peak\":%d[,}]' % m['peak'], text), m
" "$tmp/out" && ok || bad "byte counts as exact integers: $(head -c 400 "$tmp/out")"
printf 'model tenth {\n  input x : f32[2]\n  y = add(mul(x, 0), 0.1)\n  return y\n}\n' > "$tmp/tenth.cir"
run 0 "--print-outputs of 0.1" "$CARVE" run "$tmp/tenth.cir" --print-outputs
has out '"values":[0.1, 0.1]' "an f32 0.1 printed as 0.1"

# ---- 12. lower: a fused SGD update's operands ----
run 0 "lower with sgd" "$CARVE" lower "$ex/mlp_small.cir" --train 'sgd(lr = 0.1)'
grep -q "= sgd .*# w2 <- w2, grad.w2$" "$tmp/out" && ok || bad "the SGD update reads w2 and its gradient: $(grep '= sgd' "$tmp/out")"
hasnt out "grad.w2, x" "no input among an SGD update's operands"
run 0 "lower with adam" "$CARVE" lower "$ex/mlp_small.cir" --train 'adam(lr = 0.1)'
grep -q "= adam .*# w2 <- w2, grad.w2, adam.m.w2, adam.v.w2, adam.lr_t, adam.eps_t$" "$tmp/out" && ok ||
  bad "the Adam update's operands: $(grep '= adam' "$tmp/out" | head -2)"

# ---- 12b. experts: scheduled after the tokens' split, or on a model without experts ----
printf 'version 1\nmesh e = 2\nuse "batch" as bp (axis = e)\nuse "experts" as ep (axis = e)\nschedule bp, ep\n' > "$tmp/late.tac"
run 1 "experts after batch" "$CARVE" apply "$SRCDIR/tests/data/moe_gshard.cir" "$tmp/late.tac"
has err "late.tac:4:1: error: experts: " "experts after batch: located at its use"
has err "schedule experts before the tactic that splits the tokens on 'e'" "experts after batch: says what to do"
printf 'version 1\nmesh e = 2\nuse "experts" as ep (axis = e)\nschedule ep\n' > "$tmp/noexp.tac"
run 1 "experts on an MLP" "$CARVE" apply "$ex/mlp.cir" "$tmp/noexp.tac"
has err "experts: no expert weight found" "experts on a model without experts"
printf 'version 1\nmesh e = 8\nuse "experts" as ep (axis = e)\nschedule ep\n' > "$tmp/eight.tac"
run 1 "4 experts on 8 devices" "$CARVE" apply "$SRCDIR/tests/data/moe_gshard.cir" "$tmp/eight.tac"
has err "experts: the 4 experts of 'w1' (dim 0) do not split into 8 pieces on 'e'" "experts that do not divide"

# ---- 12c. context: fused attention runs as a ring of sends, attention as written gathers ----
run 0 "context with fused attention" "$CARVE" apply "$ex/gpt2_small.cir" "$SRCDIR/tests/data/cp2.tac" --train 'sgd(lr = 0.1)'
has out "20 send (320.0 KiB), 20 recv (320.0 KiB)" "context with fused attention: the keys and values pass around the ring"
run 0 "context with attention as written" "$CARVE" apply "$ex/gpt2_small.cir" "$SRCDIR/tests/data/cp2.tac" --no-fuse --train 'sgd(lr = 0.1)'
has out "all_gather" "context with attention as written: the keys and values gathered"

# ---- 13. README's "Try it": every mpirun line has the variables that let it run as root ----
awk '/^## Try it/ {on = 1} on && /^```/ {n++; if (n == 2) exit} on && n == 1' "$SRCDIR/README.md" > "$tmp/try"
if [ -s "$tmp/try" ]; then
  awk '/(^|[ \t])mpirun / { if ($0 !~ /OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1/ && prev !~ /OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1/) { print; bad = 1 } }
       { prev = $0 } END { exit bad }' "$tmp/try" > "$tmp/bare" && ok || bad "README's Try it: mpirun without OMPI_ALLOW_RUN_AS_ROOT: $(cat "$tmp/bare")"
else
  ok    # no "Try it" block (README restructured): nothing to hold
fi

echo "ux: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

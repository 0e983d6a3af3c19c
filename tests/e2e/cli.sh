#!/usr/bin/env bash
# The command line: exit codes, usage errors, help, JSON, checks on examples.
set -u
ex="$SRCDIR/examples"
# under --enable-sanitizers: what OpenMPI and OpenBLAS keep until exit is not ours
export LSAN_OPTIONS="suppressions=$SRCDIR/tests/mpi/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export OMPI_MCA_mca_base_component_disable_dlclose=1
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
expect_rc() {  # expect_rc RC DESCRIPTION CMD...
  local want=$1 what=$2; shift 2
  timeout 300 "$@" >/tmp/carve_cli_out.$$ 2>/tmp/carve_cli_err.$$; local rc=$?
  if [ "$rc" -eq "$want" ]; then ok; else bad "$what: exit $rc, wanted $want"; sed 's/^/    /' /tmp/carve_cli_err.$$ | head -5; fi
}
expect_rc 0 "help" "$CARVE" --help
expect_rc 0 "run --help" "$CARVE" run --help
expect_rc 0 "check --help" "$CARVE" check --help
# the unknown-op error sends users here: every op of the language, none of autodiff's
grep -q "^  layernorm(x, gamma, beta, dim = .., eps = ..)$" /tmp/carve_cli_out.$$ && grep -q "^  attention(q, k, v, causal" /tmp/carve_cli_out.$$ &&
  ! grep -q "_grad(" /tmp/carve_cli_out.$$ && ok || bad "check --help lists the ops: $(tail -3 /tmp/carve_cli_out.$$)"
expect_rc 2 "no command" "$CARVE"
expect_rc 2 "unknown command" "$CARVE" frobnicate
expect_rc 2 "unknown option" "$CARVE" check "$ex/mlp.cir" --frob
expect_rc 2 "option for another command" "$CARVE" check "$ex/mlp.cir" --steps 3
expect_rc 2 "missing model" "$CARVE" check
expect_rc 2 "run --train without steps" "$CARVE" run "$ex/mlp_small.cir" --train "sgd(lr = 0.1)"
expect_rc 0 "run without --train: one step" "$CARVE" run "$ex/mlp_small.cir"
expect_rc 2 "bad count" "$CARVE" run "$ex/mlp_small.cir" --steps many
expect_rc 1 "missing file" "$CARVE" check /nonexistent/model.cir
grep -q "carve: error: cannot open '/nonexistent/model.cir'" /tmp/carve_cli_err.$$ && ok || bad "missing file message"
expect_rc 1 "directory as model" "$CARVE" check "$ex"
expect_rc 1 "bad --train" "$CARVE" check "$ex/mlp_small.cir" --train 'adam(lr = -1)'
for m in mlp mlp_small gpt2_small gpt2; do
  expect_rc 0 "check $m" "$CARVE" check "$ex/$m.cir"
  expect_rc 0 "check $m --train adam" "$CARVE" check "$ex/$m.cir" --train 'adam(lr = 1e-3)'
done
grep -q "124" /tmp/carve_cli_out.$$ && ok || bad "gpt2 parameter count is about 124M: $(cat /tmp/carve_cli_out.$$)"
# --print parses back
"$CARVE" check "$ex/gpt2_small.cir" --print > /tmp/carve_print.$$.cir && "$CARVE" check /tmp/carve_print.$$.cir >/dev/null && ok || bad "printed IR checks"
# JSON from run is one object with the contract's keys
out=$("$CARVE" run "$ex/mlp_small.cir" --train 'sgd(lr = 0.1)' --steps 3 --json)
python3 - "$out" <<'PY' && ok || bad "run --json contract: $out"
import json, sys
j = json.loads(sys.argv[1])
assert set(j) >= {"losses", "step_time", "peak_memory"}, j
assert len(j["losses"]) == 3 and all(isinstance(x, float) for x in j["losses"])
assert j["step_time"] > 0 and j["peak_memory"] > 0
PY
# --profile: time per kind of instruction, on stderr with --json so stdout stays JSON
"$CARVE" run "$ex/mlp_small.cir" --train 'sgd(lr = 0.1)' --steps 2 --profile > /tmp/carve_prof.$$ 2>&1 && grep -q "^  gemm " /tmp/carve_prof.$$ && grep -q "^profile, per step" /tmp/carve_prof.$$ && grep -Eq "^set-up before the first step: [0-9]+\.[0-9]{3} s" /tmp/carve_prof.$$ && ok || bad "--profile: $(cat /tmp/carve_prof.$$)"
out=$("$CARVE" run "$ex/mlp_small.cir" --train 'sgd(lr = 0.1)' --steps 2 --profile --json 2>/dev/null)
python3 -c "import json, sys; json.loads(sys.argv[1])" "$out" && ok || bad "--profile --json must keep stdout one JSON object: $out"
rm -f /tmp/carve_prof.$$
# a param the loss never reaches: a located warning, the step still runs (exit 0)
err=$("$CARVE" run "$SRCDIR/tests/data/unused_param.cir" --train 'adam(lr = 0.1)' --steps 1 2>&1 >/dev/null) &&
  printf '%s\n' "$err" | head -1 | grep -q "unused_param.cir:6:9: warning: --train: param 'u' does not reach the loss 'loss'" && ok ||
  bad "unused param: no warning at its declaration: $err"
# --lenient and --strict reach run and the REPL as they reach apply: a
# selector matching nothing is an error, a warning with --lenient
printf 'version 1\nmesh b = 2\ntactic t {\n  shard input "x" dim 0 on b\n  shard param "nosuch*" dim 0 on b\n}\nschedule t\n' > /tmp/carve_len.$$.tac
"$CARVE" run "$ex/mlp_small.cir" /tmp/carve_len.$$.tac --steps 1 >/dev/null 2>&1 && bad "run without --lenient took a selector matching nothing" || ok
"$CARVE" run "$ex/mlp_small.cir" /tmp/carve_len.$$.tac --mesh b=1 --steps 1 --lenient >/dev/null 2>&1 && ok || bad "run --lenient"
out=$(printf 'collectives\n' | "$CARVE" repl "$ex/mlp_small.cir" /tmp/carve_len.$$.tac --lenient 2>&1)
[[ "$out" == *"all_reduce"* ]] && ok || bad "repl --lenient: $out"
# a value the program leaves unread stays (a tactic may name it), and the
# stdlib batch tactic skips a scalar input (it has no batch dim)
printf 'model m {\n  input x : f32[4, 8]\n  input lr : f32[]\n  param w : f32[8, 8]\n  unused = tanh(x)\n  y = mul(mean(matmul(x, w)), lr)\n  return y\n}\n' > /tmp/carve_len.$$.cir
printf 'version 1\nmesh b = 2\nuse "batch" as bp (axis = b)\ntactic t {\n  shard value "unused" dim 0 on b\n}\nschedule bp, t\n' > /tmp/carve_len.$$.tac
out=$("$CARVE" apply /tmp/carve_len.$$.cir /tmp/carve_len.$$.tac --verbose 2>&1) && [[ "$out" == *"unused "*"[b, -]"* ]] && [[ "$out" == *"lr "*"[]"* ]] && ok ||
  bad "unread value and scalar input under batch: $out"
rm -f /tmp/carve_cli_out.$$ /tmp/carve_cli_err.$$ /tmp/carve_print.$$.cir /tmp/carve_len.$$.tac /tmp/carve_len.$$.cir
echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

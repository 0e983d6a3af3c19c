#!/usr/bin/env bash
# Hardening (issue 11): what a hostile or careless user types must end in a
# located error or a correct result, never a crash, a hang or a silent lie.
# Each section names the item of the issue it guards.
set -u
ex="$SRCDIR/examples"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# run WANT_RC DESCRIPTION CMD...: stdout in out, stderr in err
run() {
  local want=$1 what=$2; shift 2
  timeout 120 "$@" >out 2>err; local rc=$?
  if [ "$rc" -eq "$want" ]; then ok; else bad "$what: exit $rc, wanted $want"; head -c 600 err | sed 's/^/    /'; echo; fi
}
has() {  # has FILE TEXT DESCRIPTION
  if grep -qF -- "$2" "$1"; then ok; else bad "$3: no '$2' in $1"; head -c 600 "$1" | sed 's/^/    /'; echo; fi
}
rep() { head -c "$1" /dev/zero | tr '\0' "$2"; }

# ---- 1. no name length matters: every name 600 characters long ----
A=$(rep 600 a); V=$(rep 600 v); W=$(rep 600 w); M=$(rep 600 m); T=$(rep 600 t)
cat > long.cir <<CIR
model $M {
  input $V : f32[8, 4]
  param $W : f32[4, 6]
  h.$V = tanh(matmul($V, $W))
  loss = mean(mul(h.$V, h.$V))
  return loss
}
CIR
printf 'mesh %s = 2\ntactic %s {\n  shard input "%s" dim 0 on %s\n}\nschedule %s\n' "$A" "$T" "$V" "$A" "$T" > long.tac
printf 'mesh %s = 2\ntactic t {\n  shard input "%s" dim 0 on b%s\n}\nschedule t\n' "$A" "$V" "$A" > long_bad.tac
for c in check apply lower simulate; do
  run 0 "long names: $c" "$CARVE" $c long.cir long.tac --train 'adam(lr = 1e-3)'
done
run 0 "long names: apply" "$CARVE" apply long.cir long.tac
has out "[$A, -]" "apply prints the whole axis name"
run 0 "long names: explain" "$CARVE" explain long.cir long.tac "h.$V"
has out "on '$A'" "explain names the whole axis"
run 0 "long names: run" "$CARVE" run long.cir --train 'sgd(lr = 0.1)' --steps 2
run 0 "long names: run on 2 ranks" mpirun -n 2 "$CARVE" run long.cir long.tac --train 'sgd(lr = 0.1)' --steps 2 --check
run 1 "long names: unknown axis" "$CARVE" check long.cir long_bad.tac
has err "b$A" "the unknown axis is named whole"
run 1 "long names: --model" "$CARVE" check long.cir --model "x$M"
has err "(it has: $M)" "--model lists the whole model name"

# ---- 3. a model that returns an input or a parameter runs as it checks ----
printf 'model m {\n  input x : f32[4, 2]\n  param w : f32[4, 2]\n  y = mul(x, w)\n  return x\n}\n' > ret_input.cir
printf 'model m {\n  input x : f32[4, 2]\n  param w : f32[4, 2]\n  return w\n}\n' > ret_param.cir
printf 'model m {\n  input x : f32[4, 2]\n  param w : f32[4, 2]\n  y = add(x, w)\n  return y, x, w\n}\n' > ret_all.cir
printf 'model m {\n  param w : f32[]\n  return w\n}\n' > ret_scalar.cir
printf 'mesh b = 2\ntactic t {\n  shard input "x" dim 0 on b\n}\nschedule t\n' > rows.tac
for f in ret_input ret_param ret_all; do
  run 0 "$f: check" "$CARVE" check $f.cir
  run 0 "$f: run" "$CARVE" run $f.cir --steps 2
done
run 0 "ret_all: run on 2 ranks, checked" mpirun -n 2 "$CARVE" run ret_all.cir rows.tac --steps 2 --check
has out "max relative error against one device: 0 " "a returned leaf split over ranks equals the one-device run"
run 0 "a scalar parameter as the loss" "$CARVE" run ret_scalar.cir --train 'sgd(lr = 0.5)' --steps 2
has out "step 2  loss" "the scalar parameter trains"

# ---- (end) ----
echo "hardening: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

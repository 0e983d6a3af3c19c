#!/usr/bin/env bash
# Hardening (issue 11): what a hostile or careless user types must end in a
# located error or a correct result, never a crash, a hang or a silent lie.
# Each section names the item of the issue it guards.
set -u
ex="$SRCDIR/examples"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
pass=0; fail=0
# under --enable-sanitizers: what OpenMPI and OpenBLAS keep until exit is not ours
# (tests/mpi/lsan.supp; MPI's components stay loaded so that their stacks can be named)
export LSAN_OPTIONS="suppressions=$SRCDIR/tests/mpi/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export OMPI_MCA_mca_base_component_disable_dlclose=1
mpirun() { command mpirun -x LSAN_OPTIONS -x ASAN_OPTIONS "$@"; }
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
cp rows.tac rows3.tac
for f in ret_input ret_param ret_all; do
  run 0 "$f: check" "$CARVE" check $f.cir
  run 0 "$f: run" "$CARVE" run $f.cir --steps 2
done
run 0 "ret_all: run on 2 ranks, checked" mpirun -n 2 "$CARVE" run ret_all.cir rows.tac --steps 2 --check
has out "max relative error against one device: 0 " "a returned leaf split over ranks equals the one-device run"
run 0 "a scalar parameter as the loss" "$CARVE" run ret_scalar.cir --train 'sgd(lr = 0.5)' --steps 2
has out "step 2  loss" "the scalar parameter trains"

# ---- 5. numbers: a non-finite loss stops the run; --check has a tolerance; --train is exact ----
cat > nan.cir <<'CIR'
model m {
  input x : f32[4, 3]
  param w : f32[3, 2]
  h = matmul(x, w)
  e = exp(mul(h, 200))
  loss = mean(mul(e, e))
  return loss
}
CIR
run 1 "an infinite loss is an error" "$CARVE" run nan.cir --train 'sgd(lr = 10)' --steps 5
has err "step 2: the loss is inf" "the error names the step and the loss"
has err "is 'e' (nan.cir:5:" "the error names the first value that went non-finite, located"
run 0 "--allow-nonfinite goes on" "$CARVE" run nan.cir --train 'sgd(lr = 10)' --steps 3 --allow-nonfinite
has out "step 3  loss" "the run went on to step 3"
run 1 "an infinite loss on 2 ranks" mpirun -n 2 "$CARVE" run nan.cir rows3.tac --train 'sgd(lr = 10)' --steps 5
has err "step 2: the loss is inf" "every rank stops at step 2"
[ "$(grep -c 'carve: error' err)" -eq 1 ] && ok || bad "one error line for 2 ranks: $(grep -c 'carve: error' err)"
run 1 "--check over its tolerance exits 1" mpirun -n 2 "$CARVE" run "$ex/mlp_small.cir" "$ex/mlp_bp.tac" --train 'sgd(lr = 0.1)' --steps 2 --check --tolerance 1e-30
has out "tolerance 1e-30: exceeded" "--check prints the tolerance"
has err "more than the tolerance 1e-30" "--check says why it failed"
run 0 "--check within its tolerance" mpirun -n 2 "$CARVE" run "$ex/mlp_small.cir" "$ex/mlp_bp.tac" --train 'sgd(lr = 0.1)' --steps 2 --check --json
python3 -c "import json,sys; j=json.load(open('out')); sys.exit(0 if j['tolerance'] == 1e-4 and j['max_rel_error'] <= 1e-4 else 1)" && ok || bad "--json carries the tolerance"
run 2 "--tolerance needs a decimal number" "$CARVE" run nan.cir --steps 1 --check --tolerance 0x1p-3
run 2 "--tolerance without --check" "$CARVE" run nan.cir --steps 1 --tolerance 1e-3
run 1 "hexadecimal lr" "$CARVE" check nan.cir --train 'sgd(lr = 0x10)'
has err "--train:1:10: error: hexadecimal numbers are not taken" "hexadecimal is refused with its place"
run 1 "a keyword twice in --train" "$CARVE" check nan.cir --train 'sgd(lr = 0.1, lr = 0.2)'
has err "argument 'lr' is given twice" "a repeated keyword is refused"
run 1 "an unknown remat policy" "$CARVE" check nan.cir --train 'sgd(lr = 0.1, remat = sometimes)'
has err "--train:1:23: error: remat is none, cheap, full or a string of value globs" "a wrong remat policy is refused with its place"
run 1 "a remat glob that names nothing" "$CARVE" check nan.cir --train 'sgd(lr = 0.1, remat = "l*.hidden")'
has err "--train:1:23: error: remat: 'l*.hidden' names no value of the forward pass" "a remat glob naming nothing is refused with its place"
run 2 "--train twice" "$CARVE" check nan.cir --train 'sgd(lr = 0.1)' --train 'adam(lr = 0.1)'
has err "option '--train' is given twice" "a repeated option is refused"

# ---- 6. --save writes only a regular file or a new name, never a file being read ----
cp "$ex/mlp_small.cir" m.cir
run 1 "--save to a device" "$CARVE" run m.cir --steps 1 --save /dev/null
has err "'/dev/null' is a character device" "a device is refused"
run 1 "--save to a folder" "$CARVE" run m.cir --steps 1 --save "$tmp"
has err "is a directory" "a folder is refused"
run 1 "--save over the model" "$CARVE" run m.cir --steps 1 --save ./m.cir
has err "a file this command reads" "the model file is refused"
run 1 "--save over the tactic file" mpirun -n 2 "$CARVE" run m.cir "$ex/mlp_bp.tac" --steps 1 --save "$ex/mlp_bp.tac"
has err "a file this command reads" "the tactic file is refused"
cmp -s m.cir "$ex/mlp_small.cir" && ok || bad "the model file is unchanged"
run 1 "auto -o over the model" "$CARVE" auto m.cir "$ex/mlp_bp.tac" -o m.cir
has err "a file this command reads" "auto refuses to write over its model"
run 0 "--save to a new name" "$CARVE" run m.cir --train 'sgd(lr = 0.1)' --steps 1 --save new.safetensors
run 0 "--save over a saved file, through a link" ln -s new.safetensors link.safetensors
run 0 "--save through a link" "$CARVE" run m.cir --train 'sgd(lr = 0.1)' --steps 1 --save link.safetensors
[ -L link.safetensors ] && ok || bad "the link stays a link"
[ -z "$(ls | grep '\.tmp\.')" ] && ok || bad "temporary files left: $(ls | grep tmp)"

# ---- 7. inputs that would block: FIFOs and devices are refused at once; CR-only lines are lines ----
mkfifo fifo.cir fifo.tac fifo.safetensors
run 1 "a FIFO as the model" "$CARVE" check fifo.cir
has err "'fifo.cir' is a FIFO or a pipe" "a FIFO model is refused"
run 1 "a FIFO as the tactic file" "$CARVE" check m.cir fifo.tac
has err "'fifo.tac' is a FIFO or a pipe" "a FIFO tactic file is refused"
run 1 "a FIFO as --params" "$CARVE" run m.cir --steps 1 --params fifo.safetensors
has err "not a regular file" "a FIFO params file is refused"
run 1 "a device as the model" "$CARVE" check /dev/zero
has err "'/dev/zero' is a device" "a device is refused"
printf 'model m {\r  input x : f32[4] # a comment\r  y = tanh(x)\r  z = relu(q)\r  return y\r}\r' > cr.cir
run 1 "CR-only line ends" "$CARVE" check cr.cir
has err "cr.cir:4:12: error: unknown value 'q'" "CR-only lines count as lines"
printf 'model m {\r\n  input x : f32[4] # a comment\r\n  y = tanh(x)\r\n  return y\r\n}\r\n' > crlf.cir
run 0 "CR LF line ends" "$CARVE" check crlf.cir

# ---- 4. ranks given different things stop together before step 1, naming what differs ----
bp="$ex/mlp_bp.tac"
sed 's/normal(0.3)/normal(0.4)/' m.cir > m_init.cir
run 1 "ranks: another --train and --steps" mpirun -n 1 "$CARVE" run m.cir "$bp" --train 'sgd(lr = 0.1)' --steps 2 : -n 1 "$CARVE" run m.cir "$bp" --train 'sgd(lr = 0.2)' --steps 3
has err "rank 1 differs from rank 0 in --train, --steps" "the error names the rank and the options"
[ "$(grep -c 'carve: error' err)" -eq 1 ] && ok || bad "one error for the run"
run 1 "ranks: another init in the model file" mpirun -n 1 "$CARVE" run m.cir "$bp" --steps 2 : -n 1 "$CARVE" run m_init.cir "$bp" --steps 2
has err "rank 1 differs from rank 0 in model file" "a model that differs is named"
run 1 "ranks: --check on one rank" mpirun -n 1 "$CARVE" run m.cir "$bp" --steps 2 : -n 1 "$CARVE" run m.cir "$bp" --steps 2 --check
has err "rank 1 differs from rank 0 in --check" "--check on one rank is named"
run 1 "ranks: --params on one rank" mpirun -n 1 "$CARVE" run m.cir "$bp" --steps 1 --params new.safetensors : -n 1 "$CARVE" run m.cir "$bp" --steps 1
has err "rank 1 differs from rank 0 in --params file (its header)" "an input file on one rank is named"
run 1 "ranks: two of four differ" mpirun -n 2 "$CARVE" run m.cir "$ex/mlp_mp.tac" --mesh 'model = 4' --steps 1 : -n 1 "$CARVE" run m.cir "$ex/mlp_mp.tac" --mesh 'model = 4' --steps 2 : -n 1 "$CARVE" run m.cir "$ex/mlp_mp.tac" --mesh 'model=4' --steps 1 --train 'adam(lr = 1e-3)'
has err "rank 2 differs from rank 0 in --steps; rank 3 differs from rank 0 in --train" "every differing rank is named (blanks in options do not count)"
run 0 "ranks given the same things run" mpirun -n 2 "$CARVE" run m.cir "$bp" --train 'sgd(lr = 0.1)' --steps 2

# ---- 8. resources: run refuses what cannot fit before allocating; nested repeats by their product ----
printf 'model big {\n  input x : f32[1048576, 1048576]\n  param w : f32[1048576, 1048576]\n  y = mul(x, w)\n  loss = mean(y)\n  return loss\n}\n' > big.cir
run 1 "a program larger than the machine" "$CARVE" run big.cir --steps 1
has err "but this machine has" "run says the program does not fit"
has err "largest: '" "run names the largest tensors"
run 0 "apply warns about a program larger than the machine" "$CARVE" apply big.cir rows.tac
has err "carve: warning: one device's program needs" "apply says the program does not fit"
run 1 "nested repeats refused by their product" "$CARVE" check "$SRCDIR/tests/errors/nested_repeat_product.cir"
has err "would make more than 4000000 values" "the product is refused before expanding"

# ---- (end) ----
echo "hardening: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

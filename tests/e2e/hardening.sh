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
asan_fast=${ASAN_OPTIONS:-}   # what runs without MPI needs no slow unwinding (it makes every malloc ~20x dearer)
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
run 0 "long names: apply" "$CARVE" apply long.cir long.tac --verbose
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
has err "'./m.cir' is 'm.cir', the model file this command reads; write to another file" "the model file is refused"
run 1 "--save over the tactic file" mpirun -n 2 "$CARVE" run m.cir "$ex/mlp_bp.tac" --steps 1 --save "$ex/mlp_bp.tac"
has err "is the tactic file this command reads; write to another file" "the tactic file is refused"
cmp -s m.cir "$ex/mlp_small.cir" && ok || bad "the model file is unchanged"
run 1 "auto -o over the model" "$CARVE" auto m.cir "$ex/mlp_bp.tac" -o m.cir
has err "carve: error: -o: 'm.cir' is the model file this command reads; write to another file" "auto refuses to write over its model"
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

# ---- 9. no output over an input: every output option of every command, one check (cli_check_outputs) ----
cp "$ex/mlp_small.cir" w.cir; cp "$ex/mlp_bp.tac" w.tac
ln -s w.cir w_link.cir; ln w.cir w_hard.cir
run 1 "lower -o over the model" "$CARVE" lower w.cir -o w.cir
has err "carve: error: -o: 'w.cir' is the model file this command reads; write to another file" "lower -o names the model"
run 1 "lower -o over the tactic file" "$CARVE" lower w.cir w.tac -o w.tac
has err "carve: error: -o: 'w.tac' is the tactic file this command reads" "lower -o names the tactic file"
run 1 "show --svg over the model" "$CARVE" show w.cir w.tac h --svg w.cir
has err "carve: error: --svg: 'w.cir' is the model file this command reads" "show --svg names the model"
run 1 "show --svg through a symbolic link" "$CARVE" show w.cir w.tac h --svg w_link.cir
has err "--svg: 'w_link.cir' is 'w.cir', the model file this command reads" "a symbolic link to the model is the model"
run 1 "export -o through a hard link" "$CARVE" export w.cir w.tac -o w_hard.cir
has err "-o: 'w_hard.cir' is 'w.cir', the model file this command reads" "a hard link to the model is the model"
run 1 "run --save over --data" "$CARVE" run w.cir --steps 1 --data w.tac --save w.tac
has err "--save: 'w.tac' is the --data file this command reads" "--save names --data"
cp "$SRCDIR/tests/data/hlo/jax_markers.mlir" j.mlir
run 1 "import -o over its program" "$CARVE" import j.mlir -o j.mlir
has err "carve: error: -o: 'j.mlir' is the StableHLO program this command reads; write to another file" "import -o names its program"
run 1 "import --tactics-out equal to -o" "$CARVE" import j.mlir -o j.cir --tactics-out j.cir
has err "carve: error: --tactics-out: 'j.cir' is the file -o writes; write to another file" "--tactics-out may not be -o"
run 1 "import --tactics-out over its program" "$CARVE" import j.mlir -o j.cir --tactics-out ./j.mlir
has err "--tactics-out: './j.mlir' is 'j.mlir', the StableHLO program this command reads" "--tactics-out names the program"
[ ! -e j.cir ] && ok || bad "import wrote -o before refusing --tactics-out"
run 1 "calibrate -o a folder, before measuring" "$CARVE" calibrate -o "$tmp"
has err "-o: '$tmp' is a directory" "calibrate refuses a folder at once"
cmp -s w.cir "$ex/mlp_small.cir" && cmp -s w.tac "$ex/mlp_bp.tac" && cmp -s j.mlir "$SRCDIR/tests/data/hlo/jax_markers.mlir" && ok ||
  bad "a refused output changed an input"
# the REPL: save over what it loaded is refused; a failed load keeps the model and the plan
printf 'mesh b = 2\ntactic t {\n  shard input "nope" dim 0 on b\n}\nschedule t\n' > w_bad.tac
printf 'save w.tac\nsave w_link.cir\nload missing.cir\nload w_bad.tac\nshow x\nsave saved.tac\n' |
  timeout 60 "$CARVE" repl w.cir w.tac >out 2>&1
has out "carve: error: save: 'w.tac' is the tactic file this session loaded; write to another file" "REPL save names the tactic file"
has out "carve: error: save: 'w_link.cir' is 'w.cir', the model file this session loaded" "REPL save names the model through a link"
has out "(kept: model 'mlp_small' from w.cir with w.tac, and the plan)" "a failed load keeps the model and the plan"
has out "x: f32[16, 8], sharding [batch, -]" "the plan is still there after a failed load"
has out "saved saved.tac" "the REPL saves elsewhere"
cmp -s w.cir "$ex/mlp_small.cir" && cmp -s w.tac "$ex/mlp_bp.tac" && ok || bad "the REPL changed what it loaded"

# ---- 10. messages: located, and saying what to do ----
mkdir -p dir.tac
for p in /dev/zero dir.tac fifo.tac; do
  printf 'mesh batch = 2\nuse "%s" as bp\nschedule bp\n' "$p" > use_bad.tac
  run 1 "use of $p" "$CARVE" check w.cir use_bad.tac
  has err "use_bad.tac:2:5: error: '" "use of $p is located at its path"
done
has err "is a FIFO or a pipe; carve reads a file whole: write the text to a regular file and give that" "use of a FIFO says what to do"
printf 'mesh model = 2\ntactic found = auto (axes = [model], device = "nonexistent")\nschedule found\n' > auto_dev.tac
run 1 "auto device = nonexistent" "$CARVE" auto w.cir auto_dev.tac -o found.tac
has err "auto_dev.tac:2:47: error: no device profile 'nonexistent'" "an unknown auto device is located"
printf 'mesh model = 2\ntactic found = auto (axes = [model], links = "model inter")\nschedule found\n' > auto_links.tac
run 1 "auto links = garbage" "$CARVE" auto w.cir auto_links.tac -o found.tac
has err "auto_links.tac:2:53: error: unexpected 'inter', expected '='" "a bad links string is located in the tactic file"
printf 'mesh model = 2\ntactic found = auto (axes = [model], values = ["h", "out"], budget = 50)\nschedule found\n' > auto_values.tac
run 0 "auto values = [...], as documented" "$CARVE" auto w.cir auto_values.tac -o found.tac
printf 'mesh model = 2\ntactic found = auto (values = ["nothing*"])\nschedule found\n' > auto_values_bad.tac
run 1 "auto values = a glob naming nothing" "$CARVE" auto w.cir auto_values_bad.tac -o found.tac
has err "auto_values_bad.tac:2:32: error: no value matches 'nothing*'" "values checks its globs, located"
printf 'model m {\n  input x : f32[4, 4, 0]\n  y = tanh(x)\n  return y\n}\n' > empty_dim.cir
run 0 "an empty dim" "$CARVE" check empty_dim.cir
has err "empty_dim.cir:2:23: warning: dimension 2 of 'x' is empty (size 0)" "the empty dim is the one named"
printf 'mesh b = 2\ntactic t (k = -9223372036854775808) {\n  shard input "x" dim 0 on b\n}\nschedule t\n' > int_min.tac
run 0 "-2^63 in a tactic file" "$CARVE" check w.cir int_min.tac
sed 's/-9223372036854775808/9223372036854775808/' int_min.tac > int_over.tac
run 1 "2^63 in a tactic file" "$CARVE" check w.cir int_over.tac
has err "int_over.tac:2:15: error: number too large (integers must fit in 64 bits)" "2^63 itself is refused"
sed 's/^launch .*/launch     1e308/' "$SRCDIR/profiles/h100-sxm.profile" > huge.profile
run 1 "a profile with launch 1e308" "$CARVE" simulate w.cir w.tac --device ./huge.profile
has err "huge.profile:19:12: error: 'launch' is 1e+308 seconds, out of range: give 0 to 1 seconds" "an absurd profile number is refused, located"
printf 'model e {\n  input ids : i32[2, 3]\n  param wte : f32[5, 4]\n  h = embedding(wte, ids)\n  loss = mean(mul(h, h))\n  return loss\n}\n' > ids.cir
python3 - <<'PY'
import json, struct
raw = struct.pack('<6i', 0, 1, 2, 3, 7, 4)
h = json.dumps({"ids": {"dtype": "I32", "shape": [2, 3], "data_offsets": [0, len(raw)]}}).encode()
h += b' ' * (-len(h) % 8)
open('ids.safetensors', 'wb').write(struct.pack('<Q', len(h)) + h + raw)
PY
run 1 "an id outside its table in --data" "$CARVE" run ids.cir --steps 1 --data ids.safetensors
has err "carve: error: --data: input 'ids' holds 7 at [1, 1], but 'h' (ids.cir:4:7) looks it up in a table of 5 rows: give ids in [0, 5)" "the id, its place and the range are named"
# import -o writes what check reads back: keywords as argument names, and an empty argument
cat > kw.mlir <<'MLIR'
module @kw {
  func.func public @main(%arg0: tensor<4x3xf32> loc("input"), %arg1: tensor<3x2xf32> loc("param"), %arg2: tensor<4x2xf32> loc("return"), %arg3: tensor<2xf32> loc("model"), %arg4: tensor<0x2xf32> loc("repeat")) -> (tensor<4x2xf32>, tensor<0x2xf32>) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
    %1 = stablehlo.add %0, %arg2 : tensor<4x2xf32>
    %2 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
    %3 = stablehlo.multiply %1, %2 : tensor<4x2xf32>
    %4 = stablehlo.negate %arg4 : tensor<0x2xf32>
    return %3, %4 : tensor<4x2xf32>, tensor<0x2xf32>
  }
}
MLIR
run 0 "import keywords and an empty dim" "$CARVE" import kw.mlir -o kw.cir
run 0 "check reads the import back" "$CARVE" check kw.cir
has out "well-formed: 4 ops, 5 params" "the imported program is whole"
has kw.cir "param repeat_ : f32[0, 2]" "a keyword name takes a suffix"
run 0 "the import runs" "$CARVE" run kw.cir --steps 1 --print-outputs
"$CARVE" run kw.mlir --steps 1 --print-outputs 2>/dev/null | grep '^{' > direct.out
grep '^{' out | cmp -s - direct.out && ok || bad "the model file computes what the .mlir does"

# ---- 11. what a hostile-input probe found: Lua objects and limits, meshes, program files, bisect ----
cp "$ex/mlp_small.cir" p.cir
printf 'return function(ctx)\n  local op = ctx:value("h").producer\n  op.results = 5\n  print(op)\nend\n' > p_op.lua
printf 'mesh model = 2\ntactic t = lua "p_op.lua" ()\nschedule t\n' > p_op.tac
run 0 "a Lua op whose results were replaced prints" "$CARVE" apply p.cir p_op.tac
has err "op gelu -> 'h'" "tostring reads the program, not the replaced field"
for s in gc cost mem; do printf 'mesh model = 2\ntactic t = lua "p_%s.lua" ()\nschedule t\n' $s > p_$s.tac; done
printf 'return function(ctx)\n  setmetatable({}, {__gc = function() while true do end end})\nend\n' > p_gc.lua
printf 'return function(ctx)\n  while true do\n    pcall(ctx.cost, ctx)\n  end\nend\n' > p_cost.lua
printf 'return function(ctx)\n  while true do\n    pcall(function() local t = {} for i = 1, 1e9 do t[i] = i end end)\n  end\nend\n' > p_mem.lua
run 1 "a finaliser that never ends" "$CARVE" apply p.cir p_gc.tac
has err "p_gc.lua:2:3: error: setmetatable: a metatable with __gc is refused" "a finaliser is refused where it is set"
ASAN_OPTIONS=$asan_fast run 1 "ctx:cost() in a loop" "$CARVE" apply p.cir p_cost.tac
has err "p_cost.lua:3:" "the loop of ctx calls ends at its line"
has err "error: the script ran too long (more than 250000000 instructions)" "ctx calls count against the instruction limit"
# pattern matching runs in C, out of the count hook's reach: each call is
# charged its worst case first (a backtracking pattern over 10^5 characters,
# a plain search of a 1 MB pattern in 16 MB, each ran for hours)
printf 'return function(ctx)\n  string.rep("a", 100000):find(".-.-b")\nend\n' > p_find.lua
printf 'return function(ctx)\n  local s = string.rep("a", 1 << 24)\n  local p = string.rep("a", 1 << 20) .. "b"\n  s:find(p, 1, true)\nend\n' > p_plain.lua
for s in find plain; do printf 'mesh model = 2\ntactic t = lua "p_%s.lua" ()\nschedule t\n' $s > p_$s.tac; done
run 1 "a backtracking pattern" "$CARVE" apply p.cir p_find.tac
has err "p_find.lua:2:3: error: the script ran too long (more than 250000000 instructions)" "a pattern's worst case counts against the limit"
run 1 "a plain search of a long pattern" "$CARVE" apply p.cir p_plain.tac
has err "p_plain.lua:4:3: error: the script ran too long" "a plain search's worst case counts against the limit"
ASAN_OPTIONS=$asan_fast run 1 "an allocation loop inside pcall" "$CARVE" apply p.cir p_mem.tac
has err "error: the script ran out of memory (a tactic script may use 256 MiB)" "pcall does not catch the memory limit"
run 1 "a mesh of 2^31 devices" "$CARVE" lower p.cir "$ex/mlp_bp.tac" --mesh 'batch = 2147483648' --rank 3
has err "--mesh:1:1: error: the mesh has more than 2^20 devices (1048576), the most carve plans for; make axis 'batch' smaller" "2^31 devices are refused, located"
printf 'mesh a = 1024, b = 2048\ntactic t {\n  shard input "x" dim 0 on a\n}\nschedule t\n' > p_mesh.tac
run 1 "a mesh of 2^21 devices in a tactic file" "$CARVE" show p.cir p_mesh.tac x
has err "p_mesh.tac:1:16: error: the mesh has more than 2^20 devices" "the axis that passes the limit is named"
printf 'mesh a = 1073741824\ncollectives\nshow x\n' | timeout 60 "$CARVE" repl p.cir >out 2>&1
[ $? -eq 1 ] && ok || bad "the REPL refuses a mesh of 2^30 devices, exit 1"
has out "(repl line 1):1:6: error: the mesh has more than 2^20 devices" "the REPL's mesh line is refused at once"
# program files: edited, their checksum stamped again as carve computes it (FNV-1a 64 of what precedes 'end')
run 0 "lower -o a program" "$CARVE" lower p.cir "$ex/mlp_bp.tac" --train 'sgd(lr = 0.1)' --keep-values -o p2.prog
run 0 "lower -o its reference" "$CARVE" lower p.cir --train 'sgd(lr = 0.1)' --keep-values -o p1.prog
restamp() {  # restamp FILE SED-SCRIPT: edit the file, then stamp its checksum again
  sed "$2" p2.prog > "$1"
  python3 - "$1" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read()
body = data[:data.rindex(b'\nend ') + 1]
h = 1469598103934665603
for c in body: h = ((h ^ c) * 1099511628211) % 2**64
open(sys.argv[1], 'wb').write(body + b'end %016x\n' % h)
PY
}
restamp p_global.prog 's/^\(buf 5 .* global \)16,/\14,/'
restamp p_mesh.prog 's/^mesh batch 2$/mesh batch 8/'
restamp p_huge.prog 's/^\(buf 0 .* global \)16,/\19223372036854775807,/'
restamp p_devices.prog 's/^mesh batch 2$/mesh batch 1048576 x 1048576/'
restamp p_coll.prog '/^instr op all_reduce/{s/ n 1 inner/ n 1000 inner/;}'
run 0 "the stamp is carve's" "$CARVE" bisect p2.prog p1.prog
grep -q '^buf 5 .* global 16,' p2.prog && grep -q '^instr op all_reduce.* n 1 inner' p2.prog && ok || bad "the edits find what they edit"
for f in global mesh huge devices coll; do
  run 1 "bisect of a program file with an edited $f" "$CARVE" bisect p_$f.prog p1.prog
  has err "p_$f.prog:" "the edited $f is located in its file"
  has err "lower the model again (carve lower -o)" "the edited $f: what to do"
  [ "$(grep -c 'error' err)" -eq 1 ] && ok || bad "one error for the edited $f"
done
has p_global.prog "global 4," "the global edit took"
run 1 "bisect over more steps than its bound" "$CARVE" bisect p2.prog p1.prog --steps 1001
has err "carve: error: --steps 1001: a bisection runs at most 1000 steps" "bisect's bound is named"
run 1 "run --bisect over more steps than its bound" mpirun -n 2 "$CARVE" run p.cir "$ex/mlp_bp.tac" --train 'sgd(lr = 0.1)' --steps 5000 --bisect
has err "--steps 5000: a bisection runs at most 1000 steps" "run --bisect has the bound too"

# ---- (end) ----
echo "hardening: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

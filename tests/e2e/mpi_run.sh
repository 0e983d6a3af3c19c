#!/usr/bin/env bash
# carve run under mpirun: every strategy equals the one-device run after 3
# Adam steps (--check), a saved file equals the one-device saved file, the
# memory per rank shrinks as tactics split more, and a rank given a bad file
# ends every rank with exit 1 instead of a hang.
set -u
ex="$SRCDIR/examples"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$SRCDIR/tests/e2e/mpi_env.sh"     # exports for mpirun; $MPIRUN
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
train='adam(lr = 1e-3)'
check() {  # check RANKS TACTIC [OPTIONS]
  local out
  out=$($MPIRUN -n "$1" "$CARVE" run "$ex/gpt2_small.cir" "$ex/$2" --train "$train" --steps 3 --check --json ${3:-} 2>"$tmp/err") \
    || { bad "$2 on $1 ranks: $(head -3 "$tmp/err")"; return; }
  if python3 -c "
import json, sys
j = json.loads(sys.argv[1])
print('$2 on $1 ranks: max_rel_error %.3g, peak %.2f MiB/rank' % (j['max_rel_error'], j['peak_memory'] / 2**20))
open('$tmp/peak.$2', 'w').write(str(j['peak_memory']))
sys.exit(0 if j['max_rel_error'] <= 1e-5 and j['ranks'] == $1 else 1)" "$out"; then ok; else bad "$2: $out"; fi
}
check 4 gpt2_small_bp.tac
check 4 gpt2_small_mp.tac
check 4 gpt2_small_bp_mp.tac
check 4 gpt2_small_bp_z3.tac
check 4 gpt2_small_bp_mp_z1.tac
check 4 gpt2_small_bp_mp_z2.tac
# gradients reduced in buckets (all-reduces; ZeRO's reduce-scatters) over MPI
check 4 gpt2_small_bp.tac "--bucket 256KiB"
check 4 gpt2_small_bp_mp_z2.tac "--bucket 64KiB"
# activations recomputed in the backward pass (train/remat.c) under MPI
train='adam(lr = 1e-3, remat = full)' check 4 gpt2_small_bp_mp.tac
train='adam(lr = 1e-3, remat = cheap)' check 4 gpt2_small_bp_mp_z2.tac
train='adam(lr = 1e-3, remat = "l*.h.matmul, l*.q")' check 4 gpt2_small_bp_mp_z3.tac
# the bucketed program reduces in fewer collectives, and says which gradients each holds
n0=$("$CARVE" apply "$ex/gpt2_small.cir" "$ex/gpt2_small_bp.tac" --train "$train" --json --bucket 0 | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["collectives"]))')
out=$("$CARVE" apply "$ex/gpt2_small.cir" "$ex/gpt2_small_bp.tac" --train "$train" --json --bucket 25MiB | python3 -c '
import json, sys
c = json.load(sys.stdin)["collectives"]
b = [x for x in c if "values" in x]
print(len(c), len(b), len(b[0]["values"]) if b else 0, b[0]["value"] if b else "")')
[ "$out" = "2 1 30 bucket0" ] && [ "$n0" -eq 31 ] && ok || bad "apply --bucket 25MiB: $out (unbucketed: $n0 collectives)"
"$CARVE" apply "$ex/gpt2_small.cir" "$ex/gpt2_small_bp.tac" --bucket 25Mb >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "^carve: error: --bucket '25Mb': give a size in bytes, KiB, MiB or GiB" "$tmp/err" && ok || bad "--bucket 25Mb: $(cat "$tmp/err")"
check 4 gpt2_small_bp_mp_z3.tac
check 4 gpt2_small.tac
# meshes of 1 and 8 ranks (--mesh overrides the file's), and a forward program
check_mesh() {  # check_mesh RANKS TACTIC MESH [TRAIN]
  local out
  out=$($MPIRUN -n "$1" "$CARVE" run "$ex/gpt2_small.cir" "$ex/$2" --mesh "$3" ${4:+--train "$4"} --steps 2 --check --json 2>"$tmp/err") \
    || { bad "$2 --mesh $3 on $1 ranks: $(head -3 "$tmp/err")"; return; }
  python3 -c "
import json, sys
j = json.loads(sys.argv[1]); print('$2 --mesh $3 on $1 ranks: max_rel_error %.3g' % j['max_rel_error'])
sys.exit(0 if j['max_rel_error'] <= 1e-5 and j['ranks'] == $1 else 1)" "$out" && ok || bad "$2 --mesh $3: $out"
}
check_mesh 1 gpt2_small_bp_mp.tac 'batch=1, model=1' "$train"
check_mesh 8 gpt2_small_bp_mp.tac 'batch=2, model=4' "$train"
check_mesh 8 gpt2_small_bp_mp_z3.tac 'batch=2,model=4' 'sgd(lr = 0.1)'
check_mesh 4 gpt2_small_bp_mp.tac 'batch=2, model=2'
# the vocabulary-parallel loss (the logits split by class) over MPI: 2 and 4 ways
check_mesh 2 ../tests/data/mp_vocab.tac 'model=2' 'sgd(lr = 0.1)'
check_mesh 4 ../tests/data/mp_vocab4.tac 'model=4' "$train"
check_mesh 4 ../tests/data/bp_mp_vocab.tac 'batch=2, model=2' "$train"
# sequence parallelism beside Megatron, alone and with batch
check_mesh 2 gpt2_small_mp_sp.tac 'model=2' "$train"
check_mesh 4 ../tests/data/bp_mp_sp.tac 'batch=2, model=2' 'sgd(lr = 0.1)'
# expert parallelism (the stdlib's experts, then batch): a GShard layer, one
# without groups, one with its router in the program; 2 and 4 ranks
for m in moe_gshard moe_switch moe_router; do
  for n in 2 4; do
    out=$($MPIRUN -n $n "$CARVE" run "$SRCDIR/tests/data/$m.cir" "$SRCDIR/tests/data/moe_experts.tac" --mesh "e=$n" \
          --train 'adam(lr = 1e-2)' --steps 2 --check --json 2>"$tmp/err") || { bad "$m on $n ranks: $(head -3 "$tmp/err")"; continue; }
    python3 -c "
import json, sys
j = json.loads(sys.argv[1]); print('experts on $m, $n ranks: max_rel_error %.3g' % j['max_rel_error'])
sys.exit(0 if j['max_rel_error'] <= 1e-5 and j['ranks'] == $n else 1)" "$out" && ok || bad "experts on $m, $n ranks: $out"
  done
done
# ... and the router's layer as StableHLO spells it (dot_generals and
# transposes, written by carve export and read back): 3 all-to-alls, the
# router's scatter-add joined with the loss's mean (both tiny, back to
# back), the router's gradient
"$CARVE" export "$SRCDIR/tests/data/moe_router.cir" -o "$tmp/moe_router.mlir" 2>"$tmp/err" || bad "export moe_router: $(cat "$tmp/err")"
kinds=$("$CARVE" apply "$tmp/moe_router.mlir" "$SRCDIR/tests/data/moe_experts.tac" --train 'adam(lr = 1e-2)' --json |
        python3 -c 'import json, sys; print(" ".join(c["kind"] + ":" + "+".join(c.get("values", [c["value"]])) for c in json.load(sys.stdin)["collectives"]))')
[ "$kinds" = "all_to_all:xin all_to_all:eo all_reduce:importance+loss.mean all_to_all:bwd.out.db all_reduce:grad.wr" ] &&
  ok || bad "experts on the imported router layer: $kinds"
out=$($MPIRUN -n 4 "$CARVE" run "$tmp/moe_router.mlir" "$SRCDIR/tests/data/moe_experts.tac" --train 'adam(lr = 1e-2)' --steps 2 --check --json 2>"$tmp/err") &&
  python3 -c "import json, sys; sys.exit(0 if json.loads(sys.argv[1])['max_rel_error'] <= 1e-5 else 1)" "$out" && ok ||
  bad "experts on the imported router layer, 4 ranks: $out $(head -3 "$tmp/err")"
# softmax and log_softmax over classes split by vocabulary, as written
for n in 2 4; do
  out=$($MPIRUN -n $n "$CARVE" run "$SRCDIR/tests/data/softmax_vocab.cir" "$SRCDIR/tests/data/softmax_vocab.tac" --mesh "model=$n" \
        --no-fuse --train 'adam(lr = 1e-2)' --steps 2 --check --json 2>"$tmp/err") &&
    python3 -c "import json, sys; sys.exit(0 if json.loads(sys.argv[1])['max_rel_error'] <= 1e-5 else 1)" "$out" && ok ||
    bad "softmax over split classes, $n ranks: $out $(head -3 "$tmp/err")"
done
# context parallelism (attention as written) on a GPT with a context of 256:
# equal to one device on 2 and 4 ranks, each rank's peak memory smaller
# with each doubling; and batch x Megatron x context on 8 ranks
peak1=$("$CARVE" run "$SRCDIR/tests/data/gpt_s256.cir" --no-fuse --train 'adam(lr = 1e-3)' --steps 2 --json 2>"$tmp/err" |
        python3 -c 'import json, sys; print(json.loads(sys.stdin.read().splitlines()[-1])["peak_memory"])')
prev=$peak1
for n in 2 4; do
  out=$($MPIRUN -n $n "$CARVE" run "$SRCDIR/tests/data/gpt_s256.cir" "$SRCDIR/tests/data/cp$n.tac" --no-fuse \
        --train 'adam(lr = 1e-3)' --steps 2 --check --json 2>"$tmp/err") || { bad "context on $n ranks: $(head -3 "$tmp/err")"; continue; }
  python3 -c "
import json, sys
j = json.loads(sys.argv[1]); print('context on $n ranks, context 256: max_rel_error %.3g, peak %.2f MiB/rank (one device %.2f)' % (j['max_rel_error'], j['peak_memory'] / 2**20, $peak1 / 2**20))
sys.exit(0 if j['max_rel_error'] <= 1e-5 and j['peak_memory'] < $prev * 0.75 else 1)" "$out" && ok || bad "context on $n ranks: $out"
  prev=$(python3 -c "import json, sys; print(json.loads(sys.argv[1])['peak_memory'])" "$out")
done
# the same over fused attention: ring attention (keys and values passed
# around the ranks by sends), equal to one device, each rank's peak smaller
# with each doubling
peak1=$("$CARVE" run "$SRCDIR/tests/data/gpt_s256.cir" --train 'adam(lr = 1e-3)' --steps 2 --json 2>"$tmp/err" |
        python3 -c 'import json, sys; print(json.loads(sys.stdin.read().splitlines()[-1])["peak_memory"])')
prev=$peak1
for n in 2 4; do
  out=$($MPIRUN -n $n "$CARVE" run "$SRCDIR/tests/data/gpt_s256.cir" "$SRCDIR/tests/data/cp$n.tac" \
        --train 'adam(lr = 1e-3)' --steps 2 --check --json 2>"$tmp/err") || { bad "ring attention on $n ranks: $(head -3 "$tmp/err")"; continue; }
  python3 -c "
import json, sys
j = json.loads(sys.argv[1]); print('ring attention on $n ranks, context 256: max_rel_error %.3g, peak %.2f MiB/rank (one device %.2f)' % (j['max_rel_error'], j['peak_memory'] / 2**20, $peak1 / 2**20))
sys.exit(0 if j['max_rel_error'] <= 1e-4 and j['peak_memory'] < $prev * 0.75 else 1)" "$out" && ok || bad "ring attention on $n ranks: $out"
  prev=$(python3 -c "import json, sys; print(json.loads(sys.argv[1])['peak_memory'])" "$out")
done
out=$($MPIRUN -n 8 "$CARVE" run "$ex/gpt2_small.cir" "$SRCDIR/tests/data/bp_mp_cp.tac" --train 'adam(lr = 1e-3)' \
      --steps 2 --check --json 2>"$tmp/err") &&
  python3 -c "import json, sys; sys.exit(0 if json.loads(sys.argv[1])['max_rel_error'] <= 1e-5 else 1)" "$out" && ok ||
  bad "batch x megatron x ring attention on 8 ranks: $out $(head -3 "$tmp/err")"
out=$($MPIRUN -n 8 "$CARVE" run "$ex/gpt2_small.cir" "$SRCDIR/tests/data/bp_mp_cp.tac" --no-fuse --train 'adam(lr = 1e-3)' \
      --steps 2 --check --json 2>"$tmp/err") &&
  python3 -c "import json, sys; sys.exit(0 if json.loads(sys.argv[1])['max_rel_error'] <= 1e-5 else 1)" "$out" && ok ||
  bad "batch x megatron x context on 8 ranks: $out $(head -3 "$tmp/err")"
# the sequence dealt zig-zag through all_to_alls (context and Megatron on
# one axis) and through a whole position table sliced to each rank's two
# blocks, and dealt in order, equal to one device
for t in cp_mp_one_axis:2 cp2_wpe_whole:2 cp4_none:4; do
  for f in "" --no-fuse; do
    out=$($MPIRUN -n "${t#*:}" "$CARVE" run "$ex/gpt2_small.cir" "$SRCDIR/tests/data/${t%:*}.tac" $f --train 'adam(lr = 1e-3)' \
          --steps 2 --check --json 2>"$tmp/err") &&
      python3 -c "import json, sys; sys.exit(0 if json.loads(sys.argv[1])['max_rel_error'] <= 1e-5 else 1)" "$out" && ok ||
      bad "${t%:*} $f on ${t#*:} ranks: $out $(head -3 "$tmp/err")"
  done
done

# pipeline stages on a 4-layer GPT (its embedding tied to the output
# projection): 2 stages (1F1B, interleaved) and 4 (GPipe, interleaved, zero-bubble) equal to one device in f32
# (SGD) and f64 (Adam, to 1e-12), each rank's peak memory below one
# device's; pipeline x batch x Megatron on 8 ranks; a forward program
pp() {  # pp RANKS MODEL TACTIC TRAIN TOLERANCE
  local out pp1
  pp1=$("$CARVE" run "$SRCDIR/tests/data/$2" ${4:+--train "$4"} --steps 2 --json 2>"$tmp/err" |
        python3 -c 'import json, sys; print(json.loads(sys.stdin.read().splitlines()[-1])["peak_memory"])')
  out=$($MPIRUN -n "$1" "$CARVE" run "$SRCDIR/tests/data/$2" "$SRCDIR/tests/data/$3" ${4:+--train "$4"} --steps 3 --check --json 2>"$tmp/err") \
    || { bad "pipeline $3 on $1 ranks: $(head -3 "$tmp/err")"; return; }
  python3 -c "
import json, sys
j = json.loads(sys.argv[1]); print('pipeline $2 $3 on $1 ranks: max_rel_error %.3g, peak %.2f MiB/rank (one device %.2f)' % (j['max_rel_error'], j['peak_memory'] / 2**20, $pp1 / 2**20))
sys.exit(0 if j['max_rel_error'] <= $5 and j['ranks'] == $1 and j['peak_memory'] < $pp1 else 1)" "$out" && ok || bad "pipeline $3 on $1 ranks: $out"
}
pp 2 gpt_pp.cir pp2.tac 'sgd(lr = 0.1)' 1e-5
pp 4 gpt_pp.cir pp4_gpipe.tac 'sgd(lr = 0.1, momentum = 0.9)' 1e-5
pp 2 gpt_pp.cir pp2_one.tac 'sgd(lr = 0.1)' 1e-5
pp 2 gpt_pp_f64.cir pp2.tac 'adam(lr = 1e-3)' 1e-12
pp 4 gpt_pp_f64.cir pp4_gpipe.tac 'adam(lr = 1e-3)' 1e-12
pp 8 gpt_pp_f64.cir pp_bp_mp.tac 'adam(lr = 1e-3)' 1e-12
pp 4 gpt_pp.cir pp_bp_z3.tac 'sgd(lr = 0.1, momentum = 0.9)' 1e-5
pp 2 gpt_pp.cir pp2.tac '' 1e-5
pp 2 gpt_pp.cir pp2_interleaved.tac 'sgd(lr = 0.1)' 1e-5
pp 4 gpt_pp_f64.cir pp4_interleaved.tac 'adam(lr = 1e-3)' 1e-12
# zero-bubble (ZB-H1), alone and beside batch + ZeRO-3
pp 4 gpt_pp.cir pp4_zb.tac 'sgd(lr = 0.1, momentum = 0.9)' 1e-5
pp 4 gpt_pp_f64.cir pp4_zb.tac 'adam(lr = 1e-3)' 1e-12
pp 4 gpt_pp_f64.cir pp_bp_z3_zb.tac 'adam(lr = 1e-3)' 1e-12
# an 8-layer GPT on 2 and 4 stages under each schedule
pp 2 gpt_pp8.cir pp2.tac 'sgd(lr = 0.1)' 1e-5
pp 4 gpt_pp8.cir pp4.tac 'sgd(lr = 0.1)' 1e-5
pp 4 gpt_pp8.cir pp4_gpipe.tac 'sgd(lr = 0.1, momentum = 0.9)' 1e-5
pp 4 gpt_pp8.cir pp4_il.tac 'sgd(lr = 0.1)' 1e-5

# a forward program whose output (a vector) stays split: reported and checked whole
one=$("$CARVE" run "$SRCDIR/tests/data/chain.cir" --steps 1 --json)
two=$($MPIRUN -n 2 "$CARVE" run "$SRCDIR/tests/data/chain.cir" "$SRCDIR/tests/data/chain_rows.tac" --steps 1 --check --json)
python3 -c "
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert abs(a['losses'][0] - b['losses'][0]) <= 1e-5 * abs(a['losses'][0]) and b['max_rel_error'] <= 1e-6, (a, b)
" "$one" "$two" && ok || bad "a split output: $one / $two"

# the MLP on 2 ranks, forward only and with SGD
for t in mlp_bp mlp_mp; do
  out=$($MPIRUN -n 2 "$CARVE" run "$ex/mlp_small.cir" "$ex/$t.tac" --steps 2 --check --json) && \
    python3 -c "import json,sys; sys.exit(0 if json.loads(sys.argv[1])['max_rel_error'] <= 1e-5 else 1)" "$out" && ok || bad "$t forward: $out"
  out=$($MPIRUN -n 2 "$CARVE" run "$ex/mlp_small.cir" "$ex/$t.tac" --train 'sgd(lr = 0.1)' --steps 3 --check --json) && \
    python3 -c "import json,sys; sys.exit(0 if json.loads(sys.argv[1])['max_rel_error'] <= 1e-5 else 1)" "$out" && ok || bad "$t sgd: $out"
done
# memory per rank: ZeRO-3 needs less than batch parallelism alone
python3 -c "import sys; a = int(open('$tmp/peak.gpt2_small_bp.tac').read()); b = int(open('$tmp/peak.gpt2_small_bp_z3.tac').read()); print('peak per rank: bp %d, bp+z3 %d' % (a, b)); sys.exit(0 if b < a else 1)" && ok || bad "ZeRO-3 did not lower the memory per rank"
# saved files: partitioned equals one device
"$CARVE" run "$ex/gpt2_small.cir" --train "$train" --steps 3 --save "$tmp/one.safetensors" >/dev/null || bad "one-device save"
$MPIRUN -n 4 "$CARVE" run "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp_z3.tac" --train "$train" --steps 3 --save "$tmp/four.safetensors" >/dev/null || bad "4-rank save"
python3 - "$tmp/one.safetensors" "$tmp/four.safetensors" <<'PY' && ok || bad "saved files differ"
import json, math, struct, sys
def load(p):
    raw = open(p, "rb").read(); n = struct.unpack("<Q", raw[:8])[0]; h = json.loads(raw[8:8 + n]); body = raw[8 + n:]
    out = {}
    for k, v in h.items():
        if k == "__metadata__": continue
        b, e = v["data_offsets"]; out[k] = (v["shape"], struct.unpack("<%df" % ((e - b) // 4), body[b:e]))
    return out
a, b = load(sys.argv[1]), load(sys.argv[2])
assert a.keys() == b.keys(), set(a) ^ set(b)
worst = 0
for k in a:
    assert a[k][0] == b[k][0], k
    num = sum((x - y) ** 2 for x, y in zip(a[k][1], b[k][1])); den = sum(y * y for y in a[k][1])
    worst = max(worst, math.sqrt(num / den) if den else math.sqrt(num))
print("saved files: %d tensors, largest relative difference %.3g" % (len(a), worst))
assert worst <= 1e-5 and "adam.m.wte" in a and "wte" in a
PY
# resuming from the 4-rank file on 2 different ranks continues the same training
$MPIRUN -n 4 "$CARVE" run "$ex/gpt2_small.cir" "$ex/gpt2_small_bp.tac" --train "$train" --steps 1 --params "$tmp/four.safetensors" --check --json > "$tmp/resume.json" 2>"$tmp/err" && ok || bad "resume from a saved file: $(head -2 "$tmp/err")"
# real data: every rank reads only its slice of the batch; the same losses as one device
python3 - "$tmp/data.safetensors" "$tmp/wrong.safetensors" <<'PY'
import json, struct, sys
def save(path, tensors):
    header, body = {}, b""
    for name, (dt, shape, raw) in sorted(tensors.items()):
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [len(body), len(body) + len(raw)]}
        body += raw
    h = json.dumps(header).encode(); h += b" " * (-len(h) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + body)
ids = [(i * 37 + 11) % 256 for i in range(128)]
labels = ids[1:] + ids[:1]
pack = lambda xs: struct.pack("<%di" % len(xs), *xs)
save(sys.argv[1], {"ids": ("I32", [4, 32], pack(ids)), "labels": ("I32", [4, 32], pack(labels))})
save(sys.argv[2], {"ids": ("I32", [4, 16], pack(ids[:64])), "labels": ("I32", [4, 32], pack(labels))})
PY
one=$("$CARVE" run "$ex/gpt2_small.cir" --train "$train" --steps 2 --data "$tmp/data.safetensors" --json)
four=$($MPIRUN -n 4 "$CARVE" run "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac" --train "$train" --steps 2 --data "$tmp/data.safetensors" --check --json)
python3 -c "
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print('--data: one device %s, 4 ranks %s, max_rel_error %.3g' % (a['losses'], b['losses'], b['max_rel_error']))
# the losses say whether each rank read its own slice; the parameters after two
# Adam steps differ more (its first updates are about lr * sign(g), so a gradient
# element near 0 that rounds differently moves a whole step): --check's tolerance
assert all(abs(x - y) <= 1e-5 * abs(x) for x, y in zip(a['losses'], b['losses'])) and b['max_rel_error'] <= b['tolerance']
" "$one" "$four" && ok || bad "--data on 4 ranks: $one / $four"
err=$("$CARVE" run "$ex/gpt2_small.cir" --steps 1 --data "$tmp/wrong.safetensors" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && [[ "$err" == *"'ids'"* ]] && [[ "$err" == *"[4, 16]"* ]] && ok || bad "a data tensor of the wrong shape: rc $rc: $err"

# one rank given a bad file: every rank exits 1, with the rank named, and none waits
printf 'not a safetensors file' > "$tmp/bad.safetensors"
start=$(date +%s)
$MPIRUN -n 1 "$CARVE" run "$ex/mlp_small.cir" "$ex/mlp_bp.tac" --steps 2 --params "$tmp/one_mlp.safetensors" : \
        -n 1 "$CARVE" run "$ex/mlp_small.cir" "$ex/mlp_bp.tac" --steps 2 --params "$tmp/bad.safetensors" > "$tmp/out" 2> "$tmp/err"
rc=$?
took=$(( $(date +%s) - start ))
# (no clock: a rank left waiting would run into the hang guard's timeout, exit 124)
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "carve: error: rank" "$tmp/err"; then ok; else bad "bad file on one rank: exit $rc after ${took}s: $(grep carve "$tmp/err" | head -2)"; fi
# a mesh that does not match the rank count
$MPIRUN -n 3 "$CARVE" run "$ex/gpt2_small.cir" "$ex/gpt2_small_bp_mp.tac" --steps 1 2> "$tmp/err" >/dev/null
[ $? -ne 0 ] && grep -q "needs 4 ranks but mpirun started 3" "$tmp/err" && ok || bad "rank count mismatch: $(grep carve "$tmp/err")"
# an f64 model trains (its optimizer state in f64) and, partitioned, equals one
# device to 1e-12 (every op in double; f32 arithmetic anywhere would leave
# 1e-7); its losses are the f32 model's to 1e-5
sed 's/f32\[/f64[/g' "$ex/gpt2_small.cir" > "$tmp/g64.cir"
for pair in "gpt2_small_bp_mp.tac adam(lr = 1e-3)" "gpt2_small_bp_mp_z3.tac sgd(lr = 0.1, momentum = 0.9)" "gpt2_small.tac adam(lr = 1e-3)"; do
  t=${pair%% *}; opt=${pair#* }
  out=$($MPIRUN -n 4 "$CARVE" run "$tmp/g64.cir" "$ex/$t" --train "$opt" --steps 3 --check --json 2>"$tmp/err") &&
    python3 -c "import json, sys; j = json.loads(sys.argv[1]); sys.exit(0 if j['max_rel_error'] <= 1e-12 and j['tolerance'] == 1e-9 else 1)" "$out" && ok ||
    bad "f64 $t ($opt): $out $(head -3 "$tmp/err")"
  l64=$("$CARVE" run "$tmp/g64.cir" --train "$opt" --steps 3 --json 2>"$tmp/err")
  l32=$("$CARVE" run "$ex/gpt2_small.cir" --train "$opt" --steps 3 --json 2>>"$tmp/err")
  python3 -c "import json, sys; a, b = (json.loads(x)['losses'] for x in sys.argv[1:]); assert all(abs(x - y) <= 1e-5 * abs(y) for x, y in zip(a, b)), (a, b)" \
    "$l64" "$l32" 2>>"$tmp/err" && ok || bad "f64 losses against f32 ($opt): $(tail -2 "$tmp/err")"
done
# a literal beside a partial sum is added once, not once per rank: the forward
# loss on 2 ranks is the one-device loss (it was 1 more)
fx="$SRCDIR/tests/data/fuzz/literal_partial"
one=$("$CARVE" run "$fx.cir" --steps 1 --json 2>"$tmp/err" | python3 -c 'import json,sys; print(json.load(sys.stdin)["losses"][0])')
two=$($MPIRUN -n 2 "$CARVE" run "$fx.cir" "$fx.tac" --steps 1 --json 2>>"$tmp/err" | python3 -c 'import json,sys; print(json.load(sys.stdin)["losses"][0])')
python3 -c "import sys; a, b = map(float, sys.argv[1:]); sys.exit(0 if abs(a - b) <= 1e-6 * abs(a) else 1)" "$one" "$two" 2>>"$tmp/err" && ok ||
  bad "a literal beside a partial sum: $two on 2 ranks, $one on one: $(head -3 "$tmp/err")"
echo "mpi_run: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# tests/hlo/run_testdata.sh STABLEHLO_CHECKOUT [CARVE]: run carve on
# StableHLO's two corpora of checked programs and count what passes, what
# fails its check, and what carve refuses (with the reasons, most common
# first):
#   stablehlo/testdata/*.mlir   each an op applied to constants, checked
#                               with custom_call @check.expect_* against
#                               the values XLA computed;
#   stablehlo/tests/interpret/*.mlir   the reference interpreter's tests,
#                               functions split at '// -----', checked with
#                               the check dialect (check.expect_eq_const ...).
# carve verifies the checks as stablehlo-translate --interpret does. Not
# part of `make check`: the corpora are not in this tree (Apache-2.0,
# github.com/openxla/stablehlo). docs/results.md gives the figures of the last run.
set -u
src=${1:?usage: tests/hlo/run_testdata.sh STABLEHLO_CHECKOUT [CARVE]}
carve=${2:-$(dirname "$0")/../../carve}
[ -d "$src/stablehlo/testdata" ] || { echo "no $src/stablehlo/testdata" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
crashes=0

# run_corpus NAME FILE...: one line per failed check or crash, then the tally
run_corpus() {
  local name=$1 pass=0 fail=0 refused=0 crash=0 f rc
  shift
  : >"$tmp/why"
  for f in "$@"; do
    timeout 120 "$carve" run "$f" --steps 1 --allow-nonfinite >/dev/null 2>"$tmp/err"
    rc=$?
    if [ $rc -eq 0 ]; then pass=$((pass + 1))
    elif [ $rc -eq 1 ] && grep -q 'check\.expect.* failed' "$tmp/err"; then
      fail=$((fail + 1))
      # StableHLO's own run of the reference interpreter skips these files (RUN-DISABLED)
      if head -1 "$f" | grep -q RUN-DISABLED; then echo "CHECK FAILED $(basename "$f") (RUN-DISABLED in StableHLO: its interpreter fails it too)"
      else echo "CHECK FAILED $(basename "$f")"; fi
    elif [ $rc -eq 1 ]; then refused=$((refused + 1)); sed -n 's/.*error: //p' "$tmp/err" | head -1 >>"$tmp/why"
    else crash=$((crash + 1)); echo "CRASH (exit $rc) $(basename "$f")"
    fi
  done
  echo "$name refused, by reason:"
  sed -E "s/'[^']*'/'..'/g; s/[0-9]+/N/g; s/; (carve|it) .*//" "$tmp/why" | cut -c1-80 | sort | uniq -c | sort -rn | head -12
  echo "$name: $pass passed, $fail failed their check, $refused refused, $crash crashed"
  crashes=$((crashes + crash))
}

run_corpus testdata "$src"/stablehlo/testdata/*.mlir

# the interpreter's tests: each '// -----' piece a program of its own
mkdir "$tmp/interpret"
for f in "$src"/stablehlo/tests/interpret/*.mlir; do
  awk -v out="$tmp/interpret/$(basename "$f" .mlir)" '
    /^\/\/ -----/ { n++; next }
    { print > sprintf("%s__%02d.mlir", out, n) }' "$f"
done
pieces=()
for f in "$tmp"/interpret/*.mlir; do grep -q 'func.func' "$f" && pieces+=("$f"); done
[ ${#pieces[@]} -gt 0 ] && run_corpus interpret "${pieces[@]}"
[ "$crashes" -eq 0 ]

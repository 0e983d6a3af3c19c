#!/usr/bin/env bash
# tests/hlo/run_testdata.sh STABLEHLO_CHECKOUT [CARVE]: run carve on every
# file of StableHLO's testdata corpus (stablehlo/testdata/*.mlir, each an op
# applied to constants and checked with custom_call @check.expect_*) and
# count what passes, what fails its check, and what carve refuses (with the
# reasons, most common first). Not part of `make check`: the corpus is not
# in this tree (Apache-2.0, github.com/openxla/stablehlo). The README gives
# the figures of the last run.
set -u
src=${1:?usage: tests/hlo/run_testdata.sh STABLEHLO_CHECKOUT [CARVE]}
carve=${2:-$(dirname "$0")/../../carve}
dir=$src/stablehlo/testdata
[ -d "$dir" ] || { echo "no $dir" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0; refused=0; crash=0
for f in "$dir"/*.mlir; do
  timeout 120 "$carve" run "$f" --steps 1 --allow-nonfinite >/dev/null 2>"$tmp/err"
  rc=$?
  if [ $rc -eq 0 ]; then pass=$((pass + 1))
  elif [ $rc -eq 1 ] && grep -q 'check\.expect.* failed' "$tmp/err"; then fail=$((fail + 1)); echo "CHECK FAILED $(basename "$f")"
  elif [ $rc -eq 1 ]; then refused=$((refused + 1)); sed -n 's/.*error: //p' "$tmp/err" | head -1 >>"$tmp/why"
  else crash=$((crash + 1)); echo "CRASH (exit $rc) $(basename "$f")"
  fi
done
echo "refused, by reason:"
sed -E "s/'[^']*'/'..'/g; s/[0-9]+/N/g; s/; (carve|it) .*//" "$tmp/why" 2>/dev/null | cut -c1-80 | sort | uniq -c | sort -rn | head -20
echo "testdata: $pass passed, $fail failed their check, $refused refused, $crash crashed"
[ "$crash" -eq 0 ]

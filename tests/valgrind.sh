#!/usr/bin/env bash
# tests/valgrind.sh BUILDDIR: every Criterion unit test under valgrind
# memcheck (children traced, leaks checked), one line per binary; exit 1
# when any reports an error. test_oom replaces malloc itself and is left
# out. Slow (minutes): run by hand, not by make check.
set -u
b=$(cd "${1:?usage: tests/valgrind.sh BUILDDIR}" && pwd)
status=0
for t in "$b"/tests/unit/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  [ "$name" = test_oom ] && continue
  log="$b/tests/unit/$name.valgrind.log"
  (cd "$b" && OPENBLAS_NUM_THREADS=1 valgrind -q --trace-children=yes --leak-check=full --errors-for-leak-kinds=definite \
     --error-exitcode=99 --log-file="$log.%p" "$t" > "$log" 2>&1)
  rc=$?
  errs=$(cat "$log".* 2>/dev/null | grep -c '^==[0-9]*== [A-Z].*\(Invalid\|uninitialised\|definitely lost\|Mismatched\)')
  summary=$(grep -h 'Synthesis' "$log" | tail -1)
  printf '%-28s rc %-3d valgrind errors %-3d %s\n' "$name" "$rc" "$errs" "$summary"
  [ "$rc" -ne 0 ] || [ "$errs" -ne 0 ] && status=1
done
exit $status

#!/usr/bin/env bash
# The collectives of runtime/comm_mpi.c on 2, 4 and 8 ranks (meshes [2],
# [4], [2,2], [8], [4,2], [2,2,2]); see tests/mpi/test_collectives.c.
# More ranks than cores need --oversubscribe; waiting ranks yield the CPU
# (mpi_yield_when_idle) so that 8 ranks make progress on a busy 2-core
# machine under the sanitizers. The timeouts only end hangs: they are far
# above what the work takes on such a machine, and no result depends on time.
# Under --enable-sanitizers, leaks inside MPI and BLAS are suppressed
# (tests/mpi/lsan.supp) and ours still fail the test.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src="${SRCDIR:-$here/../..}"
prog="${BUILDDIR:-.}/tests/mpi/test_collectives"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
export LSAN_OPTIONS="suppressions=$src/tests/mpi/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
fail=0
for n in 2 4 8; do
  timeout 900 mpirun --oversubscribe -x LSAN_OPTIONS -x ASAN_OPTIONS -n "$n" "$prog"; rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: mpirun -n $n $prog (exit $rc${rc/#124/, timed out})"
    fail=$((fail + 1))
  fi
done
# a rank that fails takes the others down with it, and says which it was
err=$(timeout 600 mpirun --oversubscribe -x LSAN_OPTIONS -x ASAN_OPTIONS -n 4 "$prog" --fail 2>&1 >/dev/null); rc=$?
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || [[ "$err" != *"carve: error: rank 3: step 3: boom"* ]]; then
  echo "FAIL: rt_mpi_fail on rank 3: exit $rc: $err"
  fail=$((fail + 1))
fi
[ "$fail" -eq 0 ]

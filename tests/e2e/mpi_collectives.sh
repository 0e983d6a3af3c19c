#!/usr/bin/env bash
# The collectives of runtime/comm_mpi.c on 2, 4 and 8 ranks (meshes [2],
# [4], [2,2], [8], [4,2], [2,2,2]); see tests/mpi/test_collectives.c.
# More ranks than cores need --oversubscribe; a hang ends at the timeout.
set -u
prog="${BUILDDIR:-.}/tests/mpi/test_collectives"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fail=0
for n in 2 4 8; do
  timeout 120 mpirun --oversubscribe -n "$n" "$prog"; rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: mpirun -n $n $prog (exit $rc${rc/#124/, timed out})"
    fail=$((fail + 1))
  fi
done
[ "$fail" -eq 0 ]

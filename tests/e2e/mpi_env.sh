# Sourced by the scripts that run carve under mpirun (not a test itself):
# root in a container, more ranks than cores, and under --enable-sanitizers
# what OpenMPI and OpenBLAS keep until exit is not ours (tests/mpi/lsan.supp).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export LSAN_OPTIONS="suppressions=$SRCDIR/tests/mpi/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
MPIRUN="timeout 300 mpirun --oversubscribe -x LSAN_OPTIONS -x ASAN_OPTIONS"

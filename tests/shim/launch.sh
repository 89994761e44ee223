# Sourced by the shim test runners: sets the array `launch` to the MPI
# launcher of SHIM_FLAVOR (openmpi or mpich) at SHIM_MPIEXEC, with
# SHIM_PRELOAD (':'-separated libraries, empty for none) preloaded into the
# MPI processes only, not into the launcher. Needs `name` for messages.
# (Plain ifs: a false && as the last command would fail the `.` under set -e.)
case $SHIM_FLAVOR in
openmpi)
    launch=("$SHIM_MPIEXEC" --oversubscribe --allow-run-as-root --mca mpi_yield_when_idle 1
        --mca btl self,vader)
    if [ -n "${SHIM_PRELOAD:-}" ]; then launch+=(-x "LD_PRELOAD=$SHIM_PRELOAD"); fi
    ;;
mpich)
    launch=("$SHIM_MPIEXEC")
    if [ -n "${SHIM_PRELOAD:-}" ]; then launch+=(-genv LD_PRELOAD "$SHIM_PRELOAD"); fi
    ;;
*)
    echo "FAIL $name: unknown SHIM_FLAVOR '$SHIM_FLAVOR'"
    exit 1
    ;;
esac

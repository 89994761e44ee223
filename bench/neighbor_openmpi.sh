#!/bin/sh
# The Open MPI runs of bench/neighbor recorded in bench/RESULTS.md: 16 and 64
# ranks on this box (oversubscribed), sizes 1..65536, both operations.
#   bench/neighbor_openmpi.sh BUILD_DIR OUT_DIR [-- NEIGHBOR-OPTIONS]
set -eu
build=${1:?usage: neighbor_openmpi.sh BUILD_DIR OUT_DIR [-- OPTIONS]}
out=${2:?usage: neighbor_openmpi.sh BUILD_DIR OUT_DIR [-- OPTIONS]}
shift 2
[ "${1:-}" = "--" ] && shift
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun="mpirun.openmpi --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader"
run() { # NP TOPO [OPTIONS]
    np=$1 topo=$2
    shift 2
    log="$out/neighbor-$np-$(echo "$topo" | tr ':/' '__').txt"
    cmd="$mpirun -np $np $build/bench/neighbor -N $topo -m 1:65536 -i 100 -x 10 $*"
    echo "+ $cmd" | tee "$log"
    $cmd >>"$log" 2>&1
}
run_all() {
    run 16 random:0.1:1 "$@"
    run 16 cart:4x4:1 "$@"
    run 64 cart:8x8:1 "$@"
    run 64 cart:4x4x4:1 "$@"
}
run_all "$@"

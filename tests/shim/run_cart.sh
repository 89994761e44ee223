#!/usr/bin/env bash
# Run one shim test: a plain MPI program, with or without the shim
# preloaded, then the checker (check_cart or check_graph) on its output.
#   run_cart.sh NAME EXPECT MAP NP PROGRAM [ARGS...]
# From the environment (set by ctest):
#   SHIM_FLAVOR    openmpi or mpich
#   SHIM_MPIEXEC   the launcher
#   SHIM_PRELOAD   libraries to preload into the MPI processes only (not into
#                  the launcher), separated by ':'; empty for none
#   SHIM_CHECK     the checker program
#   SHIM_STDERR_ONCE  when set, standard error must hold this text on
#                  exactly one line (a line printed once, by one process)
# and the MPITOPO_* settings of the run.
set -euo pipefail
name=$1 expect=$2 map=$3 np=$4
shift 4
. "$(dirname "$0")/launch.sh"
err=$(mktemp)
trap 'rm -f "$err"' EXIT
out=$("${launch[@]}" -n "$np" "$@" 2>"$err") || {
    status=$?
    cat "$err" >&2
    printf '%s\n' "$out"
    echo "FAIL $name: the program exited with status $status"
    exit 1
}
cat "$err" >&2
printf '%s\n' "$out"
if [ -n "${SHIM_STDERR_ONCE:-}" ]; then
    n=$(grep -cF -- "$SHIM_STDERR_ONCE" "$err" || true)
    if [ "$n" -ne 1 ]; then
        echo "FAIL $name: '$SHIM_STDERR_ONCE' on $n lines of standard error, expected 1"
        exit 1
    fi
fi
printf '%s\n' "$out" | "$SHIM_CHECK" "$name" "$expect" "$map"

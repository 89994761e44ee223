#!/usr/bin/env bash
# Run shim_neighbor_c with or without the shim preloaded; pass when it exits
# 0 and, if SHIM_STDERR_ONCE is set, its standard error holds that text on
# exactly one line (a warning printed once, by one process).
#   run_neighbor.sh NAME NP PROGRAM [ARGS...]
# From the environment (set by ctest): SHIM_FLAVOR, SHIM_MPIEXEC,
# SHIM_PRELOAD (as for run_cart.sh), SHIM_STDERR_ONCE, and the MPITOPO_*
# settings of the run.
set -euo pipefail
name=$1 np=$2
shift 2
. "$(dirname "$0")/launch.sh"
err=$(mktemp)
trap 'rm -f "$err"' EXIT
status=0
"${launch[@]}" -n "$np" "$@" 2>"$err" || status=$?
cat "$err" >&2
if [ "$status" -ne 0 ]; then
    echo "FAIL $name: the program exited with status $status"
    exit 1
fi
if [ -n "${SHIM_STDERR_ONCE:-}" ]; then
    n=$(grep -cF -- "$SHIM_STDERR_ONCE" "$err" || true)
    if [ "$n" -ne 1 ]; then
        echo "FAIL $name: '$SHIM_STDERR_ONCE' on $n lines of standard error, expected 1"
        exit 1
    fi
fi
echo "PASS $name"

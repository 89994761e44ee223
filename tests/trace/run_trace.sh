#!/usr/bin/env bash
# Run one tracer test: trace_prog with libmpitopo_trace preloaded, then
# check_trace on the file it wrote.
#   run_trace.sh NAME NP EXPECTED PROGRAM [ARGS...]
# EXPECTED "unwritable" points MPITOPO_TRACE_FILE into a missing directory
# instead: the program must still exit 0, with the tracer's one-line error.
# From the environment (set by ctest):
#   TRACE_FLAVOR   openmpi or mpich
#   TRACE_MPIEXEC  the launcher
#   TRACE_PRELOAD  libraries to preload into the MPI processes (the tracer
#                  first), separated by ':'
#   TRACE_CHECK    the check_trace program
#   TRACE_DIR      a scratch directory for the trace file
#   TRACE_CUDART   optional: MPITOPO_CUDART for the run (the substitute
#                  runtime fake_cudart), with FAKE_CUDART_VERSION from
#                  TRACE_FAKE_VERSION when set
#   TRACE_GPU_EXPECTED  optional: the expected GPU pattern (FILE.gpu); unset,
#                  the run must leave no FILE.gpu (a stale one is planted
#                  before the run and must be removed)
set -euo pipefail
name=$1 np=$2 expected=$3
shift 3
mkdir -p "$TRACE_DIR"
file="$TRACE_DIR/$name.txt"
[ "$expected" = unwritable ] && file="$TRACE_DIR/no-such-directory/$name.txt"
rm -f "$file" "$file.gpu"
gpu_expected=${TRACE_GPU_EXPECTED:-}
if [ -z "$gpu_expected" ] && [ "$expected" != unwritable ]; then
    echo "stale" >"$file.gpu"
fi
extra=()
if [ -n "${TRACE_CUDART:-}" ]; then
    extra+=(MPITOPO_CUDART="$TRACE_CUDART" FAKE_CUDART_VERSION="${TRACE_FAKE_VERSION:-12000}")
fi
case $TRACE_FLAVOR in
openmpi)
    launch=("$TRACE_MPIEXEC" --oversubscribe --allow-run-as-root --mca mpi_yield_when_idle 1
        --mca btl self,vader -x "LD_PRELOAD=$TRACE_PRELOAD" -x "MPITOPO_TRACE_FILE=$file")
    for e in ${extra[@]+"${extra[@]}"}; do launch+=(-x "$e"); done
    ;;
mpich)
    launch=("$TRACE_MPIEXEC" -genv LD_PRELOAD "$TRACE_PRELOAD" -genv MPITOPO_TRACE_FILE "$file")
    for e in ${extra[@]+"${extra[@]}"}; do launch+=(-genv "${e%%=*}" "${e#*=}"); done
    ;;
*)
    echo "FAIL $name: unknown TRACE_FLAVOR '$TRACE_FLAVOR'"
    exit 1
    ;;
esac
status=0
"${launch[@]}" -n "$np" "$@" 2>"$TRACE_DIR/$name.err" || status=$?
cat "$TRACE_DIR/$name.err" >&2
if [ "$status" != 0 ]; then
    echo "FAIL $name: the program exited with status $status"
    exit 1
fi
if [ "$expected" = unwritable ]; then
    n=$(grep -c "^mpitopo trace: cannot write the trace to $file: " "$TRACE_DIR/$name.err" || true)
    if [ "$n" != 1 ] || [ -e "$file" ]; then
        echo "FAIL $name: expected one 'cannot write' line on stderr, got $n"
        exit 1
    fi
    echo "PASS $name"
    exit 0
fi
if [ -n "${TRACE_CUDART:-}" ] && [ ! -e "$TRACE_CUDART" ]; then
    # A runtime that cannot be loaded: one line from rank 0, then CPU only.
    n=$(grep -c "^mpitopo trace: MPITOPO_CUDART=$TRACE_CUDART: " "$TRACE_DIR/$name.err" || true)
    if [ "$n" != 1 ]; then
        echo "FAIL $name: expected one 'MPITOPO_CUDART=' line on stderr, got $n"
        exit 1
    fi
fi
if [ -n "$gpu_expected" ]; then
    "$TRACE_CHECK" "$name" "$file" "$expected" >/dev/null ||
        { "$TRACE_CHECK" "$name (CPU pattern)" "$file" "$expected"; exit 1; }
    "$TRACE_CHECK" "$name" "$file.gpu" "$gpu_expected" ||
        { echo "FAIL $name: the GPU pattern $file.gpu differs"; exit 1; }
    exit 0
fi
if [ -e "$file.gpu" ]; then
    echo "FAIL $name: $file.gpu exists though no send was from device memory"
    exit 1
fi
"$TRACE_CHECK" "$name" "$file" "$expected"

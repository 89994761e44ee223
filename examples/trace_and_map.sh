#!/usr/bin/env bash
# trace_and_map.sh: give an unmodified MPI program a better rank placement,
# without touching its source, in three steps:
#
#   1. run it once with mpitopo's tracer preloaded (libmpitopo_trace.so): at
#      MPI_Finalize rank 0 writes who sent how much to whom (a pattern file);
#   2. `mpitopo map` maps that pattern onto the machine and writes the
#      placement in the launcher's format: an Open MPI rank file
#      (openmpi-rankfile, for `mpirun --rankfile`) or an MPICH (Hydra)
#      machine file (mpich-hosts, one host per rank in rank order, for
#      `mpiexec -f`); `mpitopo eval --mapping` shows what it saves against
#      the launch placement;
#   3. relaunch the program with that file.
#
# usage: trace_and_map.sh [options] [--] PROGRAM [ARGS...]
#   -n NP        processes (default 8)
#   -m MACHINE   the machine the job runs on, as mpitopo describes it
#                (default "node:2 core:4": 2 nodes of 4 cores)
#   -l LAUNCH    how the launcher places ranks without a file: block
#                (default; Open MPI's and Hydra's default) or rr
#   -H HOSTS     the host names of the nodes, comma-separated, in node order
#                (default: node0, node1, ...)
#   -o DIR       where the trace and the placement files go (default .)
#   --local      every node of MACHINE is this host: try it all on one
#                machine. The file is written as for a cluster, then a copy
#                (*.local.txt) names $(hostname) for every node and, for
#                Open MPI, folds the core numbers onto this host's cores
#                (Open MPI refuses a slot the host does not have); the
#                relaunch uses the copy. The placement then changes nothing
#                physically, but every step runs as it would on a cluster.
# From the environment:
#   MPIEXEC          the launcher (default mpirun); Open MPI or MPICH (Hydra)
#                    is told from its --version
#   MPIEXEC_FLAGS    extra launcher options for both runs (e.g. --oversubscribe)
#   MPITOPO_PREFIX   where mpitopo is installed (default: from `mpitopo` on
#                    PATH, i.e. <prefix>/bin/mpitopo)
# Exit status: the relaunched program's (or 1 if a step fails).
set -euo pipefail

np=8 machine="node:2 core:4" launch=block hosts= outdir=. local=0
while [ $# -gt 0 ]; do
    case $1 in
    -n) np=$2; shift 2 ;;
    -m) machine=$2; shift 2 ;;
    -l) launch=$2; shift 2 ;;
    -H) hosts=$2; shift 2 ;;
    -o) outdir=$2; shift 2 ;;
    --local) local=1; shift ;;
    --) shift; break ;;
    -*) echo "trace_and_map.sh: unknown option $1" >&2; exit 1 ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || { sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 1; }

# Where mpitopo lives: the CLI and the tracer library.
prefix=${MPITOPO_PREFIX:-$(dirname "$(dirname "$(command -v mpitopo || echo /usr/local/bin/mpitopo)")")}
cli=$prefix/bin/mpitopo
tracer=$(ls "$prefix"/lib*/libmpitopo_trace.so "$prefix"/lib/*/libmpitopo_trace.so 2>/dev/null | head -1 || true)
[ -x "$cli" ] && [ -n "$tracer" ] || {
    echo "trace_and_map.sh: no mpitopo under '$prefix' (set MPITOPO_PREFIX)" >&2
    exit 1
}

# Which launcher: Open MPI's mpirun passes environment variables with -x and
# takes a rank file; MPICH's Hydra mpiexec passes them with -genv and takes
# a machine file.
mpiexec=${MPIEXEC:-mpirun}
read -r -a flags <<<"${MPIEXEC_FLAGS:-}"
if "$mpiexec" --version 2>&1 | grep -qi "open mpi\|open-mpi\|openrte"; then
    flavour=openmpi format=openmpi-rankfile file=$outdir/ranks.txt
else
    flavour=mpich format=mpich-hosts file=$outdir/hosts.txt
fi
mkdir -p "$outdir"
trace=$outdir/trace.txt

echo "== 1. trace: $* ($np processes, tracer $tracer)"
rm -f "$trace"
if [ "$flavour" = openmpi ]; then
    "$mpiexec" "${flags[@]}" -x "LD_PRELOAD=$tracer" -x "MPITOPO_TRACE_FILE=$trace" -n "$np" "$@"
else
    "$mpiexec" "${flags[@]}" -genv LD_PRELOAD "$tracer" -genv MPITOPO_TRACE_FILE "$trace" -n "$np" "$@"
fi
[ -s "$trace" ] || { echo "trace_and_map.sh: the traced run wrote no $trace" >&2; exit 1; }
echo "   $(grep -vc '^#' "$trace") lines in $trace"

echo "== 2. map onto \"$machine\" (launch placement to beat: $launch) -> $file"
"$cli" map --pattern "$trace" --machine "$machine" --placement "$launch" --format "$format" \
    ${hosts:+--hosts "$hosts"} --output "$file" --verbose
sed 's/^/   /' "$file"
# The launch placement (identity) and the file side by side: traffic
# crossing each level of the machine, partners per process, cost.
"$cli" eval --pattern "$trace" --machine "$machine" --placement "$launch" --mapper identity \
    --mapping "$file" ${hosts:+--hosts "$hosts"} | sed 's/^/   /'
if [ "$local" = 1 ]; then
    # Every node is this host: rename the hosts, and fold Open MPI's core
    # numbers onto the cores this host has.
    local_file=${file%.txt}.local.txt
    if [ "$flavour" = openmpi ]; then
        awk -v h="$(hostname)" -v c="$(nproc)" \
            '{ split($3, s, "="); print $1, substr($2, 1, index($2, "=")) h, "slot=" s[2] % c }' \
            "$file" >"$local_file"
    else
        awk -v h="$(hostname)" '/^#/ { print; next } { print h ":1" }' "$file" >"$local_file"
    fi
    echo "   (--local: every node is $(hostname): launching with $local_file)"
    file=$local_file
fi

echo "== 3. relaunch with $file"
if [ "$flavour" = openmpi ]; then
    exec "$mpiexec" "${flags[@]}" --rankfile "$file" -n "$np" "$@"
else
    exec "$mpiexec" "${flags[@]}" -f "$file" -n "$np" "$@"
fi

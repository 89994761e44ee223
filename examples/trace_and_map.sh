#!/usr/bin/env bash
# trace_and_map.sh: give an unmodified MPI program a better rank placement,
# without touching its source, with `mpitopo run` in two launches:
#
#   1. record: `mpitopo run --record` launches the program with mpitopo's
#      shim preloaded; it counts what every rank sends, and at MPI_Finalize
#      maps that traffic onto the job's machine and stores the placement in
#      a cache (--explain prints the launch placement and the stored one
#      side by side);
#   2. apply: `mpitopo run --apply` relaunches the same command with that
#      placement, in the launcher's own terms (an Open MPI rankfile, an
#      MPICH Hydra machine file, srun's arbitrary distribution).
#
# Each launch prints one line on standard error: `mpitopo run: recorded FILE
# (off-node bytes X -> Y predicted)`, then `mpitopo run: applied FILE
# (off-node bytes X -> Y)`. In daily use, `mpitopo run -- LAUNCHER ...` with
# no mode does both: it records on the first launch and applies afterwards.
#
# usage: trace_and_map.sh [options] [--] PROGRAM [ARGS...]
#   -n NP        processes (default 8)
#   -o DIR       the cache of placements (default: mpitopo run's,
#                $MPITOPO_CACHE, else $XDG_CACHE_HOME/mpitopo, else
#                ~/.cache/mpitopo)
#   --local      this host plays a cluster: MPITOPO_EMULATE=MACHINE, the
#                launch laying the ranks as LAUNCH. The placement is then
#                applied as emulated leaves (MPITOPO_EMULATE_PLACEMENT=file:),
#                so it changes nothing physically, but every step runs as it
#                would on a cluster
#   -m MACHINE   with --local, the emulated machine (default "node:2 core:4":
#                2 nodes of 4 cores)
#   -l LAUNCH    with --local, how the launcher lays the ranks on it: block
#                (default; Open MPI's and Hydra's default) or rr
# From the environment:
#   MPIEXEC          the launcher (default mpirun): Open MPI's mpirun, MPICH's
#                    Hydra mpiexec or Slurm's srun, told from its --version
#   MPIEXEC_FLAGS    extra launcher options for both runs (e.g. --oversubscribe,
#                    --hostfile FILE)
#   MPITOPO_PREFIX   where mpitopo is installed (default: from `mpitopo` on
#                    PATH, i.e. <prefix>/bin/mpitopo)
# Exit status: the program's in the second launch (or the first's, or 1,
# when an earlier step fails).
set -euo pipefail

np=8 machine="node:2 core:4" launch=block outdir= local=0
while [ $# -gt 0 ]; do
    case $1 in
    -n) np=$2; shift 2 ;;
    -o) outdir=$2; shift 2 ;;
    -m) machine=$2; shift 2 ;;
    -l) launch=$2; shift 2 ;;
    --local) local=1; shift ;;
    --) shift; break ;;
    -*) echo "trace_and_map.sh: unknown option $1" >&2; exit 1 ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || { sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 1; }

prefix=${MPITOPO_PREFIX:-$(dirname "$(dirname "$(command -v mpitopo || echo /usr/local/bin/mpitopo)")")}
cli=$prefix/bin/mpitopo
[ -x "$cli" ] || { echo "trace_and_map.sh: no mpitopo under '$prefix' (set MPITOPO_PREFIX)" >&2; exit 1; }
cache=${outdir:-${MPITOPO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mpitopo}}
if [ "$local" = 1 ]; then
    export MPITOPO_EMULATE=$machine MPITOPO_EMULATE_PLACEMENT=$launch
    echo "== this host as \"$machine\", ranks laid $launch (MPITOPO_EMULATE)"
fi
read -r -a flags <<<"${MPIEXEC_FLAGS:-}"
command=("${MPIEXEC:-mpirun}" "${flags[@]}" -n "$np" "$@")

echo "== 1. record: mpitopo run --record -- ${command[*]}"
"$cli" run --record --explain --cache "$cache" -- "${command[@]}"

echo "== 2. apply: mpitopo run --apply -- ${command[*]}"
status=0
"$cli" run --apply --cache "$cache" -- "${command[@]}" || status=$?
# The file the launcher was given (the newest in the cache).
file=$(ls -t "$cache"/*.placement.{rankfile,hosts,slurmhosts,emulate} 2>/dev/null | head -1 || true)
[ -z "$file" ] || { echo "   placement given to the launcher, $file:"; sed 's/^/   /' "$file"; }
exit "$status"

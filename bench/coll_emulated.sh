#!/usr/bin/env bash
# bench/coll on this box under Open MPI: NP processes on an emulated
# machine of NODES nodes x 2 sockets (MPITOPO_EMULATE), world placed block
# on it, the four layouts built by bench/coll itself. Oversubscribed when
# NP exceeds the cores: the latencies are then those of processes sharing
# cores (relative, not absolute, figures).
#
#   bench/coll_emulated.sh [-b BUILD] [-n NP] [-N NODES] [-- COLL-OPTIONS]
#
#   -b BUILD  build directory with bench/coll (default build/openmpi)
#   -n NP     processes (default 16)
#   -N NODES  emulated nodes (default 4); NP / NODES must be even
#   COLL-OPTIONS  default "-o allgather -m 1:4096 -i 50 -x 5"
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/openmpi np=16 nodes=4
while getopts "b:n:N:h" opt; do
  case $opt in
  b) build=$OPTARG ;;
  n) np=$OPTARG ;;
  N) nodes=$OPTARG ;;
  *) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
args=("$@")
((${#args[@]})) || args=(-o allgather -m 1:4096 -i 50 -x 5)
per=$((np / nodes))
((per * nodes == np && per % 2 == 0)) || { echo "coll_emulated.sh: NP / NODES must be an even integer" >&2; exit 1; }
exe=$build/bench/coll
[[ -x $exe ]] || { echo "coll_emulated.sh: $exe not built" >&2; exit 1; }
machine="node:$nodes socket:2 core:$((per / 2))"
echo "== bench/coll, Open MPI, $np processes on $(nproc) cores ($(uname -n)), emulated \"$machine\", $(date -u +%Y-%m-%dT%H:%MZ), commit $(git -C "$root" rev-parse --short HEAD)"
echo "coll ${args[*]}"
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  mpirun --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader -n "$np" \
  -x MPITOPO_EMULATE="$machine" -x MPITOPO_EMULATE_PLACEMENT=block "$exe" "${args[@]}"

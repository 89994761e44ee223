#!/usr/bin/env bash
# bench/ring on this machine emulated as a cluster (MPITOPO_EMULATE), with
# Open MPI: serial (block) and round-robin placement of the ranks.
#
#   bench/ring_emulated.sh [-n NP] [-e MACHINE] [-m PLACEMENTS] [-b BUILD] [-- RING-OPTIONS]
#
#   -n NP          ranks (default 64: the paper's 8 rings of 8)
#   -e MACHINE     emulated machine (default "node:8 core:8", the paper's 8 nodes of 8 cores)
#   -m PLACEMENTS  MPITOPO_EMULATE_PLACEMENT values (default "block rr": the
#                  paper's serial and round-robin rankings)
#   -b BUILD       build directory holding bench/ring (default build-bench)
#   RING-OPTIONS   passed to every run (default "-r 11")
#
# Emulation changes what mpitopo believes, not the hardware: all ranks still
# share one box, so the off-node traffic of each mapping is the result here
# and the times only show what reordering costs on one box (for real nodes
# see ring_netns.sh and smpi/ring_run.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
np=64 machine="node:8 core:8" placements="block rr" build=$root/build-bench
while getopts "n:e:m:b:h" opt; do
  case $opt in
  n) np=$OPTARG ;;
  e) machine=$OPTARG ;;
  m) placements=$OPTARG ;;
  b) build=$OPTARG ;;
  *) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
ring_args=("$@")
((${#ring_args[@]})) || ring_args=(-r 11)
ring=$build/bench/ring
[[ -x $ring ]] || { echo "ring_emulated.sh: $ring not built (cmake --build $build)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "== $np ranks on $(nproc) cores emulated as \"$machine\", $(date -u +%Y-%m-%dT%H:%MZ)"
for placement in $placements; do
  echo
  echo "-- MPITOPO_EMULATE_PLACEMENT=$placement, ring ${ring_args[*]}"
  MPITOPO_EMULATE="$machine" MPITOPO_EMULATE_PLACEMENT=$placement \
    mpirun.openmpi --oversubscribe --allow-run-as-root --mca mpi_yield_when_idle 1 \
    --mca btl self,vader -n "$np" "$ring" "${ring_args[@]}"
done

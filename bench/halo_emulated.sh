#!/usr/bin/env bash
# bench/halo on this machine emulated as a cluster (MPITOPO_EMULATE), with
# Open MPI: every combination of rank placement and grid dimension.
#
#   bench/halo_emulated.sh [-n NP] [-e MACHINE] [-m PLACEMENTS] [-d DIMS] [-b BUILD] [-- HALO-OPTIONS]
#
#   -n NP          ranks (default 64; this is a 2-core box, so at most 64)
#   -e MACHINE     emulated machine (default "node:4 core:16")
#   -m PLACEMENTS  MPITOPO_EMULATE_PLACEMENT values (default "block rr")
#   -d DIMS        grid dimensions to run (default "2 3")
#   -b BUILD       build directory holding bench/halo (default build-bench)
#   HALO-OPTIONS   passed to every run (default "-L 8,4096,65536 -r 3 -i 8")
#
# Emulation changes what mpitopo believes, not the hardware: all ranks still
# share one box, so the partner table (on/off-node partners, Table 3 of
# Gropp, EuroMPI'18) is the result here; the times only show that the three
# communicators cost the same on one box (for real nodes see
# halo_netns.sh and smpi/run.sh). Which cores Open MPI binds to does not
# matter on one host: MPITOPO_EMULATE_PLACEMENT alone says where ranks are.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
np=64 machine="node:4 core:16" placements="block rr" dims="2 3" build=$root/build-bench
while getopts "n:e:m:d:b:h" opt; do
  case $opt in
  n) np=$OPTARG ;;
  e) machine=$OPTARG ;;
  m) placements=$OPTARG ;;
  d) dims=$OPTARG ;;
  b) build=$OPTARG ;;
  *) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
halo_args=("$@")
((${#halo_args[@]})) || halo_args=(-L "8,4096,65536" -r 3 -i 8)
halo=$build/bench/halo
[[ -x $halo ]] || { echo "halo_emulated.sh: $halo not built (cmake --build $build)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "== $np ranks on $(nproc) cores emulated as \"$machine\", $(date -u +%Y-%m-%dT%H:%MZ)"
for placement in $placements; do
  for d in $dims; do
    echo
    echo "-- MPITOPO_EMULATE_PLACEMENT=$placement, halo -d $d ${halo_args[*]}"
    MPITOPO_EMULATE="$machine" MPITOPO_EMULATE_PLACEMENT=$placement \
      mpirun.openmpi --oversubscribe --allow-run-as-root --mca mpi_yield_when_idle 1 \
      --mca btl self,vader -n "$np" "$halo" -d "$d" "${halo_args[@]}"
  done
done

#!/usr/bin/env bash
# bench/halo under SimGrid SMPI on the platform 'mpitopo platform' writes for
# a network model (default: the QDR partition of SciNet's GPC, "gpc"), with
# the links, capacities and routes that mpitopo's congestion metrics count.
# HOSTS end nodes of CORES cores, one rank per core; two rank placements of
# the same program:
#   block  ranks 0..CORES-1 on the first host, ... (SMPI's default)
#   cart   the placement of 'mpitopo map --mapper cart' for the halo's grid,
#          as an mpich-hosts hostfile (rank i on the host of line i)
# and, under block, mpitopo_cart_create's own renumbering (halo's "mpitopo"
# column). Before the runs, 'mpitopo eval --network' prints the metrics the
# model predicts for both placements.
#
#   bench/smpi/halo_network.sh -b BUILD -m MPITOPO [-n NETWORK] [-H HOSTS] [-c CORES]
#                              [-B BW] [-l LAT] [-d DIMS] [-o OUTDIR] [-- HALO-OPTIONS]
#
#   -b BUILD     output directory of bench/smpi/build.sh (BUILD/halo)
#   -m MPITOPO   the mpitopo command-line tool (a CMake build's tools/mpitopo)
#   -n NETWORK   network description (default gpc)
#   -H HOSTS     hosts, the first HOSTS end nodes (default 128)
#   -c CORES     cores per host (default 8)
#   -B BW        bandwidth per unit of channel capacity (default 4GBps: QDR
#                InfiniBand 4x, 32 Gbit/s of data)
#   -l LAT       latency per link (default 100ns: a switch hop)
#   -d DIMS      grid dimensions, as halo -d (default "2 3")
#   -o OUTDIR    where the platform and hostfiles go (default BUILD/network)
#   HALO-OPTIONS passed to every run (default "-L 8,65536,1048576 -r 2 -i 4";
#                simulated times are deterministic: one repetition after the
#                discarded warm-up is enough)
#
# SMPI options as bench/smpi/run.sh (simulated network time only, the link
# figures taken as the effective ones, Open MPI's collectives).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build= mpitopo= network=gpc hosts=128 cores=8 bw=4GBps lat=100ns dims="2 3" out=
while getopts "b:m:n:H:c:B:l:d:o:h" opt; do
  case $opt in
  b) build=$OPTARG ;;
  m) mpitopo=$OPTARG ;;
  n) network=$OPTARG ;;
  H) hosts=$OPTARG ;;
  c) cores=$OPTARG ;;
  B) bw=$OPTARG ;;
  l) lat=$OPTARG ;;
  d) dims=$OPTARG ;;
  o) out=$OPTARG ;;
  *) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
halo_args=("$@")
((${#halo_args[@]})) || halo_args=(-L "8,65536,1048576" -r 2 -i 4)
[[ -n $build && -x $build/halo ]] || { echo "halo_network.sh: no BUILD/halo (-b; bench/smpi/build.sh BUILD)" >&2; exit 1; }
[[ -n $mpitopo && -x $mpitopo ]] || { echo "halo_network.sh: no mpitopo tool (-m)" >&2; exit 1; }
out=${out:-$build/network}
mkdir -p "$out"
np=$((hosts * cores))
tag=$(tr -c 'A-Za-z0-9\n' _ <<<"$network")-${hosts}x$cores
platform=$out/$tag.xml
t0=$(date +%s)
"$mpitopo" platform --network "$network" --nodes "$hosts" --cores "$cores" --bandwidth "$bw" --latency "$lat" \
  -o "$platform"
names=$(sed -n 's/^ *<host id="\([^"]*\)".*/\1/p' "$platform")
hostlist=$(paste -sd, <<<"$names")
awk -v c="$cores" '{print $0 ":" c}' <<<"$names" >"$out/hosts-block-$tag"
smpi_cfg=(--cfg=smpi/simulate-computation:no --cfg=smpi/coll-selector:ompi --cfg=smpi/bw-factor:0:1
          --cfg=smpi/lat-factor:0:1 --log=root.thres:warning --log=smpi_pmpi.thres:error)

echo "== SimGrid $(smpirun -version 2>/dev/null | head -n 1 | sed 's/.*version //'), $np ranks on $hosts hosts x $cores cores of '$network', $(date -u +%Y-%m-%dT%H:%MZ)"
echo "platform: mpitopo platform --network $network --nodes $hosts --cores $cores --bandwidth $bw --latency $lat ($(grep -c '<route ' "$platform") routes, $(grep -c '<link id="c' "$platform") links; $(($(date +%s) - t0)) s)"
echo "smpirun ${smpi_cfg[*]}"
for d in $dims; do
  grid=$("$mpitopo" dims "$np" "$(printf '0%.0s,' $(seq "$d") | sed 's/,$//')" | tail -n 1 | tr -d ' ' | tr ',' 'x')
  "$mpitopo" map --pattern "cart:$grid" --machine "node:$hosts core:$cores" --mapper cart --format mpich-hosts \
    --hosts "$hostlist" --output "$out/hosts-cart-$grid-$tag.map"
  grep -v '^#' "$out/hosts-cart-$grid-$tag.map" >"$out/hosts-cart-$grid-$tag" # SMPI reads no comment
  echo
  echo "-- $d-D grid $grid: the model's prediction (one unit per message, 'mpitopo eval --network $network')"
  "$mpitopo" eval --machine "node:$hosts core:$cores" --pattern "cart:$grid" --mapper identity \
    --mapping "$out/hosts-cart-$grid-$tag" --hosts "$hostlist" --network "$network" |
    sed -n '/^edges crossing node/p; /^network/,/^(/p'
  for placement in block cart; do
    hostfile=$out/hosts-block-$tag
    [[ $placement == cart ]] && hostfile=$out/hosts-cart-$grid-$tag
    echo
    echo "-- placement $placement, halo -d $d -c native,mpitopo ${halo_args[*]}"
    t1=$(date +%s)
    smpirun -np "$np" -platform "$platform" -hostfile "$hostfile" "${smpi_cfg[@]}" \
      "$build/halo" -d "$d" -c native,mpitopo "${halo_args[@]}"
    echo "(wall $(($(date +%s) - t1)) s)"
  done
done

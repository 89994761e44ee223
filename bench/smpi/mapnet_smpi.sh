#!/usr/bin/env bash
# Issue 17, part 4: SimGrid communication time of the mappers' placements,
# on the platform 'mpitopo platform' writes for a network model (the links,
# capacities and routes whose congestion bench/mapnet measures). For each
# pattern and mapper, bench/mapnet maps (the same call and the same result
# as its metric tables) and writes the end node of every process; that list
# becomes an SMPI hostfile (rank i on the host of process i), and
# bench/smpi/mapnet_replay.c replays the pattern's communication under it:
#   2d/2dw  2-D 5-point halo, plain / weighted 3x along dimension 0
#   3d/3dw  3-D 15-point halo, plain / weighted
#   a2a1    MPI_Alltoall in the columns of the 2-D grid (MPI_Cart_sub 1,0)
#   a2a2    MPI_Alltoall in the planes of dimensions 0 and 2 of the 3-D grid
# The replayed traffic is the pattern's (the halo's message to an offset
# carries the pattern's byte weight; the all-to-all is SMPI's own algorithm
# under Open MPI's selector, whose messages may differ from the pattern's
# direct pairs for small sizes).
#
#   bench/smpi/mapnet_smpi.sh [-b BUILD] [-n NETWORK] [-H HOSTS] [-c CORES] [-p PATTERNS]
#                             [-m MAPPERS] [-L SIZES] [-i ITERS] [-B BW] [-l LAT]
#
#   -b BUILD     CMake build directory with bench/mapnet and tools/mpitopo
#                (default build/h-mapnet); mapnet_replay is built in BUILD/smpi
#   -n NETWORK   network description (default gpc)
#   -H HOSTS     hosts, the first HOSTS end nodes (default 128)
#   -c CORES     cores per host, one rank each (default 8)
#   -p PATTERNS  among 2d 2dw 3d 3dw a2a1 a2a2 (default "2dw 3dw a2a1 2d")
#   -m MAPPERS   comma-separated (default block,tree,ptram,ptram:blind and
#                the comparators greedy, rcm, rb, scotchnet that the
#                library registers at run time)
#   -L SIZES     message sizes in bytes (default 1024,8192,65536,262144,1048576)
#   -i ITERS     timed exchanges after one warm-up (default 2: simulated
#                times are deterministic)
#   -B BW, -l LAT  link bandwidth per unit of capacity and latency
#                (default 4GBps, 100ns: QDR 4x, one switch hop), as
#                bench/smpi/halo_network.sh
#
# SMPI options as halo_network.sh: simulated network time only, the link
# figures taken as the effective ones, Open MPI's collectives; the buffers
# are SMPI_SHARED_MALLOC's, folded in blocks of 64 MiB (at the default
# 1 MiB the 3-D weighted halo at 1 MiB needs more mappings than
# vm.max_map_count allows). A run that fails is reported and skipped.
# Last, one table per pattern: the time of every mapper and its ratio to
# block's.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build/h-mapnet network=gpc hosts=128 cores=8 pats="2dw 3dw a2a1 2d" mappers=
sizes=1024,8192,65536,262144,1048576 iters=2 bw=4GBps lat=100ns
while getopts "b:n:H:c:p:m:L:i:B:l:h" opt; do
  case $opt in
  b) build=$OPTARG ;;
  n) network=$OPTARG ;;
  H) hosts=$OPTARG ;;
  c) cores=$OPTARG ;;
  p) pats=$OPTARG ;;
  m) mappers=$OPTARG ;;
  L) sizes=$OPTARG ;;
  i) iters=$OPTARG ;;
  B) bw=$OPTARG ;;
  l) lat=$OPTARG ;;
  *) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
  esac
done
mpitopo=$build/tools/mpitopo mapnet=$build/bench/mapnet
[[ -x $mpitopo && -x $mapnet ]] || { echo "mapnet_smpi.sh: build $build first (tools/mpitopo, bench/mapnet)" >&2; exit 1; }
command -v smpicc >/dev/null || { echo "mapnet_smpi.sh: smpicc not found (apt-get install libsimgrid-dev)" >&2; exit 1; }
mkdir -p "$build/smpi"
replay=$build/smpi/mapnet_replay
smpicc -std=gnu11 -O2 -Wall -Wextra -Werror -o "$replay" "$root/bench/smpi/mapnet_replay.c"
if [[ -z $mappers ]]; then
  mappers=block,tree,ptram,ptram:blind
  for m in greedy rcm rb scotchnet; do
    "$mpitopo" mappers | grep -q "^$m " && mappers+=,$m
  done
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/times"
np=$((hosts * cores))
platform=$tmp/platform.xml
"$mpitopo" platform --network "$network" --nodes "$hosts" --cores "$cores" --bandwidth "$bw" --latency "$lat" \
  -o "$platform"
sed -n 's/^ *<host id="\([^"]*\)".*/\1/p' "$platform" >"$tmp/hosts"
smpi_cfg=(--cfg=smpi/simulate-computation:no --cfg=smpi/coll-selector:ompi --cfg=smpi/bw-factor:0:1
          --cfg=smpi/lat-factor:0:1 --cfg=smpi/shared-malloc-blocksize:67108864
          --log=root.thres:warning --log=smpi_pmpi.thres:error)
grid() { "$mpitopo" dims "$np" "$1" | tail -n 1 | tr -d ' ' | tr ',' 'x'; }
g2=$(grid 0,0) g3=$(grid 0,0,0)
star15="offsets=1,0,0;-1,0,0;0,1,0;0,-1,0;0,0,1;0,0,-1;1,1,1;1,1,-1;1,-1,1;1,-1,-1;-1,1,1;-1,1,-1;-1,-1,1;-1,-1,-1"

echo "# SimGrid $(smpirun -version 2>/dev/null | head -n 1 | sed 's/.*version //'), $np ranks on $hosts hosts x $cores cores of '$network'," \
  "$(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# mpitopo platform --network $network --nodes $hosts --cores $cores --bandwidth $bw --latency $lat"
echo "# smpirun ${smpi_cfg[*]} mapnet_replay ... -L $sizes -i $iters"
for p in $pats; do
  case $p in
  2d) pdesc=cart:$g2 args=(-k halo5 -g "$g2") ;;
  2dw) pdesc=cart:$g2:weights=3,1 args=(-k halo5 -g "$g2" -w 3,1) ;;
  3d) pdesc=cart:$g3:$star15 args=(-k halo15 -g "$g3") ;;
  3dw) pdesc=cart:$g3:$star15:weights=3,1,1 args=(-k halo15 -g "$g3" -w 3,1,1) ;;
  a2a1) pdesc=alltoall:$g2:1,0 args=(-k a2a -g "$g2" -R 1,0) ;;
  a2a2) pdesc=alltoall:$g3:1,0,1 args=(-k a2a -g "$g3" -R 1,0,1) ;;
  *) echo "mapnet_smpi.sh: unknown pattern '$p'" >&2; exit 2 ;;
  esac
  rm -f "$tmp"/*.nodes
  echo
  echo "## $p: $pdesc"
  "$mapnet" --network "$network" --machine "node:$hosts core:$cores" --pattern "$pdesc" --mappers "$mappers" \
    --reps 1 --nodes-dir "$tmp" --title "$p on $network, $np processes (the placements simulated below)"
  for m in ${mappers//,/ }; do
    f=$tmp/$(tr ':=,' ___ <<<"$m").nodes
    awk 'NR == FNR { host[NR - 1] = $1; next } { print host[$1] ":1" }' "$tmp/hosts" "$f" >"$tmp/hostfile"
    t0=$(date +%s)
    smpirun -np "$np" -platform "$platform" -hostfile "$tmp/hostfile" "${smpi_cfg[@]}" \
      "$replay" "${args[@]}" -L "$sizes" -i "$iters" >"$tmp/run.out" 2>"$tmp/run.err" ||
      { echo "# $p $m: smpirun failed: $(grep -m1 CRITICAL "$tmp/run.err" || tail -n 1 "$tmp/run.err")"; continue; }
    grep -v '^#' "$tmp/run.out" | awk -v m="$m" -v p="$p" '{ printf "%s %s %s %s\n", p, m, $1, $2 }' | tee -a "$tmp/times"
    echo "# $p $m: wall $(($(date +%s) - t0)) s"
  done
done

python3 - "$tmp/times" <<'EOF'
import collections, sys
t = collections.OrderedDict()
for line in open(sys.argv[1]):
    p, m, size, us = line.split()
    t.setdefault(p, collections.OrderedDict()).setdefault(m, {})[int(size)] = float(us)
for p, rows in t.items():
    sizes = sorted({s for r in rows.values() for s in r})
    blk = rows.get("block", {})
    print("\n#### %s: simulated time per exchange, us (time / block's)\n" % p)
    print("| mapper | " + " | ".join("%d B" % s for s in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    for m, r in rows.items():
        cells = ["" if s not in r else "%.1f" % r[s] if m == "block" or s not in blk
                 else "%.1f (%.2f)" % (r[s], r[s] / blk[s]) for s in sizes]
        print("| %s | %s |" % (m, " | ".join(cells)))
EOF

#!/usr/bin/env bash
# bench/coll on a simulated fat-tree cluster (SimGrid SMPI): HOSTS hosts of
# CORES cores (two sockets each, as mpitopo is told), one rank per core.
#
#   bench/coll_smpi.sh [-b BUILD] [-H HOSTS] [-c CORES] [-o OVERHEAD] [-M MACHINE]
#                      [-s] [-n NETWORK] [-- COLL-OPTIONS]
#
#   -b BUILD     output directory (default build/smpi): bench/smpi/build.sh
#                builds the library there, this script links BUILD/coll
#   -H HOSTS     simulated hosts (default 64)
#   -c CORES     cores per host (default 16)
#   -o OVERHEAD  per-message software overhead, seconds (smpi/os, ois, or;
#                default 1e-6, as bench/smpi/neighbor_run.sh; 0 = none)
#   -M MACHINE   what mpitopo is told (MPITOPO_EMULATE, placement block):
#                "sockets" (default) "switch:HOSTS/8 node:8 socket:2
#                core:CORES/2"; "flat" "switch:HOSTS/8 node:8 core:CORES",
#                the levels the simulated platform has (no sockets); or
#                any description of HOSTS x CORES leaves
#   -s           simulate the sockets: platform.sh's socket platform (every
#                core a SimGrid host under a socket switch, two sockets a
#                node joined by a shared link; see platform.sh), one rank a
#                core, block
#   -n NETWORK   MPITOPO_NETWORK for mpitopo (its groups replace MACHINE's
#                levels above the nodes; nodes on end nodes in order), e.g.
#                the platform's own tree "fattree:$SMPI_FATTREE" when that
#                tree is not full bisection
#   COLL-OPTIONS default "-o allgather -a rd,ring -m 8:1024 -i 1 -x 0 -S"
#                (SMPI is deterministic: one timed iteration is exact)
#
# The platform is bench/smpi/platform.sh's: a 2-level fat tree, 8 hosts per
# leaf switch, full bisection, links 12.5 GB/s / 1 us, loopback 6 GB/s /
# 0.3 us; ranks block over the hosts (hostfile hosts-block). SimGrid sees
# hosts, not sockets: by default mpitopo is told the machine with
# MPITOPO_EMULATE = "switch:HOSTS/8 node:8 socket:2 core:CORES/2"
# (placement block, the same as the hostfile), so its distances see
# sockets and leaf switches, and bench/coll builds the four layouts from
# it; but in the simulation two sockets of a host cost the same (one
# loopback link), so bunch and scatter differ only through the nodes and
# switches, and the model charges cross-socket traffic the platform does
# not have. -M flat tells mpitopo only what the platform models (leaf
# switches, hosts, cores); bunch and scatter are then the same layout.
# The host MPI column is SMPI's own allgather (bcast, gather, allreduce)
# with the algorithm given below; the benchmark's own barrier, allreduce,
# bcast and reduce use fixed algorithms (see neighbor_run.sh for why).
# No Scotch column (-S): bench/smpi/build.sh leaves the Scotch backend out.
# coll -N (no result check) puts the buffers in SMPI_SHARED_MALLOC: 64 MiB
# blocks of shared memory (smpi/shared-malloc-blocksize) keep 1,024 ranks'
# 64 MiB receive buffers under vm.max_map_count.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/smpi hosts=64 cores=16 overhead=1e-6 machine=sockets simsockets=0 network=
while getopts "b:H:c:o:M:sn:h" opt; do
  case $opt in
  b) build=$OPTARG ;;
  H) hosts=$OPTARG ;;
  c) cores=$OPTARG ;;
  o) overhead=$OPTARG ;;
  M) machine=$OPTARG ;;
  s) simsockets=2 ;;
  n) network=$OPTARG ;;
  *) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
args=("$@")
((${#args[@]})) || args=(-o allgather -a rd,ring -m 8:1024 -i 1 -x 0 -S)
((hosts % 8 == 0 && cores % 2 == 0)) || { echo "coll_smpi.sh: HOSTS must be a multiple of 8, CORES even" >&2; exit 1; }

# The library's objects (and the other benchmarks) by build.sh, then
# bench/coll, which build.sh does not compile.
"$root/bench/smpi/build.sh" "$build" >/dev/null 2>&1 || true
flags=(-std=gnu11 -O2 -g -Wall -Wextra -Wno-stringop-overflow -Wno-stringop-overread -DMPITOPO_SMPI
       -I"$root/include" -I"$build/include")
read -r -a hwloc_libs <<<"$(pkg-config --libs hwloc)"
objs=()
for o in "$build"/obj/*.o; do
  case ${o##*/} in bench_*) ;; *) objs+=("$o") ;; esac
done
if [[ ! -e $build/obj/bench_coll.c.o || $root/bench/coll.c -nt $build/obj/bench_coll.c.o ]]; then
  smpicc "${flags[@]}" -c "$root/bench/coll.c" -o "$build/obj/bench_coll.c.o"
fi
smpicc "${flags[@]}" -o "$build/coll" "$build/obj/bench_coll.c.o" "$build/obj/bench_util.c.o" \
  "${objs[@]}" "${hwloc_libs[@]}" -lm -lpthread

platform=$("$root/bench/smpi/platform.sh" "$build/platform" "$hosts" "$cores" "$simsockets")
tag=${hosts}x${cores}
hostfile=$build/platform/hosts-block-$tag
((simsockets)) && hostfile+=-s
np=$((hosts * cores))
case $machine in
sockets) machine="switch:$((hosts / 8)) node:8 socket:2 core:$((cores / 2))" ;;
flat) machine="switch:$((hosts / 8)) node:8 core:$cores" ;;
esac
smpi_cfg=(--cfg=smpi/simulate-computation:no --cfg=smpi/barrier:ompi_recursivedoubling
          --cfg=smpi/allreduce:rdb --cfg=smpi/bcast:binomial_tree --cfg=smpi/reduce:binomial
          --cfg=smpi/allgather:rdb --cfg=smpi/gather:ompi_binomial
          --cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1
          --cfg=smpi/shared-malloc-blocksize:67108864
          --log=root.thres:warning --log=smpi_pmpi.thres:error)
[[ $overhead != 0 ]] && smpi_cfg+=(--cfg=smpi/os:0:$overhead:0 --cfg=smpi/ois:0:$overhead:0 --cfg=smpi/or:0:$overhead:0)
echo "== SimGrid $(smpirun -version 2>/dev/null | head -n 1 | sed 's/.*version //'), $np ranks on $hosts hosts x $cores cores (block), $(date -u +%Y-%m-%dT%H:%MZ), commit $(git -C "$root" rev-parse --short HEAD)"
sed -n 's/^<!-- Generated by /platform: /p; s/^ *\(links .*\) -->/          \1/p' "$platform"
echo "MPITOPO_EMULATE=\"$machine\" MPITOPO_EMULATE_PLACEMENT=block${network:+ MPITOPO_NETWORK=\"$network\"}"
echo "smpirun ${smpi_cfg[*]}"
echo "coll ${args[*]}"
t0=$(date +%s)
[[ -n $network ]] && export MPITOPO_NETWORK=$network
MPITOPO_EMULATE="$machine" MPITOPO_EMULATE_PLACEMENT=block \
  smpirun -np "$np" -platform "$platform" -hostfile "$hostfile" \
  "${smpi_cfg[@]}" "$build/coll" "${args[@]}"
echo "== $(($(date +%s) - t0)) s of simulation"

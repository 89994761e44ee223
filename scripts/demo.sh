#!/usr/bin/env bash
# mpitopo demo: builds the library and the mpitopo tool, then shows, on this
# machine emulated as a small cluster and on the cluster of Gropp's paper,
# how many communication partners of each process sit on other nodes under
# the usual launch placements, next to what a node-aware layout can reach.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/deps.sh"
mpitopo_require_packages "${MPITOPO_BUILD_PACKAGES[@]}"

build=${MPITOPO_BUILD_DIR:-$root/build}/demo
mkdir -p "$build"
echo "Building mpitopo in $build ..."
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DMPITOPO_BUILD_TESTS=OFF -DMPI_C_COMPILER=mpicc.openmpi >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" >"$build/build.log" 2>&1 ||
  { tail -n 40 "$build/build.log"; exit 1; }
cli=$build/tools/mpitopo

# The embedded default: this machine seen as 4 nodes of 6 cores (override
# with MPITOPO_DEMO_MACHINE="node:8 core:8" for instance).
cluster=${MPITOPO_DEMO_MACHINE:-"node:4 core:6"}
nranks=$("$cli" eval --machine "$cluster" --pattern complete:1 --mapper block |
  sed -n 's/^machine:.*(\([0-9]*\) leaves).*/\1/p')

section() { printf '\n==== %s ====\n%s\n\n' "$1" "$2"; }

section "1. A real MPI job on this machine emulated as \"$cluster\" (Open MPI, $nranks ranks)" \
"MPITOPO_EMULATE makes mpitopo see $nranks local processes as a cluster. First the
launcher fills node after node (block), then deals ranks round-robin (rr):
the same program and the same MPI_Cart_create, but more partners off the node."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for placement in block rr; do
  echo "-- launch placement: $placement"
  MPITOPO_EMULATE="$cluster" MPITOPO_EMULATE_PLACEMENT=$placement \
    mpirun.openmpi --oversubscribe --mca mpi_yield_when_idle 1 -n "$nranks" "$build/tools/mpitopo-job" 2
done

section "2. Halo exchange on the same cluster, every mapper side by side" \
"'identity' is what MPI_Cart_create returns today (the launch placement is kept);
'block' fills node after node; 'rr' deals ranks round-robin over nodes as
--map-by node does; 'random' is a shuffled placement. The launch here was rr."
"$cli" eval --machine "$cluster" --pattern cart:6x4 --placement rr

section "3. Rings of 6 processes (Mercier & Jeannot's ring benchmark, scaled down)" \
"Four token rings of six ranks each, one message per hop, launched round-robin.
'tree' is the graph mapper behind mpitopo_dist_graph_create(_adjacent)."
"$cli" eval --machine "$cluster" --pattern ring:24:6 --placement rr --mapper identity,block,random:2,tree

section "4. Table 3 of Gropp (EuroMPI'18): 2-D 128x128 halo, 1024 nodes x 16 processes" \
"Paper, MPI_Cart_create row: off-node partners min 2, max 3, avg 2.12; on-node 1, 2, 1.88.
Paper, node-aware row: off-node avg 1 -- the best-box bound below (4x4 boxes)."
"$cli" eval --machine "node:1024 core:16" --pattern cart:128x128 --mapper identity

section "5. Table 3, 3-D: 16x32x32 halo, 1024 nodes x 16 processes" \
"Paper, MPI_Cart_create row: off-node 4, 5, 4.12; on-node 1, 2, 1.88. Node-aware row: off-node avg 2.5.
(The paper's 32x32x16 grid is written 16x32x32 here: row-major ranks then give
a node half a line of 32, as the paper's figures imply.)"
"$cli" eval --machine "node:1024 core:16" --pattern cart:16x32x32 --mapper identity


section "6. The halo exchange itself: MPI_COMM_WORLD vs MPI_Cart_create vs mpitopo_cart_create" \
"bench/halo (Gropp's ncartperf) on 32 Open MPI ranks, this machine emulated as
\"node:4 core:8\" with ranks dealt round-robin (rr). The partner table is what each
communicator costs on that cluster; the times are real but measured on one box,
where every message is shared memory, so expect no speed-up here (on real nodes
see bench/RESULTS.md: halo_netns.sh and the SimGrid runs)."
MPITOPO_EMULATE="node:4 core:8" MPITOPO_EMULATE_PLACEMENT=rr \
  mpirun.openmpi --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader -n 32 \
  "$build/bench/halo" -d 2 -L 8,65536 -r 2 -i 4

section "7. A dist-graph communicator that really reorders: the ring benchmark" \
"bench/ring on 24 Open MPI ranks, \"node:4 core:6\" emulated, ranks dealt round-robin:
4 rings of 6 declared with MPI_Dist_graph_create_adjacent (native) and with
mpitopo_dist_graph_create_adjacent weighted by bytes and by messages. The traffic
table is the point here (times are shared memory on one box)."
MPITOPO_EMULATE="node:4 core:6" MPITOPO_EMULATE_PLACEMENT=rr \
  mpirun.openmpi --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader -n 24 \
  "$build/bench/ring" -R 4 -l 20 -a 4096 -r 2

section "8. The launcher route: a rank file from a pattern" \
"The same rings as a pattern, mapped for 'mpirun --rankfile' when the program
builds no topology (a traced pattern file works the same way)."
"$cli" map --pattern ring:24:6 --machine "$cluster" --launch rr --format openmpi-rankfile --verbose | head -n 8
printf '\nMore: %s eval --help, %s map --help, %s dims --help; benchmarks: bench/README.md\n' "$cli" "$cli" "$cli"

#!/usr/bin/env bash
# Build and run examples/ against an installed mpitopo, as a user would:
#   test_examples.sh BUILD EXAMPLES FLAVOR MPICC MPIF90 MPIEXEC
# BUILD is installed into a temporary prefix; EXAMPLES is configured and
# built against it with CMake (find_package(mpitopo)) and with its Makefile
# (pkg-config), naming no MPI: both must find MPICC, the MPI of BUILD, and
# MPIF90 beside it (may be empty: no Fortran example then). Every example
# runs at 4-8 processes (emulated nodes where reordering should show) and
# must exit 0 and print its PASS line. Prints "PASS examples" at the end,
# "FAIL examples: ..." on the first failure.
set -euo pipefail
build=$1 src=$(cd "$2" && pwd) flavour=$3 mpicc=$4 mpif90=$5 mpiexec=$6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL examples: $*"
    exit 1
}
# Run a step quietly; on failure show its log.
quiet() { # LOG COMMAND...
    local log=$1
    shift
    "$@" >"$log" 2>&1 || { tail -n 40 "$log"; fail "$*"; }
}

quiet "$tmp/install.log" cmake --install "$build" --prefix "$tmp/prefix"
pcdir=$(dirname "$(find "$tmp/prefix" -name mpitopo.pc | head -1)")

# 1. CMake, as in examples/CMakeLists.txt's header. No MPI is named: the
# package finds the one mpitopo was built with (MPICC), and the examples
# the Fortran wrapper beside it (MPIF90).
quiet "$tmp/configure.log" cmake -S "$src" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$tmp/prefix"
grep -q "^MPI_C_COMPILER:[A-Z]*=$mpicc\$" "$tmp/cmake/CMakeCache.txt" ||
    fail "the examples' CMake did not take mpitopo's MPI ($mpicc): $(grep ^MPI_C_COMPILER: "$tmp/cmake/CMakeCache.txt")"
quiet "$tmp/build.log" cmake --build "$tmp/cmake" -j 2
# 2. The Makefile, out of the source tree, told nothing but where mpitopo.pc is.
targets=(halo_cart neighbor_graph trace_app)
[ -z "$mpif90" ] || targets+=(halo_cart_f)
mkdir "$tmp/make"
quiet "$tmp/make.log" make -C "$tmp/make" -f "$src/Makefile" PKG_CONFIG_PATH="$pcdir" "${targets[@]}"
grep -q "^$mpicc " "$tmp/make.log" || fail "the Makefile did not compile with mpitopo's MPI ($mpicc)"

case $flavour in
openmpi)
    launch=("$mpiexec" --oversubscribe --allow-run-as-root --mca mpi_yield_when_idle 1 --mca btl self,vader)
    ;;
mpich) launch=("$mpiexec") ;;
*) fail "unknown flavour '$flavour'" ;;
esac

# run NAME PASSLINE NP PROGRAM [ARGS...]: the program must exit 0 and print
# PASSLINE; its output is kept in $out. Environment: as given before `run`.
run() {
    local name=$1 pass=$2 np=$3
    shift 3
    local status=0
    out=$("${launch[@]}" -n "$np" "$@" 2>&1) || status=$?
    printf '%s\n' "$out"
    [ "$status" = 0 ] || fail "$name exited with status $status"
    grep -qx "$pass" <<<"$out" || fail "$name did not print '$pass'"
}
b=$tmp/cmake

# (a) and (b) on 2 emulated nodes of 4 cores, ranks placed round-robin.
export MPITOPO_EMULATE="node:2 core:4" MPITOPO_EMULATE_PLACEMENT=rr
# (a) C: 2-D, where reordering must lower the off-node grid neighbours, then 3-D.
run halo_cart.2d "halo_cart: PASS" 8 "$b/halo_cart"
offs=$(sed -n 's/.*MPI_Cart_create \([0-9.]*\), mpitopo_cart_create \([0-9.]*\)$/\1 \2/p' <<<"$out")
[ -n "$offs" ] && awk '{ exit !($2 < $1) }' <<<"$offs" ||
    fail "halo_cart.2d: mpitopo_cart_create did not lower the off-node grid neighbours ($offs)"
run halo_cart.3d "halo_cart: PASS" 8 "$b/halo_cart" 3 8 10
# (a) Fortran, reordered through the shim it is linked with: the program
# uses the new ranks, so it asks for renumbering (MPITOPO_REORDER=job);
# without it the shim keeps MPI's ranks.
if [ -n "$mpif90" ]; then
    [ -x "$b/halo_cart_f" ] || fail "halo_cart_f was not built by CMake (MPIF90 $mpif90)"
    run halo_cart_f.kept "halo_cart_f: PASS" 8 "$b/halo_cart_f"
    grep -q "processes that changed rank: 0" <<<"$out" ||
        fail "halo_cart_f.kept: the shim renumbered without MPITOPO_REORDER=job"
    export MPITOPO_REORDER=job
    run halo_cart_f "halo_cart_f: PASS" 8 "$b/halo_cart_f"
    unset MPITOPO_REORDER
    grep -q "processes that changed rank: [1-9]" <<<"$out" ||
        fail "halo_cart_f: MPI_CART_CREATE was not reordered (is the shim linked first?)"
fi
# (b) the dist-graph and its neighbourhood collectives.
run neighbor_graph "neighbor_graph: PASS" 8 "$b/neighbor_graph"
run neighbor_graph.5 "neighbor_graph: PASS" 5 "$b/neighbor_graph" 3 4

# The Makefile's programs (pkg-config flags, rpath) at 4 processes.
run make.halo_cart "halo_cart: PASS" 4 "$tmp/make/halo_cart"
[ -z "$mpif90" ] || run make.halo_cart_f "halo_cart_f: PASS" 4 "$tmp/make/halo_cart_f"

# (c) mpitopo run through trace_and_map.sh: record, then apply, on this host
# as 2 emulated nodes (--local) with the ranks laid block by block, which
# puts every large exchange of trace_app across the nodes.
unset MPITOPO_EMULATE MPITOPO_EMULATE_PLACEMENT
if [ -x "$tmp/prefix/bin/mpitopo" ]; then
    status=0
    out=$(MPITOPO_PREFIX="$tmp/prefix" MPIEXEC="${launch[0]}" MPIEXEC_FLAGS="${launch[*]:1}" \
        "$src/trace_and_map.sh" --local -n 8 -o "$tmp/tm" "$b/trace_app" 2>&1) || status=$?
    printf '%s\n' "$out"
    [ "$status" = 0 ] || fail "trace_and_map.sh exited with status $status"
    [ "$(grep -cx "trace_app: PASS" <<<"$out")" = 2 ] || fail "trace_and_map.sh: not two trace_app passes"
    grep -q "^ *off-node partners (avg)" <<<"$out" || fail "trace_and_map.sh: no --explain table"
    # The contract lines of mpitopo run: one per launch, the off-node bytes
    # lower with the placement applied (X > Y).
    [ "$(grep -c "^mpitopo run: \(recorded\|applied\|kept\) " <<<"$out")" = 2 ] ||
        fail "trace_and_map.sh: not two 'mpitopo run:' contract lines"
    rec=$(sed -En 's/^mpitopo run: recorded ([^ ]+) \(off-node bytes ([0-9]+) -> ([0-9]+) predicted\)$/\1 \2 \3/p' <<<"$out")
    app=$(sed -En 's/^mpitopo run: applied ([^ ]+) \(off-node bytes ([0-9]+) -> ([0-9]+)\)$/\1 \2 \3/p' <<<"$out")
    [[ $rec == "$tmp/tm/"* ]] && awk '{ exit !($3 < $2) }' <<<"$rec" ||
        fail "trace_and_map.sh: no 'recorded' line in $tmp/tm with fewer off-node bytes predicted (${rec:-none})"
    [ -n "$app" ] && [ "${app%% *}" = "${rec%% *}" ] && awk '{ exit !($3 < $2) }' <<<"$app" ||
        fail "trace_and_map.sh: no 'applied' line of ${rec%% *} with fewer off-node bytes (${app:-none})"
else
    echo "(no mpitopo CLI installed: trace_and_map.sh not run)"
fi
echo "PASS examples"

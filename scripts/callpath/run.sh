#!/usr/bin/env bash
# The data path of a reordering dist-graph creation, file by file (issue 30):
# builds the library with -finstrument-functions in BUILD_DIR, runs
# prog.c (a ring, mpitopo_dist_graph_create_adjacent with reorder = 1) on
# NP Open MPI processes over emulated nodes, records rank 0's function
# entries and exits (hook.c) and prints, with path.py, the files the path
# visits before the mapper runs (mpitopo_map), in order, and how often each
# is entered.
#
# Usage: scripts/callpath/run.sh [BUILD_DIR [NP]]   (default /tmp/mpitopo-callpath, 8)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-/tmp/mpitopo-callpath}
np=${2:-8}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="-finstrument-functions -fno-inline" \
  -DMPITOPO_BUILD_TOOLS=OFF -DMPITOPO_BUILD_BENCH=OFF -DMPITOPO_BUILD_TESTS=OFF -DMPITOPO_BUILD_UNIT_TESTS=OFF >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" --target mpitopo -j "${CALLPATH_JOBS:-$(nproc)}" >"$build.build.log" 2>&1 || { tail -30 "$build.build.log"; exit 1; }
lib=$(find "$build" -name 'libmpitopo.so.*.*' | head -n 1)
mpicc -O1 -g -rdynamic -I"$root/include" -I"$build/include" "$root/scripts/callpath/prog.c" \
  "$root/scripts/callpath/hook.c" -o "$build/callpath" -L"$(dirname "$lib")" -lmpitopo -ldl \
  -Wl,-rpath,"$(dirname "$lib")"
rec=$build/callpath.rec
CALLPATH_OUT=$rec MPITOPO_EMULATE=${MPITOPO_EMULATE:-"node:4 core:2"} MPITOPO_EMULATE_PLACEMENT=${MPITOPO_EMULATE_PLACEMENT:-rr} \
  mpirun --oversubscribe --allow-run-as-root --mca mpi_yield_when_idle 1 -n "$np" "$build/callpath"
python3 "$root/scripts/callpath/path.py" "$rec" "$lib" "$root"

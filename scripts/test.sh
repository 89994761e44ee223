#!/usr/bin/env bash
# Build mpitopo and run the whole test suite in one ctest run:
#   ompi.*   Open MPI build: unit, CLI and MPI tests (up to 64 ranks)
#   mpich.*  MPICH build: MPI tests (up to 16 ranks)
#   asan.*   AddressSanitizer + UndefinedBehaviorSanitizer build of the unit and CLI tests
#   asanmpi.* the same sanitizers on the MPI layer (Open MPI): a bounded subset of the MPI tests
#   fuzz.*   libFuzzer runs of the description parser and the pattern-file reader
# Usage: scripts/test.sh [extra ctest arguments, e.g. -R cli]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/deps.sh"
mpitopo_require_packages "${MPITOPO_BUILD_PACKAGES[@]}" "${MPITOPO_TEST_PACKAGES[@]}"

build=${MPITOPO_BUILD_DIR:-$root/build}
jobs=$(nproc 2>/dev/null || echo 2)
configure_and_build() { # DIR PREFIX [cmake args...]; $target set: build only that target
  local dir=$build/$1 prefix=$2; shift 2
  cmake -S "$root" -B "$dir" -DMPITOPO_TEST_PREFIX="$prefix." "$@" >"$build/$prefix.configure.log" 2>&1 ||
    { cat "$build/$prefix.configure.log"; exit 1; }
  cmake --build "$dir" -j "$jobs" ${target:+--target "$target"} >"$build/$prefix.build.log" 2>&1 ||
    { tail -n 60 "$build/$prefix.build.log"; exit 1; }
  echo "built $prefix in $dir"
}
mkdir -p "$build"
configure_and_build openmpi ompi -DCMAKE_BUILD_TYPE=RelWithDebInfo
configure_and_build mpich mpich -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMPI_C_COMPILER=mpicc.mpich \
  -DMPITOPO_BUILD_UNIT_TESTS=OFF
configure_and_build asan asan -DCMAKE_BUILD_TYPE=Debug -DMPITOPO_SANITIZE=ON -DMPITOPO_WITH_MPI=OFF
# The sanitizers on the MPI layer: Cartesian, graph and error tests, the
# agreement of one bad process, info keys and two neighbourhood suites, at
# most 8 processes (about 2 minutes on 2 cores); Open MPI's own leaks are
# suppressed (tests/mpi/lsan.supp), mpitopo's are not. Only tests/mpi runs.
target=mpitopo_mpi_tests configure_and_build asan-mpi asanmpi -DCMAKE_BUILD_TYPE=Debug -DMPITOPO_SANITIZE=ON \
  -DMPITOPO_BUILD_UNIT_TESTS=OFF -DMPITOPO_BUILD_TOOLS=OFF -DMPITOPO_BUILD_BENCH=OFF -DMPITOPO_MPI_MAX_NP=8 \
  "-DMPITOPO_MPI_TESTS=^(errors|cart|cart_errors|graph|graph_errors|graph_empty_weighted|agreement|info_keys|neighbor_linear|neighbor_persistent)\$"
CC=clang configure_and_build fuzz fuzz -DCMAKE_BUILD_TYPE=Debug -DMPITOPO_FUZZ=ON -DMPITOPO_WITH_MPI=OFF \
  -DMPITOPO_BUILD_UNIT_TESTS=OFF -DMPITOPO_BUILD_TOOLS=OFF

# One ctest run over the five trees, so the last line is the overall summary.
cat >"$build/CTestTestfile.cmake" <<CT
subdirs("openmpi" "mpich" "asan" "asan-mpi/tests/mpi" "fuzz")
CT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$build"
exec ctest --output-on-failure --timeout 600 "$@"

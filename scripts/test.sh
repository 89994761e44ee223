#!/usr/bin/env bash
# The test command (what .ci/run calls). First the README's first command,
# scripts/demo.sh, exactly as a newcomer runs it (it installs the packages it
# needs itself); then every package the tests use; then five build trees and
# one ctest run over them:
#   ompi.*    Open MPI build: unit, CLI, SimGrid, fabric and MPI tests
#   mpich.*   MPICH build: MPI tests (up to 16 ranks)
#   asan.*    AddressSanitizer + UndefinedBehaviorSanitizer build of the unit and CLI tests
#   asanmpi.* the same sanitizers on the MPI layer (Open MPI): a bounded subset of the MPI tests
#   fuzz.*    libFuzzer runs of the parsers, the pattern reader and the mapper backends
# Every configuration, the demo's Release build included, is built with
# -Werror (MPITOPO_WERROR=ON; a user's build never is).
#
# The standard run leaves out the tests labelled `full` (64-rank runs, the
# largest MPICH counts, the large fabric, long fuzzing, SimGrid at scale);
# --full runs them too. MPI-free tests run on both cores beside the MPI
# tests, which run one at a time (cmake/mpitopoTests.cmake). The run ends
# with the ten slowest tests, the time per label and the skipped tests; a
# test skipped for any reason but one that cannot exist here fails the run.
#
# Usage: scripts/test.sh [--full] [--no-demo] [--record-times] [extra ctest arguments, e.g. -R cli]
#   --record-times  rewrite tests/timings.txt (the tests' timeouts are 3x these times)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
full=0 demo=1 record=0
while [ $# -gt 0 ]; do
  case $1 in
    --full) full=1 ;;
    --no-demo) demo=0 ;;
    --record-times) record=1 ;;
    -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
  shift
done
build=${MPITOPO_BUILD_DIR:-$root/build}
mkdir -p "$build"
t0=$(date +%s)
elapsed() { echo $(($(date +%s) - t0)); }

# Warnings are errors in every configuration this script builds.
export MPITOPO_WERROR=ON

if [ $demo = 1 ]; then
  echo "running scripts/demo.sh (log: $build/demo.log) ..."
  if ! bash "$root/scripts/demo.sh" >"$build/demo.log" 2>&1; then
    tail -n 60 "$build/demo.log"
    echo "FAIL: scripts/demo.sh (the README's first command) failed"
    exit 1
  fi
  echo "demo passed ($(elapsed) s)"
fi

. "$root/scripts/deps.sh"
mpitopo_require_packages "${MPITOPO_BUILD_PACKAGES[@]}" "${MPITOPO_TEST_PACKAGES[@]}"

jobs=$(nproc 2>/dev/null || echo 2)
configure_and_build() { # DIR PREFIX [cmake args...]; $target set: build only that target
  local dir=$build/$1 prefix=$2 s
  shift 2
  s=$(date +%s)
  cmake -S "$root" -B "$dir" -DMPITOPO_TEST_PREFIX="$prefix." -DMPITOPO_WERROR=ON "$@" \
    >"$build/$prefix.configure.log" 2>&1 ||
    { cat "$build/$prefix.configure.log"; exit 1; }
  cmake --build "$dir" -j "$jobs" ${target:+--target "$target"} >"$build/$prefix.build.log" 2>&1 ||
    { tail -n 60 "$build/$prefix.build.log"; exit 1; }
  echo "built $prefix in $dir ($(($(date +%s) - s)) s)"
}
configure_and_build openmpi ompi -DCMAKE_BUILD_TYPE=RelWithDebInfo
configure_and_build mpich mpich -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMPI_C_COMPILER=mpicc.mpich \
  -DMPITOPO_BUILD_UNIT_TESTS=OFF
configure_and_build asan asan -DCMAKE_BUILD_TYPE=Debug -DMPITOPO_SANITIZE=ON -DMPITOPO_WITH_MPI=OFF
# The sanitizers on the MPI layer: Cartesian, graph and error tests, the
# agreement of one bad process, info keys and two neighbourhood suites, at
# most 8 processes; Open MPI's own leaks are suppressed (tests/mpi/lsan.supp),
# mpitopo's are not. Only tests/mpi runs.
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
select=(-LE full)
[ $full = 1 ] && select=()
ctest --show-only=json-v1 >"$build/tests.json"
rc=0
ctest -j "$jobs" --output-on-failure --output-junit "$build/junit.xml" "${select[@]}" "$@" || rc=$?
summary=(python3 "$root/scripts/test_summary.py" "$build/junit.xml" --labels "$build/tests.json")
[ $record = 1 ] && summary+=(--record "$root/tests/timings.txt")
"${summary[@]}" || rc=1
echo "scripts/test.sh: $(elapsed) s in all$([ $full = 1 ] && echo ' (--full)'), ctest exit $rc"
exit $rc

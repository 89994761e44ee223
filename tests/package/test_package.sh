#!/usr/bin/env bash
# Install the build tree into a temporary prefix, then use it as a consumer
# would:
#  - find_package(mpitopo) without naming an MPI finds the MPI mpitopo was
#    built with (shared and static consumers build and run), naming that MPI
#    works too, and naming the other MPI stops the configure with a message
#    that names both;
#  - plain cc with pkg-config (mpitopo.pc requires the MPI's own module);
#  - the installed tools start with LD_LIBRARY_PATH unset (run path).
set -euo pipefail
build=$1 src=$2 mpicc=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL package: $*"; exit 1; }
unset LD_LIBRARY_PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name 'libmpitopo.so' | head -1)")
export PKG_CONFIG_PATH=$libdir/pkgconfig
mpi=$(pkg-config --variable=mpi mpitopo)
case $mpi in
"Open MPI") other=mpicc.mpich ;;
MPICH) other=mpicc.openmpi ;;
*) fail "mpitopo.pc names no known MPI (mpi=$mpi)" ;;
esac

# The MPI libraries a binary loads: one MPI at most (a program that makes no
# MPI call of its own may load none, linked with --as-needed).
one_mpi() {
    local n
    n=$(ldd "$1" | grep -cE '/lib(mpi|mpich)\.so' || true)
    [ "$n" -le 1 ] || fail "$1 loads $n MPI libraries: $(ldd "$1" | grep -E 'lib(mpi|mpich)\.so' | tr -s ' \t\n' ' ')"
}

# CMake consumer, no MPI named: mpitopo's MPI is found.
cmake -S "$src" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/log" 2>&1 ||
    { cat "$tmp/log"; fail "find_package(mpitopo) with no MPI named"; }
cmake --build "$tmp/consumer" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "consumer build"; }
LD_LIBRARY_PATH=$libdir "$tmp/consumer/consumer" | grep -q PASS || fail "consumer (shared)"
"$tmp/consumer/consumer_static" | grep -q PASS || fail "consumer (static)"
one_mpi "$tmp/consumer/consumer_static"
LD_LIBRARY_PATH=$libdir one_mpi "$tmp/consumer/consumer"

# Naming the same MPI configures.
cmake -S "$src" -B "$tmp/same" -DCMAKE_PREFIX_PATH="$prefix" -DMPI_C_COMPILER="$mpicc" >"$tmp/log" 2>&1 ||
    { cat "$tmp/log"; fail "find_package(mpitopo) with MPI_C_COMPILER=$mpicc"; }

# Naming the other MPI fails at configure time, naming both.
if command -v "$other" >/dev/null; then
    if cmake -S "$src" -B "$tmp/other" -DCMAKE_PREFIX_PATH="$prefix" -DMPI_C_COMPILER="$other" \
        >"$tmp/log" 2>&1; then
        fail "a consumer configured with $other against an mpitopo built with $mpi was accepted"
    fi
    other_name=$([ "$mpi" = MPICH ] && echo "Open MPI" || echo MPICH)
    tr -s ' \n' ' ' <"$tmp/log" >"$tmp/log1"
    for want in "found a different MPI from the one mpitopo was built with" \
        "was built with $mpi: compiler $mpicc" "this project found $other_name: compiler $(command -v "$other")"; do
        grep -qF -- "$want" "$tmp/log1" || { cat "$tmp/log"; fail "the mismatch message lacks \"$want\""; }
    done
else
    echo "note: $other not found, mismatch check skipped"
fi

# pkg-config with the plain C compiler, no MPI wrapper.
cc=${CC:-cc}
# shellcheck disable=SC2046
"$cc" $(pkg-config --cflags mpitopo) "$src/consumer.c" -o "$tmp/pc_consumer" $(pkg-config --libs mpitopo) ||
    fail "$cc \$(pkg-config --cflags --libs mpitopo) consumer.c"
LD_LIBRARY_PATH=$libdir "$tmp/pc_consumer" | grep -q PASS || fail "pkg-config consumer"
LD_LIBRARY_PATH=$libdir one_mpi "$tmp/pc_consumer"

# Installed tools: their run path finds libmpitopo in the prefix.
for tool in mpitopo mpitopo-job; do
    exe=$prefix/bin/$tool
    [ -x "$exe" ] || fail "$tool not installed"
    ! ldd "$exe" | grep -q 'not found' || fail "$tool: $(ldd "$exe" | grep 'not found' | tr -s ' \t\n' ' ')"
done
loaded=$(ldd "$prefix/bin/mpitopo-job" | awk '$1 ~ /^libmpitopo\.so/ {print $3}')
[ -n "$loaded" ] && [ "$(realpath "$loaded")" = "$(realpath "$libdir"/libmpitopo.so)" ] ||
    fail "mpitopo-job loads libmpitopo from '$loaded', not from $libdir"
"$prefix/bin/mpitopo" eval --machine "node:2 core:2" --pattern cart:2x2 --mapper identity >"$tmp/log" 2>&1 ||
    { cat "$tmp/log"; fail "installed mpitopo eval"; }
"$prefix/bin/mpitopo-job" --version >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "installed mpitopo-job --version"; }
grep -q "mpitopo-job" "$tmp/log" || { cat "$tmp/log"; fail "installed mpitopo-job --version printed no version"; }
echo "PASS package ($mpi)"

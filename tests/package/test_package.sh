#!/usr/bin/env bash
# Install the build tree into a temporary prefix, then build and run a
# consumer through find_package(mpitopo) (shared and static) and through
# pkg-config.
set -euo pipefail
build=$1 src=$2 mpicc=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DMPI_C_COMPILER="$mpicc" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$tmp/consumer/consumer" | grep -q PASS
"$tmp/consumer/consumer_static" | grep -q PASS
export PKG_CONFIG_PATH=$tmp/prefix/lib/pkgconfig:$(ls -d "$tmp"/prefix/lib/*/pkgconfig 2>/dev/null | tr '\n' ':')
$mpicc $(pkg-config --cflags mpitopo) "$src/consumer.c" -o "$tmp/pc_consumer" $(pkg-config --libs mpitopo)
LD_LIBRARY_PATH=$(dirname "$(find "$tmp/prefix" -name 'libmpitopo.so' | head -1)") "$tmp/pc_consumer" | grep -q PASS
echo "PASS package"

#!/usr/bin/env bash
# Only the API leaves mpitopo's libraries. Installs the build tree into a
# temporary prefix and checks the dynamic symbols every installed library
# defines:
#   libmpitopo.so        exactly the functions (and variables) the installed
#                        headers declare MPITOPO_API: nothing more (no
#                        mpitopo__* internal, no Scotch hook), nothing less;
#   libmpitopo_shim.so   MPI's names (MPI_*, PMPI_*, and the Fortran manglings
#   libmpitopo_trace.so  mpi_*, pmpi_*), plus the shim's documented
#                        mpitopo_shim_neighbor_calls;
# and that the static archive defines every API function, global.
# A library this script does not know fails the test: say what it may export.
set -euo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
fail=0
bad() { echo "FAIL symbols: $*"; fail=1; }

# The API, from the installed headers: every declaration starts with MPITOPO_API
# at the beginning of a line; the name is the identifier before its '(' (or
# before ';' or '[' for a variable).
inc=$tmp/prefix/include
[ -f "$inc/mpitopo.h" ] || { echo "FAIL symbols: no installed mpitopo.h"; exit 1; }
grep -h '^MPITOPO_API[[:space:]]' "$inc"/mpitopo.h "$inc"/mpitopo/*.h |
    sed -E 's/^MPITOPO_API[[:space:]]+//; s/[[:space:]]*[(;[].*$//; s/.*[^A-Za-z0-9_]//' |
    sort -u >"$tmp/api"
napi=$(wc -l <"$tmp/api")
[ "$napi" -gt 0 ] || bad "no MPITOPO_API declaration found in $inc"

# Dynamic symbols a library defines, without the linker's own markers.
exported() {
    nm -D --defined-only "$1" | awk 'NF >= 3 {print $3}' | sed 's/@.*//' |
        grep -vxE '_init|_fini|_edata|_end|__bss_start' | sort -u
}

nlibs=0
while IFS= read -r lib; do
    nlibs=$((nlibs + 1))
    name=$(basename "$lib")
    exported "$lib" >"$tmp/syms"
    case $name in
    libmpitopo.so)
        extra=$(comm -23 "$tmp/syms" "$tmp/api")
        missing=$(comm -13 "$tmp/syms" "$tmp/api")
        [ -z "$extra" ] || bad "$name exports what no header declares MPITOPO_API:" $extra
        [ -z "$missing" ] || bad "$name lacks API functions:" $missing
        ;;
    libmpitopo_shim.so | libmpitopo_trace.so)
        allowed='(MPI|PMPI|mpi|pmpi)_[A-Za-z0-9_]+'
        [ "$name" = libmpitopo_shim.so ] && allowed="$allowed|mpitopo_shim_neighbor_calls|mpitopo_shim_coll_calls"
        extra=$(grep -vxE "$allowed" "$tmp/syms" || true)
        [ -z "$extra" ] || bad "$name exports names that are not MPI's:" $extra
        grep -qE '^MPI_' "$tmp/syms" || bad "$name exports no MPI_* function"
        ;;
    *)
        bad "$name: an installed library this test does not know (add its rule)"
        ;;
    esac
done < <(find "$tmp/prefix" -name 'lib*.so' \( -type f -o -type l \) | sort)
[ "$nlibs" -ge 3 ] || bad "found $nlibs installed shared libraries, expected libmpitopo, _shim, _trace"

# The static archive: every API function defined there, global.
archive=$(find "$tmp/prefix" -name libmpitopo.a | head -1)
if [ -z "$archive" ]; then
    bad "no libmpitopo.a installed"
else
    nm --defined-only "$archive" 2>/dev/null | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort -u >"$tmp/static"
    missing=$(comm -13 "$tmp/static" "$tmp/api")
    [ -z "$missing" ] || bad "libmpitopo.a lacks API functions:" $missing
fi

[ "$fail" = 0 ] || exit 1
echo "PASS symbols ($napi API functions; $nlibs shared libraries)"

#!/usr/bin/env bash
# Build mpitopo's library sources and bench/halo.c, bench/ring.c and
# bench/neighbor.c with SimGrid's smpicc, so the benchmarks run on a
# simulated cluster (bench/smpi/run.sh, ring_run.sh, neighbor_run.sh).
#
#   bench/smpi/build.sh [OUTDIR]        (default build/smpi; gives OUTDIR/halo, OUTDIR/ring,
#                                        OUTDIR/neighbor)
#
# The library is compiled into the executable (no libmpitopo.so): SMPI
# privatizes the globals of the executable per simulated rank, so each rank
# has its own node-information cache, emulation state and error message.
# MPITOPO_SMPI selects the shims of src/mpi/smpi_compat.h; nothing else
# differs from the CMake build, but json-c: MPITOPO_HAVE_JSONC is not
# defined, so `auto` measures its candidates (src/coll/neighbor/tune.c, bench/neighbor
# -s ...,tuned) as in the CMake build and only the tuning files
# (MPITOPO_TUNING_FILE) are unavailable. Warnings are errors, as in the CMake build.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build/smpi}
command -v smpicc >/dev/null || { echo "build.sh: smpicc not found (apt-get install libsimgrid-dev)" >&2; exit 1; }
mkdir -p "$out/include/mpitopo" "$out/obj"

# version.h, as CMake's configure_file makes it.
version=$(sed -n 's/^project(mpitopo VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
IFS=. read -r major minor patch <<<"$version"
sed -e "s/@PROJECT_VERSION_MAJOR@/$major/" -e "s/@PROJECT_VERSION_MINOR@/$minor/" \
    -e "s/@PROJECT_VERSION_PATCH@/$patch/" -e "s/@PROJECT_VERSION@/$version/" \
    "$root/include/mpitopo/version.h.in" >"$out/include/mpitopo/version.h.new"
cmp -s "$out/include/mpitopo/version.h.new" "$out/include/mpitopo/version.h" 2>/dev/null ||
  mv "$out/include/mpitopo/version.h.new" "$out/include/mpitopo/version.h"
rm -f "$out/include/mpitopo/version.h.new"

# GCC 12 reports false stringop warnings inside MPI headers (see
# mpitopo_mpi_target in CMakeLists.txt).
flags=(-std=gnu11 -O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror
       -Wno-stringop-overflow -Wno-stringop-overread -DMPITOPO_SMPI
       -I"$root/include" -I"$out/include")
read -r -a hwloc_cflags <<<"$(pkg-config --cflags hwloc)"
read -r -a hwloc_libs <<<"$(pkg-config --libs hwloc)"

objs=()
pids=()
compile() { # SRC OBJ EXTRA-FLAGS...
  local src=$1 obj=$2
  shift 2
  if [[ ! -e $obj || $src -nt $obj || -n $(find "$root/include" "$root/src" -name '*.h' -newer "$obj" -print -quit) ]]; then
    smpicc "${flags[@]}" "$@" -c "$src" -o "$obj"
  fi
}
jobs=$(nproc 2>/dev/null || echo 2)
for src in "$root"/src/{core,machine,network,pattern,metrics,map,mpi,coll/engine,coll/neighbor,coll/global,hhc}/*.c; do
  [[ -e $src ]] || continue
  # The optional mapper backends (Scotch, METIS) are left out, as in a
  # CMake build without them.
  case ${src##*/} in scotch.c | metis.c) continue ;; esac
  rel=${src#"$root"/src/}
  obj=$out/obj/${rel//\//_}.o
  objs+=("$obj")
  compile "$src" "$obj" -DMPITOPO_BUILDING -I"$root/src" "${hwloc_cflags[@]}" &
  pids+=($!)
  if ((${#pids[@]} >= jobs)); then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p"; done
# Objects of sources that moved or went away would be linked twice.
for o in "$out"/obj/*.o; do
  case ${o##*/} in bench_*) continue ;; esac
  [[ " ${objs[*]} " == *" $o "* ]] || rm -f "$o"
done
# One executable per MPI benchmark, each with the whole library.
compile "$root/bench/bench_util.c" "$out/obj/bench_util.c.o"
# bench/neighbor gets the persistent columns when coll.h declares
# mpitopo_start, as in bench/CMakeLists.txt.
neighbor_flags=()
grep -q 'int mpitopo_start(' "$root/include/mpitopo/coll.h" && neighbor_flags=(-DBENCH_HAVE_PERSISTENT=1)
for prog in halo ring neighbor; do
  [[ -e $root/bench/$prog.c ]] || continue
  extra=()
  [[ $prog == neighbor ]] && extra=("${neighbor_flags[@]}")
  compile "$root/bench/$prog.c" "$out/obj/bench_$prog.c.o" "${extra[@]}"
  smpicc "${flags[@]}" -o "$out/$prog" "$out/obj/bench_$prog.c.o" "$out/obj/bench_util.c.o" "${objs[@]}" \
    "${hwloc_libs[@]}" -lm -lpthread
  echo "built $out/$prog"
done

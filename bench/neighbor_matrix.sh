#!/usr/bin/env bash
# The neighbourhood-collective matrix of issue 14 at 16 processes: Moore 2-D
# radius 1 and 2, 3-D radius 1, star, random graphs of density 0.1 and 0.5;
# allgather and alltoall, 1 B - 64 KiB; the host MPI against mpitopo's
# auto, linear, cart and combine, blocking, nonblocking and persistent;
# then one plot of latency against size (host MPI and auto, blocking and
# persistent) per topology and operation, with gnuplot.
#
#   bench/neighbor_matrix.sh [-b BUILD] [-o OUTDIR] [-i ITERS] [-x WARMUP] [-- MPIRUN-ARGS]
#
#   -b BUILD   build directory holding bench/neighbor (default build/openmpi)
#   -o OUTDIR  where the runs, the table data and neighbor.png go (default
#              BUILD/neighbor-matrix)
#   -i, -x     timed and warm-up iterations per size (default 2000 and 200,
#              the issue's; lower them on an oversubscribed machine)
#   MPIRUN-ARGS  e.g. --bind-to core (real cores) or --oversubscribe
#
# One mpirun per topology, every variant in it, so ratios come from one run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/openmpi out="" iters=2000 warmup=200
while getopts "b:o:i:x:h" opt; do
  case $opt in
  b) build=$OPTARG ;;
  o) out=$OPTARG ;;
  i) iters=$OPTARG ;;
  x) warmup=$OPTARG ;;
  *) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
out=${out:-$build/neighbor-matrix}
mkdir -p "$out"
nb=$build/bench/neighbor
[[ -x $nb ]] || { echo "neighbor_matrix.sh: $nb not built" >&2; exit 1; }
topos="cart:4x4:1 cart:4x4:2 cart:4x2x2:1 star:4x4 random:0.1:1 random:0.5:1"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -n)"
for t in $topos; do
  f=$out/${t//:/_}.txt
  echo "-- $t"
  mpirun -n 16 "$@" "$nb" -N "$t" -m 1:65536 -i "$iters" -x "$warmup" \
    -s auto,linear,cart,combine >"$f"
done

# Columns of one table (op) of one run: size, host blocking, auto, auto-p.
extract() { # FILE OP
  awk -v op="$2" '
    /^# neighbor_/ { on = ($2 == "neighbor_" op ":"); next }
    on && /^# Size/ { for (i = 3; i <= NF; i++) col[$i] = i - 1; next }
    on && /^[0-9]/ { print $1, $(col["mpi"]), $(col["auto"]), $(col["auto-p"]) }
    on && /^# setup/ { on = 0 }' "$1"
}
plots=()
for t in $topos; do
  for op in allgather alltoall; do
    d=$out/${t//:/_}.$op.dat
    extract "$out/${t//:/_}.txt" "$op" >"$d"
    plots+=("set title '$t $op'; plot '$d' u 1:2 w lp t 'host MPI', '' u 1:3 w lp t 'auto', '' u 1:4 w lp t 'auto-p'")
  done
done
{
  echo "set terminal pngcairo size 1800,2400 noenhanced; set output '$out/neighbor.png'"
  echo "set logscale xy; set xlabel 'bytes'; set ylabel 'latency (us)'; set key top left"
  echo "set multiplot layout 6,2"
  printf '%s\n' "${plots[@]}"
  echo "unset multiplot"
} >"$out/neighbor.gp"
gnuplot "$out/neighbor.gp" 2>/dev/null || {
  sed -i 's/pngcairo/png/' "$out/neighbor.gp"
  gnuplot "$out/neighbor.gp"
}
echo "plot: $out/neighbor.png; runs: $out/*.txt"

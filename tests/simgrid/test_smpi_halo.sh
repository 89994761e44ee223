#!/usr/bin/env bash
# SimGrid at scale (label full: scripts/test.sh --full): bench/halo built
# with SimGrid's smpicc (bench/smpi/build.sh) runs Gropp's halo exchange on
# 1,024 simulated ranks (64 hosts x 16 cores, round-robin launch, 2-D
# 32x32 grid, 64 KiB) through bench/smpi/run.sh. mpitopo_cart_create must
# give the node-aware layout (off-node partners avg 4.00 -> 1.00, off-node
# messages per node 64 -> 16) and a faster exchange than MPI_Cart_create:
# at least 2x (3.73x when recorded; simulated times are deterministic).
# Usage: test_smpi_halo.sh WORKDIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${1:?usage: test_smpi_halo.sh WORKDIR}
for tool in smpicc smpirun; do
  command -v $tool >/dev/null || { echo "SKIP: $tool not found (SimGrid's SMPI: libsimgrid-dev)"; exit 77; }
done
mkdir -p "$work"
bash "$root/bench/smpi/build.sh" "$work/smpi" >"$work/build.log" 2>&1 ||
  { tail -n 30 "$work/build.log"; echo "FAIL smpi_halo: bench/smpi/build.sh failed"; exit 1; }
out=$(bash "$root/bench/smpi/run.sh" -b "$work/smpi" -H 64 -c 16 -m rr -d 2 -- -L 65536 -r 1 -i 2 2>&1) ||
  { echo "$out" | tail -n 30; echo "FAIL smpi_halo: bench/smpi/run.sh failed"; exit 1; }
echo "$out"
fail=0
# "  native  ON-min max avg  OFF-min max avg  MSGS-max avg  created": the off-node average is
# field 7, the off-node messages of the busiest node field 8.
off() { awk -v w="$1" '$1 == w && NF >= 10 {print $7; exit}' <<<"$out"; }
msgs() { awk -v w="$1" '$1 == w && NF >= 10 {print $8; exit}' <<<"$out"; }
[ "$(off native)" = "4.00" ] || { echo "FAIL smpi_halo: native off-node avg '$(off native)', expected 4.00"; fail=1; }
[ "$(off mpitopo)" = "1.00" ] || { echo "FAIL smpi_halo: mpitopo off-node avg '$(off mpitopo)', expected 1.00"; fail=1; }
[ "$(msgs native)" = "64" ] && [ "$(msgs mpitopo)" = "16" ] ||
  { echo "FAIL smpi_halo: off-node messages per node $(msgs native) -> $(msgs mpitopo), expected 64 -> 16"; fail=1; }
ratio=$(awk '$1 == 65536 {print $NF; exit}' <<<"$out")
awk -v r="$ratio" 'BEGIN {exit !(r + 0 >= 2)}' ||
  { echo "FAIL smpi_halo: native/mpitopo at 64 KiB is '$ratio', expected at least 2"; fail=1; }
[ $fail = 0 ] && echo "PASS smpi_halo: off-node partners 4.00 -> 1.00, native/mpitopo $ratio at 64 KiB"
exit $fail

#!/usr/bin/env bash
# The baseline of issue 16: the network metrics (hop-bytes, dilation, MC,
# NZCA, NZCV, hybrid) of the block, rr, tree and cart placements on the GPC
# model (mpitopo's "gpc" network: fattree:3;30,6,18;1,2,9;1,3,2:nodes=3090)
# for the microbenchmarks of the thesis's chapter 3 (section 3.4.1) at
# 1,024 and 4,096 processes, 8 per node (128 and 512 nodes, the first of
# the network's end nodes):
#   2-D 5-point      cart:AxB (periodic), 4 face neighbours
#   3-D 15-point     cart:AxBxC (periodic), 6 face + 8 corner neighbours
#   all-to-all 1D    each column of a 2-D grid is a sub-communicator
#   all-to-all 2D    each plane of the first and last dimensions of a 3-D grid
# and, with -w, the weighted stencils (messages along dimension 0 three
# times larger: weights=3,1[,1]). Grids are MPI_Dims_create's: 32x32,
# 16x8x8, 64x64, 16x16x16. One message of one byte per edge, so the byte
# metrics count messages; they scale with the message size (NZCV with its
# square).
#
#   bench/gpc_baseline.sh [-b BUILD] [-w] [-j DIR]
#
#   -b BUILD   build directory holding tools/mpitopo (default build/h-bench)
#   -w         also the weighted 2-D and 3-D stencils
#   -j DIR     keep every JSON answer of mpitopo eval in DIR
#
# Rows: block (identity under --placement block: consecutive ranks fill a
# node, the thesis's default), rr (identity under --placement rr: round
# robin over the nodes), tree and cart (the mappers, from the block launch).
# "hybrid" is the CLI's, w = (1,1,1,1) on the raw metrics; "hybrid/block"
# is the thesis's normalised form, HB/HB_block + MC/MC_block +
# NZCA/NZCA_block + NZCV/NZCV_block (4 for block itself).
#
# The sub-communicator all-to-all is given to the CLI as the Cartesian
# description its generator builds (alltoall:DIMS:REMAIN of
# mpitopo_pattern_from_string, the same pattern): the grid, all periodic,
# with the offsets reaching every other member of the sub-communicator.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/h-bench weighted=0 jsondir=
while getopts "b:wj:h" opt; do
  case $opt in
  b) build=$OPTARG ;;
  w) weighted=1 ;;
  j) jsondir=$OPTARG ;;
  *) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
  esac
done
cli=$build/tools/mpitopo
[[ -x $cli ]] || { echo "gpc_baseline.sh: $cli not built (cmake --build $build)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "gpc_baseline.sh: needs python3" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[[ -z $jsondir ]] || mkdir -p "$jsondir"

star15="offsets=1,0,0;-1,0,0;0,1,0;0,-1,0;0,0,1;0,0,-1;1,1,1;1,1,-1;1,-1,1;1,-1,-1;-1,1,1;-1,1,-1;-1,-1,1;-1,-1,-1"

# cart:DIMS:offsets=... for the all-to-all inside MPI_Cart_sub(REMAIN):
# every non-zero offset of the kept dimensions, each component in [0, size).
alltoall() {
  python3 - "$1" "$2" <<'EOF'
import itertools, sys
dims = [int(x) for x in sys.argv[1].split("x")]
keep = [int(x) for x in sys.argv[2].split(",")]
ranges = [range(d) if k else range(1) for d, k in zip(dims, keep)]
offs = [o for o in itertools.product(*ranges) if any(o)]
print("cart:%s:offsets=%s" % (sys.argv[1], ";".join(",".join(map(str, o)) for o in offs)))
EOF
}

# name|pattern description, per size.
cases() {
  local n=$1 d2 d3
  if [[ $n == 1024 ]]; then d2=32x32 d3=16x8x8; else d2=64x64 d3=16x16x16; fi
  echo "2-D 5-point|cart:$d2"
  ((weighted)) && echo "2-D 5-point weighted|cart:$d2:weights=3,1"
  echo "3-D 15-point|cart:$d3:$star15"
  ((weighted)) && echo "3-D 15-point weighted|cart:$d3:$star15:weights=3,1,1"
  echo "all-to-all 1D (alltoall:$d2:1,0)|$(alltoall "$d2" 1,0)"
  echo "all-to-all 2D (alltoall:$d3:1,0,1)|$(alltoall "$d3" 1,0,1)"
}

echo "# GPC baseline, $(date -u +%Y-%m-%dT%H:%MZ), $("$cli" --version 2>/dev/null | head -1 || echo mpitopo)"
echo "# $cli eval --machine \"node:NODES core:8\" --pattern P --network gpc --json"
echo "#   --placement block --mapper identity,tree,cart   (rows block, tree, cart)"
echo "#   --placement rr --mapper identity                (row rr)"
k=0
for n in 1024 4096; do
  machine="node:$((n / 8)) core:8"
  while IFS='|' read -r name pattern; do
    k=$((k + 1))
    "$cli" eval --machine "$machine" --pattern "$pattern" --network gpc --json \
      --placement block --mapper identity,tree,cart >"$tmp/block.json"
    "$cli" eval --machine "$machine" --pattern "$pattern" --network gpc --json \
      --placement rr --mapper identity >"$tmp/rr.json"
    if [[ -n $jsondir ]]; then
      cp "$tmp/block.json" "$jsondir/case$k-block.json"
      cp "$tmp/rr.json" "$jsondir/case$k-rr.json"
    fi
    python3 - "$name" "$n" "$pattern" "$tmp/block.json" "$tmp/rr.json" <<'EOF'
import json, sys
name, n, pattern, fblock, frr = sys.argv[1:6]
block, rr = json.load(open(fblock)), json.load(open(frr))
by = {m["name"]: m["network"] for m in block["mappers"]}
rows = [("block", by["identity"]), ("rr", rr["mappers"][0]["network"]),
        ("tree", by["tree"]), ("cart", by["cart"])]
ref = by["identity"]
keys = ("hop_bytes", "max_congestion", "nzca", "nzcv")
def norm(m):
    return sum(m[k] / ref[k] if ref[k] else m[k] for k in keys)
shown = pattern if len(pattern) < 60 else pattern[:40] + "...(%d offsets)" % (pattern.count(";") + 1)
print()
print("### %s, %s processes (%s, %d edges)" % (name, n, shown, block["nedges"]))
print()
print("| placement | hop-bytes | dilation | MC | NZCA | NZCV | hybrid | hybrid/block |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for r, m in rows:
    print("| %s | %.0f | %.0f | %.0f | %.2f | %.2f | %.1f | %.3f |" % (
        r, m["hop_bytes"], m["dilation"], m["max_congestion"], m["nzca"], m["nzcv"],
        m["hybrid"], norm(m)))
EOF
  done < <(cases "$n")
done

#!/usr/bin/env bash
# Issue 17, part 4: network-aware mapping on the microbenchmarks of the
# thesis's chapter 3 (section 3.4.1), one bench/mapnet table per case
# (network x size x pattern): hop-bytes, dilation, MC, NZCA, NZCV of every
# mapper normalised to block, the normalised hybrid metric, the mapping
# time (CPU and wall) and ptram's phases (partitioning, greedy,
# refinement, rest; see bench/mapnet.c).
#
#   bench/mapnet.sh [-b BUILD] [-s SIZES] [-n NETWORKS] [-p PATTERNS] [-m MAPPERS] [-r REPS] [-S]
#
#   -b BUILD     CMake build directory with bench/mapnet (default build/h-mapnet)
#   -s SIZES     process counts, 8 per node (default "1024 4096")
#   -n NETWORKS  among gpc fabric dragonfly torus (default all four)
#   -p PATTERNS  among 2d 2dw 3d 3dw a2a1 a2a2 (default all six)
#   -m MAPPERS   mapnet's --mappers (default auto: block, then every
#                registered mapper that applies, then ptram:blind and
#                ptram:strict: the list is read from the library at run time)
#   -r REPS      mapnet's --reps (default 3: the fastest run's time)
#   -S           then the SimGrid runs (bench/smpi/mapnet_smpi.sh, its defaults)
#
# Networks (the machine's nodes on the first end nodes, in order):
#   gpc        the QDR partition of SciNet's GPC (5:1 blocking fat tree)
#   fabric     a three-level fat tree of 1,152 hosts (8 pods of 8 leaf
#              switches with 18 hosts and 6 uplinks each: 3:1 blocking at
#              the leaves; 6 middle switches per pod, 6 tops per group),
#              routed by OpenSM's ftree engine on ibsim: its subnet list and
#              forwarding tables are bench/results/fabric_ftree1152_*.xz,
#              made by tests/fabric/gen_fattree.py three 8 8 18 6 6, ibsim
#              and 'opensm -o -R ftree' (-F redoes it: see regen_fabric below)
#   dragonfly  dragonfly:4,8,4 (33 groups of 8 routers, 4 nodes each: 1,056)
#   torus      torus:8x8x8 (512 nodes)
# Patterns (grids of MPI_Dims_create, periodic; one byte per message):
#   2d/2dw     2-D 5-point halo, plain / weighted 3x along dimension 0
#   3d/3dw     3-D 15-point halo (6 faces + 8 corners), plain / weighted
#   a2a1/a2a2  sub-communicator all-to-all: columns of the 2-D grid /
#              planes of dimensions 0 and 2 of the 3-D grid
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/h-mapnet sizes="1024 4096" nets="gpc fabric dragonfly torus"
pats="2d 2dw 3d 3dw a2a1 a2a2" mappers=auto reps=3 smpi=0 regen=0
while getopts "b:s:n:p:m:r:SFh" opt; do
  case $opt in
  b) build=$OPTARG ;;
  s) sizes=$OPTARG ;;
  n) nets=$OPTARG ;;
  p) pats=$OPTARG ;;
  m) mappers=$OPTARG ;;
  r) reps=$OPTARG ;;
  S) smpi=1 ;;
  F) regen=1 ;;
  *) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
  esac
done
mapnet=$build/bench/mapnet
[[ -x $mapnet ]] || { echo "mapnet.sh: $mapnet not built (cmake --build $build --target mpitopo_bench_mapnet)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fab=$root/bench/results/fabric_ftree1152

# -F: the fabric again, from the net file to OpenSM's dumps (needs ibsim-utils, opensm).
regen_fabric() {
  python3 "$root/tests/fabric/gen_fattree.py" three 8 8 18 6 6 >"$tmp/net"
  local sock=mapnet$$ d=$tmp/ftree
  mkdir -p "$d"
  IBSIM_SOCKNAME=$sock ibsim -s -n -N 4096 -S 1024 "$tmp/net" >"$tmp/ibsim.log" 2>&1 &
  local pid=$! i
  for i in $(seq 600); do grep -q "Network simulator ready." "$tmp/ibsim.log" && break; sleep 0.2; done
  IBSIM_SOCKNAME=$sock LD_PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so OSM_TMP_DIR=$d OSM_CACHE_DIR=$d \
    /usr/sbin/opensm -o -R ftree -f "$d/osm.log" -D 0x43 --dump_files_dir "$d" -s 0 >/dev/null 2>&1 || true
  kill "$pid"
  grep -q "ftree tables configured on all switches" "$d/osm.log" || { echo "mapnet.sh: ftree failed ($d/osm.log)" >&2; exit 1; }
  xz -9c "$d/opensm-lfts.dump" >"${fab}_lfts.dump.xz"
  xz -9c "$d/opensm-subnet.lst" >"${fab}_subnet.lst.xz"
}
((regen)) && regen_fabric

network() {
  case $1 in
  gpc) echo gpc ;;
  fabric)
    [[ -e $tmp/subnet.lst ]] || { xz -dc "${fab}_subnet.lst.xz" >"$tmp/subnet.lst"; xz -dc "${fab}_lfts.dump.xz" >"$tmp/lfts.dump"; }
    echo "fabric:$tmp/subnet.lst,$tmp/lfts.dump" ;;
  dragonfly) echo dragonfly:4,8,4 ;;
  torus) echo torus:8x8x8 ;;
  *) echo "mapnet.sh: unknown network '$1'" >&2; exit 2 ;;
  esac
}

star15="offsets=1,0,0;-1,0,0;0,1,0;0,-1,0;0,0,1;0,0,-1;1,1,1;1,1,-1;1,-1,1;1,-1,-1;-1,1,1;-1,1,-1;-1,-1,1;-1,-1,-1"
pattern() { # PATTERN SIZE -> "title|description"
  local d2 d3
  if [[ $2 == 1024 ]]; then d2=32x32 d3=16x8x8; else d2=64x64 d3=16x16x16; fi
  case $1 in
  2d) echo "2-D 5-point $d2|cart:$d2" ;;
  2dw) echo "2-D 5-point $d2 weighted 3,1|cart:$d2:weights=3,1" ;;
  3d) echo "3-D 15-point $d3|cart:$d3:$star15" ;;
  3dw) echo "3-D 15-point $d3 weighted 3,1,1|cart:$d3:$star15:weights=3,1,1" ;;
  a2a1) echo "all-to-all 1D (alltoall:$d2:1,0)|alltoall:$d2:1,0" ;;
  a2a2) echo "all-to-all 2D (alltoall:$d3:1,0,1)|alltoall:$d3:1,0,1" ;;
  *) echo "mapnet.sh: unknown pattern '$1'" >&2; exit 2 ;;
  esac
}

echo "# bench/mapnet.sh -s '$sizes' -n '$nets' -p '$pats' -m $mappers -r $reps"
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)," \
  "commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
summary() { # the summary table of ptram against the others, from the tables above
  python3 - "$1" <<'PY'
import re, sys
cases, cur = [], None
for line in open(sys.argv[1]):
    if line.startswith("### "):
        cur = [line[4:].strip(), {}]
        cases.append(cur)
    elif cur and line.startswith("| ") and not line.startswith("| mapper"):
        f = [x.strip() for x in line.strip().strip("|").split("|")]
        cur[1][f[0]] = f
print("\n### Summary: ptram against every other mapper\n")
print("MC of ptram and of the best other mapper (block = 1), and the mappers whose MC is")
print("not above ptram's; ptram's HB, NZCA, NZCV (block = 1) and CPU seconds; the true")
print("lower bound on any mapping's MC (mapnet's \"bound\" row, block = 1).\n")
print("| case | ptram HB | MC | NZCA | NZCV | CPU s | best other MC | MC <= ptram's | MC bound |")
print("|---|---:|---:|---:|---:|---:|---|---|---:|")
for title, rows in cases:
    if "ptram" not in rows:
        continue
    pt = rows["ptram"]
    others = [(float(r[3]), n) for n, r in rows.items() if n not in ("ptram", "block", "bound")]
    best = min(others) if others else (float("nan"), "-")
    le = [n for v, n in sorted(others) if v <= float(pt[3])]
    print("| %s | %s | %s | %s | %s | %s | %.3f (%s) | %s | %s |" % (title, pt[1], pt[3], pt[4], pt[5], pt[7],
          best[0], best[1], ", ".join(le) if le else "none", rows.get("bound", ["", "", "", "-"])[3]))
PY
}

out=$tmp/tables.md
for net in $nets; do
  desc=$(network "$net")
  for n in $sizes; do
    for p in $pats; do
      IFS='|' read -r title pdesc <<<"$(pattern "$p" "$n")"
      "$mapnet" --network "$desc" --machine "node:$((n / 8)) core:8" --pattern "$pdesc" --mappers "$mappers" \
        --reps "$reps" --title "$net, $n processes: $title" | tee -a "$out"
    done
  done
done
summary "$out"
echo "# done $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
((smpi)) && exec "$root/bench/smpi/mapnet_smpi.sh"
exit 0

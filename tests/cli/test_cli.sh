#!/usr/bin/env bash
# CLI tests: Table 3 of Gropp (EuroMPI'18) reproduced, JSON shape, errors, --version and
# --help, option aliases, placement files read back (eval --mapping), eval --network, the fuzz harness.
set -u
cli=$1
data=$2
failures=0
check() { # check NAME COMMAND... ; expects success
  local name=$1; shift
  if ! out=$("$@" 2>&1); then echo "FAIL $name: exit status $?: $out"; failures=$((failures + 1)); return 1; fi
}
expect_in() { # expect_in NAME NEEDLE
  if ! grep -qF -- "$2" <<<"$out"; then echo "FAIL $1: output lacks '$2':"; echo "$out"; failures=$((failures + 1)); fi
}
expect_error() { # expect_error NAME NEEDLE COMMAND...
  local name=$1 needle=$2; shift 2
  if out=$("$@" 2>&1); then echo "FAIL $name: succeeded"; failures=$((failures + 1)); return; fi
  expect_in "$name" "$needle"
}

# Table 3, MPI_Cart_create rows: 16 processes per node, block launch.
check table3-2d "$cli" eval --machine "node:1024 core:16" --pattern cart:128x128 --mapper identity
expect_in table3-2d "off-node partners min / max / avg"
expect_in table3-2d "2 / 3 / 2.12"
expect_in table3-2d "1 / 2 / 1.88"
expect_in table3-2d "best box tiling: box 4x4 per node"
expect_in table3-2d "lower bound (any mapping): off-node edges 16384"
check table3-3d "$cli" eval --machine "node:1024 core:16" --pattern cart:16x32x32 --mapper identity
expect_in table3-3d "4 / 5 / 4.12"
expect_in table3-3d "1 / 2 / 1.88"
expect_in table3-3d "off-node partners avg 2.50"

# The node-aware rows of Table 3 as an actual mapping, from block and rr launches.
check table3-cart "$cli" eval --machine "node:1024 core:16" --pattern cart:128x128 --mapper identity,cart
expect_in table3-cart "2 / 3 / 2.12           0 / 2 / 1.00"
check table3-cart-3d "$cli" eval --machine "node:1024 core:16" --pattern cart:16x32x32 --placement rr --mapper cart
expect_in table3-cart-3d "2 / 3 / 2.50"
# Issue 14: strips that wrap from row to row beat the best box (41,250) and
# tree (15,998); the bound is 15,000.
check cart-strips "$cli" eval --machine "node:625 core:32" --pattern cart:160x125 --mapper cart
expect_in cart-strips "edges crossing node (625 units)                     15010"
expect_in cart-strips "lower bound (any mapping): off-node edges 15000, weight 15000 (bytes)"
expect_in cart-strips "off-node weight over lower bound                   +0.1 %"
# Without --mapper, cart runs only on Cartesian patterns.
check default-mappers "$cli" eval --machine "node:4 core:4" --pattern ring:16:4
if grep -q "cart" <<<"$out"; then echo "FAIL default-mappers: cart listed for a ring"; failures=$((failures + 1)); fi
# A mapper named in --mapper that does not apply to the pattern (cart on a
# ring, greedy without --network, rdmh on 12 processes) is skipped, saying
# why in one line, and the others are shown (issue 28); with --json it is
# listed where it was asked for, with why. All of them skipped is an error,
# and so are a bad name or bad arguments; map keeps its one mapper an error.
check skip-cart "$cli" eval --machine "node:4 core:4" --pattern ring:16:4 --mapper identity,tree,cart
expect_in skip-cart "mpitopo: skipping mapper 'cart': needs a Cartesian pattern"
expect_in skip-cart "edges crossing node (4 units)                           0                      0"
if grep -q "^mapper .* cart" <<<"$out"; then echo "FAIL skip-cart: a cart column"; failures=$((failures + 1)); fi
check skip-json "$cli" eval --machine "node:4 core:4" --pattern ring:12:4 --mapper cart,identity,greedy,rdmh,tree --json
expect_in skip-json "mpitopo: skipping mapper 'greedy': needs a network (--network)"
if command -v python3 >/dev/null; then
  if ! python3 - "$(sed -n '/^{/,$p' <<<"$out")" <<'PY'
import json, sys
m = json.loads(sys.argv[1])["mappers"]
assert [x["name"] for x in m] == ["cart", "identity", "greedy", "rdmh", "tree"], m
assert m[0] == {"name": "cart", "skipped": "needs a Cartesian pattern"}, m[0]
assert m[2] == {"name": "greedy", "skipped": "needs a network (--network)"}, m[2]
assert set(m[3]) == {"name", "skipped"} and "power of two" in m[3]["skipped"], m[3]
assert "skipped" not in m[1] and m[1]["levels"][0]["edges_crossing"] == 0 and "cost" in m[4], m
PY
  then echo "FAIL skip-json: python check failed"; failures=$((failures + 1)); fi
fi
expect_error skip-all "no mapper applies to this pattern" \
  "$cli" eval --machine "node:4 core:4" --pattern ring:16:4 --mapper cart,ptram
expect_in skip-all "mpitopo: skipping mapper 'ptram': needs a network (--network)"
expect_error skip-bad-args "mapper 'cart' takes no argument" \
  "$cli" eval --machine "node:4 core:4" --pattern ring:16:4 --mapper identity,cart:x
expect_error skip-bad-ptram "argument \"bogus\"" \
  "$cli" eval --machine "node:4 core:4" --pattern ring:16:4 --mapper identity,ptram:bogus
expect_error skip-bad-name "no such mapper" "$cli" eval --machine "node:4 core:4" --pattern ring:16:4 --mapper identity,carts
expect_error map-cart-ring "mapper 'cart' needs a Cartesian pattern" \
  "$cli" map --machine "node:4 core:4" --pattern ring:16:4 --mapper cart

# The user guide's table of environment variables is the one list the library reads
# (src/core/env.def), as `mpitopo env --markdown` prints it.
guide=$data/../../doc/user-guide.md
if [ -f "$guide" ]; then
  check env-markdown "$cli" env --markdown
  if ! diff <(sed -n '/^<!-- env:begin/,/^<!-- env:end/p' "$guide" | sed '1d;$d') <(printf '%s\n' "$out") >/dev/null; then
    echo "FAIL env-markdown: doc/user-guide.md's environment table differs from 'mpitopo env --markdown'"
    failures=$((failures + 1))
  fi
  # ... and the only place: no other file reads an MPITOPO_ variable itself.
  stray=$(grep -rn 'getenv("MPITOPO_' "$data/../../src" "$data/../../tools" | grep -v 'src/core/env\.')
  if [ -n "$stray" ]; then
    echo "FAIL env-one-place: read outside src/core/env.c: $stray"; failures=$((failures + 1))
  fi
  check env-values env MPITOPO_EMULATE_PLACEMENT=rr "$cli" env
  expect_in env-values "MPITOPO_EMULATE_PLACEMENT  library                rr"
fi

# Dimensions: MPI_Dims_create's answer, and the node-aware one of Gropp's example.
check dims "$cli" dims 576 0,0,0
expect_in dims "9x8x8"
check dims-nodes "$cli" dims 576 0,0,0 --ppn 36
expect_in dims-nodes "12x8x6"
check dims-fixed "$cli" dims 2147483646 0,3
expect_in dims-fixed "715827882x3"
expect_error dims-impossible "multiply to 5, which does not divide nprocs = 12" "$cli" dims 12 0,5
expect_error dims-list "dimension list 'x'" "$cli" dims 12 x

# JSON carries the required fields; parse it with python when present.
check json "$cli" eval --machine "node:1024 core:16" --pattern cart:128x128 --mapper identity,rr --json
if command -v python3 >/dev/null; then
  if ! python3 - "$out" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
m = d["mappers"]
assert [x["name"] for x in m] == ["identity", "rr"], m
i = m[0]
assert i["offnode_partners"] == {"min": 2, "max": 3, "avg": 2.125}, i["offnode_partners"]
assert i["onnode_partners"] == {"min": 1, "max": 2, "avg": 1.875}, i["onnode_partners"]
lv = {l["name"]: l for l in i["levels"]}
assert lv["node"]["edges_crossing"] == 16384 * 4 - 16384 * 1.875, lv["node"]
assert lv["node"]["max_per_unit"] == 34 and "weight_crossing" in lv["node"], lv["node"]
assert "cost" in i and d["box_bound"]["box"] == [4, 4]
# 4x4 boxes reach the edge-isoperimetric bound: 16 edges leave each node
assert d["lower_bound"]["offnode_edges"] == 1024 * 16, d["lower_bound"]
assert i["over_bound"] > 0 and "over_bound" in m[1]
# round-robin launch puts every neighbour off-node
assert m[1]["offnode_partners"]["avg"] == 4
PY
  then echo "FAIL json: python check failed"; failures=$((failures + 1)); fi
fi

# eval --network: the machine's nodes are the network's end nodes 0, 1, ...
# mesh:3x5 puts node i at (i / 5, i % 5); the first three nodes lie in a row,
# n0 - n1 - n2 along dimension 1. Pattern: 0->1 10 bytes, 0->2 20 bytes, one
# process per node.
#  identity (p on node p): 0->1 crosses n0->n1 (1 hop), 0->2 crosses n0->n1,
#   n1->n2 (2 hops): hop-bytes 10*1 + 20*2 = 50, dilation 1 + 2 = 3; loads
#   n0->n1 30, n1->n2 20: MC 30, NZCA 25, NZCV ((30-25)^2 + (20-25)^2)/2 = 25,
#   hybrid 50 + 30 + 25 + 25 = 130, busiest n0->n1 (d1+).
#  rev.txt (p on node 2-p): the same figures the other way, busiest n2->n1 d1-.
nt=$(mktemp -d)
printf 'mpitopo-pattern 1 3\n0 1 10 1\n0 2 20 1\n' >"$nt/p.txt"
printf '0 2\n1 1\n2 0\n' >"$nt/rev.txt"
net=(eval --machine "node:3 core:1" --pattern "$nt/p.txt" --mapper identity --mapping "$nt/rev.txt")
check network-mesh "$cli" "${net[@]}" --network mesh:3x5
expect_in network-mesh "network mesh:3x5"
expect_in network-mesh "  hop-bytes                                            50                     50"
expect_in network-mesh "  dilation (sum of hops)                                3                      3"
expect_in network-mesh "  max congestion (MC)                                  30                     30"
expect_in network-mesh "  NZCA                                                 25                     25"
expect_in network-mesh "  NZCV                                                 25                     25"
expect_in network-mesh "  hybrid (weights 1,1,1,1)                            130                    130"
expect_in network-mesh "  most loaded channel                          n0->n1 d1+             n2->n1 d1-"
# Without --network the output is what it was.
check network-none "$cli" "${net[@]}"
if grep -q "network" <<<"$out"; then echo "FAIL network-none: network rows without --network"; failures=$((failures + 1)); fi
check network-none-json "$cli" "${net[@]}" --json
if grep -q '"network"' <<<"$out"; then echo "FAIL network-none-json: a network key without --network"; failures=$((failures + 1)); fi
# torus:2x2, complete:4 (1 byte each ordered pair), node i at (i / 2, i % 2):
# 8 pairs are neighbours (1 hop), 4 are diagonal (2 hops): hop-bytes and
# dilation 8 + 8 = 16. A size-2 dimension ties both ways, so every route takes
# the + channels only: 8 channels carry 16 bytes, 2 each (0->2 and 0->3 take
# n0's d0+; 0->1 and 2->1 take n0's d1+, ...): MC 2, NZCA 2, NZCV 0, hybrid 20.
check network-torus "$cli" eval --machine "switch:2 node:2 core:1" --pattern complete:4 --mapper identity \
  --network torus:2x2 --json
if command -v python3 >/dev/null; then
  if ! python3 - "$out" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
n = d["mappers"][0]["network"]
keys = {"hop_bytes", "dilation", "max_congestion", "nzca", "nzcv", "hybrid"}
assert keys <= set(n) <= keys | {"busiest_channel"}, n
assert all(isinstance(n[k], (int, float)) for k in keys), n
assert (n["hop_bytes"], n["dilation"], n["max_congestion"], n["nzca"], n["nzcv"], n["hybrid"]) == (16, 16, 2, 2, 0, 20), n
assert n["busiest_channel"] == "n0->n2 d0+", n
PY
  then echo "FAIL network-torus: python check failed"; failures=$((failures + 1)); fi
fi
# ktree:2,2 (4 nodes; leaf switches s1.0 over nodes 0-1, s1.1 over 2-3): its
# leaf switches become the machine's level "switch" above the nodes (the
# top level holds every node and is left out). complete:4, one process per
# node: 4 ordered pairs under one leaf (2 hops), 8 across (4 hops):
# hop-bytes 8 + 32 = 40; every node link carries 3 bytes each way (8
# channels), the 8 leaf-top channels 2 each (d-mod-k splits a leaf's 4
# crossing bytes over its 2 up-links): MC 3, NZCA 40/16 = 2.5, NZCV 0.25,
# hybrid 45.75. Weighted cost: 8 pairs across switches x 3 + 4 x 2 = 32.
check network-groups "$cli" eval --machine "node:4 core:1" --pattern complete:4 --mapper identity --network ktree:2,2
expect_in network-groups "machine:   switch:2 node:2 core:1 (4 leaves)"
expect_in network-groups "edges crossing switch (2 units)                         8"
expect_in network-groups "weighted cost sum(weight x cost)                       32"
expect_in network-groups "  hop-bytes                                            40"
expect_in network-groups "  max congestion (MC)                                   3"
expect_in network-groups "  NZCA                                                2.5"
expect_in network-groups "  NZCV                                               0.25"
expect_in network-groups "  hybrid (weights 1,1,1,1)                          45.75"
# map --network: the same machine for the mapper, and with --verbose the
# network metrics of the launch and of the result (identity keeps the block
# launch: the figures above on both sides); a bad description and too few
# end nodes are errors naming them.
check map-network "$cli" map --machine "node:4 core:1" --pattern complete:4 --mapper identity --network ktree:2,2 --verbose
expect_in map-network "mpitopo map: network ktree:2,2: hop-bytes 40 -> 40, MC 3 -> 3, NZCA 2.5 -> 2.5, hybrid 45.75 -> 45.75"
expect_error map-network-bad "--network 'ktree:0,2'" "$cli" map --machine "node:4 core:1" --pattern complete:4 --network ktree:0,2
expect_error map-network-small "the machine has 4 nodes but the network only 2 end nodes" \
  "$cli" map --machine "node:4 core:1" --pattern complete:4 --network mesh:2
check network-json "$cli" "${net[@]}" --network mesh:3x5 --json
if command -v python3 >/dev/null; then
  if ! python3 - "$out" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
got = [(m["name"], m["network"]["hop_bytes"], m["network"]["dilation"], m["network"]["max_congestion"],
        m["network"]["nzca"], m["network"]["nzcv"], m["network"]["hybrid"], m["network"]["busiest_channel"])
       for m in d["mappers"]]
assert got == [("identity", 50, 3, 30, 25, 25, 130, "n0->n1 d1+"), ("rev.txt", 50, 3, 30, 25, 25, 130, "n2->n1 d1-")], got
PY
  then echo "FAIL network-json: python check failed"; failures=$((failures + 1)); fi
fi
expect_error network-too-small "--network 'mesh:3x5': the machine has 16 nodes but the network only 15 end nodes" \
  "$cli" eval --machine "node:16 core:1" --pattern ring:4:4 --network mesh:3x5
expect_error network-bad "--network 'mesh:3y5'" "$cli" eval --machine "node:3 core:1" --pattern ring:3:3 --network mesh:3y5
expect_in network-bad '"3y5" is not an integer'
expect_error network-unknown "--network 'bogus'" "$cli" eval --machine "node:3 core:1" --pattern ring:3:3 --network bogus
expect_error network-value "option '--network' needs a value" "$cli" eval --machine "node:3 core:1" --pattern ring:3:3 --network
check network-help "$cli" eval --help
expect_in network-help "  --network DESC        also measure every column on a network"
rm -rf "$nt"

# Pattern files, placements, weights, hwloc import.
check file "$cli" eval --machine "node:2 core:4" --pattern "$data/pattern_ring8.txt" --placement rr --weight messages
expect_in file "launch:    rr placement; weights: messages"
check hwloc "$cli" eval --machine "node:4" --node-topology "synthetic:package:2 core:4" --pattern cart:4x8
expect_in hwloc "socket"
check mappers "$cli" mappers
expect_in mappers "random"
check help "$cli" eval --help
expect_in help "--placement"
check version "$cli" version
expect_in version "mpitopo "

# --version and -V: the version from mpitopo/version.h and the optional mappers;
# every help in help2man's shape (a Usage line first, an Options section).
check version-long "$cli" --version
expect_in version-long "optional mappers: scotch "
version_out=$out
if ! grep -qE '^mpitopo [0-9]+\.[0-9]+\.[0-9]+$' <<<"$(head -1 <<<"$out")"; then
  echo "FAIL version-long: first line '$(head -1 <<<"$out")'"; failures=$((failures + 1))
fi
check version-short "$cli" -V
if [ "$out" != "$version_out" ]; then echo "FAIL version-short: differs from --version"; failures=$((failures + 1)); fi
for sub in main eval map dims mappers version; do
  if [ $sub = main ]; then check help-$sub "$cli" --help; else check help-$sub "$cli" $sub --help; fi
  if [ "$(head -c 15 <<<"$out")" != "Usage: mpitopo " ]; then
    echo "FAIL help-$sub: does not start with 'Usage: mpitopo '"; failures=$((failures + 1))
  fi
  case $sub in main | eval | map | dims) expect_in help-$sub "Options:" ;; esac
done
expect_error version-arg "version takes no argument" "$cli" version extra

# mpitopo-job (built with MPI, next to mpitopo): --help and --version need no launcher.
job=$(dirname "$cli")/mpitopo-job
if [ -x "$job" ]; then
  check job-help "$job" --help
  expect_in job-help "Usage: mpitopo-job [NDIMS]"
  expect_in job-help "MPITOPO_EMULATE_PLACEMENT"
  expect_in job-help "Options:"
  check job-version "$job" --version
  expect_in job-version "mpitopo-job $(head -1 <<<"${version_out#mpitopo }")"
  check job-version-short "$job" -V
  expect_in job-version-short "mpitopo-job "
  expect_error job-ndims "NDIMS, 1, 2 or 3, not '4'" "$job" 4
  expect_error job-args "not 'x'" "$job" 2 x
fi

# One spelling per option, the other subcommand's old one kept as an alias:
# --weights (--weight) and --placement (--launch), in eval and in map.
same() { # same NAME: $a and $b must be equal and non-empty
  if [ -z "$a" ] || [ "$a" != "$b" ]; then
    echo "FAIL $1: outputs differ:"; diff <(echo "$a") <(echo "$b"); failures=$((failures + 1))
  fi
}
a=$("$cli" eval --machine "node:4 core:4" --pattern ring:16:4 --weight messages --launch rr 2>&1)
b=$("$cli" eval --machine "node:4 core:4" --pattern ring:16:4 --weights messages --placement rr 2>&1)
same eval-aliases
a=$("$cli" eval --machine "node:4 core:4" --pattern cart:4x4 --weight unit --launch random:3 --json 2>&1)
b=$("$cli" eval --machine "node:4 core:4" --pattern cart:4x4 --weights unit --placement random:3 --json 2>&1)
same eval-aliases-json
a=$("$cli" map --machine "node:4 core:4" --pattern ring:16:4 --weight messages --launch rr --verbose 2>&1)
b=$("$cli" map --machine "node:4 core:4" --pattern ring:16:4 --weights messages --placement rr --verbose 2>&1)
same map-aliases
a=$("$cli" map --machine "node:4 core:4" --pattern ring:16:4 --launch random:3 --mapper random --seed 5 2>&1)
b=$("$cli" map --machine "node:4 core:4" --pattern ring:16:4 --placement random:3 --mapper random --seed 5 2>&1)
same map-random-launch
expect_error eval-bad-launch "--launch 'sideways': expected block, rr or random:SEED" \
  "$cli" eval --machine "node:4 core:4" --pattern cart:4x4 --launch sideways
expect_error map-bad-weight "--weight 'kg'" "$cli" map --machine "node:4 core:4" --pattern cart:4x4 --weight kg

expect_error bad-machine "node:0" "$cli" eval --machine "node:0 core:4" --pattern cart:4x4
expect_error bad-pattern "cart:4xq" "$cli" eval --machine "node:4 core:4" --pattern cart:4xq
expect_error missing-file "/nonexistent" "$cli" eval --machine "node:4 core:4" --pattern /nonexistent
expect_error too-many "16 processes" "$cli" eval --machine "node:2 core:4" --pattern cart:4x4
# A file's header is checked against the machine before anything is sized by
# it (issue 15): 2^31-1 processes with one edge is refused at once, and so is
# a file of NUL bytes.
huge=$(mktemp); printf 'mpitopo-pattern 1 2147483647\n0 1 5\n' >"$huge"
expect_error huge-header "NPROCS = 2147483647 is more than the 8 processes allowed (the machine has 8 leaves)" \
  timeout 10 "$cli" eval --machine "node:2 core:4" --pattern "$huge"
rm -f "$huge"
expect_error dev-zero "NUL byte" timeout 10 "$cli" eval --machine "node:2 core:4" --pattern /dev/zero
expect_error bad-mapper "no such mapper" "$cli" eval --machine "node:4 core:4" --pattern cart:4x4 --mapper foo
expect_error bad-option "unknown option" "$cli" eval --machine "node:4 core:4" --pattern cart:4x4 --frobnicate
expect_error no-machine "needs --machine" "$cli" eval --pattern cart:4x4
expect_error empty-mappers "--mapper" "$cli" eval --machine "node:4 core:4" --pattern cart:4x4 --mapper ""
expect_error mapper-arg "takes no argument" "$cli" eval --machine "node:4 core:4" --pattern cart:4x4 --mapper block:zzz
expect_error huge-seed "--seed" "$cli" eval --machine "node:4 core:4" --pattern cart:4x4 --seed 99999999999999999999
expect_error bad-weight "--weight" "$cli" eval --machine "node:4 core:4" --pattern cart:4x4 --weight kg

# mpitopo map: rings of 8 on 2 nodes of 8 cores, launched round-robin
# (every ring edge off-node): the placement puts each ring on one host.
# same_host NAME: $out holds "RANK HOST" pairs (16 ranks); ranks 0-7 share
# one host, 8-15 another, and no (host, slot) repeats when a slot is given.
same_host() {
  if ! awk -v name="$1" '
      { host[$1] = $2; if (NF > 2) { if (seen[$2 " " $3]++) { print "FAIL " name ": slot " $2 " " $3 " twice"; bad = 1 } } n++ }
      END {
        if (n != 16) { print "FAIL " name ": " n " ranks, expected 16"; exit 1 }
        for (r = 0; r < 16; r++) if (host[r] != host[r < 8 ? 0 : 8]) { print "FAIL " name ": rank " r " on " host[r]; exit 1 }
        if (host[0] == host[8]) { print "FAIL " name ": both rings on " host[0]; exit 1 }
        exit bad
      }' <<<"$pairs"; then failures=$((failures + 1)); echo "$out"; fi
}
ring=(--pattern ring:16:8 --machine "node:2 core:8" --launch rr)
check map-plain "$cli" map "${ring[@]}" --format plain
pairs=$(awk '{ print $1, $3 }' <<<"$out"); same_host map-plain
# The same with the launch placement as the format shows it: rings split.
check map-plain-identity "$cli" map "${ring[@]}" --mapper identity
if [ "$(awk '$1 == 1 { print $3 }' <<<"$out")" = "$(awk '$1 == 0 { print $3 }' <<<"$out")" ]; then
  echo "FAIL map-plain-identity: rr launch should put ranks 0 and 1 on different nodes"; failures=$((failures + 1))
fi
check map-openmpi "$cli" map "${ring[@]}" --format openmpi-rankfile --hosts alpha,beta
pairs=$(sed -n 's/^rank \([0-9]*\)=\([a-z]*\) slot=\([0-7]\)$/\1 \2 \3/p' <<<"$out"); same_host map-openmpi
expect_in map-openmpi "=alpha slot="
expect_in map-openmpi "=beta slot="
check map-mpich "$cli" map "${ring[@]}" --format mpich-hosts
pairs=$(grep -v '^#' <<<"$out" | sed -n 's/^\(node[01]\):1$/\1/p' | awk '{ print NR - 1, $1 }'); same_host map-mpich
check map-cray "$cli" map "${ring[@]}" --format cray-rank-order
# Slots 0-7 are node 0: the i-th number is the rank on slot i.
pairs=$(tr ',' '\n' <<<"$out" | awk '{ print $1, (NR <= 8 ? "n0" : "n1") }'); same_host map-cray
if [ "$(tr ',' '\n' <<<"$out" | sort -n | tr '\n' ' ')" != "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 " ]; then
  echo "FAIL map-cray: not a permutation: $out"; failures=$((failures + 1))
fi
# A traced pattern file, --output and --verbose.
tmp=$(mktemp -d)
check map-file "$cli" map --pattern "$data/pattern_ring8.txt" --machine "node:2 core:4" --launch rr \
  --weights messages --output "$tmp/ranks.txt" --verbose
expect_in map-file "mpitopo map: tree from rr launch (messages weights): cost "
expect_in map-file "off-node weight "
if [ "$(wc -l <"$tmp/ranks.txt")" != 8 ]; then echo "FAIL map-file: $tmp/ranks.txt:"; cat "$tmp/ranks.txt"; failures=$((failures + 1)); fi
check map-help "$cli" map --help
expect_in map-help "cray-rank-order"
printf 'mpitopo-pattern 1 4\n0 1 10 1\n0 9 1 1\n' >"$tmp/bad.txt"
expect_error map-bad-file "bad.txt:3" "$cli" map --pattern "$tmp/bad.txt" --machine "node:2 core:2"
expect_error map-missing-file "/nonexistent" "$cli" map --pattern /nonexistent --machine "node:2 core:2"
expect_error map-bad-format "--format 'rankfile': expected plain" "$cli" map "${ring[@]}" --format rankfile
expect_error map-too-many "16 processes but the machine only 8 leaves" "$cli" map --pattern ring:16:8 --machine "node:2 core:4"
expect_error map-hosts "1 host names for 2 nodes" "$cli" map "${ring[@]}" --format openmpi-rankfile --hosts solo
expect_error map-hosts-blank "host 1 is empty" "$cli" map "${ring[@]}" --format openmpi-rankfile --hosts a,,b
expect_error map-bad-launch "--launch 'foo': expected block, rr or random:SEED" "$cli" map "${ring[@]}" --launch foo
expect_error map-bad-weights "--weights 'kg'" "$cli" map "${ring[@]}" --weights kg
expect_error map-bad-mapper "no such mapper" "$cli" map "${ring[@]}" --mapper frob
expect_error map-no-pattern "map needs --pattern" "$cli" map --machine "node:2 core:8"
expect_error map-output "--output '$tmp/no/such/dir'" "$cli" map "${ring[@]}" --output "$tmp/no/such/dir"
rm -rf "$tmp"

# eval --mapping FILE: what 'mpitopo map' writes in every format, read back,
# measures what the same mapper's column measures (map keeps the launch
# placement unless the mapper lowers the cost: eval --never-worse does too).
# mpich-hosts names hosts only, and cray-rank-order has no empty slots, so
# those two round-trip exactly on full machines with no level inside a node
# but the cores.
tmp=$(mktemp -d)
roundtrip() { # roundtrip NAME FORMAT MAPPER ARGS...: the file's column and the mapper's agree
  local name=$1 fmt=$2 mapper=$3; shift 3
  if ! "$cli" map "$@" --mapper "$mapper" --format "$fmt" --output "$tmp/$name.txt" 2>"$tmp/err"; then
    echo "FAIL $name: map failed: $(cat "$tmp/err")"; failures=$((failures + 1)); return
  fi
  check "$name" "$cli" eval "$@" --mapper "$mapper" --never-worse --mapping "$tmp/$name.txt" --json || return
  if ! python3 -c '
import json, sys
d = json.loads(sys.argv[1])
mine, theirs = d["mappers"]
assert theirs["name"] == sys.argv[2] and theirs["format"] == sys.argv[3], theirs
assert theirs["file"].endswith("/" + sys.argv[2]), theirs["file"]
for key in ("offnode_partners", "onnode_partners", "cost", "over_bound", "levels"):
    assert mine[key] == theirs[key], (key, mine[key], theirs[key])
' "$out" "$name.txt" "$fmt"; then
    echo "FAIL $name: the file's column differs from the mapper's"; failures=$((failures + 1))
  fi
}
if command -v python3 >/dev/null; then
  mappers=$("$cli" mappers | awk '$2 != "needs" { print $1 }') # network-aware ones need --network
  for fmt in plain openmpi-rankfile mpich-hosts cray-rank-order; do
    for mapper in $mappers; do
      roundtrip "rt-$fmt-$mapper" $fmt $mapper --machine "switch:2 node:4 core:4" --pattern cart:4x8:moore=1 \
        --placement rr
    done
    roundtrip "rt-$fmt-hosts" $fmt tree --machine "node:4 core:4" --pattern random:16:0.3:2 \
      --hosts a1,b2,c3,d4 --weights messages
  done
  # Partial machines with sockets: the formats that name every core.
  for fmt in plain openmpi-rankfile; do
    for mapper in tree rr random:4 scotch metis; do
      grep -qx "${mapper%:*}" <<<"$mappers" || continue
      roundtrip "rt-partial-$fmt-${mapper%:*}" $fmt $mapper --machine "node:3 socket:2 core:4" \
        --pattern random:19:0.2:5 --placement random:2
    done
  done
else
  echo "SKIP mapping round trips: no python3"
fi
# cray-rank-order cannot leave a slot empty: map says so.
check map-cray-holes "$cli" map --machine "node:2 core:8" --pattern ring:8:4 --placement rr --mapper identity \
  --format cray-rank-order
expect_in map-cray-holes "warning: cray-rank-order cannot leave slots empty"
# Two files side by side, named after their basenames; table and JSON.
"$cli" map --machine "node:4 core:4" --pattern ring:16:4 --format openmpi-rankfile --output "$tmp/good.rank"
"$cli" map --machine "node:4 core:4" --pattern ring:16:4 --placement rr --mapper identity --format cray-rank-order \
  --output "$tmp/rr.order"
check mapping-table "$cli" eval --machine "node:4 core:4" --pattern ring:16:4 --mapper identity \
  --mapping "$tmp/good.rank" --mapping "$tmp/rr.order"
expect_in mapping-table "identity              good.rank               rr.order"
expect_in mapping-table "(good.rank: the placement in $tmp/good.rank, openmpi-rankfile format)"
expect_in mapping-table "(rr.order: the placement in $tmp/rr.order, cray-rank-order format)"
expect_in mapping-table "edges crossing node (4 units)                           0                      0                     16"
check mapping-only "$cli" eval --machine "node:4 core:4" --pattern ring:16:4 --mapper none --mapping "$tmp/good.rank" --json
expect_in mapping-only '"name": "good.rank", "file": "'
expect_error mapping-none "nothing to measure" "$cli" eval --machine "node:4 core:4" --pattern ring:16:4 --mapper none
# --mapping-format forces the format; a file that is not in it is refused.
printf '0 0\n1 1\n' >"$tmp/two.txt"
expect_error mapping-forced "two.txt:1: '0 0': expected a rank or a range A-B of ranks" \
  "$cli" eval --machine "node:1 core:2" --pattern complete:2 --mapping "$tmp/two.txt" --mapping-format cray-rank-order
check mapping-forced-ok "$cli" eval --machine "node:1 core:2" --pattern complete:2 --mapping "$tmp/two.txt" \
  --mapping-format plain
expect_error mapping-format-bad "--mapping-format 'xml': expected auto, plain" \
  "$cli" eval --machine "node:1 core:2" --pattern complete:2 --mapping "$tmp/two.txt" --mapping-format xml

# Bad placement files: the message names the file, the line and the value.
bad_mapping() { # bad_mapping NAME NEEDLE CONTENT [EVAL OPTIONS...]: 8 ranks on node:2 core:4
  local name=$1 needle=$2 content=$3; shift 3
  printf '%b' "$content" >"$tmp/$name"
  expect_error "$name" "$needle" "$cli" eval --machine "node:2 core:4" --pattern ring:8:4 --mapping "$tmp/$name" "$@"
}
bad_mapping not-permutation "not-permutation:3: rank 2 on leaf 1, which rank 1 holds already (line 2): not a permutation" \
  '0 0\n1 1\n2 1\n3 3\n4 4\n5 5\n6 6\n7 7\n'
bad_mapping rank-twice "rank-twice:1: rank 0 placed twice (line 1 placed it already)" '0,0,1,2,3,4,5,6\n'
bad_mapping unknown-host "unknown-host:2: unknown host 'node2': the machine's nodes are node0 to node1" \
  'rank 0=node0 slot=0\nrank 1=node2 slot=0\n'
bad_mapping unknown-host-hosts "unknown host 'node0': not among the 2 names that --hosts gives the nodes" \
  'node0:4\nnode1:4\n' --hosts x,y
bad_mapping too-few "too-few: places 7 of the pattern's 8 ranks: rank 7 is missing (cray-rank-order format)" \
  '0,1,2,3,4,5,6\n'
bad_mapping too-few-mpich "places 4 of the pattern's 8 ranks: rank 4 is missing (mpich-hosts format)" \
  '# four only\nnode0:4\n'
bad_mapping too-many "too-many:2: rank 8, but the pattern has 8 processes (ranks 0 to 7)" '0-6,\n8\n'
bad_mapping too-many-slots "too-many-slots:1: more ranks than the machine's 8 leaves (slots)" '0-8\n'
bad_mapping too-many-mpich "too-many-mpich:3: more ranks than the pattern's 8 processes" 'node0:4\nnode1:4\nnode1\n'
bad_mapping full-host "full-host:1: host node0 gets more ranks than its 4 leaves" 'node0:5\nnode1:3\n'
bad_mapping garbage "garbage:2: 'hello, world!': not a line of any format 'mpitopo map' writes" \
  '# a comment\nhello, world!\n'
bad_mapping binary "binary:1: a NUL byte: not a text file" '\0\1\2\n'
bad_mapping empty "empty: no placement in the file (empty, or only comments)" '# nothing\n\n'
bad_mapping bad-slot "bad-slot:1: slot 4, but host node0 has 4 leaves (slots 0 to 3)" 'rank 0=node0 slot=4\n'
bad_mapping slot-range "slot '0-3': expected one core index inside the node" 'rank 0=node0 slot=0-3\n'
bad_mapping bad-leaf "bad-leaf:1: leaf 8, but the machine has 8 leaves (0 to 7)" '0 8\n'
bad_mapping wrong-node "wrong-node:2: leaf 5 is on node 1, not on node 0" '0 0 0\n1 5 0\n'
bad_mapping bad-rank "bad-rank:1: rank 'x': expected an integer" 'rank x=node0 slot=0\n'
bad_mapping negative "negative:1: '-1 2': not a line of any format" '-1 2\n'
bad_mapping empty-entry "empty-entry:1: '0,,1': an empty entry between commas" '0,,1\n'
bad_mapping backwards "range '5-2': the first rank is above the last" '5-2\n'
bad_mapping mpich-count "'node0:0': expected a number of ranks >= 1" 'node0:0\n'
expect_error missing-mapping "--mapping $tmp/none.txt: No such file or directory" \
  "$cli" eval --machine "node:2 core:4" --pattern ring:8:4 --mapping "$tmp/none.txt"
rm -rf "$tmp"

# The fuzz harness: eval and map end to end with every mapper of the build.
# MPITOPO_CLI_FUZZ_SEED and MPITOPO_CLI_FUZZ_COUNT make other and longer runs.
if command -v python3 >/dev/null; then
  if ! python3 "$(dirname "$0")/fuzz_cli.py" --cli "$cli" --seed "${MPITOPO_CLI_FUZZ_SEED:-1}" \
      --count "${MPITOPO_CLI_FUZZ_COUNT:-300}" --budget 45; then
    failures=$((failures + 1))
  fi
fi

# ptram (issue 17), by hand: cart:2x4 along dimension 0 only pairs rank r with r+4. Block sends
# all 8 one-byte messages over the top of ktree:2,2 (4 channels each: HB 32, 16 channels of 2
# bytes: MC 2, NZCA 2, NZCV 0, hybrid 36); ptram keeps every pair on one node (all 0), the same
# placement in map as in eval, every time. Without --network it says what it needs.
ptram=(--machine "node:4 core:2" --pattern "cart:2x4:open:offsets=1,0;-1,0" --network ktree:2,2)
check ptram-eval "$cli" eval "${ptram[@]}" --mapper block,ptram
expect_in ptram-eval "  hybrid (weights 1,1,1,1)                             36                      0"
expect_in ptram-eval "  max congestion (MC)                                   2                      0"
check ptram-map "$cli" map "${ptram[@]}" --mapper ptram --format plain
ptram_map=$out
if ! awk '{ node[$1] = $3 } END { for (r = 0; r < 4; r++) if (node[r] != node[r + 4]) exit 1; exit NR != 8 }' \
    <<<"$ptram_map"; then echo "FAIL ptram-map: a pair split over two nodes: $ptram_map"; failures=$((failures + 1)); fi
check ptram-map-again "$cli" map "${ptram[@]}" --mapper ptram --format plain
if [ "$out" != "$ptram_map" ]; then echo "FAIL ptram-map-again: another placement"; failures=$((failures + 1)); fi
expect_error ptram-no-network "ptram needs a network" "$cli" map --machine "node:4 core:2" \
  --pattern "cart:2x4:open:offsets=1,0;-1,0" --mapper ptram

# The sub-communicator all-to-all pattern by description: alltoall:4x2:1,0
# is 2 columns of 4 processes, each all-to-all: 2 x 4 x 3 = 24 edges.
check alltoall-pattern "$cli" eval --machine "node:2 core:4" --pattern alltoall:4x2:1,0 --mapper identity
expect_in alltoall-pattern "pattern:   alltoall:4x2:1,0 (8 processes, 24 directed edges)"
# The HHC pattern on its own network: hhc:3 is a 3-cube (12 links) and its
# centre (8 links), 40 directed edges, every one a single channel: hop-bytes
# 40, MC 1.
check hhc-pattern "$cli" eval --machine "node:9 core:1" --pattern hhc:3 --network hhc:3 --mapper identity
expect_in hhc-pattern "pattern:   hhc:3 (9 processes, 40 directed edges)"
expect_in hhc-pattern "  hop-bytes                                            40"
expect_in hhc-pattern "  max congestion (MC)                                   1"
# Collective-aware reordering (issue 19): the patterns of the collective algorithms, the heuristics
# as mappers; on a launch cyclic over nodes, RMH and RDMH lower the weighted cost of their algorithm
# (ring: every message leaves its node under rr, 8 of 64 after RMH), with and without a network.
coll_cost() { # coll_cost MAPPER: the weighted cost of MAPPER in the JSON in $out
  awk -v m="\"name\": \"$1\"" 'index($0, m) { sub(/.*"cost": /, ""); sub(/,.*/, ""); print; exit }' <<<"$out"
}
coll_cmp() { # coll_cmp NAME A B OP: compare the costs of mappers A and B (OP: lt or le)
  local a b; a=$(coll_cost "$2"); b=$(coll_cost "$3")
  if ! awk -v a="$a" -v b="$b" -v op="$4" 'BEGIN { exit !(a != "" && b != "" && (op == "lt" ? a + 0 < b + 0 : a + 0 <= b + 0)) }'; then
    echo "FAIL $1: cost of $2 ($a) not $4 that of $3 ($b)"; failures=$((failures + 1)); fi
}
coll_m=(--machine "node:8 socket:2 core:4" --placement rr --json)
check coll-ring "$cli" eval "${coll_m[@]}" --pattern coll:allgather-ring:64:1024 --mapper identity,rmh,tree
expect_in coll-ring '"nedges": 64'
coll_cmp coll-ring rmh identity lt
check coll-rd "$cli" eval "${coll_m[@]}" --pattern coll:allgather-rd:64 --mapper identity,rdmh,rmh,bbmh,bgmh,tree \
  --network ktree:4,2
expect_in coll-rd '"nedges": 384'
coll_cmp coll-rd rdmh identity le
check coll-binomial "$cli" eval "${coll_m[@]}" --pattern coll:gather-binomial:48:64 --mapper identity,bgmh,bbmh
expect_in coll-binomial '"nedges": 47'
expect_error coll-rdmh-p "p = 48: RDMH (recursive doubling) needs a power of two" "$cli" eval "${coll_m[@]}" \
  --pattern coll:allgather-bruck:48 --mapper rdmh
expect_error coll-rd-pattern "recursive doubling needs a power of two" "$cli" eval "${coll_m[@]}" \
  --pattern coll:allgather-rd:48 --mapper identity
# Slurm's topology as the machine above the nodes (issue 32): 4 leaf switches over 16 nodes,
# round-robin launch: the mappers at least halve the traffic leaving the switches (160 -> 64);
# --hosts (a Slurm host list) restricts the file to a job's nodes, whose names the rankfile
# then carries; errors name the file and line.
check slurm-eval "$cli" eval --machine "slurm:$data/slurm/leaf4x16/topology.conf core:4" --pattern cart:8x8 \
  --placement rr --mapper identity,cart,tree
expect_in slurm-eval "machine:   switch:4 node:4 core:4 (64 leaves)"
expect_in slurm-eval "  weight crossing switch                              160                     64                     64"
check slurm-tree "$cli" eval --machine "slurm:$data/slurm/tree.conf,socket:2,core:2" --pattern cart:40 --mapper identity
expect_in slurm-tree "machine:   switch2:2@10 switch:[1..2]@4 node:[3..4]@3 socket:2@2 core:2@1"
check slurm-hosts "$cli" map --machine "slurm:$data/slurm/tree.conf core:2" --hosts "big009,node[01-02],gpu7" \
  --pattern cart:8 --format openmpi-rankfile
expect_in slurm-hosts "rank 0=node01 slot=0"
expect_in slurm-hosts "=big009 slot=1"
expect_error slurm-host-unknown "host 1, node99, is not a node of the file" \
  "$cli" eval --machine "slurm:$data/slurm/tree.conf core:2" --hosts "node01,node99" --pattern cart:4
expect_error slurm-loop "loop.conf:3: switches form a loop through switch s1" \
  "$cli" eval --machine "slurm:$data/slurm/loop.conf core:2" --pattern cart:4
expect_error slurm-hostlist "--hosts 'node[1-': '[' at column 5 without its ']'" \
  "$cli" eval --machine "slurm:$data/slurm/tree.conf core:2" --hosts "node[1-" --pattern cart:4
expect_error slurm-node-topology "not with a slurm: machine" \
  "$cli" eval --machine "slurm:$data/slurm/tree.conf" --node-topology this --pattern cart:4

if [ "$failures" -ne 0 ]; then echo "FAIL cli: $failures check(s) failed"; exit 1; fi
echo "PASS cli"

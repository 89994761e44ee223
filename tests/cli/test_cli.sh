#!/usr/bin/env bash
# CLI tests: Table 3 of Gropp (EuroMPI'18) reproduced, JSON shape, errors.
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

expect_error bad-machine "node:0" "$cli" eval --machine "node:0 core:4" --pattern cart:4x4
expect_error bad-pattern "cart:4xq" "$cli" eval --machine "node:4 core:4" --pattern cart:4xq
expect_error missing-file "/nonexistent" "$cli" eval --machine "node:4 core:4" --pattern /nonexistent
expect_error too-many "16 processes" "$cli" eval --machine "node:2 core:4" --pattern cart:4x4
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

if [ "$failures" -ne 0 ]; then echo "FAIL cli: $failures check(s) failed"; exit 1; fi
echo "PASS cli"

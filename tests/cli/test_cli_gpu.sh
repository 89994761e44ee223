#!/usr/bin/env bash
# CLI tests of the GPU options (issue 20): eval --gpu-pattern/--gpus (the
# strategies side by side, the JSON contract: mappers gpu-default,
# strategy1, strategy2, magc each with "gpu": {max_congestion, hop_bytes}),
# map --gpu-pattern (the fourth column of the plain format, --devices), and
# bad input (missing --gpus, an XML without GPUs, patterns of different
# sizes, formats without a GPU column) giving a clear error and exit 1.
#   test_cli_gpu.sh MPITOPO_CLI TEST_DATA_DIR
set -u
cli=$1
data=$2
failures=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL $1"; failures=$((failures + 1)); }
check() { # check NAME COMMAND... ; expects success
  local name=$1; shift
  local status=0; out=$("$@" 2>&1) || status=$?
  if [ "$status" != 0 ]; then fail "$name: exit status $status: $out"; return 1; fi
}
expect_in() { # expect_in NAME NEEDLE
  grep -qF -- "$2" <<<"$out" || fail "$1: output lacks '$2': $out"
}
expect_error() { # expect_error NAME NEEDLE COMMAND... ; exit status 1 and NEEDLE on stderr
  local name=$1 needle=$2 status=0; shift 2
  out=$("$@" 2>&1) || status=$?
  if [ "$status" != 1 ]; then fail "$name: exit status $status, expected 1: $out"; return; fi
  expect_in "$name" "$needle"
}

A="package:2@38,switch:2@16,gpu:2@16" # 8 GPUs per node (the thesis's cluster B)
machine="node:4 package:2 core:4"     # 8 cores per node, 32 processes
cpu=cart:4x8
gpu="cart:8x4:weights=1000,10"
base=(--machine "$machine" --pattern "$cpu" --gpu-pattern "$gpu" --gpus "$A")

# The table: the GPU rows and every strategy in the header.
check table "$cli" eval "${base[@]}"
expect_in table "gpus:      "
expect_in table "GPU tree: max congestion"
expect_in table "GPU tree: hop-bytes"
for m in gpu-default strategy1 strategy2 magc; do expect_in table "$m"; done

# The JSON contract, and MAGC never worse than the default on the GPU tree.
check json "$cli" eval "${base[@]}" --json
if command -v python3 >/dev/null; then
  python3 - "$out" <<'PY' || fail "json: python check failed"
import json, sys
d = json.loads(sys.argv[1])
ms = {m["name"]: m for m in d["mappers"]}
for name in ("gpu-default", "strategy1", "strategy2", "magc"):
    assert name in ms, ("missing mapper", name, list(ms))
for name, m in ms.items():
    g = m["gpu"]
    assert set(g) == {"max_congestion", "hop_bytes"}, g
    assert g["max_congestion"] >= 0 and g["hop_bytes"] >= 0, g
    assert "levels" in m and "cost" in m
assert set(ms) <= {"gpu-default", "strategy1", "strategy2", "magc", "magc:scotch"}, list(ms)
dflt = ms["gpu-default"]["gpu"]
assert dflt["max_congestion"] > 0, dflt
assert ms["magc"]["gpu"]["max_congestion"] <= dflt["max_congestion"] * (1 + 1e-12), ms["magc"]
assert d["gpus_per_node"] == 8, d
PY
fi
# --mapper picks strategies; no "gpu" key without --gpu-pattern.
check json-pick "$cli" eval "${base[@]}" --mapper gpu-default,magc --json
grep -q '"strategy1"' <<<"$out" && fail "json-pick: strategy1 not asked for"
expect_in json-pick '"gpu-default"'
check json-nogpu "$cli" eval --machine "$machine" --pattern "$cpu" --mapper identity --json
grep -q '"gpu"' <<<"$out" && fail "json-nogpu: a gpu key without --gpu-pattern"

# map: plain gains a fourth column, the local GPU of each rank; --devices
# writes one line per rank with the same index.
check map-plain "$cli" map "${base[@]}" --devices "$tmp/devices.txt"
printf '%s\n' "$out" >"$tmp/plain.txt"
awk -v g=8 -v n=32 '
  NF != 4 { print "line " NR " has " NF " columns"; bad = 1 }
  $4 < 0 || $4 >= g { print "rank " $1 ": GPU " $4 " out of range"; bad = 1 }
  { if (seen[$3 "," $4]++) { print "node " $3 " GPU " $4 " given twice"; bad = 1 } rows++ }
  END { if (rows != n) { print rows " rows"; bad = 1 } exit bad }' "$tmp/plain.txt" || fail "map-plain: $(cat "$tmp/plain.txt")"
awk '{ print $4 }' "$tmp/plain.txt" | cmp -s - "$tmp/devices.txt" || fail "map-plain: --devices differs from the fourth column"
check map-rankfile "$cli" map "${base[@]}" --format openmpi-rankfile --devices "$tmp/dev2.txt"
expect_in map-rankfile "rank 0="
[ "$(wc -l <"$tmp/dev2.txt")" = 32 ] || fail "map-rankfile: --devices has $(wc -l <"$tmp/dev2.txt") lines"
# Without --gpu-pattern the plain format keeps three columns.
check map-nogpu "$cli" map --machine "$machine" --pattern "$cpu"
awk 'NF != 3 { exit 1 }' <<<"$out" || fail "map-nogpu: not three columns"
# The DGX-2 export: 16 GPUs per node.
if [ -f "$data/hwloc/nvidiaDGX2.xml" ]; then
  check dgx2 "$cli" eval --machine "node:2 core:16" --pattern cart:4x8 --gpu-pattern cart:4x8 \
    --gpus "$data/hwloc/nvidiaDGX2.xml" --mapper gpu-default,magc
  expect_in dgx2 "(16 per node)"
fi

# Bad input.
expect_error no-gpus "needs --gpus" "$cli" eval --machine "$machine" --pattern "$cpu" --gpu-pattern "$gpu"
expect_error no-gpus-map "needs --gpus" "$cli" map --machine "$machine" --pattern "$cpu" --gpu-pattern "$gpu"
expect_error no-gpu-pattern "needs --gpu-pattern" "$cli" eval --machine "$machine" --pattern "$cpu" --gpus "$A"
expect_error sizes "both must describe the same processes" "$cli" eval --machine "$machine" --pattern "$cpu" \
  --gpu-pattern cart:4x4 --gpus "$A"
expect_error bad-desc "--gpus 'gpu:0'" "$cli" eval --machine "$machine" --pattern "$cpu" --gpu-pattern "$gpu" \
  --gpus gpu:0
expect_error missing-file "--gpu-pattern '$tmp/none.txt'" "$cli" eval "${base[@]/$gpu/$tmp/none.txt}"
expect_error devices-alone "--devices" "$cli" map --machine "$machine" --pattern "$cpu" --devices "$tmp/d.txt"
expect_error format-no-devices "needs --devices FILE" "$cli" map "${base[@]}" --format mpich-hosts
expect_error mapping-gpu "not with --gpu-pattern" "$cli" eval "${base[@]}" --mapping "$tmp/plain.txt"
expect_error cpu-mapper "tree" "$cli" eval "${base[@]}" --mapper tree
if command -v lstopo-no-graphics >/dev/null &&
   lstopo-no-graphics -i "package:1 core:2" --of xml "$tmp/nogpu.xml" 2>/dev/null; then
  expect_error xml-without-gpus "--gpus '$tmp/nogpu.xml'" "$cli" eval --machine "$machine" --pattern "$cpu" \
    --gpu-pattern "$gpu" --gpus "$tmp/nogpu.xml"
fi

if [ "$failures" -ne 0 ]; then echo "FAIL cli_gpu: $failures check(s) failed"; exit 1; fi
echo "PASS cli_gpu"

#!/usr/bin/env bash
# 'mpitopo platform' under SimGrid: the command's help and errors, then, on
# small networks of every kind, that SMPI loads the platform's links exactly
# as mpitopo's model loads its channels and that the link SimGrid finds
# busiest is a channel at MC (check_routes.py). Needs smpicc, smpirun and
# python3; without them it exits 77, which ctest reports as skipped.
# Usage: test_simgrid.sh MPITOPO_CLI
set -uo pipefail
cli=$1
for tool in smpicc smpirun python3; do
  if ! command -v $tool >/dev/null; then
    echo "SKIP: $tool not found (SimGrid's SMPI and python3 are needed)"
    exit 77
  fi
done
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# The command line ---------------------------------------------------------------
out=$("$cli" platform --help) || fail "platform --help exits $?"
[ "$(head -c 24 <<<"$out")" = "Usage: mpitopo platform " ] || fail "platform --help: no Usage line"
grep -q "^Options:" <<<"$out" || fail "platform --help: no Options section"
[ "$("$cli" help platform)" = "$out" ] || fail "'help platform' differs from 'platform --help'"
"$cli" --help | grep -q "^  platform " || fail "the main help lists no platform command"
expect_error() { # NAME MESSAGE ARGS...
  local name=$1 msg=$2 err
  shift 2
  if err=$("$@" 2>&1 >/dev/null); then fail "$name: exits 0"; fi
  grep -qF -- "$msg" <<<"$err" || fail "$name: '$msg' not in: $err"
}
expect_error no-network "platform needs --network DESC" "$cli" platform
expect_error bad-network "--network 'mesh:0x3'" "$cli" platform --network mesh:0x3
expect_error too-many "3090 hosts need 9545010 routes, more than --max-routes 1048576" "$cli" platform --network gpc
expect_error nodes "--nodes 10: the network 'mesh:3x3' has only 9 end nodes" "$cli" platform --network mesh:3x3 --nodes 10
expect_error bandwidth "--bandwidth '3x'" "$cli" platform --network mesh:3x3 --bandwidth 3x
expect_error loopback "--loopback-bandwidth '0GBps'" "$cli" platform --network mesh:3x3 --loopback-bandwidth 0GBps
expect_error latency "--latency '1'" "$cli" platform --network mesh:3x3 --latency 1
expect_error option "unknown option '--frobnicate'" "$cli" platform --network mesh:3x3 --frobnicate 1
xml=$("$cli" platform --network ktree:2,2 --cores 4 --bandwidth 2.5GBps --latency 1us) || fail "ktree:2,2 exits $?"
[ "$(grep -c '<host ' <<<"$xml")" = 4 ] || fail "ktree:2,2: not 4 hosts"
[ "$(grep -c '<route ' <<<"$xml")" = 16 ] || fail "ktree:2,2: not 4 x 3 routes and 4 loopbacks"
grep -q '<host id="n3" speed="1Gf" core="4"/>' <<<"$xml" || fail "ktree:2,2: host n3 with 4 cores"
grep -q 'bandwidth="2.5GBps" latency="1us"' <<<"$xml" || fail "ktree:2,2: links at 2.5GBps, 1us"
"$cli" platform --network mesh:2x2 -o "$work/m.xml" && grep -q '</platform>' "$work/m.xml" || fail "-o FILE"

# SimGrid loads the links as the model loads the channels ------------------------------
smpicc -O1 -o "$work/replay" "$here/replay.c" || { echo "FAIL: smpicc replay.c"; exit 1; }
# hot N: every node sends to node 0, node i 100 kB times i (one channel at MC).
hot() {
  echo "mpitopo-pattern 1 $1"
  for ((i = 1; i < $1; i++)); do echo "$i 0 $((100000 * i)) 1"; done
}
# mixed N: two partners per node, bytes varying (MC shared by several channels).
mixed() {
  echo "mpitopo-pattern 1 $1"
  for ((i = 0; i < $1; i++)); do
    for d in $(((3 * i + 1) % $1)) $(((5 * i + 2) % $1)); do
      [ $d != $i ] && echo "$i $d $((100000 * (1 + (7 * i + d) % 13))) 1"
    done
  done
}
for n in 6 8 9 12 64; do hot $n >"$work/hot$n.txt"; mixed $n >"$work/mixed$n.txt"; done
run() { python3 "$here/check_routes.py" "$cli" "$work/replay" "$@" "$work" || failures=$((failures + 1)); }
run mesh:3x3 "$work/hot9.txt" --unique --bound
run mesh:3x3 "$work/mixed9.txt"
run torus:3x3 "$work/mixed9.txt"
run mesh:3x3:cap=2 "$work/hot9.txt" --unique --bound
run ktree:2,3 "$work/hot8.txt" --unique --bound
run ktree:2,3 "$work/mixed8.txt"
run "fattree:2;4,2;1,2;1,2" "$work/mixed8.txt"
run dragonfly:1,2,1 "$work/hot6.txt" --unique
run dragonfly:1,2,1 "$work/mixed6.txt"
run dragonfly:2,2,1 "$work/mixed12.txt"
run gpc "$work/mixed64.txt"

# The checks can fail: a platform whose route n0 -> n4 on mesh:3x3 goes along
# dimension 1 first (as long, other links) must be caught.
cat >"$work/tampered" <<TAMPER
#!/usr/bin/env bash
"$cli" "\$@" || exit
[ "\$1" = platform ] || exit 0
python3 - "\${@: -1}" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
ids = {m.group(2): m.group(1) for m in re.finditer(r'<link id="(c[0-9]+)"[^>]*><prop id="channel" value="([^"]*)"', s)}
new = '<link_ctn id="%s"/><link_ctn id="%s"/>' % (ids['n0-&gt;n1 d1+'], ids['n1-&gt;n4 d0+'])
s = re.sub(r'(<route src="n0" dst="n4" symmetrical="NO">).*?(</route>)', r'\g<1>' + new + r'\g<2>', s)
open(sys.argv[1], 'w').write(s)
PY
TAMPER
chmod +x "$work/tampered"
printf 'mpitopo-pattern 1 9\n0 4 900000 1\n1 2 100000 1\n3 4 300000 1\n' >"$work/tamper9.txt"
if python3 "$here/check_routes.py" "$work/tampered" "$work/replay" mesh:3x3 "$work/tamper9.txt" "$work" >"$work/tamper.out"; then
  fail "a platform with another route for n0 -> n4 passes check_routes.py"
else
  grep -q "FAIL   max_congestion" "$work/tamper.out" || fail "tampered platform: no MC failure"
  echo "ok   a platform with another route for n0 -> n4 fails check_routes.py (as it must)"
fi

if [ $failures -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "PASS simgrid"

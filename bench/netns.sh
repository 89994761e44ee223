#!/usr/bin/env bash
# Run a benchmark of bench/ (halo, ring, ...) on real TCP between emulated
# hosts: HOSTS Linux network namespaces, each with its own hostname (UTS
# namespace) and one veth link to a bridge in a namespace of its own, every
# link shaped by tc tbf to RATE in both directions (and delayed by DELAY
# with -d). Open MPI starts one orted per namespace through a launch agent
# (ip netns exec), so ranks of one "host" use shared memory (vader) and
# ranks of different hosts TCP over the shaped link: the node's injection
# bandwidth is the bottleneck, as on a cluster. mpitopo finds the nodes
# itself (MPI_COMM_TYPE_SHARED), no emulation. halo_netns.sh and
# ring_netns.sh call this with their defaults.
#
#   bench/netns.sh -P PROGRAM [-n HOSTS] [-p PPN] [-r RATE] [-d DELAY] [-m PLACEMENTS] [-b BUILD]
#                  [-a DEFAULT-ARGS] [-W WRAPPER] [-M MPIRUN-ARGS] [-- PROGRAM-OPTIONS]
#   bench/netns.sh -X PATH [same options]
#   bench/netns.sh -c COMMAND [-n HOSTS] [-p PPN] [-r RATE] [-d DELAY]
#
#   -P PROGRAM     the benchmark, BUILD/bench/PROGRAM (halo, ring)
#   -X PATH        any program instead (a path, or a name found in PATH)
#   -W WRAPPER     words put before mpirun, run inside the first host, e.g.
#                  "mpitopo run --cache DIR --"
#   -M ARGS        more mpirun options (words), e.g. "-x LD_PRELOAD=LIB"
#   -c COMMAND     set the hosts up, then run the shell command COMMAND
#                  (bash -c) instead of mpirun, with NETNS_EXEC (a script:
#                  "$NETNS_EXEC CMD ARGS..." runs CMD inside the first host,
#                  under its hostname), NETNS_MPIRUN_ARGS (mpirun's options
#                  for these hosts: run as root, agent, TCP interfaces;
#                  words), NETNS_HOSTFILE, NETNS_HOSTS and NETNS_PPN
#                  exported; e.g. '$NETNS_EXEC mpirun.openmpi
#                  $NETNS_MPIRUN_ARGS -n 12 --hostfile $NETNS_HOSTFILE
#                  --map-by node PROGRAM'. Host k (0-based) is namespace
#                  mtb-hk with hostname mtb-hk and address 10.77.0.(k+1);
#                  the hostfile names it mtb-hk (line k+1), and so must a
#                  rankfile.
#   -n HOSTS       namespaces ("hosts"), default 8
#   -p PPN         ranks per host, default 8
#   -r RATE        tbf rate of every link, each way (tc syntax), default 100mbit
#   -d DELAY       also delay every packet on every link by DELAY each way
#                  (tc netem, e.g. 100us; default none)
#   -m PLACEMENTS  Open MPI mappings to run, among "block" (--map-by slot) and
#                  "rr" (--map-by node), default "block rr"
#   -b BUILD       build directory holding bench/PROGRAM, default build-bench
#   -a ARGS        program options used when none follow "--"
#
# Needs root (ip netns, tc). Creates namespaces mtb-sw and mtb-h0.. and
# addresses 10.77.0.1.. (only inside them); everything is removed on exit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
hosts=8 ppn=8 rate=100mbit delay= placements="block rr" build=$root/build-bench prog= defaults=
bin= wrapper= mpiextra= command=
while getopts "P:X:W:M:c:n:p:r:d:m:b:a:h" opt; do
  case $opt in
  P) prog=$OPTARG ;;
  X) bin=$OPTARG ;;
  W) wrapper=$OPTARG ;;
  M) mpiextra=$OPTARG ;;
  c) command=$OPTARG ;;
  a) defaults=$OPTARG ;;
  n) hosts=$OPTARG ;;
  p) ppn=$OPTARG ;;
  r) rate=$OPTARG ;;
  d) delay=$OPTARG ;;
  m) placements=$OPTARG ;;
  b) build=$OPTARG ;;
  *) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
args=("$@")
# shellcheck disable=SC2206 # the defaults are words on purpose
((${#args[@]})) || args=($defaults)
if [[ -n $command ]]; then
  :
elif [[ -n $bin ]]; then
  [[ $bin == */* ]] || bin=$(command -v "$bin") || { echo "netns.sh: -X $OPTARG: not found" >&2; exit 1; }
  [[ -x $bin ]] || { echo "netns.sh: $bin is not an executable" >&2; exit 1; }
  prog=$bin
else
  [[ -n $prog ]] || { echo "netns.sh: -P PROGRAM, -X PATH or -c COMMAND is required" >&2; exit 2; }
  bin=$build/bench/$prog
  [[ -x $bin ]] || { echo "netns.sh: $bin not built (cmake --build $build)" >&2; exit 1; }
fi
# shellcheck disable=SC2206 # words on purpose
wrap=($wrapper) extra=($mpiextra)
((EUID == 0)) || { echo "netns.sh: needs root (ip netns, tc)" >&2; exit 1; }
((hosts >= 1 && hosts <= 200)) || { echo "netns.sh: -n must be 1..200" >&2; exit 1; }

ns_sw=mtb-sw
subnet=10.77.0
tmp=$(mktemp -d /tmp/mtb-netns.XXXXXX)
created=()
mpirun_pid=
cleanup() {
  local ns
  # mpirun takes its daemons and ranks down with it.
  if [[ -n $mpirun_pid ]]; then
    kill -TERM "$mpirun_pid" 2>/dev/null || true
    wait "$mpirun_pid" 2>/dev/null || true
  fi
  for ns in "${created[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for ((k = 0; k < hosts; k++)); do
  if ip netns list | grep -qw "mtb-h$k"; then
    echo "netns.sh: namespace mtb-h$k exists already (another run?)" >&2
    exit 1
  fi
done
ip netns list | grep -qw "$ns_sw" && { echo "netns.sh: namespace $ns_sw exists already" >&2; exit 1; }

# The switch: a bridge in its own namespace.
ip netns add "$ns_sw"
created+=("$ns_sw")
ip -n "$ns_sw" link set lo up
ip -n "$ns_sw" link add br0 type bridge
ip -n "$ns_sw" link set br0 up
# A small bucket (64 KiB, 5 ms at 100 Mbit/s): a node sends megabytes per
# exchange, so a full bucket between timings hardly helps anyone.
burst=64kb
# shape NS DEV: rate limit, behind a fixed delay when -d is given.
shape() {
  if [[ -n $delay ]]; then
    ip netns exec "$1" tc qdisc add dev "$2" root handle 1: netem delay "$delay"
    ip netns exec "$1" tc qdisc add dev "$2" parent 1: handle 2: tbf rate "$rate" burst "$burst" latency 200ms
  else
    ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$rate" burst "$burst" latency 200ms
  fi
}
for ((k = 0; k < hosts; k++)); do
  ns=mtb-h$k
  ip netns add "$ns"
  created+=("$ns")
  ip link add "mtb-v$k" type veth peer name "mtb-p$k"
  ip link set "mtb-v$k" netns "$ns"
  ip link set "mtb-p$k" netns "$ns_sw"
  ip -n "$ns" link set lo up
  ip -n "$ns" link set "mtb-v$k" name eth0
  ip -n "$ns" addr add "$subnet.$((k + 1))/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns_sw" link set "mtb-p$k" master br0 up
  # Host -> switch (egress of eth0) and switch -> host (egress of the bridge port).
  shape "$ns" eth0
  shape "$ns_sw" "mtb-p$k"
  # Hosts by name, the name each namespace gives itself: Open MPI calls the
  # host it runs on by its hostname, so a rankfile (mpitopo map, mpitopo
  # run) must name every host the same way for all of them to match.
  echo "$ns slots=$ppn" >>"$tmp/hostfile"
done

# Open MPI's rsh launch agent: "agent HOST COMMAND..." runs COMMAND (a
# shell command line, as ssh would) inside HOST's namespace, under the
# namespace's own hostname.
cat >"$tmp/agent" <<'AGENT'
#!/bin/sh
host=$1
shift
case $host in
mtb-h*) ns=$host ;;
*) ns=mtb-h$((${host##*.} - 1)) ;;
esac
exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$1"; shift; exec sh -c "$*"' sh "$ns" "$@"
AGENT
chmod +x "$tmp/agent"

# "inns CMD ARGS...": CMD inside the first host, under its hostname.
cat >"$tmp/inns" <<'INNS'
#!/bin/sh
exec ip netns exec mtb-h0 unshare --uts sh -c 'hostname mtb-h0; shift; exec "$@"' sh - "$@"
INNS
chmod +x "$tmp/inns"
mpiopts=(--allow-run-as-root --oversubscribe --mca plm_rsh_agent "$tmp/agent" --mca plm_rsh_no_tree_spawn 1
  --mca btl tcp,vader,self --mca btl_tcp_if_include "$subnet.0/24" --mca oob_tcp_if_include "$subnet.0/24"
  --mca mpi_yield_when_idle 1)

echo "== $hosts hosts (network namespaces) x $ppn ranks, links shaped to $rate each way (tc tbf)${delay:+, delay $delay each way (netem)}, $(date -u +%Y-%m-%dT%H:%MZ)"
if [[ -n $command ]]; then
  NETNS_EXEC=$tmp/inns NETNS_MPIRUN_ARGS="${mpiopts[*]}" NETNS_HOSTFILE=$tmp/hostfile NETNS_HOSTS=$hosts NETNS_PPN=$ppn \
    bash -c "$command" &
  mpirun_pid=$!
  wait "$mpirun_pid"
  mpirun_pid=
  exit 0
fi
for placement in $placements; do
  case $placement in
  block) map=slot ;;
  rr) map=node ;;
  *) echo "netns.sh: placement $placement is not block or rr" >&2; exit 1 ;;
  esac
  echo
  echo "-- placement $placement (mpirun --map-by $map): ${wrap[*]}${wrap:+ }$prog ${args[*]}"
  "$tmp/inns" "${wrap[@]}" mpirun.openmpi "${mpiopts[@]}" -n $((hosts * ppn)) --hostfile "$tmp/hostfile" \
    --map-by "$map" "${extra[@]}" "$bin" "${args[@]}" &
  # In the background, so that a signal reaches the trap at once.
  mpirun_pid=$!
  wait "$mpirun_pid"
  mpirun_pid=
done

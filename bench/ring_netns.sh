#!/usr/bin/env bash
# bench/ring on real TCP between emulated hosts (network namespaces, veth
# links shaped by tc tbf; bench/netns.sh sets them up and says more).
#
#   bench/ring_netns.sh [-n HOSTS] [-p PPN] [-r RATE] [-d DELAY] [-m PLACEMENTS] [-b BUILD] [-- RING-OPTIONS]
#
#   defaults: 8 hosts x 8 ranks (the paper's 8 nodes), 100mbit, "block rr",
#   build-bench, RING-OPTIONS "-r 5". Needs root.
exec "$(dirname "$0")/netns.sh" -P ring -n 8 -p 8 -a "-r 5" "$@"

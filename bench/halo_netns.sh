#!/usr/bin/env bash
# bench/halo on real TCP between emulated hosts (network namespaces, veth
# links shaped by tc tbf; bench/netns.sh sets them up and says more).
#
#   bench/halo_netns.sh [-n HOSTS] [-p PPN] [-r RATE] [-d DELAY] [-m PLACEMENTS] [-b BUILD] [-- HALO-OPTIONS]
#
#   defaults: 4 hosts x 16 ranks, 100mbit, "block rr", build-bench,
#   HALO-OPTIONS "-L 8,4096,65536,262144 -r 5 -i 4". Needs root.
exec "$(dirname "$0")/netns.sh" -P halo -n 4 -p 16 -a "-L 8,4096,65536,262144 -r 5 -i 4" "$@"

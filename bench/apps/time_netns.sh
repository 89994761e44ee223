#!/usr/bin/env bash
# Time to solution of real programs on real TCP between emulated hosts
# (bench/netns.sh: network namespaces, links shaped to RATE), round-robin
# launch (mpirun --map-by node; -m block: --map-by slot), side by side in
# one run:
#
#   native  the program alone
#   job     libmpitopo_shim.so with MPITOPO_REORDER=job
#   map     the launch placement by hand, what `mpitopo run` automates: the
#           warm-up's native trace mapped by `mpitopo map --placement rr
#           --format openmpi-rankfile`, then mpirun --rankfile FILE
#   rec     `mpitopo run --record --cache DIR --`: the shim records, the
#           program's run is unchanged (its cost: rec against native)
#   app     `mpitopo run --apply --cache DIR --`: relaunched with the
#           recorded placement (a rankfile)
#   (rec and app are skipped with a message while `mpitopo run --help` fails)
#
# First a warm-up round, not timed, with the tracer preloaded (native, job
# and map): the traced off-node bytes (ranks on different hosts) and the
# reference output. Then REPS rounds, each running every configuration once
# in the order above; every run's output is compared with the reference
# (GROMACS ener.edr byte for byte, LAMMPS thermo at %.17g). Printed: every
# run's wall time, then per program the median, minimum and maximum, the
# ratio native / config of the medians, the runs whose output matched, and
# the off-node bytes (mpitopo run: X -> Y from its stderr line).
#
#   bench/apps/time_netns.sh [-a APPS] [-k REPS] [-n HOSTS] [-p PPN] [-r RATE] [-m rr|block]
#                            [-w WORK] [-b BUILD] [-t TIMEOUT]
#
#   -a APPS     default "gromacs lammps" (bench/apps/lib.sh)
#   -k REPS     timed rounds, default 5
#   -n HOSTS    namespaces, default 3; -p PPN ranks per host, default 4
#   -r RATE     link rate each way, default 100mbit
#   -m PLACE    the launch placement, rr (default) or block
#   -w WORK     work directory, default /tmp/mpitopo-apps
#   -b BUILD    mpitopo build directory, default build
#   -t TIMEOUT  seconds before a run is stopped as hung, default 600
#
# Environment as check_emulated.sh (GMX_NSTEPS, LMP_STEPS, LMP_N, ...).
# Needs root; every namespace is removed on exit (bench/netns.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=bench/apps/lib.sh
. "$here/lib.sh"
apps="gromacs lammps" reps=5 hosts=3 ppn=4 rate=100mbit pl=rr work=/tmp/mpitopo-apps build=$root/build tmo=600
all_args=("$@")
while getopts "a:k:n:p:r:m:w:b:t:h" opt; do
  case $opt in
  a) apps=$OPTARG ;;
  k) reps=$OPTARG ;;
  n) hosts=$OPTARG ;;
  p) ppn=$OPTARG ;;
  r) rate=$OPTARG ;;
  m) pl=$OPTARG ;;
  w) work=$OPTARG ;;
  b) build=$OPTARG ;;
  t) tmo=$OPTARG ;;
  *) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
  esac
done
case $pl in
rr) mapby=node ;;
block) mapby=slot ;;
*) echo "time_netns.sh: -m $pl is not rr or block" >&2; exit 2 ;;
esac
build=$(cd "$build" && pwd)
mkdir -p "$work"
work=$(cd "$work" && pwd)
shim=$build/src/libmpitopo_shim.so tracer=$build/src/libmpitopo_trace.so mpitopo=$build/tools/mpitopo
for f in "$shim" "$tracer" "$mpitopo"; do
  [[ -e $f ]] || { echo "time_netns.sh: $f not built" >&2; exit 1; }
done

# Outside the namespaces: prepare the inputs, then run this script again
# inside bench/netns.sh's hosts.
if [[ -z ${NETNS_EXEC:-} ]]; then
  for app in $apps; do app_prepare "$app" "$work"; done
  exec "$root/bench/netns.sh" -n "$hosts" -p "$ppn" -r "$rate" \
    -c "$(printf '%q ' "$0" "${all_args[@]}" -b "$build" -w "$work")"
fi

np=$((hosts * ppn))
have_run=1
mpitopo_run_available "$mpitopo" || {
  have_run=0
  echo "time_netns.sh: '$mpitopo run --help' fails: rec and app (mpitopo run) are skipped"
}
configs="native job map"
((have_run)) && configs+=" rec app"
# shellcheck disable=SC2206 # words on purpose
mpiargs=($NETNS_MPIRUN_ARGS)
runs=$work/netns-runs
rm -rf "$runs" "$work/cache-netns"
mkdir -p "$runs"
times=$runs/times.txt
: >"$times"

# run_one APP CONFIG ROUND [traced]: prints "STATUS SECONDS".
run_one() {
  local app=$1 cfg=$2 k=$3 traced=${4:-} d pre=() wrap=() rc t0 t1 st
  d=$runs/$app-$cfg-$k
  mkdir -p "$d"
  case $cfg in
  job)
    if [[ -n $traced ]]; then pre=(-x "LD_PRELOAD=$(shim_preload "$shim" "$tracer")"); else pre=(-x "LD_PRELOAD=$shim"); fi
    pre+=(-x MPITOPO_REORDER=job) ;;
  native | map) [[ -z $traced ]] || pre=(-x "LD_PRELOAD=$tracer") ;;
  rec) wrap=("$mpitopo" run --record --cache "$work/cache-netns/$app" --) ;;
  app) wrap=("$mpitopo" run --apply --cache "$work/cache-netns/$app" --) ;;
  esac
  [[ -z $traced ]] || pre+=(-x "MPITOPO_TRACE_FILE=$d/trace.txt")
  app_argv "$app" "$work"
  t0=$(date +%s.%N)
  set +e
  local place=(--map-by "$mapby")
  [[ $cfg != map ]] || place=(--rankfile "$runs/$app.rankfile" --bind-to none)
  (cd "$d" && timeout -k 10 "$tmo" "$NETNS_EXEC" "${wrap[@]}" mpirun.openmpi "${mpiargs[@]}" -n "$np" \
    --hostfile "$NETNS_HOSTFILE" "${place[@]}" "${pre[@]}" "${APP_ARGV[@]}" >"$d/stdout" 2>"$d/stderr")
  rc=$?
  set -e
  t1=$(date +%s.%N)
  app_result "$app" "$d" >"$d/result.txt"
  if ((rc == 124 || rc == 137)); then st=hang
  elif ((rc != 0)); then st=rc$rc
  elif [[ ! -s $d/result.txt ]]; then st=no-output
  elif [[ ! -e $runs/$app-ref.txt ]]; then cp "$d/result.txt" "$runs/$app-ref.txt"; st=ok
  elif cmp -s "$d/result.txt" "$runs/$app-ref.txt"; then st=ok
  else st=differs
  fi
  echo "$st $(echo "$t1 - $t0" | bc)"
}

echo "time_netns.sh: $np ranks of Open MPI $(mpirun.openmpi --version 2>/dev/null | head -1 | awk '{print $NF}'), $hosts hosts x $ppn, --map-by $mapby ($pl), $reps rounds; work $work"
for app in $apps; do
  declare -A off=()
  app_argv "$app" "$work"
  echo
  echo "-- $app: ${APP_ARGV[*]}"
  app_configs=$configs
  for cfg in native job map; do
    opl=$pl
    if [[ $cfg == map ]]; then
      # The native trace mapped onto the hosts: what mpitopo run records.
      rm -f "$runs/$app.rankfile"
      { "$mpitopo" map --pattern "$runs/$app-native-0/trace.txt" --machine "node:$hosts core:$ppn" --placement "$pl" \
        --format openmpi-rankfile --hosts "$(cut -d' ' -f1 "$NETNS_HOSTFILE" | paste -sd,)" \
        --output "$runs/$app.rankfile" --verbose 2>&1 || true; } | sed -n '/^mpitopo/{s/^/   /;p;q}'
      if [[ ! -s $runs/$app.rankfile ]]; then
        echo "   no rankfile from mpitopo map: the map column is left out"
        app_configs=${app_configs/ map/}
        continue
      fi
      # The hosts share this box's cores: a slot=S beyond them makes Open
      # MPI 4.1's mpirun stop without a word; any core of the box will do.
      sed -i -E "s/slot=[0-9]+/slot=0-$(($(nproc) - 1))/" "$runs/$app.rankfile"
      opl=file:$runs/$app.rankfile
    fi
    read -r st t < <(run_one "$app" "$cfg" 0 traced)
    o=$(offnode_bytes "$runs/$app-$cfg-0/trace.txt" "$opl" "$hosts" "$ppn" 2>/dev/null | cut -d' ' -f1 || echo -)
    off[$cfg]=${o:--}
    printf '   warm-up (traced) %-6s %-9s %7.1f s  off-node bytes %s\n' "$cfg" "$st" "$t" "${off[$cfg]}"
  done
  for ((k = 1; k <= reps; k++)); do
    for cfg in $app_configs; do
      read -r st t < <(run_one "$app" "$cfg" "$k")
      line=
      if [[ $cfg == rec || $cfg == app ]]; then
        line=$(mpitopo_run_line "$runs/$app-$cfg-$k/stderr")
        xy=$(mpitopo_run_xy "$line")
        off[$cfg]="${xy% *}->${xy#* }"
      fi
      printf '   round %d %-6s %-9s %7.1f s  %s\n' "$k" "$cfg" "$st" "$t" "$line"
      echo "$app $cfg $k $st $t" >>"$times"
    done
  done
  echo
  printf '   %-8s %5s %9s %9s %9s %14s %8s  %s\n' config runs median/s min/s max/s native/config same-out off-node-bytes
  read -r nmed _ < <(awk -v a="$app" '$1 == a && $2 == "native" { print $5 }' "$times" | median_spread)
  for cfg in $app_configs; do
    read -r med lo hi < <(awk -v a="$app" -v c="$cfg" '$1 == a && $2 == c { print $5 }' "$times" | median_spread)
    n=$(awk -v a="$app" -v c="$cfg" '$1 == a && $2 == c' "$times" | wc -l)
    ok=$(awk -v a="$app" -v c="$cfg" '$1 == a && $2 == c && $4 == "ok"' "$times" | wc -l)
    ratio=$(awk -v a="$nmed" -v b="$med" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else print "-" }')
    printf '   %-8s %5s %9s %9s %9s %14s %8s  %s\n' "$cfg" "$n" "$med" "$lo" "$hi" "$ratio" "$ok/$n" "${off[$cfg]:--}"
  done
  unset off
done
echo
echo "raw times: $times; runs: $runs"

#!/usr/bin/env bash
# Correctness of real programs under the shim on emulated nodes: 12
# processes of Open MPI on this box, seen by mpitopo as 3 nodes x 4
# (MPITOPO_EMULATE), ranks laid block or round-robin on them
# (MPITOPO_EMULATE_PLACEMENT). For each program and placement:
#
#   native      the program alone: the reference output
#   trace       with libmpitopo_trace.so: the native traffic
#   shim        libmpitopo_shim.so with default settings (+ tracer)
#   job         the shim with MPITOPO_REORDER=job (+ tracer)
#   run-1/2     `mpitopo run --cache DIR --` twice (records, then applies);
#               skipped with a message while `mpitopo run --help` fails
#
# and prints one table: PASS when the run ended and its output (GROMACS:
# ener.edr byte for byte; LAMMPS: the thermo table at %.17g) equals the
# native run's, FAIL (timeout: no end within -t seconds, with the last step
# the program reported: "-" when none, a hang; rc N; output differs, with
# the diff's head below the table); off-node bytes: the tracer's
# point-to-point bytes between ranks on different emulated nodes (for
# mpitopo run, X -> Y from its stderr line).
#
#   bench/apps/check_emulated.sh [-a APPS] [-m PLACEMENTS] [-w WORK] [-b BUILD] [-t TIMEOUT]
#
#   -a APPS        default "gromacs lammps lammps-reorder" (bench/apps/lib.sh)
#   -m PLACEMENTS  default "block rr"
#   -w WORK        work directory (inputs cached, runs), default /tmp/mpitopo-apps
#   -b BUILD       mpitopo build directory (src/libmpitopo_shim.so,
#                  tools/mpitopo), default build
#   -t TIMEOUT     seconds before a run is stopped, default 300 (a run takes
#                  5-30 s on 2 busy cores)
#
# Environment: GMX, LMP (programs), GMX_NSTEPS (500), GMX_BOX (4.5 nm),
# LMP_STEPS (200), LMP_N (16), MPIRUN (mpirun.openmpi).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=bench/apps/lib.sh
. "$here/lib.sh"
apps="gromacs lammps lammps-reorder" placements="block rr" work=/tmp/mpitopo-apps build=$root/build tmo=300
while getopts "a:m:w:b:t:h" opt; do
  case $opt in
  a) apps=$OPTARG ;;
  m) placements=$OPTARG ;;
  w) work=$OPTARG ;;
  b) build=$OPTARG ;;
  t) tmo=$OPTARG ;;
  *) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd)
shim=$build/src/libmpitopo_shim.so tracer=$build/src/libmpitopo_trace.so mpitopo=$build/tools/mpitopo
for f in "$shim" "$tracer" "$mpitopo"; do
  [[ -e $f ]] || { echo "check_emulated.sh: $f not built" >&2; exit 1; }
done
: "${MPIRUN:=mpirun.openmpi}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nodes=3 ppn=4 np=12
export MPITOPO_EMULATE="node:$nodes core:$ppn"
mkdir -p "$work"
work=$(cd "$work" && pwd)
have_run=1
mpitopo_run_available "$mpitopo" || {
  have_run=0
  echo "check_emulated.sh: '$mpitopo run --help' fails: the mpitopo run rows are skipped" >&2
}

# shellcheck disable=SC2054 # "self,vader" is one argument
launcher=("$MPIRUN" --oversubscribe --mca btl self,vader --mca mpi_yield_when_idle 1 -n "$np")
table=$work/table.txt diffs=$work/diffs.txt
: >"$table"
: >"$diffs"
row() { printf '%-15s %-9s %-7s %-15s %7s %22s  %s\n' "$@" | tee -a "$table"; }

# run_one APP PLACEMENT CONFIG: one run in WORK/runs/APP-PLACEMENT-CONFIG.
run_one() {
  local app=$1 pl=$2 cfg=$3 d pre=() wrap=() rc t0 t1 status off="-" xy
  d=$work/runs/$app-$pl-$cfg
  rm -rf "$d" && mkdir -p "$d"
  case $cfg in
  trace) pre=(-x "LD_PRELOAD=$tracer") ;;
  shim) pre=(-x "LD_PRELOAD=$(shim_preload "$shim" "$tracer")") ;;
  job) pre=(-x "LD_PRELOAD=$(shim_preload "$shim" "$tracer")" -x MPITOPO_REORDER=job) ;;
  run-*) wrap=("$mpitopo" run --cache "$work/cache/$app-$pl" --) ;;
  esac
  # mpitopo run records by itself: nothing of ours in its way.
  [[ $cfg == native || $cfg == run-* ]] || pre+=(-x "MPITOPO_TRACE_FILE=$d/trace.txt")
  app_argv "$app" "$work"
  t0=$(date +%s.%N)
  set +e
  (cd "$d" && MPITOPO_EMULATE_PLACEMENT=$pl MPITOPO_VERBOSE=1 \
    timeout -k 10 "$tmo" "${wrap[@]}" "${launcher[@]}" "${pre[@]}" "${APP_ARGV[@]}" >"$d/stdout" 2>"$d/stderr")
  rc=$?
  set -e
  t1=$(date +%s.%N)
  app_result "$app" "$d" >"$d/result.txt"
  if ((rc == 124 || rc == 137)); then
    status="FAIL(timeout)"
  elif ((rc != 0)); then
    status="FAIL(rc$rc)"
  elif [[ ! -s $d/result.txt ]]; then
    status="FAIL(no-output)"
  elif [[ $cfg == native ]]; then
    status=ref
  elif cmp -s "$d/result.txt" "$work/runs/$app-$pl-native/result.txt"; then
    status=PASS
  else
    status="FAIL(differs)"
    { echo "== $app $pl $cfg: diff native $cfg"
      diff "$work/runs/$app-$pl-native/result.txt" "$d/result.txt" | head -20; } >>"$diffs"
  fi
  if [[ -s $d/trace.txt ]]; then
    read -r off _ < <(offnode_bytes "$d/trace.txt" "$pl" "$nodes" "$ppn")
  fi
  case $cfg in run-*)
    xy=$(mpitopo_run_xy "$(mpitopo_run_line "$d/stderr")")
    off="${xy% *}->${xy#* }" ;;
  esac
  local note
  note=$(grep -m1 -E '^mpitopo( run)?: ' "$d/stderr" 2>/dev/null || true)
  [[ $status != FAIL* ]] || note="last step $(app_progress "$app" "$d"); $note"
  row "$app" "$pl" "$cfg" "$status" "$(printf %.1f "$(echo "$t1 - $t0" | bc)")" "$off" "$note"
}

echo "== bench/apps/check_emulated.sh: $np processes of $MPIRUN, MPITOPO_EMULATE=\"$MPITOPO_EMULATE\", $(date -u +%Y-%m-%dT%H:%MZ)"
echo "   shim $shim; work $work"
row program placement config result "time/s" "off-node B" "first mpitopo line on stderr"
for app in $apps; do
  app_prepare "$app" "$work"
  for pl in $placements; do
    rm -rf "$work/cache/$app-$pl"
    for cfg in native trace shim job run-1 run-2; do
      if [[ $cfg == run-* ]] && ((!have_run)); then
        row "$app" "$pl" "$cfg" skip - - "mpitopo run not available in this build"
        continue
      fi
      run_one "$app" "$pl" "$cfg"
    done
  done
done
if [[ -s $diffs ]]; then
  echo
  echo "Differences from the native output:"
  cat "$diffs"
fi
echo
echo "table: $table; runs (stdout, stderr, trace, result): $work/runs"

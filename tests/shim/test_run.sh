#!/usr/bin/env bash
# mpitopo run, end to end on one host under emulation: a program that uses
# MPI_COMM_WORLD ranks it read from a reordered Cartesian communicator
# (shim_world_halo: hangs or fails if renumbered in the job) is recorded,
# then launched with the stored placement; the contract lines on standard
# error, the cache, and the bad cases.
#   test_run.sh CLI PROGRAM NP D0 D1
# From the environment (ctest): SHIM_FLAVOR, SHIM_MPIEXEC, SHIM_PRELOAD
# (a test-only layer the processes need, passed as the user would: -x /
# -genv LD_PRELOAD), MPITOPO_EMULATE with MPITOPO_EMULATE_PLACEMENT=rr.
set -u
cli=$1 prog=$2 np=$3 d0=$4 d1=$5
name=run
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL run: $*"; fails=$((fails + 1)); }
case $SHIM_FLAVOR in
openmpi)
    L=("$SHIM_MPIEXEC" --oversubscribe --allow-run-as-root --mca mpi_yield_when_idle 1 --mca btl self,vader)
    [ -n "${SHIM_PRELOAD:-}" ] && L+=(-x "LD_PRELOAD=$SHIM_PRELOAD") ;;
mpich)
    L=("$SHIM_MPIEXEC")
    [ -n "${SHIM_PRELOAD:-}" ] && L+=(-genv LD_PRELOAD "$SHIM_PRELOAD") ;;
esac
# run CACHE [mpitopo run options] -- [program args...]: sets out, err, rc
run() {
    local cache=$1
    shift
    local opts=()
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    "$cli" run --cache "$cache" "${opts[@]}" -- "${L[@]}" -n "$np" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    out=$(cat "$tmp/out")
    err=$(grep '^mpitopo run: ' "$tmp/err")
}
contract() { grep -cE '^mpitopo run: (recorded .* \(off-node bytes [0-9]+ -> [0-9]+ predicted\)|applied .* \(off-node bytes [0-9]+ -> [0-9]+\)|kept the launch placement \(.*\))$' "$tmp/err"; }

# 1. The first run records, the program's output unchanged.
c=$tmp/cache
run "$c" -- "$prog" "$d0" "$d1"
re='^mpitopo run: recorded (.*) \(off-node bytes ([0-9]+) -> ([0-9]+) predicted\)$'
line=$(grep -E "$re" "$tmp/err")
[[ $line =~ $re ]] || fail "first run: no 'recorded' line: $err"
entry=${BASH_REMATCH[1]} x=${BASH_REMATCH[2]} y=${BASH_REMATCH[3]}
[ "$rc" = 0 ] && [[ $out == *"PASS world_halo"* ]] || fail "first run: rc $rc, output '$out'"
[ "$(contract)" = 1 ] || fail "first run: $(contract) contract lines: $err"
[ -s "$entry" ] && [ -s "$entry.pattern" ] || fail "first run: $entry or its pattern missing"
[ "${y:-0}" -lt "${x:-0}" ] || fail "first run: off-node bytes $x -> $y, expected a drop on round-robin nodes"
ls -a "$c" | grep -q '\.record' && fail "first run: a temporary record left in $c"

# 2. The second applies it, and measures the same off-node bytes in the run.
run "$c" -- "$prog" "$d0" "$d1"
re='^mpitopo run: applied (.*) \(off-node bytes ([0-9]+) -> ([0-9]+)\)$'
[[ $err =~ $re ]] || fail "second run: no 'applied' line: $err"
[ "${BASH_REMATCH[1]}" = "$entry" ] && [ "${BASH_REMATCH[2]}" = "$x" ] && [ "${BASH_REMATCH[3]}" = "$y" ] ||
    fail "second run: '$err', expected $entry with $x -> $y"
[ "$rc" = 0 ] && [[ $out == *"PASS world_halo"* ]] || fail "second run: rc $rc, output '$out'"
[ "$(contract)" = 1 ] || fail "second run: $(contract) contract lines"
[ -s "$entry.emulate" ] || fail "second run: no emulation placement file"

# 3. --explain prints the metrics side by side; --record records again.
run "$c" --record --explain -- "$prog" "$d0" "$d1"
grep -q 'off-node partners (avg)' "$tmp/err" && [ "$(contract)" = 1 ] && grep -q '^mpitopo run: recorded ' "$tmp/err" ||
    fail "--record --explain: $err"

# 4. --apply with nothing stored: the launch placement, said why.
run "$tmp/empty" --apply -- "$prog" "$d0" "$d1"
[[ $err == "mpitopo run: kept the launch placement (no placement stored for "* ]] && [ "$rc" = 0 ] ||
    fail "--apply on an empty cache: rc $rc, '$err'"

# 5. A corrupted entry is ignored with its reason, then recorded afresh.
head -c 200 "$entry" >"$tmp/cut" && cp "$tmp/cut" "$entry"
run "$c" -- "$prog" "$d0" "$d1"
grep -q "^mpitopo run: ignoring $entry: corrupted" "$tmp/err" && grep -q '^mpitopo run: recorded ' "$tmp/err" ||
    fail "corrupted entry: $err"
[ "$(contract)" = 1 ] || fail "corrupted entry: $(contract) contract lines"

# 6. Another binary at the same path: stale.
mkdir -p "$tmp/bin" && cp "$prog" "$tmp/bin/prog"
run "$c" -- "$tmp/bin/prog" "$d0" "$d1"
printf 'x' >>"$tmp/bin/prog"
run "$c" -- "$tmp/bin/prog" "$d0" "$d1"
grep -q "^mpitopo run: ignoring .*: stale: $tmp/bin/prog changed since it was recorded" "$tmp/err" ||
    fail "changed binary: $err"

# 7. A recording run that fails stores nothing.
run "$tmp/failed" -- "$prog" "$((d0 + 1))" "$d1"
[[ $err == "mpitopo run: kept the launch placement (the recording run failed with status "* ]] && [ "$rc" != 0 ] ||
    fail "failing program: rc $rc, '$err'"
[ -z "$(ls -A "$tmp/failed")" ] || fail "failing program: left $(ls -A "$tmp/failed")"

# 8. Commands mpitopo run cannot parse are refused before anything starts.
"$cli" run --cache "$c" -- "${L[@]}" --no-such-option -n "$np" "$prog" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] && grep -q "cannot parse the launcher command: .*'--no-such-option'" "$tmp/err" && [ ! -s "$tmp/out" ] ||
    fail "unknown launcher option: rc $rc, $(cat "$tmp/err")"
"$cli" run --cache "$c" -- "${L[@]}" "$prog" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && grep -q "give the process count" "$tmp/err" || fail "no -n: $(cat "$tmp/err")"
"$cli" run --cache "$c" -- /bin/echo -n 4 "$prog" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && grep -q "is not a launcher mpitopo run knows: it supports Open MPI's mpirun, MPICH's Hydra mpiexec and Slurm's srun" "$tmp/err" &&
    [ ! -s "$tmp/out" ] || fail "not a launcher: $(cat "$tmp/err")"

# 9. Block placement: nothing to gain, so the launch placement stays.
MPITOPO_EMULATE_PLACEMENT=block run "$tmp/block" -- "$prog" "$d0" "$d1"
MPITOPO_EMULATE_PLACEMENT=block run "$tmp/block" -- "$prog" "$d0" "$d1"
[[ $err == "mpitopo run: kept the launch placement (the stored placement "*" is no better: off-node bytes "* ]] &&
    [ "$rc" = 0 ] || fail "block placement: '$err'"

# 10. The launch placement given to the processes on the command line
# (-x / -genv): keyed, and replaced by the stored one when applying.
case $SHIM_FLAVOR in
openmpi) XP=(-x MPITOPO_EMULATE_PLACEMENT=rr) ;;
mpich) XP=(-genv MPITOPO_EMULATE_PLACEMENT rr) ;;
esac
L0=("${L[@]}")
L=("${L0[@]}" "${XP[@]}")
MPITOPO_EMULATE_PLACEMENT=block run "$tmp/x" -- "$prog" "$d0" "$d1"
re='^mpitopo run: recorded .* \(off-node bytes ([0-9]+) -> ([0-9]+) predicted\)$'
[[ $err =~ $re ]] && [ "${BASH_REMATCH[2]}" -lt "${BASH_REMATCH[1]}" ] || fail "-x placement, record: '$err'"
MPITOPO_EMULATE_PLACEMENT=block run "$tmp/x" -- "$prog" "$d0" "$d1"
re='^mpitopo run: applied .* \(off-node bytes ([0-9]+) -> ([0-9]+)\)$'
[[ $err =~ $re ]] && [ "${BASH_REMATCH[2]}" -lt "${BASH_REMATCH[1]}" ] && [[ $out == *"PASS world_halo"* ]] ||
    fail "-x placement, apply: '$err' (the measured bytes must drop)"
L=("${L0[@]}")

[ "$fails" = 0 ] && echo "PASS run" || exit 1

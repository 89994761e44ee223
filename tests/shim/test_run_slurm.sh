#!/usr/bin/env bash
# mpitopo run in a Slurm job (issue 32's goal): with a topology.conf of 4
# leaf switches over 16 nodes (beside SLURM_CONF, as Slurm sets it), the
# job's nodes named in SLURM_JOB_NODELIST and emulated on one host, a
# round-robin launch and no mpitopo variable but the emulation, the
# recorded placement at least halves the traffic leaving the switches, and
# the next run applies it.
#   test_run_slurm.sh CLI PROGRAM DATA-DIR   (Open MPI; SHIM_MPIEXEC)
set -u
cli=$1 prog=$2 data=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export SLURM_JOB_ID=7 "SLURM_JOB_NODELIST=node[01-16]" SLURM_CONF=$data/slurm/leaf4x16/slurm.conf
export MPITOPO_EMULATE="node:16 core:2" MPITOPO_EMULATE_PLACEMENT=rr
L=("$SHIM_MPIEXEC" --oversubscribe --allow-run-as-root --mca mpi_yield_when_idle 1 --mca btl self,vader
    -x SLURM_JOB_ID -x SLURM_JOB_NODELIST -x SLURM_CONF -n 32)
"$cli" run --cache "$tmp/c" --explain -- "${L[@]}" "$prog" 8 4 >"$tmp/out" 2>"$tmp/err"
cat "$tmp/err" >&2
read -r before after < <(awk '/^bytes crossing switch/ { print $4, $5 }' "$tmp/err")
grep -q '^mpitopo run: machine switch:4 node:4 ' "$tmp/err" || { echo "FAIL run_slurm: no switch level from Slurm"; exit 1; }
[ -n "${before:-}" ] && [ $((2 * after)) -le "$before" ] ||
    { echo "FAIL run_slurm: bytes leaving the switches ${before:-?} -> ${after:-?}, not halved"; exit 1; }
"$cli" run --cache "$tmp/c" -- "${L[@]}" "$prog" 8 4 >"$tmp/out" 2>"$tmp/err"
grep -q '^mpitopo run: applied ' "$tmp/err" && grep -q 'PASS world_halo' "$tmp/out" ||
    { echo "FAIL run_slurm: second run: $(cat "$tmp/err" "$tmp/out")"; exit 1; }
echo "PASS run_slurm: bytes leaving the switches $before -> $after"

# shellcheck shell=bash
# Sourced by bench/apps/check_emulated.sh and bench/apps/time_netns.sh: the
# programs (how to prepare their input, how to run them, what output to
# compare) and the off-node byte count of a trace.
#
# Programs (APP):
#   gromacs         gmx_mpi mdrun -reprod on a box of SPC water (gmx solvate,
#                   energy-minimised), PME on 4 ranks, PP domains 2x2x2 in
#                   Cartesian order (MPI_Cart_create, reorder 1, and GROMACS
#                   uses the new communicator). Output compared: ener.edr,
#                   byte for byte, shown as `gmx dump -e` text.
#   lammps          lmp on in.lj (3-D Lennard-Jones, LAMMPS's bench input),
#                   processor grid 3x2x2, `processors ... map cart`:
#                   MPI_Cart_create with reorder 0. Output compared: the
#                   thermo table printed with %.17g.
#   lammps-reorder  the same with `map cart/reorder`: MPI_Cart_create with
#                   reorder 1; LAMMPS reads its grid position, neighbours and
#                   the rank of every cell from the Cartesian communicator,
#                   frees it, and exchanges halos on MPI_COMM_WORLD.
# Each run happens in a directory of its own (the current one).

apps_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${GMX:=gmx_mpi}" "${LMP:=lmp}"
: "${GMX_NSTEPS:=500}" "${LMP_STEPS:=200}" "${LMP_N:=16}" "${GMX_BOX:=4.5}"

# app_prepare APP WORK: make the inputs under WORK/inputs once (cached; the
# GROMACS input is rebuilt when the .mdp/.top files or the box size change).
app_prepare() {
  local app=$1 work=$2 d key
  case $app in
  gromacs)
    d=$work/inputs/gromacs
    key="box $GMX_BOX $(cat "$apps_dir/em.mdp" "$apps_dir/md.mdp" "$apps_dir/topol.top" | md5sum)"
    if [[ -s $d/md.tpr && "$(cat "$d/key" 2>/dev/null)" == "$key" ]]; then
      return 0
    fi
    rm -rf "$d" && mkdir -p "$d"
    cp "$apps_dir/em.mdp" "$apps_dir/md.mdp" "$apps_dir/topol.top" "$d/"
    echo "preparing the GROMACS input in $d (solvate ${GMX_BOX} nm box, minimise, grompp)" >&2
    (cd "$d" &&
      $GMX solvate -cs spc216.gro -box "$GMX_BOX" "$GMX_BOX" "$GMX_BOX" -p topol.top -o conf.gro >solvate.log 2>&1 &&
      $GMX grompp -f em.mdp -c conf.gro -p topol.top -o em.tpr >grompp_em.log 2>&1 &&
      $GMX mdrun -ntomp 1 -deffnm em >em.out 2>&1 &&
      $GMX grompp -f md.mdp -c em.gro -p topol.top -o md.tpr >grompp_md.log 2>&1) ||
      { echo "app_prepare: GROMACS preparation failed, see $d/*.log" >&2; return 1; }
    echo "$key" >"$d/key"
    ;;
  lammps | lammps-reorder) ;;
  *) echo "unknown program $app (gromacs, lammps, lammps-reorder)" >&2; return 1 ;;
  esac
}

# app_argv APP WORK: sets the array APP_ARGV, the program and its arguments.
# shellcheck disable=SC2034 # APP_ARGV is for the caller
app_argv() {
  local app=$1 work=$2
  case $app in
  gromacs)
    APP_ARGV=("$(command -v "$GMX")" mdrun -s "$work/inputs/gromacs/md.tpr" -ntomp 1 -npme 4 -dd 2 2 2
      -ddorder cartesian -reprod -nsteps "$GMX_NSTEPS" -deffnm md -nb cpu) ;;
  lammps)
    APP_ARGV=("$(command -v "$LMP")" -in "$apps_dir/in.lj" -var map cart -var n "$LMP_N" -var steps "$LMP_STEPS"
      -log log.lammps -screen none) ;;
  lammps-reorder)
    APP_ARGV=("$(command -v "$LMP")" -in "$apps_dir/in.lj" -var map cart/reorder -var n "$LMP_N"
      -var steps "$LMP_STEPS" -log log.lammps -screen none) ;;
  esac
}

# app_result APP DIR: prints the output compared between runs (empty when
# the run left none).
app_result() {
  local app=$1 dir=$2
  case $app in
  gromacs)
    [[ -s $dir/md.edr ]] || return 0
    echo "ener.edr sha256 $(sha256sum <"$dir/md.edr" | cut -d' ' -f1)"
    $GMX dump -e "$dir/md.edr" 2>/dev/null | grep -v -E '^gmx dump|md\.edr' ;;
  lammps | lammps-reorder)
    [[ -s $dir/log.lammps ]] || return 0
    sed -n '/^ *Step /,/^Loop time/p' "$dir/log.lammps" | grep -v '^Loop time' ;;
  esac
}

# app_progress APP DIR: the last step the run reported ("-" when none), to
# tell a hang (no step at all) from a slow run that met the time limit.
app_progress() {
  local app=$1 dir=$2 step=
  case $app in
  gromacs)
    step=$(awk '/^ +Step +Time/ { getline; s = $1 } END { print s }' "$dir/md.log" 2>/dev/null) ;;
  lammps | lammps-reorder)
    step=$(awk '/^ *Step / { on = 1; next } /^Loop time/ { on = 0 } on && $1 ~ /^[0-9]+$/ { s = $1 } END { print s }' \
      "$dir/log.lammps" 2>/dev/null) ;;
  esac
  echo "${step:--}"
}

# offnode_bytes TRACE PLACEMENT NODES PPN: "OFF TOTAL", the bytes of the
# pattern file TRACE between ranks on different nodes, and all its bytes,
# when NODES*PPN ranks are laid block (rank r on node r/PPN), rr (rank r on
# node r%NODES) or file:RANKFILE (an Open MPI rankfile, "rank R=HOST ...").
offnode_bytes() {
  local rankfile=/dev/null
  [[ $2 != file:* ]] || rankfile=${2#file:}
  awk -v pl="$2" -v nodes="$3" -v ppn="$4" -v rf="$rankfile" '
    function node(r) { return pl ~ /^file:/ ? host[r] : pl == "rr" ? r % nodes : int(r / ppn) }
    FILENAME == rf { if ($1 == "rank") { split($2, a, "="); host[a[1]] = a[2] } next }
    /^#/ || /^mpitopo-pattern/ || NF < 3 { next }
    { total += $3; if (node($1) != node($2)) off += $3 }
    END { printf "%.0f %.0f\n", off, total }' "$rankfile" "$1"
}

# shim_preload SHIM TRACER: what LD_PRELOAD needs for the shim and the
# traffic: the shim alone when it traces itself (a shim with the tracer
# compiled in, MPITOPO_TRACE_FILE set), else the shim, then the tracer.
shim_preload() {
  if nm -D --defined-only "$1" 2>/dev/null | grep -qw 'MPI_Send$'; then echo "$1"; else echo "$1:$2"; fi
}

# mpitopo_run_line FILE: the "mpitopo run: ..." line of a run's stderr.
mpitopo_run_line() {
  grep -m1 '^mpitopo run: ' "$1" 2>/dev/null || true
}

# mpitopo_run_xy LINE: "X Y" of a recorded or applied line, "- -" otherwise.
mpitopo_run_xy() {
  local re='off-node bytes ([0-9.eE+]+) -> ([0-9.eE+]+)'
  if [[ $1 =~ $re ]]; then echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"; else echo "- -"; fi
}

# mpitopo_run_available MPITOPO: true when `mpitopo run --help` works.
mpitopo_run_available() {
  "$1" run --help >/dev/null 2>&1
}

# median_spread: reads numbers, prints "median min max".
median_spread() {
  sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "- - -"; exit }
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.2f %.2f %.2f\n", m, v[1], v[NR] }'
}

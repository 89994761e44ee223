#!/usr/bin/env bash
# Golden outputs of the mpitopo command line: every case of golden/cases is
# run and its standard output, standard error, exit status and the files it
# wrote are compared byte for byte with golden/NAME.out; a difference is
# printed as a unified diff. The cases are the command forms the other CLI
# tests use (test_cli.sh, test_cli_gpu.sh, fuzz_cli.py, tests/simgrid): every
# command, its --help, its options and representative errors.
#
#   test_golden.sh MPITOPO_CLI TEST_DATA_DIR [--update] [NAME...]
#
# --update rewrites the golden files (of the NAMEs given, else of all cases,
# removing those of cases that are gone) instead of comparing: run it after
# an intended change of the output, and review `git diff tests/cli/golden`.
#
# A line of golden/cases is NAME, then optional words @optional (the case
# lists the optional mappers: it runs only when the build has Scotch and
# METIS) and VAR=VALUE (set for the run), then the arguments, in shell
# syntax. $D is TEST_DATA_DIR, $G golden/input, $T an empty scratch
# directory (files left there are compared too); their values are written
# back as $D, $G, $T in the outputs. Outputs are normalised only where the
# build shows: the version number and whether Scotch and METIS are built in.
set -u
cli=$1
D=$(cd "$2" && pwd)
shift 2
here=$(cd "$(dirname "$0")" && pwd)
golden=$here/golden
G=$golden/input
update=0
only=()
for a in "$@"; do
  if [ "$a" = --update ]; then update=1; else only+=("$a"); fi
done
# The outputs depend on no environment but the cases' own.
export LC_ALL=C
for v in $(env | sed -n 's/^\(MPITOPO_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
T=$work/t

optional=0
"$cli" version | grep -q 'scotch yes, metis yes' && optional=1

sed_escape() { printf '%s' "$1" | sed 's/[][\.*^$|/]/\\&/g'; }
normalise="s/$(sed_escape "$T")/\$T/g; s/$(sed_escape "$G")/\$G/g; s/$(sed_escape "$D")/\$D/g"
normalise+="; s/^mpitopo [0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\$/mpitopo VERSION/"
normalise+="; s/optional mappers: scotch [a-z]*, metis [a-z]*/optional mappers: scotch ?, metis ?/"

section() { # section TITLE FILE: the file as it is, and whether it ends without a newline
  printf -- '--- %s\n' "$1"
  sed "$normalise" "$2"
  if [ -s "$2" ] && [ "$(tail -c 1 "$2" | od -An -tx1 | tr -d ' ')" != 0a ]; then printf '\n\\ no newline at end\n'; fi
}

run_case() { # run_case NAME LINE: the case's output, normalised, on stdout
  local name=$1 line=$2 words envs=() args=() w status=0
  eval "words=($line)"
  for w in "${words[@]:1}"; do
    if [ ${#args[@]} = 0 ] && [[ $w == @optional ]]; then :
    elif [ ${#args[@]} = 0 ] && [[ $w =~ ^[A-Z_][A-Z0-9_]*= ]]; then envs+=("$w")
    else args+=("$w"); fi
  done
  rm -rf "$T" && mkdir -p "$T"
  (cd "$T" && env "${envs[@]}" timeout 60 "$cli" "${args[@]}" >"$work/stdout" 2>"$work/stderr") || status=$?
  printf '$ %s\n' "$(sed 's/^[^ ]* *//' <<<"$line")"
  section stdout "$work/stdout"
  section stderr "$work/stderr"
  printf -- '--- exit %d\n' "$status"
  local f
  while IFS= read -r f; do section "file \$T/${f#"$T"/}" "$f"; done < <(find "$T" -type f | LC_ALL=C sort)
}

failures=0 cases=0 skipped=0
declare -A seen
while IFS= read -r line; do
  [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
  name=${line%% *}
  if [ -n "${seen[$name]:-}" ]; then echo "FAIL golden: case $name given twice"; failures=$((failures + 1)); continue; fi
  seen[$name]=1
  if [ ${#only[@]} -gt 0 ] && ! printf '%s\n' "${only[@]}" | grep -qxF -- "$name"; then continue; fi
  if [[ $line == *" @optional "* ]] && [ $optional = 0 ]; then
    echo "SKIP $name: the build lacks Scotch or METIS"; skipped=$((skipped + 1)); continue
  fi
  cases=$((cases + 1))
  run_case "$name" "$line" >"$work/actual"
  if [ $update = 1 ]; then
    cmp -s "$work/actual" "$golden/$name.out" || { cp "$work/actual" "$golden/$name.out"; echo "updated $name"; }
  elif [ ! -f "$golden/$name.out" ]; then
    echo "FAIL $name: no golden file $golden/$name.out (run with --update)"; failures=$((failures + 1))
  elif ! cmp -s "$golden/$name.out" "$work/actual"; then
    echo "FAIL $name: the output differs from golden/$name.out:"
    diff -u --label "golden/$name.out" --label "actual" "$golden/$name.out" "$work/actual"
    failures=$((failures + 1))
  fi
done <"$golden/cases"

# Golden files of no case: stale.
for f in "$golden"/*.out; do
  [ -e "$f" ] || continue
  name=$(basename "$f" .out)
  [ -n "${seen[$name]:-}" ] && continue
  if [ $update = 1 ] && [ ${#only[@]} = 0 ]; then rm -f "$f"; echo "removed $name"
  else echo "FAIL golden: $f belongs to no case"; failures=$((failures + 1)); fi
done

if [ "$failures" -ne 0 ]; then echo "FAIL golden: $failures of $cases case(s) failed"; exit 1; fi
if [ "$skipped" -ne 0 ]; then echo "PASS golden: $cases cases, $skipped skipped"; else echo "PASS golden: $cases cases"; fi

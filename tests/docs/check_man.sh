#!/usr/bin/env bash
# The reference pages. Installs the build tree into a temporary prefix and
# checks:
#   - doxygen reported no warning on the public headers (an undocumented
#     function or parameter, a bad command): its log is empty;
#   - every API function (the MPITOPO_API declarations of the installed
#     headers, which are exactly what libmpitopo.so exports) has a man(3)
#     page of its own name; the page, or the group page it links to, has a
#     NAME and a SYNOPSIS, lists the function with a brief, documents it
#     (Parameters when it takes any, Returns or Return values unless void,
#     Collective: for the MPI layer, mpi.h and coll.h);
#   - every installed man(3) page renders without a warning (man --warnings,
#     or groff -ww), and so do the man(1) pages of the tools named after the
#     log, which must exist.
# Usage: check_man.sh BUILD_DIR DOXYGEN_WARNING_LOG [TOOL...]
set -euo pipefail
build=$1 log=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
fail=0
bad() { echo "FAIL docs: $*"; fail=1; }

# Doxygen's warnings ------------------------------------------------------------
if [ ! -f "$log" ]; then
    bad "no doxygen log $log (were the pages built?)"
elif [ -s "$log" ]; then
    bad "doxygen warnings on the public headers:"
    sed 's/^/  /' "$log"
fi

# The API: from the installed headers, checked against the library's exports.
inc=$tmp/prefix/include
grep -H '^MPITOPO_API[[:space:]]' "$inc"/mpitopo.h "$inc"/mpitopo/*.h |
    sed -E 's/^([^:]*):MPITOPO_API[[:space:]]+/\1 /; s/[[:space:]]*[(;[].*$//; s/^([^ ]*) .*[^A-Za-z0-9_]/\1 /' |
    awk '{n = split($1, p, "/"); print $2, p[n]}' | sort -u >"$tmp/api"
cut -d' ' -f1 "$tmp/api" >"$tmp/api.names"
napi=$(wc -l <"$tmp/api.names")
[ "$napi" -gt 0 ] || bad "no MPITOPO_API declaration found in $inc"
lib=$(find "$tmp/prefix" -name libmpitopo.so | head -1)
if [ -n "$lib" ]; then
    nm -D --defined-only "$lib" | awk 'NF >= 3 && $2 ~ /^[TW]$/ {print $3}' | sed 's/@.*//' |
        grep -vxE '_init|_fini' | sort -u >"$tmp/exported"
    diff=$(comm -3 "$tmp/exported" "$tmp/api.names" | tr -d '\t')
    [ -z "$diff" ] || bad "the headers' MPITOPO_API functions and libmpitopo.so's exports differ:" $diff
else
    bad "no libmpitopo.so installed"
fi

mandir=$(find "$tmp/prefix" -type d -path '*/man/man3' | head -1)
[ -n "$mandir" ] || { bad "no man3 directory installed"; exit 1; }
mandir=${mandir%/man3}

# Renders a page (relative to $mandir, .so links resolved from there) as
# text into $tmp/text; its warnings, if any, into $tmp/warn.
render() {
    if command -v man >/dev/null; then
        (cd "$mandir" && LC_ALL=C.UTF-8 MANWIDTH=80 MAN_DISABLE_SECCOMP=1 man --warnings -l "$1" \
            >"$tmp/text" 2>"$tmp/warn") || echo "man exited with $?" >>"$tmp/warn"
    else
        (cd "$mandir" && groff -man -Tutf8 -ww "$1" >"$tmp/text" 2>"$tmp/warn") ||
            echo "groff exited with $?" >>"$tmp/warn"
    fi
}

# The page a link page points to (itself when it is no link).
target_of() {
    local first
    first=$(head -n 1 "$mandir/$1")
    case $first in
    ".so "*) echo "${first#.so }" ;;
    *) echo "$1" ;;
    esac
}

# The roff section documenting function $1 in page $2: from its .SS line
# to the next .SS or .SH.
section_of() {
    awk -v f="$1" '
        /^\.S[SH] / { on = 0 }
        $0 ~ "^\\.SS \".*[ *]" f " \\(" { on = 1 }
        on { print }' "$mandir/$2"
}

# Every API function -------------------------------------------------------------
while read -r fn header; do
    page=man3/$fn.3
    if [ ! -f "$mandir/$page" ]; then
        bad "$fn ($header): no man page $page"
        continue
    fi
    target=$(target_of "$page")
    if [ ! -f "$mandir/$target" ]; then
        bad "$page links to $target, which is not installed"
        continue
    fi
    render "$page"
    [ ! -s "$tmp/warn" ] || { bad "$page renders with warnings:"; sed 's/^/  /' "$tmp/warn"; }
    grep -q '^NAME' "$tmp/text" || bad "$page: no NAME"
    grep -q '^SYNOPSIS' "$tmp/text" || bad "$page: no SYNOPSIS"
    # In the synopsis: the declaration, then .br, then the brief.
    brief=$(awk -v f="$fn" '
        $0 ~ "^\\.RI \".*\\\\fB" f "\\\\fP \\(" { getline; getline; print; exit }' "$mandir/$target")
    case $brief in
    '.RI "'*[A-Za-z]*) ;;
    *) bad "$fn: no brief in the synopsis of $target" ;;
    esac
    section_of "$fn" "$target" >"$tmp/section"
    if [ ! -s "$tmp/section" ]; then
        bad "$fn: not documented in $target"
        continue
    fi
    decl=$(head -n 1 "$tmp/section")
    case $decl in
    *"$fn (void)"*) ;;
    *) grep -q 'fBParameters' "$tmp/section" || bad "$fn: no Parameters in $target" ;;
    esac
    case $decl in
    '.SS "void '*) ;;
    *) grep -qE 'fB(Returns|Return values)' "$tmp/section" || bad "$fn: no Returns in $target" ;;
    esac
    case $header in
    mpi.h | coll.h) grep -q 'fBCollective:' "$tmp/section" || bad "$fn ($header): no Collective: in $target" ;;
    esac
done <"$tmp/api"

# Every installed man(3) page, and the overview ------------------------------------
n3=0
for page in "$mandir"/man3/*.3; do
    n3=$((n3 + 1))
    rel=man3/${page##*/}
    target=$(target_of "$rel")
    [ -f "$mandir/$target" ] || { bad "$rel links to $target, which is not installed"; continue; }
    render "$rel"
    [ ! -s "$tmp/warn" ] || { bad "$rel renders with warnings:"; sed 's/^/  /' "$tmp/warn"; }
    [ -s "$tmp/text" ] || bad "$rel renders empty"
done
[ -f "$mandir/man3/mpitopo.3" ] || bad "no overview page man3/mpitopo.3"
ngroups=$(grep -L '^\.so ' "$mandir"/man3/*.3 | wc -l)

# The tools' man(1) pages ----------------------------------------------------------
for tool in "$@"; do
    page=man1/$tool.1
    if [ ! -f "$mandir/$page" ]; then
        bad "no man page $page"
        continue
    fi
    render "$page"
    [ ! -s "$tmp/warn" ] || { bad "$page renders with warnings:"; sed 's/^/  /' "$tmp/warn"; }
    grep -qE "^ +$tool - [a-z]" "$tmp/text" || bad "$page: no name line ('$tool - ...')"
    grep -q '^SYNOPSIS' "$tmp/text" || bad "$page: no SYNOPSIS"
    grep -q '^OPTIONS' "$tmp/text" || bad "$page: no OPTIONS"
done

[ "$fail" = 0 ] || exit 1
echo "PASS docs ($napi API functions with a man(3) page; $n3 man(3) pages, $ngroups with content (topics and structs), the others links; man(1): ${*:-none})"

#!/usr/bin/env bash
# bench/plot.sh: the figures of RESULTS.md, drawn with gnuplot from the
# recorded runs in bench/results/*.dat.
#
#   bench/plot.sh [-o OUTDIR] [--check]
#
#   -o OUTDIR  where the PNGs go (default bench/results)
#   --check    only check the data: every measured value of every row of
#              every .dat must appear, together, in one line of RESULTS.md
#              (exit 1 and name the rows that do not)
#
# The data. RESULTS.md stays the record (tables, with their commands and
# machines); each .dat holds the figures of one of its tables, copied as
# printed, and says which section. A .dat is one figure's worth: lines of
# `# ` comments at the top (`# panel: TEXT`: the figure's or panel's title;
# `# keys: K`: the first K columns identify a row, the others are
# measurements, which --check looks up), then blocks separated by two
# blank lines, each block
#   # title: what the block is (the run, the topology, the placement, ...)
#   # columns: NAME NAME ...   (the first is the x axis)
#   rows of numbers; `-` where the table has none
# What each file becomes depends on its name:
#   halo_*.dat      all into halo_ratio.png, one panel per file: native /
#                   mpitopo time (the column named native/mpitopo) against
#                   message size, one line per block; one colour per grid,
#                   dashed where the title says round-robin
#   neighbor_*.dat  neighbor_*.png: one panel per block, latency against
#                   message size, one line per column (schedule)
#   coll_*.dat      coll_*.png: the same, for the global collectives of
#                   bench/coll (one line per column: mpi, algorithms, tuned)
#   mapq*.dat       mapq*_cost.png and mapq*_time.png: one panel per case,
#                   weighted cost (relative to identity) and CPU time against
#                   the number of processes, one line per mapper; solid:
#                   machines without a switch level, dashed: with
# To add a run: record it in RESULTS.md as usual, add its table as a block
# of the matching .dat (or a new file: a new halo panel or neighbor figure),
# run bench/plot.sh --check, then bench/plot.sh, and commit the .dat, the
# PNG and the RESULTS.md line that shows it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
data=$here/results out=$here/results check=0
while [ $# -gt 0 ]; do
    case $1 in
    -o) out=$2; shift 2 ;;
    --check) check=1; shift ;;
    *) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
    esac
done

# --check: look every row's measurements up in RESULTS.md (bold marks
# removed; a value must appear as a whole number there, not inside another).
check_data() {
    awk -v results="$here/RESULTS.md" '
        function has(l, v,   re) {
            re = v; gsub(/\./, "\\.", re)
            return l ~ ("(^|[^0-9.])" re "([^0-9.]|$)")
        }
        BEGIN {
            while ((getline l < results) > 0) { gsub(/\*\*/, "", l); line[++n] = l }
        }
        FNR == 1 { keys = 1 }
        /^# keys:/ { keys = $3; next }
        /^#/ || NF == 0 { next }
        {
            m = 0
            for (i = keys + 1; i <= NF; i++)
                if ($i ~ /^[0-9.]+$/) v[++m] = $i
            found = 0
            for (k = 1; k <= n && !found; k++) {
                if (index(line[k], v[1]) == 0) continue
                ok = 1
                for (j = 1; j <= m && ok; j++) ok = has(line[k], v[j])
                found = ok
            }
            rows++
            if (!found) { printf "%s:%d: %s: not in one line of RESULTS.md\n", FILENAME, FNR, $0; bad++ }
        }
        END { printf "plot.sh --check: %d rows, %d not found\n", rows, bad; exit bad > 0 }
    ' "$data"/*.dat
}
if [ "$check" = 1 ]; then
    check_data
    exit
fi
check_data >/dev/null || { check_data | grep -v "^plot.sh" >&2; echo "plot.sh: fix the data first" >&2; exit 1; }

mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "TITLE<tab>COLUMNS" for every block of a file, in order (gnuplot's index).
blocks() {
    awk '/^# title:/ { t = substr($0, 10) } /^# columns:/ { print t "\t" substr($0, 12) }' "$1"
}

# The file's `# panel:` line (else its first line), without quotes.
panel() {
    awk 'NR == 1 { first = substr($0, 3) } /^# panel:/ { p = substr($0, 10) }
         END { t = p != "" ? p : first; gsub(/\047/, "", t); print t }' "$1"
}

# Message sizes as tic labels, powers of 4 from 1 B to 1 MiB.
size_tics='set xtics ("1" 1, "4" 4, "16" 16, "64" 64, "256" 256, "1K" 1024, "4K" 4096, "16K" 16384, "64K" 65536, "256K" 262144, "1M" 1048576)'
common="set datafile missing '-'; set grid; set key top left noenhanced; set title noenhanced"

# pngcairo where gnuplot has it, else libgd's png.
terminal=pngcairo
gnuplot -e "set terminal pngcairo" 2>/dev/null || terminal=png
run_gnuplot() { # SCRIPT
    sed -i "s/^set terminal pngcairo/set terminal $terminal/" "$1"
    gnuplot "$1"
}

# halo_ratio.png
halo_plot() {
    local files=("$data"/halo_*.dat) gp=$tmp/halo.gp
    [ -e "${files[0]}" ] || return 0
    {
        echo "set terminal pngcairo size $((700 * ${#files[@]})),640 noenhanced"
        echo "set output '$out/halo_ratio.png'"
        echo "$common; set logscale x; $size_tics; set key below"
        echo "set xlabel 'message size (bytes)'; set ylabel 'halo exchange time, native / mpitopo (> 1: mpitopo faster)'"
        echo "set yrange [0:*]; set multiplot layout 1,${#files[@]} title 'Halo exchange: MPI_COMM_WORLD order against mpitopo_cart_create, by launch placement'"
        for f in "${files[@]}"; do
            local i=0 col grid plots=()
            local -A colour=()
            echo "set title '$(panel "$f")'"
            while IFS=$'\t' read -r title cols; do
                col=$(awk -v c="$cols" 'BEGIN { n = split(c, a, " "); for (i = 1; i <= n; i++) if (a[i] == "native/mpitopo") print i }')
                grid=${title%,*} # the title without its placement
                [ -n "${colour[$grid]:-}" ] || colour[$grid]=$((${#colour[@]} + 1))
                local dt=1
                [[ $title == *round-robin* ]] && dt=2
                plots+=("'$f' index $i using 1:$col with linespoints lw 2 pt 7 dt $dt lc ${colour[$grid]} title '${title//\'/}'")
                i=$((i + 1))
            done < <(blocks "$f")
            plots+=("1 with lines lc 'gray' dt 3 notitle")
            (IFS=,; echo "plot ${plots[*]}")
        done
        echo "unset multiplot"
    } >"$gp"
    run_gnuplot "$gp"
    echo "$out/halo_ratio.png"
}

# neighbor_*.png: one panel per block, one line per column.
neighbor_plot() { # FILE
    local f=$1 name gp n rows i=0
    name=$(basename "$f" .dat)
    gp=$tmp/$name.gp
    n=$(blocks "$f" | wc -l)
    rows=$(((n + 1) / 2))
    {
        echo "set terminal pngcairo size 1400,$((460 * rows)) noenhanced"
        echo "set output '$out/$name.png'"
        echo "$common; set logscale xy; $size_tics"
        # One x range for every panel: the file's sizes, with a margin.
        echo "set xrange [$(awk '/^#/ || NF == 0 { next } { if (lo == "" || $1 < lo) lo = $1; if ($1 > hi) hi = $1 }
                                END { print lo / 1.5 ":" hi * 1.5 }' "$f")]"
        echo "set ylabel 'latency (us)'; set key below horizontal"
        echo "set multiplot layout $rows,2 title '$(panel "$f"); x: message size (bytes)'"
        while IFS=$'\t' read -r title cols; do
            local c plots=()
            echo "set title '${title//\'/}'"
            # Columns with at least one value in this block; colour by column.
            for c in $(awk -v b="$i" '/^# columns:/ { blk++ } /^#/ || NF == 0 { next }
                    blk - 1 == b { for (c = 2; c <= NF; c++) if ($c != "-") has[c] = 1 }
                    END { for (c in has) print c }' "$f" | sort -n); do
                local cname style
                cname=$(awk -v c="$c" '{ print $c }' <<<"$cols")
                # tuned (issue 31) drawn apart: black, dashed, open circles, on top.
                style="lw 2 pt 7 lc $((c - 1))"
                [ "$cname" = tuned ] && style="lw 3 pt 6 ps 1.5 dt 2 lc 'black'"
                plots+=("'$f' index $i using 1:$c with linespoints $style title '$cname'")
            done
            (IFS=,; echo "plot ${plots[*]}")
            i=$((i + 1))
        done < <(blocks "$f")
        echo "unset multiplot"
    } >"$gp"
    run_gnuplot "$gp"
    echo "$out/$name.png"
}

# mapq*_cost.png and mapq*_time.png: the rows of each case and machine kind
# (with or without a switch level) are split into files of their own, sorted
# by the number of processes.
mapq_plot() { # FILE
    local f=$1 name cases
    name=$(basename "$f" .dat)
    mkdir -p "$tmp/$name"
    awk -v d="$tmp/$name" '/^#/ || NF == 0 { next }
        { kind = ($3 ~ /switch/) ? "switch" : "flat"; print > (d "/" $1 "." kind ".txt") }' "$f"
    for t in "$tmp/$name"/*.txt; do sort -n -k2 -o "$t" "$t"; done
    cases=$(awk '/^#/ || NF == 0 { next } !seen[$1]++ { print $1 }' "$f")
    local ncases rows
    ncases=$(wc -w <<<"$cases")
    rows=$(((ncases + 4) / 5))
    for what in cost time; do
        local gp=$tmp/$name.$what.gp first second ylab cols
        if [ $what = cost ]; then
            cols="4:cart:1 5:tree:2 6:scotch:3 7:metis:4" ylab="weighted cost relative to identity (lower is better)"
        else
            cols="8:tree:2 9:scotch:3 10:metis:4" ylab="mapping CPU time (s; 0.00 not drawn)"
        fi
        {
            echo "set terminal pngcairo size 2000,$((540 * rows)) noenhanced"
            echo "set output '$out/${name}_$what.png'"
            echo "$common; set logscale x 2; set xrange [800:80000]; set xtics (1024, 4096, 16384, 65536); set format x '%.0f'"
            [ $what = time ] && echo "set logscale y"
            echo "set xlabel 'processes'; set ylabel '$ylab'; set key below horizontal"
            echo "set multiplot layout $rows,5 title '$(panel "$f"); solid: node:N/16 core:16, dashed: with a switch level'"
            for c in $cases; do
                local plots=() range
                echo "set title '$c'"
                # gnuplot warns about a flat range (rings: every mapper 1.000).
                range=$(cat "$tmp/$name/$c".*.txt | awk -v cols="$cols" '
                    BEGIN { n = split(cols, cs, " "); for (i = 1; i <= n; i++) { split(cs[i], a, ":"); col[i] = a[1] } }
                    { for (i = 1; i <= n; i++) if ($col[i] != "-" && $col[i] > 0) {
                          v = $col[i] + 0; if (lo == "" || v < lo) lo = v; if (hi == "" || v > hi) hi = v } }
                    END { if (lo == hi) printf "[%g:%g]", lo * 0.98, hi * 1.02; else print "[*:*]" }')
                echo "set yrange $range"
                # One colour per mapper in both figures; cart (equal to tree
                # on every Cartesian case) drawn wide, under the others.
                for cm in $cols; do
                    local col=${cm%%:*} mapper lc=${cm##*:} lw=2
                    mapper=${cm#*:} mapper=${mapper%:*}
                    [ "$mapper" = cart ] && lw=6
                    # Graph cases have no cart column.
                    cat "$tmp/$name/$c".*.txt | awk -v c="$col" '$c != "-" { found = 1 } END { exit !found }' ||
                        continue
                    [ -e "$tmp/$name/$c.flat.txt" ] &&
                        plots+=("'$tmp/$name/$c.flat.txt' using 2:$col with linespoints lw $lw pt 7 lc $lc title '$mapper'")
                    [ -e "$tmp/$name/$c.switch.txt" ] &&
                        plots+=("'$tmp/$name/$c.switch.txt' using 2:$col with linespoints lw $lw pt 6 dt 2 lc $lc notitle")
                done
                (IFS=,; echo "plot ${plots[*]}")
            done
            echo "unset multiplot"
        } >"$gp"
        run_gnuplot "$gp"
        echo "$out/${name}_$what.png"
    done
}

halo_plot
for f in "$data"/neighbor_*.dat "$data"/coll_*.dat; do
    [ -e "$f" ] && neighbor_plot "$f"
done
for f in "$data"/mapq*.dat; do
    [ -e "$f" ] && mapq_plot "$f"
done

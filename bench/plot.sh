#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/plot.sh DATA OUT
# bench/plot.sh --roundtrip LOG OUT [DIST]
#
# Draws the benchmark plots as SVG with gnuplot (Debian: gnuplot-nox).
#
# First form: from the files rcache_bench --data DATA wrote, into OUT:
#   hits-{random,locality,reuse}.svg  hit cost against region count,
#       libgdirect and UCX's ucs_rcache, one and two threads
#       (from hits-{random,locality,reuse}-{1,2}.dat)
#   contended.svg  distribution of hit latencies alone and while another
#       thread's pin is in flight, both caches (from contended-*.dat)
# A plot whose data files are not all there is left out and said so.
# DATA/note.txt, if present, is its first line printed under each plot
# (machine and date).
#
# Second form: from a saved log of bench/device's roundtrip program, the
# per-repeat median round trip of each method, into OUT/roundtrip.svg; with
# DIST, the distribution file the same run wrote (roundtrip's third
# argument), every single round trip of each method, into
# OUT/roundtrip-dist.svg: the body (fraction at or below, linear) beside
# the tail (fraction above, log-log).
#
# Third form: from saved logs of bench/gpu/run.sh (classify_gpu), the
# median ns per call of each gdirect_classify row and the CUDA calls it
# stands in for, one bar per log, into OUT/classify.svg (log scale).
#
# Exits 2 on bad usage or when gnuplot is missing, 1 when gnuplot fails.
set -eu

usage() {
	echo "usage: bench/plot.sh DATA OUT | bench/plot.sh --roundtrip LOG OUT [DIST] |" \
	     "bench/plot.sh --classify OUT LOG..." >&2
	exit 2
}

if ! command -v gnuplot >/dev/null 2>&1; then
	echo "plot: gnuplot not found (Debian: apt-get install gnuplot-nox)" >&2
	exit 2
fi

term="set terminal svg size 860,520 dynamic noenhanced font 'sans,13' background '#ffffff'"
style="set grid lc rgb '#dddddd'; set key top left box opaque; set border lw 1.2"

# roundtrip_dist DIST OUT: OUT/roundtrip-dist.svg from roundtrip's
# distribution file (a block of quantile and microseconds per method).
roundtrip_dist() {
	dist=$1 out=$2
	[ -r "$dist" ] || { echo "plot: $dist: cannot read" >&2; exit 2; }
	names=$(sed -n 's/^# method \([^,]*\),.*/\1/p' "$dist")
	if [ -z "$names" ]; then
		echo "plot: $dist: no '# method' blocks (not a roundtrip distribution?)" >&2
		exit 2
	fi
	head=$(sed -n 's/^# roundtrip distribution: //p' "$dist" | head -n1)
	# The body's axis: from the fastest round trip to the slowest 99th
	# percentile of any method.
	xr=$(awk '/^# method/ { b++ } !/^#/ && NF == 2 {
			if ($1 == 0 && (lo == "" || $2 < lo)) lo = $2
			if ($1 == 0.99 && $2 > hi) hi = $2 }
		END { printf "%g:%g", lo * 0.98, hi * 1.02 }' "$dist")
	colours="#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf"
	body="" tail="" i=0
	for nm in $names; do
		c=$(echo "$colours" | cut -d' ' -f$((i % 10 + 1)))
		dt=$((i / 10 + 1))
		body="$body${body:+, }'$dist' index $i using 2:1 with lines lw 2 dt $dt lc rgb '$c' title '$nm'"
		tail="$tail${tail:+, }'$dist' index $i using 2:(\$1 < 1 ? 1 - \$1 : 1/0) with lines lw 2 dt $dt lc rgb '$c' notitle"
		i=$((i + 1))
	done
	gnuplot <<-EOF || { echo "plot: gnuplot failed on $dist" >&2; exit 1; }
		set terminal svg size 1280,560 dynamic noenhanced font 'sans,13' background '#ffffff'
		$style
		set output '$out/roundtrip-dist.svg'
		set multiplot layout 1,2 title "GPU-host round trip, every round trip of each method (all repeats pooled)\n$head"
		set title 'body: fraction of round trips at or below'
		set xlabel 'round trip (us)'
		set xrange [$xr]
		set yrange [0:1]
		set key top left box opaque font 'sans,11'
		plot $body
		set title 'tail: fraction of round trips above (log-log)'
		set key off
		set logscale x 10
		set logscale y 10
		set xrange [*:*]
		set yrange [1e-5:1]
		set format y '%g'
		plot $tail
		unset multiplot
	EOF
	echo "plot: $out/roundtrip-dist.svg" >&2
}

if [ "${1:-}" = --roundtrip ]; then
	[ $# -eq 3 ] || [ $# -eq 4 ] || usage
	log=$2 out=$3
	[ -r "$log" ] || { echo "plot: $log: cannot read" >&2; exit 2; }
	mkdir -p "$out"
	tmp=$(mktemp)
	trap 'rm -f "$tmp"' EXIT
	# One line per method: index, name, then its per-repeat medians (us).
	awk '/^per-repeat medians / { n++; printf "%d %s", n - 1, $3;
		for (i = 4; i <= NF; i++) printf " %s", $i; print "" }' \
		"$log" >"$tmp"
	if [ ! -s "$tmp" ]; then
		echo "plot: $log: no 'per-repeat medians' lines (not a roundtrip log?)" >&2
		exit 2
	fi
	head=$(sed -n 's/^# roundtrip: //p' "$log" | head -n1)
	nm=$(wc -l <"$tmp")
	gnuplot <<-EOF || { echo "plot: gnuplot failed on $log" >&2; exit 1; }
		$term
		$style
		set output '$out/roundtrip.svg'
		set title "GPU-host round trip (host flag, device answers), median of each repeat\n$head"
		set ylabel 'round trip, median of one repeat (us)'
		set xlabel 'method'
		set xrange [-0.6:$nm - 0.4]
		set key off
		set xtics rotate by -30 nomirror
		plot for [c=3:64] '$tmp' using 1:(column(c)):xtic(2) with points pt 7 ps 1.1 lc rgb '#1f77b4' notitle
	EOF
	echo "plot: $out/roundtrip.svg" >&2
	[ $# -eq 4 ] && roundtrip_dist "$4" "$out"
	exit 0
fi

if [ "${1:-}" = --classify ]; then
	[ $# -ge 3 ] || usage
	out=$2
	shift 2
	mkdir -p "$out"
	tmp=$(mktemp)
	trap 'rm -f "$tmp"' EXIT
	# name|ns of log 1|ns of log 2...: the classification and CUDA rows.
	for log in "$@"; do
		[ -r "$log" ] || { echo "plot: $log: cannot read" >&2; exit 2; }
	done
	awk -F'  +' '
		FNR == 1 { f++ }
		/^(gdirect_classify|cuPointerGetAttribute\(MEMORY_TYPE\)|cuPointerGetAttributes)/ {
			v = $2; sub(/ ns.*/, "", v)
			if (!($1 in row)) { order[++n] = $1 }
			row[$1] = row[$1] "|" v
		}
		END { for (i = 1; i <= n; i++) print i - 1 "|" order[i] row[order[i]] }' \
		"$@" >"$tmp"
	[ -s "$tmp" ] || { echo "plot: no classify_gpu rows in $*" >&2; exit 2; }
	head=$(sed -n 's/^nvidia-smi: //p' "$1" | head -n1)
	when=$(sed -n 's/^date: //p' "$1" | head -n1)
	nr=$(wc -l <"$tmp")
	gnuplot <<-EOF || { echo "plot: gnuplot failed on classify" >&2; exit 1; }
		set terminal svg size 900,$((160 + nr * 26)) dynamic noenhanced font 'sans,12' background '#ffffff'
		$style
		set output '$out/classify.svg'
		set title "Pointer classification, median ns per call (log scale), one bar per run\n$head, $when"
		set datafile separator '|'
		set logscale x 10
		set xrange [1:3000]
		set xlabel 'ns per call'
		set ytics nomirror
		set yrange [-0.6:$nr - 0.4] reverse
		set key bottom right box opaque
		set style fill solid 0.8
		set arrow from 10, graph 0 to 10, graph 1 nohead dt 2 lc rgb '#444444'
		set label 'goal: 10 ns' at 10.5, graph 0.97 font 'sans,10'
		plot '$tmp' using (\$3):1:(1):(\$3):(\$1-0.2):(\$1):ytic(2) with boxxyerror lc rgb '#1f77b4' title 'run A', \
		     '$tmp' using (\$4):1:(1):(\$4):(\$1):(\$1+0.2) with boxxyerror lc rgb '#ff7f0e' title 'run B'
	EOF
	echo "plot: $out/classify.svg" >&2
	exit 0
fi

[ $# -eq 2 ] || usage
data=$1 out=$2
[ -d "$data" ] || { echo "plot: $data: no such directory" >&2; exit 2; }
mkdir -p "$out"
note=""
[ -r "$data/note.txt" ] && note=$(head -n1 "$data/note.txt" | tr -d "'\"\\\\")
foot="set label 99 '$note' at screen 0.01, screen 0.02 font 'sans,10' tc rgb '#555555'"

have() {
	for f in "$@"; do
		if [ ! -r "$data/$f" ]; then
			echo "plot: $data/$f missing: its plot is left out" >&2
			return 1
		fi
	done
}

for tr in random locality reuse; do
	have "hits-$tr-1.dat" "hits-$tr-2.dat" || continue
	case $tr in
	random) what='each request at a random region' ;;
	reuse) what="every request in the thread's own region" ;;
	*) what="90% of requests in the thread's previous region, the rest random" ;;
	esac
	gnuplot <<-EOF || { echo "plot: gnuplot failed on hits-$tr" >&2; exit 1; }
		$term
		$style
		$foot
		set output '$out/hits-$tr.svg'
		set title "Registration-cache hit (get + put of 4 KiB), $tr trace\n$what"
		set xlabel 'registered regions (64 KiB each)'
		set ylabel 'ns per hit per thread (median of repeats, log scale)'
		set logscale x 2
		set logscale y 10
		set format x '%.0f'
		set format y '%g'
		set bmargin 5
		plot '$data/hits-$tr-1.dat' using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'libgdirect, 1 thread', \
		     '$data/hits-$tr-2.dat' using 1:2 with linespoints lw 2 dt 2 pt 5 lc rgb '#1f77b4' title 'libgdirect, 2 threads', \
		     '$data/hits-$tr-1.dat' using 1:3 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'UCX ucs_rcache, 1 thread', \
		     '$data/hits-$tr-2.dat' using 1:3 with linespoints lw 2 dt 2 pt 5 lc rgb '#d62728' title 'UCX ucs_rcache, 2 threads'
	EOF
	echo "plot: $out/hits-$tr.svg" >&2
done

if have contended-gdirect.dat contended-ucx.dat; then
	gnuplot <<-EOF || { echo "plot: gnuplot failed on contended" >&2; exit 1; }
		$term
		$style
		$foot
		set output '$out/contended.svg'
		set title "Hit latency while another thread registers (1.3 ms pins), distribution\nalone, and for the hits that began while a pin was in flight"
		set xlabel 'latency of one get + put (log scale)'
		set ylabel 'fraction of hits at or below'
		set logscale x 10
		set xrange [1:1e7]
		set xtics ('1 ns' 1, '10 ns' 10, '100 ns' 100, '1 us' 1e3, '10 us' 1e4, '100 us' 1e5, '1 ms' 1e6, '10 ms' 1e7)
		set yrange [0:1]
		set key center center box opaque
		set bmargin 5
		plot '$data/contended-gdirect.dat' using (\$2 > 0 ? \$2 : 1/0):1 with lines lw 2 lc rgb '#1f77b4' title 'libgdirect, alone', \
		     '$data/contended-gdirect.dat' using (\$3 > 0 ? \$3 : 1/0):1 with lines lw 2 dt 2 lc rgb '#1f77b4' title 'libgdirect, during a pin', \
		     '$data/contended-ucx.dat' using (\$2 > 0 ? \$2 : 1/0):1 with lines lw 2 lc rgb '#d62728' title 'UCX ucs_rcache, alone', \
		     '$data/contended-ucx.dat' using (\$3 > 0 ? \$3 : 1/0):1 with lines lw 2 dt 2 lc rgb '#d62728' title 'UCX ucs_rcache, during a pin'
	EOF
	echo "plot: $out/contended.svg" >&2
fi

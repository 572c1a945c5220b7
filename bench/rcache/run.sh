#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/rcache/run.sh [BUILD [rcache_bench options...]]
#
# `make bench`: build and run the registration-cache benchmark (libgdirect
# against UCX's ucs_rcache), print the tables, and write them with the
# machine, date and commit into docs/performance.md, between the markers of
# the "## Registration cache" section (the rest of the file is left alone).
# The figures behind the plots go to BUILD/bench-results/, and bench/plot.sh
# draws them there as SVG (with gnuplot; without it the plot step says so
# and is skipped), then copies them into docs/plots/.
# About two minutes on 2 cores (the NIC registration's 65536 misses take a
# few microseconds each).  Options after BUILD go to rcache_bench
# (--repeats N, --quick, --only 1234); with --quick nothing is written under
# docs/ (the plots stay in BUILD/bench-results/).
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
[ $# -gt 0 ] && shift
case $build in /*) ;; *) build=$root/$build ;; esac

if ! pkg-config --exists ucx-ucs; then
	echo "bench: UCX not found (Debian: apt-get install libucx-dev)" >&2
	exit 1
fi
"$root/scripts/meson-setup.sh" "$build"
if ! ninja -C "$build" -j2 bench/rcache/rcache_bench tests/fakes/libfakecuda.so >/dev/null; then
	echo "bench: building bench/rcache/rcache_bench failed (is subdir('rcache') in bench/meson.build?)" >&2
	exit 1
fi

quick=0
for a in "$@"; do [ "$a" = --quick ] && quick=1; done

md=$(mktemp)
trap 'rm -f "$md" "$md.new"' EXIT
res=$build/bench-results
rm -rf "$res"
mkdir -p "$res"
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -n1)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
GDIRECT_LIBCUDA=$build/tests/fakes/libfakecuda.so \
	"$build/bench/rcache/rcache_bench" --md "$md" --data "$res" "$@"
load1=$(cut -d' ' -f1-3 /proc/loadavg)

echo "$cpu, $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'); make bench" >"$res/note.txt"
plots=0
if ! command -v gnuplot >/dev/null 2>&1; then
	echo "bench: plots skipped: gnuplot not found (Debian: apt-get install gnuplot-nox)" >&2
elif "$root/bench/plot.sh" "$res" "$res"; then
	plots=1
else
	echo "bench: plots skipped: bench/plot.sh failed (above)" >&2
fi
[ $quick = 1 ] && exit 0

if [ $plots = 1 ]; then
	mkdir -p "$root/docs/plots"
	for f in "$res"/*.svg; do
		[ -e "$f" ] && cp "$f" "$root/docs/plots/"
	done
	echo "bench: plots copied to docs/plots/" >&2
fi
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$root" status --porcelain -- bench lib/src lib/include 2>/dev/null)" ]; then
	commit="$commit (with local changes in bench/ or libgdirect)"
fi
doc=$root/docs/performance.md
begin='<!-- rcache-bench: begin (written by bench/rcache/run.sh) -->'
end='<!-- rcache-bench: end -->'
{
	echo "$begin"
	echo
	echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $cpu, $(nproc) cores" \
	     "(load average $load0 before, $load1 after), commit $commit;" \
	     "UCX $(pkg-config --modversion ucx-ucs), $(${CC:-cc} --version | head -n1)."
	echo "Reproduce: \`make bench\` (or \`bench/rcache/run.sh BUILD\`)."
	if [ $plots = 1 ]; then
		echo
		echo "Plots from this run (drawn by bench/plot.sh with gnuplot" \
		     "from BUILD/bench-results/):"
		echo
		for f in hits-random hits-locality hits-reuse contended; do
			[ -e "$root/docs/plots/$f.svg" ] || continue
			case $f in
			hits-random) t="hit cost against region count, random trace" ;;
			hits-locality) t="hit cost against region count, locality trace" ;;
			hits-reuse) t="hit cost against region count, reuse trace" ;;
			contended) t="distribution of hit latency alone and during a pin" ;;
			esac
			echo "![$t](plots/$f.svg)"
		done
	fi
	cat "$md"
	echo
	echo "$end"
} >"$md.new"

[ -f "$doc" ] || printf '# Performance\n' >"$doc"
if ! grep -q '^## Registration cache' "$doc"; then
	printf '\n## Registration cache\n\n%s\n%s\n' "$begin" "$end" >>"$doc"
elif ! grep -qF "$begin" "$doc"; then
	# The section exists without markers: put them right under its heading.
	awk -v b="$begin" -v e="$end" '
		{ print }
		/^## Registration cache/ { print ""; print b; print e }' \
		"$doc" >"$doc.tmp" && mv "$doc.tmp" "$doc"
fi
awk -v b="$begin" -v e="$end" -v f="$md.new" '
	$0 == b { while ((getline l < f) > 0) print l; skip = 1; next }
	$0 == e { skip = 0; next }
	!skip { print }' "$doc" >"$doc.tmp" && mv "$doc.tmp" "$doc"
echo "bench: results written to docs/performance.md" >&2

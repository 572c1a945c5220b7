#!/bin/sh
# SPDX-License-Identifier: MIT
# plot.sh SRCDIR - bench/plot.sh draws valid SVG plots from a small fixed
# input: each file parses as SVG and carries its title, axis labels and
# legend; a plot whose data is missing is left out, not drawn empty; bad
# input is an error.  TAP; skipped when gnuplot is not installed.
set -u
src=${1:?usage: plot.sh SRCDIR}
plot=$src/bench/plot.sh
. "$src/tests/include/tap.sh"

if ! command -v gnuplot >/dev/null 2>&1; then
	skip_all "gnuplot not installed (Debian: gnuplot-nox)"
fi
if ! command -v python3 >/dev/null 2>&1; then
	skip_all "python3 (to parse the SVG) not installed"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# svg FILE TEXT... : FILE is well-formed SVG whose text holds every TEXT.
svg() {
	python3 - "$@" <<-'PY'
		import sys, xml.etree.ElementTree as ET
		path, want = sys.argv[1], sys.argv[2:]
		try:
		    root = ET.parse(path).getroot()
		except Exception as e:
		    sys.exit("%s: %s" % (path, e))
		if root.tag != "{http://www.w3.org/2000/svg}svg":
		    sys.exit("%s: root element %s, not svg" % (path, root.tag))
		text = " ".join(t for t in root.itertext())
		for w in want:
		    if w not in text:
		        sys.exit("%s: no text %r" % (path, w))
		# The curves: gnuplot draws each as a path with many points.
		paths = [p for p in root.iter("{http://www.w3.org/2000/svg}path")
		         if p.get("d", "").count("L") >= 2]
		if len(paths) < 2:
		    sys.exit("%s: only %d multi-segment paths" % (path, len(paths)))
	PY
}

d=$tmp/data o=$tmp/out
mkdir -p "$d"
echo "test machine, 2026-01-01" >"$d/note.txt"
for t in random locality reuse; do
	printf '# x\n16 18.1 27.3\n4096 22.9 55.3\n65536 95.7 267.7\n' >"$d/hits-$t-1.dat"
	printf '# x\n16 19.0 40.2\n4096 25.0 80.1\n65536 120.3 301.0\n' >"$d/hits-$t-2.dat"
done
for c in gdirect ucx; do
	awk 'BEGIN { print "# x"; for (i = 0; i < 100; i++)
		printf "%.4f %.1f %.1f\n", i / 99, 10 + i, 20 + i * i }' \
		>"$d/contended-$c.dat"
done

if sh "$plot" "$d" "$o" 2>"$tmp/err"; then ok "plot.sh DATA OUT succeeds"
else not_ok "plot.sh DATA OUT succeeds: $(cat "$tmp/err")"; fi
for t in random locality reuse; do
	if svg "$o/hits-$t.svg" "$t trace" "registered regions (64 KiB each)" \
		"ns per hit per thread" "libgdirect, 1 thread" "libgdirect, 2 threads" \
		"UCX ucs_rcache, 1 thread" "UCX ucs_rcache, 2 threads" "test machine"
	then ok "hits-$t.svg is an SVG with title, axes and legend"
	else not_ok "hits-$t.svg is an SVG with title, axes and legend"; fi
done
if svg "$o/contended.svg" "while another thread registers" "latency of one get + put (log scale)" \
	"fraction of hits" "libgdirect, during a pin" "UCX ucs_rcache, alone"
then ok "contended.svg is an SVG with title, axes and legend"
else not_ok "contended.svg is an SVG with title, axes and legend"; fi

# A missing data file: that plot is left out and said, the others drawn.
rm "$d/hits-locality-2.dat" && rm -rf "$o"
if sh "$plot" "$d" "$o" 2>"$tmp/err" && [ ! -e "$o/hits-locality.svg" ] &&
	[ -e "$o/hits-random.svg" ] && grep -q 'hits-locality-2.dat missing' "$tmp/err"
then ok "a plot with missing data is left out and said"
else not_ok "a plot with missing data is left out and said"; fi

# The GPU round-trip log form.
cat >"$tmp/rt.log" <<-'LOG'
	# roundtrip: Test GPU (sm_90), CUDA driver API 13000, 2026-01-01 00:00 UTC
	per-repeat medians ptx       3.378 3.367 3.375
	per-repeat medians libcu++   3.160 3.233 3.236
	per-repeat medians memops    3.720 4.022 3.919
LOG
if sh "$plot" --roundtrip "$tmp/rt.log" "$o" 2>"$tmp/err" &&
	svg "$o/roundtrip.svg" "Test GPU (sm_90)" "round trip, median of one repeat (us)" \
		"ptx" "libcu++" "memops"
then ok "roundtrip.svg from a roundtrip log"
else not_ok "roundtrip.svg from a roundtrip log: $(cat "$tmp/err")"; fi

# With the distribution file the same run writes: the body and the tail.
awk 'BEGIN {
	print "# roundtrip distribution: Test GPU (sm_90), CUDA driver API 13000, 2026-01-01 00:00 UTC"
	split("ptx libcu++ memops", m, " ")
	for (k = 1; k <= 3; k++) {
		if (k > 1) printf "\n\n"
		printf "# method %s, 1000 round trips\n", m[k]
		for (i = 0; i <= 200; i++)
			printf "%.4f %.4f\n", i / 200, 3 + k * 0.1 + (i / 200) ^ 8 * 20
	}
}' >"$tmp/rt.dist"
rm -f "$o/roundtrip-dist.svg"
if sh "$plot" --roundtrip "$tmp/rt.log" "$o" "$tmp/rt.dist" 2>"$tmp/err" &&
	svg "$o/roundtrip-dist.svg" "Test GPU (sm_90)" "every round trip of each method" \
		"fraction of round trips at or below" "fraction of round trips above (log-log)" \
		"round trip (us)" "ptx" "libcu++" "memops"
then ok "roundtrip-dist.svg from a roundtrip distribution file"
else not_ok "roundtrip-dist.svg from a roundtrip distribution file: $(cat "$tmp/err")"; fi
sh "$plot" --roundtrip "$tmp/rt.log" "$o" "$tmp/rt.log" 2>/dev/null
if [ $? -eq 2 ]; then ok "a file that is not a roundtrip distribution is refused"
else not_ok "a file that is not a roundtrip distribution is refused"; fi

# The GPU classification log form (bench/gpu/run.sh), two runs.
for r in a b; do
	cat >"$tmp/cl-$r.log" <<-'LOG'
		date: 2026-01-01 00:00 UTC
		nvidia-smi: Test GPU, 580.00
		cuPointerGetAttribute(MEMORY_TYPE), device pointer             104.5 ns  (min 73.1, max 234.9; 4096 pointers)
		cuPointerGetAttributes(4 attributes), device pointer           186.8 ns  (min 177.5, max 220.2; 4096 pointers)
		gdirect_classify, device pointer, 16 allocations                 7.0 ns  (min 6.7, max 12.2; 16 pointers)
		gdirect_classify, device pointer, 4096 allocations               9.0 ns  (min 8.5, max 12.0; 4096 pointers)
	LOG
done
if sh "$plot" --classify "$o" "$tmp/cl-a.log" "$tmp/cl-b.log" 2>"$tmp/err" &&
	svg "$o/classify.svg" "Test GPU, 580.00" "ns per call" "goal: 10 ns" \
		"gdirect_classify, device pointer, 4096 allocations" "run A" "run B"
then ok "classify.svg from two classify_gpu logs"
else not_ok "classify.svg from two classify_gpu logs: $(cat "$tmp/err")"; fi

echo "nothing" >"$tmp/bad.log"
sh "$plot" --classify "$o" "$tmp/bad.log" 2>/dev/null
if [ $? -eq 2 ]; then ok "a file that is not a classify_gpu log is refused"
else not_ok "a file that is not a classify_gpu log is refused"; fi
sh "$plot" --roundtrip "$tmp/bad.log" "$o" 2>/dev/null
if [ $? -eq 2 ]; then ok "a file that is not a roundtrip log is refused"
else not_ok "a file that is not a roundtrip log is refused"; fi
sh "$plot" "$tmp/nonexistent" "$o" 2>/dev/null
if [ $? -eq 2 ]; then ok "a missing data directory is refused"
else not_ok "a missing data directory is refused"; fi

tap_done

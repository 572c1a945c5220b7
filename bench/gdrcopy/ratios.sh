#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/gdrcopy/ratios.sh BUILD RESULTS [KERNEL] - gdirect against gdrcopy
# 2.6 on the emulated machine, measured in one guest run (make
# bench-gdrcopy; docs/gdrcopy.md, "Speed against gdrcopy"):
#
#   driver   gdrcopy_apiperf's pin, map, get_info, unmap and unpin through
#            gdirect.ko's /dev/gdrdrv against through NVIDIA's gdrdrv.ko,
#            NVIDIA's libgdrapi in both, in both pinning modes;
#   library  gdrcopy_copylat's copies to and from a mapping through our
#            libgdrapi against through NVIDIA's, both on gdrdrv.ko.
#
# Each figure is the median over ROUNDS runs (BENCH_ROUNDS, default 5)
# taken in turn; the ratio is gdirect's time over gdrcopy's, so below 1
# means gdirect is faster.  The emulated machine is qemu's TCG: the
# ratios compare code paths, not what a GPU and its PCIe link would do.
# Raw figures: RESULTS/bench-gdrcopy.tap.
set -u
[ $# -ge 2 ] || { echo "usage: $0 BUILD RESULTS [KERNEL]" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && results=$(cd "$2" && pwd) || exit 2
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=$(ls -1 /lib/modules 2>/dev/null | grep -- '-amd64$' | sort -V | tail -n1)
kernel=${3:-/boot/vmlinuz-$kver}
rounds=${BENCH_ROUNDS:-5}
case $rounds in
''|*[!0-9]*|0) echo "bench-gdrcopy: BENCH_ROUNDS must be a positive integer, not '$rounds'" >&2; exit 2 ;;
esac
[ -n "$kernel" ] && [ -e "$kernel" ] ||
	{ echo "bench-gdrcopy: no Debian guest kernel /boot/vmlinuz-*-amd64 (or give its path as the third argument)" >&2; exit 2; }
kver=$(basename "$kernel" | sed 's/^vmlinuz-//')
t0=$(date +%s)

tarball=$("$top/tests/peers/peers.sh" find gdrcopy-2.6.tar.gz "$build/peers/cache") ||
	exit 1
echo "bench-gdrcopy: building gdrcopy 2.6 ($results/bench-gdrcopy-build.log)"
if ! "$top/tests/peers/gdrcopy-build.sh" "$build" "$tarball" "$kver" \
	>"$results/bench-gdrcopy-build.log" 2>&1; then
	tail -n 15 "$results/bench-gdrcopy-build.log"
	echo "bench-gdrcopy: gdrcopy 2.6 does not build here"
	exit 1
fi
stage=$build/peers/gdrcopy-2.6/bench-stage
rm -rf "$stage"
mkdir -p "$stage/peers/gdrcopy" "$stage/tests"
cp -RP "$build/peers/gdrcopy-2.6/out"/. "$stage/peers/gdrcopy/"
printf '#!/bin/sh\nexec /peers/gdrcopy/ratios-guest.sh %s\n' "$rounds" \
	>"$stage/tests/bench-gdrcopy.sh"
cp "$top/bench/gdrcopy/ratios-guest.sh" "$top/tests/peers/gdrcopy-guest-lib.sh" \
	"$stage/peers/gdrcopy/"
chmod +x "$stage/tests/bench-gdrcopy.sh"
initrd=$build/guest-bench-gdrcopy.cpio.gz
if ! GUEST_EXTRA=$stage GUEST_TESTS="bench-gdrcopy.sh" GUEST_TIMEOUT=5400 \
	"$top/tests/harness/build-initramfs.sh" "$build" v2 "$initrd" \
	>"$results/bench-gdrcopy-initramfs.log" 2>&1; then
	echo "bench-gdrcopy: could not build the initramfs ($results/bench-gdrcopy-initramfs.log)"
	exit 1
fi
echo "bench-gdrcopy: $rounds rounds in the guest (about $((rounds * 30)) s)"
python3 "$top/tests/harness/run.py" --initrd "$initrd" --kernel "$kernel" \
	--name bench-gdrcopy --results "$results" --timeout 5400 \
	>"$results/bench-gdrcopy.summary" 2>/dev/null
tap=$results/bench-gdrcopy.tap
cat "$results/bench-gdrcopy.summary"
if grep -q '^not ok' "$tap" 2>/dev/null; then
	grep -A5 '^not ok' "$tap"
	echo "bench-gdrcopy: runs failed; no ratios"
	exit 1
fi

# Medians per (row, column) over the rounds, then one line per row.
awk '
function median(key,   n, i, j, v, t) {
	n = cnt[key]
	for (i = 1; i <= n; i++) v[i] = val[key, i]
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function add(key, x) { val[key, ++cnt[key]] = x; seen[key] = 1 }
$2 == "R" && $3 == "apiperf" {
	mode = $5 == 1 ? "persistent" : "traditional"
	split("pin map get_info unmap unpin", col, " ")
	for (c = 1; c <= 5; c++) add("apiperf " mode " " $7 " " col[c] " " $4, $(7 + c))
	rows["apiperf " mode " " $7] = 1
}
$2 == "R" && $3 == "copylat" {
	add("copylat " $7 " " $8 " x " $4, $9)
	rows["copylat " $7 " " $8] = 1
}
END {
	print ""
	print "gdrcopy_apiperf, NVIDIA libgdrapi: gdrdrv.ko (a) against gdirect.ko (b), median us; ratio b/a"
	printf "%-12s %8s %-9s %10s %10s %7s\n", "mode", "bytes", "call", "gdrdrv", "gdirect", "ratio"
	split("pin map get_info unmap unpin", col, " ")
	for (m = 1; m <= 2; m++) {
		mode = m == 1 ? "persistent" : "traditional"
		for (s = 65536; s <= 1048576; s *= 2) {
			r = "apiperf " mode " " s
			if (!(r in rows)) continue
			for (c = 1; c <= 5; c++) {
				k = "apiperf " mode " " s " " col[c]
				x = median(k " a"); y = median(k " b")
				printf "%-12s %8d %-9s %10.2f %10.2f %7.3f\n", mode, s, col[c], x, y, (x > 0 ? y / x : 0)
			}
		}
	}
	print ""
	print "gdrcopy_copylat on gdrdrv.ko: NVIDIA libgdrapi (a) against ours (c), median us; ratio c/a"
	printf "%-5s %8s %10s %10s %7s\n", "copy", "bytes", "NVIDIA", "ours", "ratio"
	split("to from", dir, " ")
	for (d = 1; d <= 2; d++)
		for (s = 1; s <= 65536; s *= 2) {
			r = "copylat " dir[d] " " s
			if (!(r in rows)) continue
			k = "copylat " dir[d] " " s " x"
			x = median(k " a"); y = median(k " c")
			printf "%-5s %8d %10.4f %10.4f %7.3f\n", dir[d], s, x, y, (x > 0 ? y / x : 0)
		}
}' "$tap"
echo ""
echo "bench-gdrcopy: $rounds rounds, $(($(date +%s) - t0)) s; raw figures in $tap"

#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/gdrcopy/pintrace.sh BUILD RESULTS [DEPTH] - where gdrcopy_apiperf's
# pin and unpin spend their time in gdrdrv.ko and in gdirect.ko's
# /dev/gdrdrv: one guest boot, ftrace function_graph from each driver's
# ioctl entry down to DEPTH calls (default 4; docs/gdrcopy.md, "Speed
# against gdrcopy").  Needs the gdrcopy 2.6 build of bench/gdrcopy/ratios.sh
# (tests/peers/gdrcopy-build.sh) in BUILD/peers/gdrcopy-2.6/out.  Prints
#   T PAIRING MODE DEPTH FUNCTION CALLS MIN_US MEAN_US
# for every traced function; KMOD_DIR selects other modules.
set -u
[ $# -ge 2 ] || { echo "usage: $0 BUILD RESULTS [DEPTH]" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && results=$(cd "$2" && pwd) || exit 2
depth=${3:-4}
case $depth in
''|*[!0-9]*|0) echo "pintrace: DEPTH must be a positive integer, not '$depth'" >&2; exit 2 ;;
esac
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=$(ls -1 /lib/modules 2>/dev/null | grep -- '-amd64$' | sort -V | tail -n1)
kernel=/boot/vmlinuz-$kver
[ -e "$kernel" ] || { echo "pintrace: no guest kernel $kernel" >&2; exit 2; }
out=$build/peers/gdrcopy-2.6/out
[ -e "$out/modules/gdrdrv.ko" ] ||
	{ echo "pintrace: no gdrcopy build in $out (run tests/peers/gdrcopy-build.sh)" >&2; exit 2; }
stage=$build/peers/gdrcopy-2.6/pintrace-stage
rm -rf "$stage"
mkdir -p "$stage/peers/gdrcopy" "$stage/tests"
cp -RP "$out"/. "$stage/peers/gdrcopy/"
cp "$top/bench/gdrcopy/pintrace-guest.sh" "$top/tests/peers/gdrcopy-guest-lib.sh" \
	"$stage/peers/gdrcopy/"
printf '#!/bin/sh\nexec /peers/gdrcopy/pintrace-guest.sh %s\n' "$depth" \
	>"$stage/tests/pintrace.sh"
chmod +x "$stage/tests/pintrace.sh"
initrd=$build/guest-pintrace.cpio.gz
GUEST_EXTRA=$stage GUEST_TESTS="pintrace.sh" GUEST_TIMEOUT=1800 \
	"$top/tests/harness/build-initramfs.sh" "$build" v2 "$initrd" \
	>"$results/pintrace-initramfs.log" 2>&1 ||
	{ echo "pintrace: could not build the initramfs ($results/pintrace-initramfs.log)" >&2; exit 1; }
python3 "$top/tests/harness/run.py" --initrd "$initrd" --kernel "$kernel" \
	--name pintrace --results "$results" --timeout 1800 \
	>"$results/pintrace.summary" 2>/dev/null
cat "$results/pintrace.summary"
grep '^not ok' "$results/pintrace.tap"
grep -E '^# (T|R) ' "$results/pintrace.tap" | sed 's/^# //'

#!/bin/sh
# SPDX-License-Identifier: MIT
# gdrcopy-lane.sh BUILD RESULTS KERNEL - the peers lane of make test:
# gdrcopy 2.6, unchanged, in every pairing with gdirect on the emulated
# machine (docs/gdrcopy.md).
#
# 1. tests/peers/peers.sh finds gdrcopy-2.6.tar.gz (checked by sha256);
# 2. tests/peers/gdrcopy-build.sh builds it by its own Makefiles against
#    the guest kernel and the emulated CUDA (cached in BUILD/peers/);
# 3. one guest (page table 2.0, BUILD/kmod/v2, KERNEL) runs the pairings a
#    to d, then e (no kernel module, the dma-buf backend) with NVIDIA's
#    libgdrapi and with ours, in sequence, one program each
#    (tests/peers/gdrcopy-guest.sh), the modules loaded and unloaded
#    between them;
# 4. one line per pairing:
#      peers[gdrcopy-2.6 PAIRING]: N passed, N failed, N waived
#    (waived: gdrcopy's own waivers and tests/peers/gdrcopy-2.6.waivers,
#    never passes), and last "N passed, N failed, N skipped" for
#    run-tests.sh's totals (waived counted as skipped).
# PEERS_GDRCOPY_PAIRINGS="b e-ours" runs only those pairings (unset or
# empty: all; a name not in the list above is an error, exit 2).
# Exit status 77, with the reason on stdout, when the tarball is neither
# in the peers folder nor downloadable; 1 when gdrcopy does not build.
set -u
build=$(cd "$1" && pwd); results=$2; kernel=$3
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=$(basename "$kernel" | sed 's/^vmlinuz-//')
t0=$(date +%s)
all="a b c d e-nvidia e-ours"
pairings=${PEERS_GDRCOPY_PAIRINGS:-$all}
for p in $pairings; do
	case " $all " in *" $p "*) ;; *)
		echo "peers: PEERS_GDRCOPY_PAIRINGS=\"$PEERS_GDRCOPY_PAIRINGS\": '$p' is not one of: $all"
		exit 2 ;;
	esac
done

tarball=$("$top/tests/peers/peers.sh" find gdrcopy-2.6.tar.gz \
	"$build/peers/cache" 2>"$results/peers-find.log")
rc=$?
if [ "$rc" != 0 ]; then
	cat "$results/peers-find.log"
	exit "$rc"
fi
if ! "$top/tests/peers/gdrcopy-build.sh" "$build" "$tarball" "$kver" \
	>"$results/peers-gdrcopy-build.log" 2>&1; then
	tail -n 15 "$results/peers-gdrcopy-build.log" | sed 's/^/  /'
	echo "peers[gdrcopy-2.6]: gdrcopy 2.6 does not build here (results/peers-gdrcopy-build.log)"
	exit 1
fi

# What the guest gets besides the usual initramfs: gdrcopy's build in
# /peers/gdrcopy, the waivers, and one program per pairing in /tests.
stage=$build/peers/gdrcopy-2.6/stage
rm -rf "$stage"
mkdir -p "$stage/peers/gdrcopy" "$stage/tests"
cp -RP "$build/peers/gdrcopy-2.6/out"/. "$stage/peers/gdrcopy/"
cp "$top/tests/peers/gdrcopy-2.6.waivers" "$top/tests/peers/gdrcopy-guest.sh" \
	"$top/tests/peers/gdrcopy-guest-lib.sh" "$stage/peers/gdrcopy/"
for p in $pairings; do
	printf '#!/bin/sh\nexec /peers/gdrcopy/gdrcopy-guest.sh %s\n' "$p" \
		>"$stage/tests/peers-gdrcopy-$p.sh"
	chmod +x "$stage/tests/peers-gdrcopy-$p.sh"
done
initrd=$build/guest-peers.cpio.gz
if ! GUEST_EXTRA=$stage GUEST_TESTS="$(for p in $pairings; do printf 'peers-gdrcopy-%s.sh ' "$p"; done)" \
	GUEST_TIMEOUT=2400 "$top/tests/harness/build-initramfs.sh" "$build" v2 "$initrd" \
	>"$results/peers-initramfs.log" 2>&1; then
	echo "peers[gdrcopy-2.6]: could not build the initramfs (results/peers-initramfs.log)"
	exit 1
fi
python3 "$top/tests/harness/run.py" --initrd "$initrd" --kernel "$kernel" \
	--name peers --results "$results" --timeout "${PEERS_TIMEOUT_S:-3000}" \
	>"$results/guest-peers.summary" 2>/dev/null

# The guest's lines, the pairings named.
p=0 f=0 s=0
while IFS= read -r l; do
	case $l in
	"guest[peers] peers-gdrcopy-"*)
		x=${l#guest\[peers\] peers-gdrcopy-}; x=${x%%.sh:*}
		case $x in
		a) what="a: NVIDIA gdrdrv.ko + NVIDIA libgdrapi" ;;
		b) what="b: gdirect.ko + NVIDIA libgdrapi" ;;
		c) what="c: NVIDIA gdrdrv.ko + our libgdrapi" ;;
		d) what="d: gdirect.ko + our libgdrapi" ;;
		e-nvidia) what="e: no module, dma-buf + NVIDIA libgdrapi" ;;
		e-ours) what="e: no module, dma-buf + our libgdrapi" ;;
		*) what=$x ;;
		esac
		rest=${l#*.sh: }
		echo "peers[gdrcopy-2.6 $what]: $rest" | sed 's/ skipped/ waived/' ;;
	[0-9]*" passed, "*" failed, "*" skipped")
		# The closing line's words, split on purpose.
		# shellcheck disable=SC2086
		set -- $l; p=$1 f=$3 s=$5 ;;
	*) echo "$l" ;;
	esac
done <"$results/guest-peers.summary"
# Each failure and each use of the waiver list, with its pairing.
awk '/^=== BEGIN peers-gdrcopy-/ { p = substr($3, 15); sub(/\.sh$/, "", p); next }
	/^not ok/ || /# SKIP waived \(gdrcopy-2.6.waivers\)/ { print "  " p ": " $0 }' \
	"$results/peers.tap" 2>/dev/null
echo "peers: $(($(date +%s) - t0)) s"
echo "$p passed, $f failed, $s skipped"

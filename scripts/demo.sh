#!/bin/sh
# SPDX-License-Identifier: MIT
# demo.sh BUILD [nvp2p] - the guide's flow, end to end.
#
# With an NVIDIA driver present it walks the real path (scripts/demo-gpu.sh)
# and says which steps it skipped and why.  With no NVIDIA GPU it boots the
# emulated machine and walks the product inside it (demo/guest/demo-walk.c:
# libgdirect, gdirect.ko, gdirect_edu), printing it as it goes.  With
# "nvp2p" (make demo-nvp2p) the walk is the raw nv-p2p interface for driver
# authors instead (demo/guest/demo-flow.c, nvp2p_selftest.ko as the peer).
set -eu
build=$1
top=$(cd "$(dirname "$0")/.." && pwd)
what=${2:-walk}
case $what in
walk)  guest_demo=demo.sh ;;
nvp2p) guest_demo=demo-nvp2p.sh ;;
*) echo "demo.sh: unknown walk '$what' (walk or nvp2p)" >&2; exit 2 ;;
esac
mode=$("$top/scripts/deps.sh" demo-mode)
if [ "$what" = walk ] && [ "$mode" = gpu ]; then
	exec "$top/scripts/demo-gpu.sh" "$build"
fi
kver=$(ls -1 /lib/modules | grep -- '-amd64$' | sort -V | tail -n1)
echo "demo: booting the emulated machine (qemu TCG, Debian $kver, ivshmem GPU + edu DMA engine)..."
GUEST_TESTS=$guest_demo "$top/tests/harness/build-initramfs.sh" "$build" v2 "$build/guest-demo.cpio.gz"
# The guest's verdict is run.py's exit status; the filter only tidies.
rcf=$(mktemp)
trap 'rm -f "$rcf"' EXIT
{ python3 "$top/tests/harness/run.py" --initrd "$build/guest-demo.cpio.gz" \
	--kernel "/boot/vmlinuz-$kver" --name demo --results "$top/results" \
	--timeout 600 --show 2>/dev/null; echo $? >"$rcf"; } | grep --line-buffered -v -E '^(1\.\.1|ok 1 - demo)$' || true
rc=$(cat "$rcf")
[ "$rc" = 0 ] || echo "demo: FAILED (the emulated machine's log: results/demo*)"
exit "$rc"

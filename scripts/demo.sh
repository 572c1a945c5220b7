#!/bin/sh
# demo.sh BUILD - the guide's flow, end to end.
#
# With an NVIDIA driver present it walks the real path (scripts/demo-gpu.sh)
# and says which steps it skipped and why.  With no NVIDIA GPU it boots the
# emulated machine and runs the walk-through inside it
# (demo/guest/demo-flow.c), printing it as it goes.
set -eu
build=$1
top=$(cd "$(dirname "$0")/.." && pwd)
mode=$("$top/scripts/deps.sh" demo-mode)
if [ "$mode" = gpu ]; then
	exec "$top/scripts/demo-gpu.sh" "$build"
fi
kver=$(ls -1 /lib/modules | grep -- '-amd64$' | sort -V | tail -n1)
echo "demo: booting the emulated machine (qemu TCG, Debian $kver, ivshmem GPU + edu DMA engine)..."
GUEST_TESTS=demo.sh "$top/guest/build-initramfs.sh" "$build" v2 "$build/guest-demo.cpio.gz"
python3 "$top/guest/run.py" --initrd "$build/guest-demo.cpio.gz" \
	--kernel "/boot/vmlinuz-$kver" --name demo --results "$top/results" \
	--timeout 600 --show 2>/dev/null | grep -v -E '^(1\.\.1|ok 1 - demo)$'
